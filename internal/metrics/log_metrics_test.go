package metrics

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/exposition"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logstate"
)

func applyLines(t testing.TB, s *logstate.Store, lines ...string) {
	t.Helper()
	p := logparse.NewParser(time.UTC)
	for _, l := range lines {
		ev, ok := p.Parse(logparse.Record{First: []byte(l), Line: 1, Lines: 1})
		if !ok {
			t.Fatalf("want parsed: %s", l)
		}
		s.Apply(&ev)
	}
}

const (
	isrUpd   = "[2026-11-30 10:00:0%s,000] INFO [Partition %s broker=1] ISR updated to %s  and version updated to %s (kafka.cluster.Partition)"
	hwUpd    = "[2026-11-30 10:00:0%s,000] DEBUG [Partition %s broker=1] High watermark updated from (offset=%s, segment=[0:1]) to (offset=%s, segment=[0:2]) (kafka.cluster.Partition)"
	leaderSt = "[2026-11-30 10:00:0%s,000] INFO [Broker id=1] Leader %s with topic id Some(AMNt6PcpRZOktSh6v-u00A) starts at leader epoch %s from offset 10 with partition epoch 5, high watermark 10, ISR [1,2,3], adding replicas [] and removing replicas [] . Previous leader None and previous leader epoch was -1. (state.change.logger)"
)

func line(format string, args ...string) string {
	for _, a := range args {
		format = strings.Replace(format, "%s", a, 1)
	}
	return format
}

// logState is a store with partitions across topics whose ids sort
// differently as strings ("10" < "2"), with and without an HW, leaders and
// followers, and HWs past the 1e6 at which %g switches to exponents.
func logState(t testing.TB, partitions int) *logstate.Store {
	s := logstate.NewStore(nil)
	var lines []string
	for _, topic := range []string{"orders", "a.b_c-d", "zeta", "Zeta"} {
		for p := range partitions {
			tp := topic + "-" + strconv.Itoa(p)
			switch p % 4 {
			case 0:
				lines = append(lines, line(isrUpd, "1", tp, "1,2,3", "5"), line(isrUpd, "2", tp, "1,2", "6"))
			case 1:
				lines = append(lines, line(leaderSt, "1", tp, strconv.Itoa(p%9)))
			case 2:
				hw := strconv.Itoa(p * 1_234_567)
				lines = append(lines, line(hwUpd, "1", tp, "0", hw))
			}
		}
	}
	applyLines(t, s, lines...)
	return s
}

// scrapeText renders sources as /metrics does.
func scrapeText(t testing.TB, srcs ...exposition.TableSource) string {
	t.Helper()
	var b bytes.Buffer
	if err := exposition.WriteText(&b, nil, nil, srcs...); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// family returns the lines of one family in an exposition.
func family(text, name string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(text, "\n") {
		if strings.HasPrefix(l, "# HELP "+name+" ") || strings.HasPrefix(l, "# TYPE "+name+" ") ||
			strings.HasPrefix(l, name+"{") || strings.HasPrefix(l, name+" ") {
			b.WriteString(l)
		}
	}
	return b.String()
}

func TestLogMetrics(t *testing.T) {
	s := logstate.NewStore(func(topic string) bool { return topic != "excluded" })
	applyLines(t, s,
		line(isrUpd, "1", "orders-0", "1,2,3", "5"),
		line(isrUpd, "2", "orders-0", "1,2", "6"),
		line(isrUpd, "3", "orders-0", "1,2,3", "7"),
		line(isrUpd, "4", "excluded-0", "1,2", "7"),
		line(isrUpd, "5", "orders-10", "1,2", "7"),
		line(isrUpd, "5", "orders-9", "1,2", "7"),
	)
	got := scrapeText(t, exposition.TableSource(NewLogMetrics(s, nil, LogMetricsOptions{PartitionLabels: true, LeaderGauges: true}).Tables))
	for name, want := range map[string]string{
		"kafka_replication_partition_isr_shrinks_total": `# HELP kafka_replication_partition_isr_shrinks_total Committed ISR shrinks seen in this broker's log or, in leader scope, in Metadata.
# TYPE kafka_replication_partition_isr_shrinks_total counter
kafka_replication_partition_isr_shrinks_total{partition="0",topic="orders"} 1
`, // sparse: the partitions without a shrink have no series

		"kafka_replication_partition_in_sync_replicas": `# HELP kafka_replication_partition_in_sync_replicas In-sync replicas of the partition (Metadata joined with this broker's logs: the fresher wins; log-only mode: this broker's log, for partitions it leads).
# TYPE kafka_replication_partition_in_sync_replicas gauge
kafka_replication_partition_in_sync_replicas{partition="0",topic="orders"} 3
kafka_replication_partition_in_sync_replicas{partition="10",topic="orders"} 2
kafka_replication_partition_in_sync_replicas{partition="9",topic="orders"} 2
`,
		"kafka_replication_partition_log_high_watermark": "",
	} {
		if f := family(got, name); f != want {
			t.Errorf("%s: got\n%s\nwant\n%s", name, f, want)
		}
	}
	events := family(got, "kafka_replication_log_events_total")
	if !strings.Contains(events, `kafka_replication_log_events_total{type="isr_update"} 6`+"\n") ||
		!strings.Contains(events, `kafka_replication_log_events_total{type="hw_update"} 0`+"\n") {
		t.Errorf("want every event type, the excluded topic's event counted too, got\n%s", events)
	}
	if f := family(got, "kafka_replication_log_last_event_timestamp_seconds"); strings.Count(f, "\n") != 3 {
		t.Errorf("want a last-event time for isr_update only, got\n%s", f)
	}

	// Without the leader gauges (the admin half exports those names).
	got = scrapeText(t, exposition.TableSource(NewLogMetrics(s, nil, LogMetricsOptions{PartitionLabels: true}).Tables))
	if f := family(got, "kafka_replication_partition_in_sync_replicas"); f != "" {
		t.Errorf("want no leader gauges, got\n%s", f)
	}
}

func TestLogMetricsRollup(t *testing.T) {
	s := logstate.NewStore(nil)
	applyLines(t, s,
		line(isrUpd, "1", "orders-0", "1,2,3", "5"),
		line(isrUpd, "2", "orders-0", "1,2", "6"),
		line(isrUpd, "1", "orders-1", "1,2,3", "5"),
		line(isrUpd, "2", "orders-1", "1", "6"),
		line(hwUpd, "3", "orders-1", "5", "7"),
		line(hwUpd, "3", "orders-0", "5", "8"),
	)
	got := scrapeText(t, exposition.TableSource(NewLogMetrics(s, nil, LogMetricsOptions{PartitionLabels: false, LeaderGauges: true}).Tables))
	want := `# HELP kafka_replication_partition_isr_shrinks_total Committed ISR shrinks seen in this broker's log or, in leader scope, in Metadata.
# TYPE kafka_replication_partition_isr_shrinks_total counter
kafka_replication_partition_isr_shrinks_total{topic="orders"} 2
`
	if f := family(got, "kafka_replication_partition_isr_shrinks_total"); f != want {
		t.Errorf("got\n%s\nwant\n%s", f, want)
	}
	if f := family(got, "kafka_replication_partition_log_high_watermark"); !strings.HasSuffix(f, `{topic="orders"} 15`+"\n") {
		t.Errorf("want the HWs summed, got\n%s", f)
	}
	if strings.Contains(got, "kafka_replication_partition_in_sync_replicas") {
		t.Error("the leader-only gauges have no rollup")
	}
}

// BenchmarkLogMetrics10kPartitions renders /metrics for 10k partitions of
// log-derived state (about 140k series). cpu-ns/op is the figure to compare
// on a shared machine: wall time includes waiting for a core.
func BenchmarkLogMetrics10kPartitions(b *testing.B) {
	s := logstate.NewStore(nil)
	p := logparse.NewParser(time.UTC)
	for i := 0; i < 10000; i++ {
		l := line(isrUpd, "1", "topic"+strconv.Itoa(i/50)+"-"+strconv.Itoa(i%50), "1,2,3", "5")
		ev, _ := p.Parse(logparse.Record{First: []byte(l), Line: 1, Lines: 1})
		s.Apply(&ev)
	}
	src := exposition.TableSource(NewLogMetrics(s, nil, LogMetricsOptions{PartitionLabels: true, LeaderGauges: true}).Tables)
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		if err := exposition.WriteText(io.Discard, nil, nil, src); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
}

// A --log.file that is a directory shows as open 0 and the not_regular_file
// reason 1, the other reasons 0.
func TestFileErrorSeries(t *testing.T) {
	dir := t.TempDir()
	s := logstate.NewStore(nil)
	f := logstate.NewLogFile(dir, logstate.LogFileOptions{Location: time.UTC})
	stream := logstate.NewStream(s, []*logstate.LogFile{f}, 0)
	stream.Step()
	text := scrapeText(t, exposition.TableSource(NewLogMetrics(s, stream, LogMetricsOptions{PartitionLabels: true}).Tables))
	for _, want := range []string{
		`kafka_replication_log_file_open{file="` + dir + `"} 0`,
		`kafka_replication_log_file_error{file="` + dir + `",reason="not_regular_file"} 1`,
		`kafka_replication_log_file_error{file="` + dir + `",reason="not_found"} 0`,
		`kafka_replication_log_file_errors_total{file="` + dir + `",reason="not_regular_file"} 1`,
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("want %s in\n%s", want, text)
		}
	}
}

// TestLogDirOffline: a directory the broker's log named as stopped is 1,
// and 0 once the broker started again; a healthy broker's log has none.
func TestLogDirOffline(t *testing.T) {
	s := logstate.NewStore(nil)
	m := NewLogMetrics(s, nil, LogMetricsOptions{PartitionLabels: true})
	if got := family(scrapeText(t, m.Tables), "kafka_replication_log_dir_offline"); got != "" {
		t.Errorf("a healthy broker: want no series, got\n%s", got)
	}
	applyLines(t, s, "[2026-12-02 03:37:29,858] WARN [ReplicaManager broker=3] Stopping serving replicas in dir /data/b with uuid Optional[7E_aR-ZDcublVgBOR3kSyw] because the log directory has failed. (kafka.server.ReplicaManager)")
	text := scrapeText(t, m.Tables)
	checkExposition(t, text)
	if !strings.Contains(text, `kafka_replication_log_dir_offline{broker="3",dir="/data/b"} 1`+"\n") {
		t.Errorf("want the directory offline, got\n%s", family(text, "kafka_replication_log_dir_offline"))
	}
	applyLines(t, s, "[2026-12-02 03:38:00,610] INFO [BrokerServer id=3] Transition from SHUTDOWN to STARTING (kafka.server.BrokerServer)")
	if text := scrapeText(t, m.Tables); !strings.Contains(text, `kafka_replication_log_dir_offline{broker="3",dir="/data/b"} 0`+"\n") {
		t.Errorf("want the directory back after the start, got\n%s", family(text, "kafka_replication_log_dir_offline"))
	}
}
