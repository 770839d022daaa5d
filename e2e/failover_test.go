package e2e

import (
	"context"
	"errors"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/harness"
)

// testLeaderFailover: the partition leader is killed with
// SIGKILL. Another replica takes over within seconds, acks=all traffic
// continues, the old leader rejoins the ISR after its restart, and verify
// finds no HW violation across the failover on any node.
//
// What it asserts: SIGKILL of leader 1 → a new leader; acks=all continues (only NOT_LEADER_OR_FOLLOWER for stale-
// metadata sends); node 1 rejoins the ISR; HW = every acked message; no verify failure on any node.
//
// Seen: a SIGKILLed leader is replaced after 12.3 s (4.4.0) / 11.8 s (3.9.1): this cluster runs
// harness.LeaderShrinksFirst, so broker.session.timeout.ms (12 s) plus fencing and election; the first send of a fresh
// producer can still get NOT_LEADER_OR_FOLLOWER from stale metadata.
func testLeaderFailover(ctx context.Context, t *testing.T, c *harness.Cluster) {
	const topic = "failover"
	must(t, c.CreateTopic(ctx, harness.Topic{Name: topic, Assignment: [][]int32{{1, 2, 3}}}))
	must(t, c.SetLogLevelAll(ctx, "kafka.cluster.Partition", "TRACE"))
	produceOK(ctx, t, c, topic, 20, sarama.WaitForAll)

	killed := time.Now()
	must(t, c.KillNode(ctx, 1))
	st, err := c.WaitPartition(ctx, topic, 0, "a new leader", func(s harness.PartitionState) bool {
		return s.Leader >= 0 && s.Leader != 1
	})
	must(t, err)
	t.Logf("Kafka %s: new leader %d (epoch %d) %.1fs after SIGKILL of node 1, ISR %v",
		c.Version(), st.Leader, st.LeaderEpoch, time.Since(killed).Seconds(), st.ISR)
	// A client whose metadata still names the dead leader gets NOT_LEADER,
	// or "connection refused" from the dead node, for its first sends; that
	// is the normal retriable failover error. The rest must be accepted.
	res, err := c.Produce(ctx, topic, 0, 20, sarama.WaitForAll)
	must(t, err)
	var netErr *net.OpError
	for _, err := range res.Errors {
		if !errors.Is(err, sarama.ErrNotLeaderForPartition) && !errors.As(err, &netErr) {
			t.Errorf("produce after failover: unexpected error %v", err)
		}
	}
	if len(res.Offsets) < 15 {
		t.Errorf("produce after failover: only %d of 20 accepted, errors %v", len(res.Offsets), res.Errors)
	}
	acked := int64(20 + len(res.Offsets) + 10)

	must(t, c.StartNode(ctx, 1))
	st, err = c.WaitPartition(ctx, topic, 0, "node 1 back in the ISR", func(s harness.PartitionState) bool {
		return slices.Contains(s.ISR, 1)
	})
	must(t, err)
	must(t, c.SetLogLevel(ctx, 1, "kafka.cluster.Partition", "TRACE"))
	produceOK(ctx, t, c, topic, 10, sarama.WaitForAll)
	hw, err := c.HighWatermark(topic, 0)
	must(t, err)
	if hw != acked {
		t.Errorf("HW after failover = %d, want %d acked messages (none lost)", hw, acked)
	}

	for _, n := range c.Nodes() {
		r := verify(t, serverLogs(t, c, n.ID)...)
		if inv := r.invariant("hw_monotonic"); inv.Status == "FAILED" {
			t.Errorf("node %d: hw_monotonic false alarm across failover:\n%s", n.ID, r.Raw)
		}
		if failed := r.failed(); len(failed) > 0 {
			t.Errorf("node %d: verify failed %v:\n%s", n.ID, failed, r.Raw)
		}
	}
}
