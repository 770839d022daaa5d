package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/harness"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/stack"
)

// TestConsumerPaused: the same kind of topic as
// TestConsumersStarvedByReplication (acks=1, RF 3, min ISR 2) with healthy
// replication, and a consumer group that reads and commits, then stops: no
// more reads, no more commits, while a producer keeps writing. The member
// stays in the group (its heartbeats go on), as a stuck application's does:
// a handler blocked on a lock or a slow downstream keeps the session alive,
// which is what operators meet most; a closed consumer is the easy case
// (state Empty, no members). The leader's sidecar must put the lag on the
// consumer: lag to the HW and lag seconds grow, the verdict is not starved
// by replication, KafkaConsumersStarvedByReplication stays quiet and
// KafkaConsumerGroupStalled fires (the shipped rules, time-scaled, in a real
// Prometheus). Its lag must agree with kafka-consumer-groups --describe.
//
// How: topic paused (acks=1, RF 3, min ISR 2, 20 records/s); the group is coordinated by node 2, not the leader
// (the leader's sidecar reads it from the broker that lists it), reads and auto-commits (200 ms) until its
// committed offset has moved for a few refreshes, then its handler blocks, so the group stays Stable with 1 member.
// Prometheus evaluates the shipped rules time-scaled (÷30).
//
// Measured: within 6 s lag to the HW > 100, lag seconds > 5 and within the time since the pause ± 5 s (5.3–5.9 s at
// 5.5–6.0 s), records above the HW < 20, not starved, HW not stalled. kafka-consumer-groups --describe
// (ConsumerGroupCommand, 0.9–1.5 s) between two scrapes: CURRENT-OFFSET = the sidecar's committed offset, and LOG-
// END-OFFSET − CURRENT-OFFSET between the sidecar's lag read before the tool and a refresh after it (tolerance 20/s
// × (2 s + ~1 s); seen: tool 135, sidecar 111 before / 185 after on 4.4.0, 138 vs 106 / 177 on 3.9.1).
// KafkaConsumerGroupStalled fires 32 s after the pause (its scaled 20 s window plus for: 10 s), never before its
// window; KafkaConsumersStarvedByReplication never, not even pending, and its expression is empty. 55–57 s per
// version.
func TestConsumerPaused(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Kafka cluster; skipped with -short")
	}
	for _, version := range consumerVersions {
		t.Run(version, func(t *testing.T) { testConsumerPaused(t, version) })
	}
}

func testConsumerPaused(t *testing.T, version string) {
	start := time.Now()
	defer func() { t.Logf("wall time %v", time.Since(start).Round(time.Second)) }()
	c := harness.StartT(t, harness.Options{Version: version})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// The tools' jars, before anything is timed (a first run downloads them).
	_, err := harness.FetchTools(ctx, version)
	must(t, err)

	const topic = "paused"
	must(t, c.CreateTopic(ctx, harness.Topic{
		Name: topic, Assignment: [][]int32{{1, 2, 3}},
		Configs: map[string]string{"min.insync.replicas": "2"},
	}))
	// Coordinated by a broker that does not lead the partition: the leader's
	// sidecar reads the group from the broker that lists it.
	group := groupCoordinatedBy(ctx, t, c, 2, "paused")

	// The producer: acks=1, 20 records a second, to the leader.
	const perSecond = 20
	var wg sync.WaitGroup
	defer wg.Wait()
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	produceSteadily(runCtx, t, &wg, c, topic, sarama.WaitForLocal, time.Second/perSecond)
	// The consumer group: reads everything and auto-commits every 200ms
	// until paused; then its handler blocks, as a stuck application's does,
	// and sarama keeps heartbeating.
	handler := &pausable{}
	consumeSteadily(runCtx, t, &wg, c, group, topic, 200*time.Millisecond, handler)

	const refresh = 2 * time.Second // stack.StartExporters' --kafka.refresh-interval
	es, err := stack.StartExporters(ctx, c, exporterBinary(t), "--collector.consumer-groups")
	must(t, err)
	t.Cleanup(es.Close)
	s := &sidecars{t: t, es: es}
	prom := startRulePrometheus(ctx, t, es)

	gp := map[string]string{"group": group, "topic": topic, "partition": "0"}
	g := map[string]string{"group": group}
	s.eventually(ctx, 40*time.Second, "the group reading and committing", func(m map[int32]stack.Metrics) string {
		return expect(m[1],
			gauge("kafka_replication_consumer_group_committed_offset", gp, gt(100)),
			gauge("kafka_replication_consumer_group_lag_to_high_watermark", gp, lt(50)),
			gauge("kafka_replication_consumer_group_state", map[string]string{"group": group, "state": "Stable"}, eq(1)),
			gauge("kafka_replication_consumer_group_members", g, eq(1)))
	})

	// Commits that move for a few refreshes, so that the rule's window sees
	// a group that committed and then stopped, not one first seen paused.
	m, err := s.scrape(ctx)
	must(t, err)
	first, _ := m[1].Value("kafka_replication_consumer_group_committed_offset", gp)
	s.eventually(ctx, 20*time.Second, "the committed offset moving", func(m map[int32]stack.Metrics) string {
		return expect(m[1], gauge("kafka_replication_consumer_group_committed_offset", gp, gt(first+3*perSecond)))
	})
	if prom != nil {
		// Firing, not pending: a group first seen has a window of one
		// committed offset, which the rule's for: rides out.
		got, err := prom.Query(ctx, `ALERTS{alertname=~"KafkaConsumerGroupStalled|KafkaConsumersStarvedByReplication", alertstate="firing"}`)
		must(t, err)
		if len(got) > 0 {
			t.Fatalf("consumer alerts for a group that reads and commits: %v", got)
		}
	}

	handler.pause()
	paused := time.Now()
	// The lag grows on the consumer's side only: the HW keeps up with the
	// log end (healthy replication), the group is still a Stable member.
	var lagSeconds float64
	s.eventually(ctx, 30*time.Second, "the lag growing on the consumer's side", func(m map[int32]stack.Metrics) string {
		lagSeconds, _ = m[1].Value("kafka_replication_consumer_group_lag_seconds", gp)
		return expect(m[1],
			gauge("kafka_replication_consumer_group_lag_to_high_watermark", gp, gt(5*perSecond)),
			gauge("kafka_replication_consumer_group_lag_seconds", gp, gt(5)),
			gauge("kafka_replication_consumer_group_records_above_high_watermark", gp, lt(perSecond)),
			gauge("kafka_replication_consumer_group_starved_by_replication", gp, eq(0)),
			gauge("kafka_replication_consumer_group_partitions_starved_by_replication", g, eq(0)),
			gauge("kafka_replication_partition_high_watermark_stalled", part(topic, 0), eq(0)),
			gauge("kafka_replication_consumer_group_state", map[string]string{"group": group, "state": "Stable"}, eq(1)),
			gauge("kafka_replication_consumer_group_members", g, eq(1)))
	})
	since := time.Since(paused).Seconds()
	t.Logf("Kafka %s: %.1fs after the pause, lag %.1fs", c.Version(), since, lagSeconds)
	// The committed offset was the HW at most a few readings before the
	// pause, so the lag in seconds is the time since the pause, give or take
	// a refresh on each side.
	if slack := 2*refresh.Seconds() + 1; lagSeconds < since-slack || lagSeconds > since+slack {
		t.Errorf("lag %.1fs, %.1fs after the pause: want the time since the pause ± %.0fs", lagSeconds, since, slack)
	}

	compareWithConsumerGroupsTool(ctx, t, c, s, group, topic, refresh)

	if prom != nil {
		// Scaled ×30: KafkaConsumerGroupStalled's 10m window is 20s and its
		// for: 10s, so it fires about 30s after the last commit.
		waitRuleAlert(ctx, t, prom, "KafkaConsumerGroupStalled", group, 60*time.Second-time.Since(paused))
		firing := time.Since(paused)
		t.Logf("KafkaConsumerGroupStalled firing %v after the pause", firing.Round(time.Second))
		if window := 10 * time.Minute / ruleScale; firing < window {
			t.Errorf("KafkaConsumerGroupStalled fired %v after the pause, before its window (%v) could hold no commit", firing, window)
		}
		for _, q := range []string{
			`max_over_time(ALERTS{alertname="KafkaConsumersStarvedByReplication"}[5m])`,
			// The alert's expression, at the end of the run.
			`sum without (instance) (kafka_replication_consumer_group_partitions_starved_by_replication) > 0`,
			`max_over_time(kafka_replication_consumer_group_partitions_starved_by_replication[5m]) > 0`,
		} {
			got, err := prom.Query(ctx, q)
			must(t, err)
			if len(got) > 0 {
				t.Errorf("replication blamed for a paused consumer: %s = %v", q, got)
			}
		}
	}
}

// pausable is a consumer group handler that marks every record it reads
// until paused; then it reads no more (a stuck application's handler) and
// sarama, which heartbeats on its own, keeps the member in the group.
type pausable struct{ paused atomic.Bool }

func (h *pausable) pause()                                  { h.paused.Store(true) }
func (*pausable) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (*pausable) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h *pausable) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for msg := range claim.Messages() {
		if h.paused.Load() {
			<-sess.Context().Done()
			return nil
		}
		sess.MarkMessage(msg, "")
	}
	return nil
}

// startRulePrometheus starts a Prometheus that scrapes the sidecars every
// second and evaluates the shipped rules time-scaled as in TestAlertLoop, or
// returns nil (the rule checks are then skipped) without the Prometheus tools.
func startRulePrometheus(ctx context.Context, t *testing.T, es stack.Exporters) *stack.Prometheus {
	t.Helper()
	if _, err := stack.Tool("prometheus"); err != nil {
		t.Logf("rule checks skipped: %v", err)
		return nil
	}
	dir := t.TempDir()
	rules := filepath.Join(dir, "kafka-replication.rules.yml")
	must(t, stack.ScaleRuleFile("../alerts/kafka-replication.rules.yml", rules, ruleScale, ruleFloor))
	prom, err := stack.StartPrometheus(ctx, dir, es.Targets(), []string{rules}, "", time.Second)
	must(t, err)
	t.Cleanup(prom.Close)
	return prom
}

// waitRuleAlert waits until Prometheus has alertname firing for group.
func waitRuleAlert(ctx context.Context, t *testing.T, prom *stack.Prometheus, alertname, group string, within time.Duration) {
	t.Helper()
	q := fmt.Sprintf(`ALERTS{alertname=%q, group=%q, alertstate="firing"}`, alertname, group)
	deadline := time.Now().Add(within)
	for {
		got, err := prom.Query(ctx, q)
		must(t, err)
		if len(got) > 0 {
			return
		}
		if time.Now().After(deadline) {
			pending, _ := prom.Query(ctx, fmt.Sprintf(`ALERTS{alertname=%q}`, alertname))
			t.Fatalf("%s not firing for group %s within %v (ALERTS: %v)", alertname, group, within, pending)
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

// compareWithConsumerGroupsTool runs Kafka's kafka-consumer-groups --describe
// between two scrapes of the leader's sidecar and checks that the sidecar
// agrees: the same committed offset, and a lag to the HW within what the HW
// moved while the tool ran. The group is paused, so its committed offset
// stands still and only the HW moves: the exporter's lag read before the
// tool is a lower bound of the tool's, and its lag read a refresh after the
// tool ended an upper bound (the HW only grows). The tolerance is therefore
// what the producer writes during one refresh plus the tool's run.
func compareWithConsumerGroupsTool(
	ctx context.Context, t *testing.T, c *harness.Cluster, s *sidecars, group, topic string, refresh time.Duration,
) {
	t.Helper()
	gp := map[string]string{"group": group, "topic": topic, "partition": "0"}
	read := func() (committed, lag float64) {
		m, err := s.scrape(ctx)
		must(t, err)
		var ok1, ok2 bool
		committed, ok1 = m[1].Value("kafka_replication_consumer_group_committed_offset", gp)
		lag, ok2 = m[1].Value("kafka_replication_consumer_group_lag_to_high_watermark", gp)
		if !ok1 || !ok2 {
			t.Fatalf("sidecar 1 has no committed offset or lag for %v", gp)
		}
		return committed, lag
	}
	committedBefore, lagBefore := read()
	ran := time.Now()
	out, err := harness.RunKafkaTool(ctx, c, "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
		"--bootstrap-server", strings.Join(c.Bootstrap(), ","), "--describe", "--group", group)
	must(t, err)
	took := time.Since(ran)
	_, lagRightAfter := read()
	time.Sleep(refresh + refresh/2)
	committedAfter, lagAfter := read()

	rows, err := parseConsumerGroupsDescribe(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var row *describeRow
	for i := range rows {
		if rows[i].Group == group && rows[i].Topic == topic && rows[i].Partition == 0 {
			row = &rows[i]
		}
	}
	if row == nil {
		t.Fatalf("kafka-consumer-groups --describe has no row for %s %s-0:\n%s", group, topic, out)
	}
	toolLag := float64(row.LogEndOffset - row.CurrentOffset)
	t.Logf("kafka-consumer-groups (%v): CURRENT-OFFSET %d LOG-END-OFFSET %d LAG %d; sidecar: committed %v, lag %v before, %v right after, %v a refresh later",
		took.Round(100*time.Millisecond), row.CurrentOffset, row.LogEndOffset, row.Lag, committedBefore, lagBefore, lagRightAfter, lagAfter)
	if float64(row.CurrentOffset) != committedBefore || committedAfter != committedBefore {
		t.Errorf("committed offset: tool %d, sidecar %v before and %v after", row.CurrentOffset, committedBefore, committedAfter)
	}
	if toolLag < lagBefore || toolLag > lagAfter {
		t.Errorf("lag to the HW: tool %v, not within the sidecar's %v (before) … %v (a refresh after)", toolLag, lagBefore, lagAfter)
	}
}

// describeRow is one partition row of kafka-consumer-groups --describe.
type describeRow struct {
	Group, Topic                     string
	Partition                        int32
	CurrentOffset, LogEndOffset, Lag int64
}

// parseConsumerGroupsDescribe reads the partition rows of
// kafka-consumer-groups --describe by their column headers (GROUP, TOPIC,
// PARTITION, CURRENT-OFFSET, LOG-END-OFFSET, LAG), which 3.9 and 4.x print
// alike; "-" (no committed offset) is not a row it returns.
func parseConsumerGroupsDescribe(out string) ([]describeRow, error) {
	var rows []describeRow
	var col map[string]int
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if f[0] == "GROUP" {
			col = make(map[string]int, len(f))
			for i, name := range f {
				col[name] = i
			}
			for _, need := range []string{"TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG"} {
				if _, ok := col[need]; !ok {
					return nil, fmt.Errorf("kafka-consumer-groups header has no %s column: %q", need, line)
				}
			}
			continue
		}
		if col == nil || len(f) <= col["LAG"] {
			continue
		}
		num := func(name string) (int64, bool) {
			v, err := strconv.ParseInt(f[col[name]], 10, 64)
			return v, err == nil
		}
		p, ok1 := num("PARTITION")
		cur, ok2 := num("CURRENT-OFFSET")
		end, ok3 := num("LOG-END-OFFSET")
		lag, ok4 := num("LAG")
		if !ok1 || !ok2 || !ok3 || !ok4 {
			continue
		}
		rows = append(rows, describeRow{
			Group: f[col["GROUP"]], Topic: f[col["TOPIC"]], Partition: int32(p),
			CurrentOffset: cur, LogEndOffset: end, Lag: lag,
		})
	}
	if col == nil {
		return nil, fmt.Errorf("no GROUP header in kafka-consumer-groups output")
	}
	return rows, nil
}
