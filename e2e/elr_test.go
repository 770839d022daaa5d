package e2e

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/harness"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/stack"
)

// elrVersions: 4.4.0 and 4.1.1 (the first line with ELR on by default) run
// the ELR election; 3.9.1 (no ELR) checks that the series stay absent and
// that the single-candidate condition holds for an ISR of one.
var elrVersions = []string{kafkaCurrent, kafkaELR, kafka3}

// TestELRElection (KIP-966): with both followers of an RF 3, min ISR 2
// partition stopped cleanly, the leader's sidecar shows the eligible leader
// replicas Kafka reports; with the leader stopped too, the controller elects
// a restarted ELR member cleanly, and the new leader's sidecar shows it.
//
// What it asserts (4.4.0, 4.1.1): sidecars on every broker; topics elr (RF 3, min ISR 2) and single (RF 3, min ISR
// 1), both led by 1; followers 3 then 2 stopped (SIGTERM) → Kafka's DescribeTopicPartitions says ELR [2]; the
// leader's sidecar shows ISR 1 and ELR/last-known-ELR sizes equal to Kafka's within 20 s;
// KafkaPartitionSingleCleanLeaderCandidate's condition is false for elr (ELR 1), true for single (ISR 1 allowed,
// ELR empty); acks=all refused; leader 1 stopped, node 2 restarted → the controller elects 2 from the ELR; sidecar
// 2 shows leader 2 and Kafka's ISR/ELR ([2]/[1]); HW kept; no UNCLEAN/"unclean election" line on controller 101,
// no_unclean_election passes there, no unclean-election or truncation-below-HW counter above 0 on any sidecar,
// no_truncation_below_hw passes on node 2. On 3.9.1 (testNoELR): the ELR series are absent on the leader's sidecar,
// no describe_topic_partitions error is counted, and the single-candidate condition is true for both topics.
//
// What the ELR holds (4.4.0 and 4.1.1 alike): followers stopped cleanly one after the other (3, then 2) leave an
// ELR of one, not two: DescribeTopicPartitions answered ISR [1] ELR [2] lastKnownELR []. KIP-966 adds to the ELR
// only the replicas that leave an ISR already below min ISR; node 3 left [1 2 3] for [1 2], still at min ISR 2, so
// records committed after that need not be on it and the controller does not count it as clean. Two replicas reach
// the ELR only when they leave in one ISR change (say, a leader-driven shrink of two lagging followers). The single
// topic (min ISR 1) keeps an empty ELR with ISR [1]: an ISR of one is allowed there, so node 1 is its only clean
// candidate. Stopping leader 1 then empties the ISR; after node 2 restarts the controller elects it from the ELR in
// 5.3–7.3 s (ISR [2] ELR [1], leader epoch 2, HW kept), without an UNCLEAN/"unclean election" line on controller
// 101: it logs the change only at DEBUG. The leader's sidecar showed the ELR within one refresh of Kafka's ISR
// reaching 1, and sidecar 2 the new leader 0.5–2 s after the election. 3.9.1 answers DescribeTopicPartitions but
// has the eligible.leader.replicas.version feature at 0: no ELR series, no error.
//
// A broker's sidecar reads that broker's controller.log, which is empty with dedicated controllers: its
// partition_unclean_leader_elections_total can only count elections when a log-only sidecar also runs on the
// controller nodes. The scenario checks the controller's log with verify for that reason. Wall time 23 s (4.4.0),
// 43 s (4.1.1), 17 s (3.9.1) alone.
func TestELRElection(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Kafka cluster; skipped with -short")
	}
	for _, version := range elrVersions {
		t.Run(version, func(t *testing.T) {
			start := time.Now()
			defer func() { t.Logf("TestELRElection/%s wall time %v", version, time.Since(start).Round(time.Second)) }()
			ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
			defer cancel()
			c := harness.StartT(t, harness.Options{Version: version})
			if version == kafka3 {
				testNoELR(ctx, t, c)
				return
			}
			testELRElection(ctx, t, c)
		})
	}
}

const (
	elrTopic    = "elr"    // RF 3, min ISR 2: the stopped followers become ELR
	singleTopic = "single" // RF 3, min ISR 1: ISR 1 is allowed, so no ELR, a single clean candidate
)

// startELRTopics creates both topics led by node 1, writes to them, and
// starts the sidecars.
func startELRTopics(ctx context.Context, t *testing.T, c *harness.Cluster) *sidecars {
	t.Helper()
	for topic, minISR := range map[string]string{elrTopic: "2", singleTopic: "1"} {
		must(t, c.CreateTopic(ctx, harness.Topic{
			Name: topic, Assignment: [][]int32{{1, 2, 3}},
			Configs: map[string]string{"min.insync.replicas": minISR},
		}))
		produceOK(ctx, t, c, topic, 10, sarama.WaitForAll)
	}
	es, err := stack.StartExporters(ctx, c, exporterBinary(t))
	must(t, err)
	t.Cleanup(es.Close)
	return &sidecars{t: t, es: es}
}

// stopFollowers stops followers 3 then 2 cleanly (SIGTERM) and waits for an
// ISR of [1] on both topics.
func stopFollowers(ctx context.Context, t *testing.T, c *harness.Cluster) {
	t.Helper()
	must(t, c.StopNode(ctx, 3))
	must(t, c.StopNode(ctx, 2))
	for _, topic := range []string{elrTopic, singleTopic} {
		_, err := c.WaitISR(ctx, topic, 0, 1)
		must(t, err)
	}
}

func testELRElection(ctx context.Context, t *testing.T, c *harness.Cluster) {
	s := startELRTopics(ctx, t, c)
	elrPart, singlePart := part(elrTopic, 0), part(singleTopic, 0)

	s.eventually(ctx, 10*time.Second, "healthy: ELR 0 on the leader's sidecar", func(m map[int32]stack.Metrics) string {
		return expect(m[1],
			gauge("kafka_replication_partition_in_sync_replicas", elrPart, eq(3)),
			gauge("kafka_replication_partition_eligible_leader_replicas", elrPart, eq(0)),
			gauge("kafka_replication_partition_last_known_eligible_leader_replicas", elrPart, eq(0)))
	})

	stopped := time.Now()
	stopFollowers(ctx, t, c)
	isrOne := time.Now()
	kafkaView, err := c.DescribeELR(ctx, elrTopic, 0)
	must(t, err)
	t.Logf("followers stopped (3, then 2): Kafka's view of %s-0 %+v, ISR 1 after %v", elrTopic, kafkaView, isrOne.Sub(stopped).Round(100*time.Millisecond))
	// KIP-966 adds to the ELR only the replicas that leave an ISR already
	// below min ISR: node 3 left ISR [1 2 3] for [1 2], still at min ISR 2,
	// and records committed after that need not be on it, so only node 2,
	// the last to leave, is a clean candidate.
	if !slices.Equal(kafkaView.ELR, []int32{2}) {
		t.Fatalf("Kafka's ELR of %s-0 after stopping 3 then 2 cleanly is %v, want [2]: %+v", elrTopic, kafkaView.ELR, kafkaView)
	}
	single, err := c.DescribeELR(ctx, singleTopic, 0)
	must(t, err)
	t.Logf("Kafka's view of %s-0 (min ISR 1): %+v", singleTopic, single)

	s.eventually(ctx, 20*time.Second, "leader's sidecar: ISR 1 and Kafka's ELR", func(m map[int32]stack.Metrics) string {
		return expect(m[1],
			gauge("kafka_replication_partition_in_sync_replicas", elrPart, eq(1)),
			gauge("kafka_replication_partition_eligible_leader_replicas", elrPart, eq(float64(len(kafkaView.ELR)))),
			gauge("kafka_replication_partition_last_known_eligible_leader_replicas", elrPart, eq(float64(len(kafkaView.LastKnownELR)))),
			gauge("kafka_replication_partition_in_sync_replicas", singlePart, eq(1)),
			gauge("kafka_replication_partition_eligible_leader_replicas", singlePart, eq(float64(len(single.ELR)))))
	})
	t.Logf("leader's sidecar showed ELR %d %v after Kafka's ISR was 1 (refresh 2s)", len(kafkaView.ELR), time.Since(isrOne).Round(100*time.Millisecond))
	m, err := s.scrape(ctx)
	must(t, err)
	if singleCleanCandidate(m[1], elrTopic) {
		t.Errorf("KafkaPartitionSingleCleanLeaderCandidate condition holds for %s-0 with ELR %v", elrTopic, kafkaView.ELR)
	}
	if !singleCleanCandidate(m[1], singleTopic) {
		t.Errorf("KafkaPartitionSingleCleanLeaderCandidate condition does not hold for %s-0 (ISR 1, ELR %v)", singleTopic, single.ELR)
	}

	// The acks=all producer is refused now: the ELR is not the ISR.
	res, err := c.Produce(ctx, elrTopic, 0, 3, sarama.WaitForAll)
	must(t, err)
	if n := res.Count(sarama.ErrNotEnoughReplicas); n != 3 {
		t.Errorf("acks=all with ISR [1]: %d of 3 NOT_ENOUGH_REPLICAS (errors %v, offsets %v)", n, res.Errors, res.Offsets)
	}
	hw, err := c.HighWatermark(elrTopic, 0)
	must(t, err)

	// No broker runs now, so there is no metadata to read until the restart.
	must(t, c.StopNode(ctx, 1))
	// A member of the ELR other than the stopped leader.
	candidate := slices.DeleteFunc(slices.Clone(kafkaView.ELR), func(id int32) bool { return id == 1 })[0]
	restarted := time.Now()
	must(t, c.StartNode(ctx, candidate))
	st, err := c.WaitPartition(ctx, elrTopic, 0, fmt.Sprintf("ELR member %d elected", candidate), func(p harness.PartitionState) bool {
		return p.Leader == candidate
	})
	must(t, err)
	elected := time.Since(restarted)
	after, err := c.DescribeELR(ctx, elrTopic, 0)
	must(t, err)
	t.Logf("node %d restarted: elected after %v, Kafka's view %+v (metadata %+v)", candidate, elected.Round(100*time.Millisecond), after, st)

	took := s.eventually(ctx, 30*time.Second, fmt.Sprintf("new leader's sidecar %d: leader and ELR", candidate), func(m map[int32]stack.Metrics) string {
		return expect(m[candidate],
			gauge("kafka_replication_up", nil, eq(1)),
			gauge("kafka_replication_partition_leader", elrPart, eq(float64(candidate))),
			gauge("kafka_replication_partition_in_sync_replicas", elrPart, eq(float64(len(after.ISR)))),
			gauge("kafka_replication_partition_eligible_leader_replicas", elrPart, eq(float64(len(after.ELR)))),
			gauge("kafka_replication_partition_last_known_eligible_leader_replicas", elrPart, eq(float64(len(after.LastKnownELR)))))
	})
	t.Logf("sidecar %d showed the new leader %v after the election", candidate, took.Round(100*time.Millisecond))
	if hwAfter, err := c.HighWatermark(elrTopic, 0); err != nil || hwAfter < hw {
		t.Errorf("HW after the ELR election %d (err %v), before %d: committed records lost", hwAfter, err, hw)
	}

	// Clean, in the controller's decision and in every sidecar's counters.
	ctrl := c.Controllers()[0]
	if lines, err := c.GrepLog(ctrl.ID, "controller.log", regexp.MustCompile(`UNCLEAN partition change for `+elrTopic+`-0|using an unclean election`)); err != nil || len(lines) > 0 {
		t.Errorf("controller %d logged an unclean election (err %v): %q", ctrl.ID, err, lines)
	}
	ctrlLog, err := ctrl.LogFiles("controller.log")
	must(t, err)
	if inv := verify(t, ctrlLog...).invariant("no_unclean_election"); inv.Status == "FAILED" {
		t.Errorf("no_unclean_election FAILED on controller %d: %+v", ctrl.ID, inv)
	}
	m, err = s.scrape(ctx)
	must(t, err)
	for id, mm := range m {
		for _, name := range []string{"kafka_replication_partition_unclean_leader_elections_total", "kafka_replication_partition_truncations_below_high_watermark_total"} {
			if v, ok := mm.Value(name, elrPart); ok && v != 0 {
				t.Errorf("sidecar %d: %s{%s-0} = %v", id, name, elrTopic, v)
			}
		}
	}
	if inv := verify(t, serverLogs(t, c, candidate)...).invariant("no_truncation_below_hw"); inv.Status == "FAILED" {
		t.Errorf("no_truncation_below_hw FAILED on node %d: %+v", candidate, inv)
	}
}

// testNoELR: Kafka 3.9 has no ELR, so the series are absent, reading them
// costs no error, and an ISR of one is a single clean candidate whatever
// min.insync.replicas says.
func testNoELR(ctx context.Context, t *testing.T, c *harness.Cluster) {
	s := startELRTopics(ctx, t, c)
	stopFollowers(ctx, t, c)
	s.eventually(ctx, 20*time.Second, "leader's sidecar: ISR 1, no ELR series", func(m map[int32]stack.Metrics) string {
		mm := m[1]
		if msg := expect(mm, gauge("kafka_replication_partition_in_sync_replicas", part(elrTopic, 0), eq(1))); msg != "" {
			return msg
		}
		for _, name := range []string{"kafka_replication_partition_eligible_leader_replicas", "kafka_replication_partition_last_known_eligible_leader_replicas"} {
			if n := mm.Count(name, nil); n > 0 {
				return fmt.Sprintf("%s: %d series on Kafka %s", name, n, c.Version())
			}
		}
		if v, ok := mm.Value("kafka_replication_admin_request_errors_total", map[string]string{"request": "describe_topic_partitions"}); ok && v > 0 {
			return fmt.Sprintf("describe_topic_partitions errors counted: %v", v)
		}
		return ""
	})
	m, err := s.scrape(ctx)
	must(t, err)
	for _, topic := range []string{elrTopic, singleTopic} {
		if !singleCleanCandidate(m[1], topic) {
			t.Errorf("KafkaPartitionSingleCleanLeaderCandidate condition does not hold for %s-0 with ISR 1 on Kafka %s", topic, c.Version())
		}
	}
}

// singleCleanCandidate evaluates KafkaPartitionSingleCleanLeaderCandidate's
// condition on one partition of a scrape: one in-sync replica, more than one
// replica, a leader, and no eligible leader replica (an absent ELR series
// counts as none, as the rule's `unless` does).
func singleCleanCandidate(m stack.Metrics, topic string) bool {
	p := part(topic, 0)
	isr, ok1 := m.Value("kafka_replication_partition_in_sync_replicas", p)
	replicas, ok2 := m.Value("kafka_replication_partition_replicas", p)
	leader, ok3 := m.Value("kafka_replication_partition_leader", p)
	elr, _ := m.Value("kafka_replication_partition_eligible_leader_replicas", p)
	return ok1 && ok2 && ok3 && isr == 1 && replicas > 1 && leader >= 0 && !(elr > 0)
}
