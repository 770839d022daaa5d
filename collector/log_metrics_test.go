package collector

import (
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/logparse"
)

func applyLines(t testing.TB, s *Store, lines ...string) {
	t.Helper()
	p := logparse.NewParser(time.UTC)
	for _, l := range lines {
		ev, ok := p.ParseLine([]byte(l))
		if !ok {
			t.Fatalf("want parsed: %s", l)
		}
		s.Apply(&ev)
	}
}

const (
	isrUpd = "[2026-11-30 10:00:0%s,000] INFO [Partition %s broker=1] ISR updated to %s  and version updated to %s (kafka.cluster.Partition)"
)

func line(format string, args ...string) string {
	for _, a := range args {
		format = strings.Replace(format, "%s", a, 1)
	}
	return format
}

func TestLogCollectorGolden(t *testing.T) {
	s := NewStore(func(topic string) bool { return topic != "excluded" })
	applyLines(t, s,
		line(isrUpd, "1", "orders-0", "1,2,3", "5"),
		line(isrUpd, "2", "orders-0", "1,2", "6"),
		line(isrUpd, "3", "orders-0", "1,2,3", "7"),
		line(isrUpd, "4", "excluded-0", "1,2", "7"),
	)
	c := NewLogCollector(s, LogMetricsOptions{PartitionLabels: true, LeaderGauges: true})
	want := `
# HELP kafka_replication_partition_isr_shrinks_total ISR shrinks: the leader's 'Shrinking ISR from … to …' line, or an 'ISR updated to …' line with fewer members than the ISR known before (kafka.cluster.Partition, INFO).
# TYPE kafka_replication_partition_isr_shrinks_total counter
kafka_replication_partition_isr_shrinks_total{partition="0",topic="orders"} 1
# HELP kafka_replication_partition_isr_expands_total Committed ISR expansions: an 'ISR updated to …' line with more members than the previous one (INFO), or 'Ignoring failed ISR update to PendingExpandIsr … since we have already updated state to …' for an expansion that reached the leader through metadata first (DEBUG; Kafka <= 2.7: 'Expanding ISR').
# TYPE kafka_replication_partition_isr_expands_total counter
kafka_replication_partition_isr_expands_total{partition="0",topic="orders"} 1
# HELP kafka_replication_partition_in_sync_replicas ISR size of a partition this broker leads, from its last 'ISR updated to …' or 'Leader … starts at leader epoch' line (log-only mode).
# TYPE kafka_replication_partition_in_sync_replicas gauge
kafka_replication_partition_in_sync_replicas{partition="0",topic="orders"} 3
# HELP kafka_replication_log_events_total Log records that parsed to a replication event, by logparse event type.
# TYPE kafka_replication_log_events_total counter
`
	for _, typ := range logparse.Types() {
		n := 0
		if typ == logparse.ISRUpdate {
			n = 4 // the excluded topic's event still counts here
		}
		want += "kafka_replication_log_events_total{type=\"" + typ.String() + "\"} " + strconv.Itoa(n) + "\n"
	}
	if err := testutil.CollectAndCompare(c, strings.NewReader(want),
		"kafka_replication_partition_isr_shrinks_total", "kafka_replication_partition_isr_expands_total",
		"kafka_replication_partition_in_sync_replicas", "kafka_replication_log_events_total"); err != nil {
		t.Error(err)
	}
	if problems, err := testutil.CollectAndLint(c); err != nil || len(problems) > 0 {
		t.Errorf("want lint clean, got %v %v", problems, err)
	}
}

func TestLogCollectorRollup(t *testing.T) {
	s := NewStore(nil)
	applyLines(t, s,
		line(isrUpd, "1", "orders-0", "1,2,3", "5"),
		line(isrUpd, "2", "orders-0", "1,2", "6"),
		line(isrUpd, "1", "orders-1", "1,2,3", "5"),
		line(isrUpd, "2", "orders-1", "1", "6"),
	)
	c := NewLogCollector(s, LogMetricsOptions{PartitionLabels: false})
	want := `
# HELP kafka_replication_partition_isr_shrinks_total ISR shrinks: the leader's 'Shrinking ISR from … to …' line, or an 'ISR updated to …' line with fewer members than the ISR known before (kafka.cluster.Partition, INFO).
# TYPE kafka_replication_partition_isr_shrinks_total counter
kafka_replication_partition_isr_shrinks_total{topic="orders"} 2
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "kafka_replication_partition_isr_shrinks_total"); err != nil {
		t.Error(err)
	}
}

// A follower line means this broker no longer leads the partition: its log stops
// speaking for the ISR, and the overlay says nothing.
func TestStoreLeaderViewEndsWithFollowerLine(t *testing.T) {
	s := NewStore(nil)
	applyLines(t, s,
		line(isrUpd, "1", "orders-0", "1,2,3", "5"),
		"[2026-11-30 10:00:05,000] INFO [Broker id=1] Follower orders-0 starts at leader epoch 4 from offset 10 with partition epoch 9 and high watermark 10. Current leader is 2. Previous leader Some(2) and previous leader epoch was 4. (state.change.logger)",
	)
	if _, _, _, _, ok := s.LogPartitionState("orders", 0); ok {
		t.Error("want no log view for a partition this broker follows")
	}
}

// BenchmarkLogCollector10kPartitions renders /metrics for 10k partitions of
// log-derived state (the budget: 100 ms): registry is the old path
// (Gather, then expfmt's text encoder), direct the one serve uses (the event
// totals through the registry, the per-partition families by WriteText).
func BenchmarkLogCollector10kPartitions(b *testing.B) {
	s := NewStore(nil)
	p := logparse.NewParser(time.UTC)
	for i := 0; i < 10000; i++ {
		l := line(isrUpd, "1", "topic"+strconv.Itoa(i/50)+"-"+strconv.Itoa(i%50), "1,2,3", "5")
		ev, _ := p.ParseLine([]byte(l))
		s.Apply(&ev)
	}
	c := NewLogCollector(s, LogMetricsOptions{PartitionLabels: true, LeaderGauges: true})
	b.Run("registry", func(b *testing.B) {
		reg := prometheus.NewRegistry()
		reg.MustRegister(c)
		b.ReportAllocs()
		for b.Loop() {
			mfs, err := reg.Gather()
			if err != nil {
				b.Fatal(err)
			}
			enc := expfmt.NewEncoder(io.Discard, expfmt.NewFormat(expfmt.TypeTextPlain))
			for _, mf := range mfs {
				enc.Encode(mf)
			}
		}
	})
	b.Run("direct", func(b *testing.B) {
		reg := prometheus.NewRegistry()
		reg.MustRegister(c.SmallFamilies())
		b.ReportAllocs()
		for b.Loop() {
			mfs, err := reg.Gather()
			if err != nil {
				b.Fatal(err)
			}
			if err := WriteText(io.Discard, mfs, nil, c); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// A deleted topic's log-derived series disappear once the admin API no longer lists it.
func TestStoreRetainTopics(t *testing.T) {
	s := NewStore(nil)
	applyLines(t, s, line(isrUpd, "1", "gone-0", "1,2,3", "5"), line(isrUpd, "1", "kept-0", "1,2,3", "5"))
	s.RetainTopics(func(topic string) bool { return topic == "kept" })
	c0 := NewLogCollector(s, LogMetricsOptions{PartitionLabels: true})
	if n := testutil.CollectAndCount(c0, "kafka_replication_partition_isr_shrinks_total"); n != 2 {
		t.Errorf("want a topic seen within the grace period kept (it may be newer than the metadata), got %d series", n)
	}
	s.now = func() time.Time { return time.Now().Add(2 * retainGrace) }
	s.RetainTopics(func(topic string) bool { return topic == "kept" })
	c := NewLogCollector(s, LogMetricsOptions{PartitionLabels: true})
	if n := testutil.CollectAndCount(c, "kafka_replication_partition_isr_shrinks_total"); n != 1 {
		t.Errorf("want only the kept topic's series, got %d", n)
	}
	// The topic comes back (re-created): its events reach a new state, not
	// the dropped one the checker's slot for the partition still holds.
	applyLines(t, s, line(isrUpd, "1", "gone-0", "1,2", "1"))
	if n := testutil.CollectAndCount(c, "kafka_replication_partition_isr_shrinks_total"); n != 2 {
		t.Errorf("want the re-created topic's series back, got %d", n)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.parts[PartitionKey{"gone", 0}]; p == nil || p.dropped || p.isrSize != 2 {
		t.Errorf("want gone-0 in state again with ISR size 2, got %+v", p)
	}
}

// The topic filter is a regexp: the store asks it once per topic, not once
// per event, and its answer still holds for every later event.
func TestStoreAsksTheTopicFilterOncePerTopic(t *testing.T) {
	asked := map[string]int{}
	s := NewStore(func(topic string) bool { asked[topic]++; return topic != "excluded" })
	var lines []string
	for i := 1; i <= 5; i++ {
		lines = append(lines, line(isrUpd, "1", "orders-0", "1,2,3", strconv.Itoa(i)),
			line(isrUpd, "1", "excluded-0", "1,2", strconv.Itoa(i)),
			line(isrUpd, "1", "orders-1", "1,2", strconv.Itoa(i)))
	}
	applyLines(t, s, lines...)
	if asked["orders"] != 1 || asked["excluded"] != 1 {
		t.Errorf("want the filter asked once per topic, got %v", asked)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.parts) != 2 {
		t.Errorf("want orders-0 and orders-1 in state, got %d partitions", len(s.parts))
	}
	for k := range s.parts {
		if k.Topic == "excluded" {
			t.Errorf("excluded topic in state: %v", k)
		}
	}
}

// TRACE lines counted only by type (hw_skip, isr_ack_progress, replica_leo)
// are counted in kafka_replication_log_events_total and touch no partition
// state: the partition appears with its first line that it is counted for.
func TestStoreCountsTraceOnlyTypesByType(t *testing.T) {
	s := NewStore(nil)
	applyLines(t, s,
		"[2026-11-30 10:00:01,000] TRACE [Partition orders-0 broker=1] Progress awaiting ISR acks for offset 89: acked: Set(broker 1: 89), awaiting Set(broker 3: 88) (kafka.cluster.Partition)",
		"[2026-11-30 10:00:01,000] DEBUG [Partition orders-0 broker=1] Recorded replica 2 log end offset (LEO) position 89 and log start offset 0. (kafka.cluster.Partition)",
	)
	s.mu.Lock()
	if len(s.parts) != 0 || s.events[logparse.ISRAckProgress] != 1 || s.events[logparse.ReplicaLEO] != 1 {
		t.Errorf("want 2 events counted by type and no partition state, got %d partitions, events %v/%v",
			len(s.parts), s.events[logparse.ISRAckProgress], s.events[logparse.ReplicaLEO])
	}
	s.mu.Unlock()
	applyLines(t, s, "[2026-11-30 10:00:02,000] DEBUG [Partition orders-0 broker=1] High watermark updated from (offset=88, segment=[0:1]) to (offset=89, segment=[0:2]) (kafka.cluster.Partition)")
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.parts) != 1 {
		t.Errorf("want the partition created by its HW update, got %d partitions", len(s.parts))
	}
}
