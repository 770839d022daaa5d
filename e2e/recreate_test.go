package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/harness"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/stack"
)

// TestRecreatedTopicIsNoLoss: a topic deleted at HW 500 and re-created under
// the same name within a second is a new log, whose leader then moves twice
// (its broker stopped with SIGTERM, then a preferred election). Kafka loses
// nothing, so neither KafkaPartitionCommittedOffsetsLost nor any exporter
// counter may say otherwise: the rules tell the two topics apart by the
// topic id of kafka_replication_topic_info, not by the leader epoch's shape.
func TestRecreatedTopicIsNoLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Kafka cluster; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := harness.StartT(t, harness.Options{Version: kafkaCurrent})
	loop := startLossAlertLoop(ctx, t, c)
	if loop == nil {
		t.Skip("no Prometheus or Alertmanager to run the rules")
	}
	const topic = "recreated"
	leader := int32(1)
	create := func() error {
		return c.CreateTopic(ctx, harness.Topic{Name: topic, Assignment: [][]int32{{leader, 2, 3}}})
	}
	must(t, create())
	produceOK(ctx, t, c, topic, 500, sarama.WaitForAll)
	// Prometheus must have seen the old topic's HW, or the test proves nothing.
	must(t, waitFor(ctx, 60*time.Second, func() bool {
		got, err := loop.prom.Query(ctx, `kafka_replication:partition_high_watermark:max{topic="recreated"} == 500`)
		return err == nil && len(got) == 1
	}))

	admin, err := c.Admin()
	must(t, err)
	must(t, admin.DeleteTopic(topic))
	admin.Close()
	deletedAt := time.Now()
	// Kafka refuses the name for a moment while the deletion is applied.
	must(t, waitFor(ctx, 10*time.Second, func() bool { return create() == nil }))
	t.Logf("re-created %s %v after its deletion", topic, time.Since(deletedAt).Round(time.Millisecond))
	must(t, waitFor(ctx, 30*time.Second, func() bool {
		res, err := c.Produce(ctx, topic, 0, 1, sarama.WaitForAll)
		return err == nil && len(res.Errors) == 0
	}))
	produceOK(ctx, t, c, topic, 49, sarama.WaitForAll)
	hw, err := c.HighWatermark(topic, 0)
	must(t, err)
	if hw != 50 {
		t.Fatalf("re-created topic's HW %d, want 50", hw)
	}
	time.Sleep(5 * time.Second) // a few refreshes and scrapes of the new topic at epoch 0

	// The leader stopped (controlled shutdown: a clean election), restarted,
	// and made leader again by a preferred election.
	must(t, c.StopNode(ctx, leader))
	movedAt := time.Now()
	st, err := c.WaitPartition(ctx, topic, 0, "a new leader", func(s harness.PartitionState) bool {
		return s.Leader >= 0 && s.Leader != leader
	})
	must(t, err)
	t.Logf("leader %d at epoch %d", st.Leader, st.LeaderEpoch)
	time.Sleep(5 * time.Second)
	must(t, c.StartNode(ctx, leader))
	_, err = c.WaitISR(ctx, topic, 0, 3)
	must(t, err)
	st, err = c.WaitPartition(ctx, topic, 0, "the preferred leader back", func(s harness.PartitionState) bool {
		if s.Leader == leader {
			return true
		}
		_ = c.ElectLeaders(sarama.PreferredElection, topic, 0)
		return false
	})
	must(t, err)
	t.Logf("leader %d at epoch %d", st.Leader, st.LeaderEpoch)
	if hw, err := c.HighWatermark(topic, 0); err != nil || hw != 50 {
		t.Fatalf("HW after the leader changes %d (%v), want 50: Kafka lost nothing", hw, err)
	}

	// The rules' 10m window is 60 s here: past it since the first move, any
	// loss the rule would have counted has shown.
	time.Sleep(time.Until(movedAt.Add(70 * time.Second)))
	since := time.Since(deletedAt.Add(-30 * time.Second)).Round(time.Second)
	query := func(expr string) []stack.Sample {
		t.Helper()
		got, err := loop.prom.Query(ctx, expr)
		must(t, err)
		return got
	}
	// Both topics were seen, each with its own topic id.
	if ids := query(`count by (topic_id) (max_over_time(kafka_replication_topic_info{topic="recreated"}[` + since.String() + `]))`); len(ids) != 2 {
		t.Errorf("topic ids of %s seen by Prometheus: %v, want the old one and the new one", topic, ids)
	}
	if lost := query(`max_over_time(kafka_replication:partition_high_watermark_lost:offsets{topic="recreated"}[` + since.String() + `])`); len(lost) > 0 {
		t.Errorf("kafka_replication:partition_high_watermark_lost:offsets = %v, want none: Kafka lost nothing", lost)
	}
	for _, name := range []string{"KafkaPartitionCommittedOffsetsLost", "KafkaPartitionLeaderFlapping", "KafkaPartitionHighWatermarkRegressed"} {
		if a := findAlert(loop.hook, "firing", name, map[string]string{"topic": topic}); a != nil {
			t.Errorf("webhook: %s fired for the re-created topic: %v", name, a.Labels)
		}
		if got := query(`ALERTS{alertname="` + name + `",topic="recreated"}`); len(got) > 0 {
			t.Errorf("Prometheus: %s pending or firing for the re-created topic: %v", name, got)
		}
	}
	// The exporters' own accounts: no regression, no lowered HW, no truncation.
	for _, e := range loop.es {
		m, err := stack.Scrape(ctx, e.URL)
		must(t, err)
		for _, name := range []string{
			"kafka_replication_partition_high_watermark_regressions_total",
			"kafka_replication_partition_high_watermark_lowered_offsets_total",
			"kafka_replication_partition_truncations_below_high_watermark_total",
		} {
			if v := m.Sum(name, map[string]string{"topic": topic}); v != 0 {
				t.Errorf("node %d's sidecar: %s{topic=%q} = %v, want 0", e.NodeID, name, topic, v)
			}
		}
	}
}
