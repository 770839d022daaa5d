package e2e

import (
	"context"
	"errors"
	"regexp"
	"testing"

	"github.com/IBM/sarama"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/harness"
)

// testUnderMinISR stops nodes 2 and 3 so that leader 1 is alone in the ISR,
// and runs two checks in that one window:
//   - acks_all_rejected: acks=all is rejected with NOT_ENOUGH_REPLICAS and the leader
//     logs the rejection;
//   - hw_stall_acks_1 (KAFKA-15583): acks=1 is accepted, the leader's log end
//     offset grows, but the high watermark stays put (KRaft, Kafka ≥3.7) and,
//     at TRACE, the leader says why.
//
// What they assert: nodes 2 and 3 stopped → 5 acks=all sends all fail with NOT_ENOUGH_REPLICAS at the client; the
// leader logs ≥5 produce_rejected_min_isr; min_isr_enforced PASSED with checked > 0. In the same window 5 acks=1
// sends are accepted, the leader's LEO (ListOffsets replica id −2 to node 1) grows by 5 and the HW (ListOffsets
// LATEST) does not; "Not increasing HWM because partition is under min ISR" → hw_blocked_under_min_isr; after the
// restarts the HW catches up with the LEO.
//
// Seen: the HW stall under min ISR happens on 3.9.1 too, not only on 4.1 with ELR: HW 10 → 10 while the leader's
// LEO went to 15, and "TRACE [Partition hw-stall-0 broker=1] Not increasing HWM because partition is under min
// ISR(ISR=Set(1)" on both versions. LogEndOffset via ListOffsets with replica id −2 works on a real broker (4.1.1
// and 3.9.1): it returns the leader's LEO (15) while LATEST with the consumer id returns the HW (10).
func testUnderMinISR(ctx context.Context, t *testing.T, c *harness.Cluster) {
	const rejected, stalled = "min-isr", "hw-stall"
	for _, topic := range []string{rejected, stalled} {
		must(t, c.CreateTopic(ctx, harness.Topic{
			Name: topic, Assignment: [][]int32{{1, 2, 3}},
			Configs: map[string]string{"min.insync.replicas": "2"},
		}))
		produceOK(ctx, t, c, topic, 10, sarama.WaitForAll)
	}
	must(t, c.SetLogLevel(ctx, 1, "kafka.cluster.Partition", "TRACE"))

	must(t, c.StopNode(ctx, 3))
	must(t, c.StopNode(ctx, 2))
	for _, topic := range []string{rejected, stalled} {
		_, err := c.WaitISR(ctx, topic, 0, 1)
		must(t, err)
	}

	t.Run("acks_all_rejected", func(t *testing.T) {
		res, err := c.Produce(ctx, rejected, 0, 5, sarama.WaitForAll)
		must(t, err)
		if n := res.Count(sarama.ErrNotEnoughReplicas); n != 5 || len(res.Offsets) != 0 {
			t.Errorf("acks=all with ISR 1 < min ISR 2: %d NOT_ENOUGH_REPLICAS of 5, %d accepted, errors %v",
				n, len(res.Offsets), res.Errors)
		}
		_, err = c.WaitLogLine(ctx, 1, "server.log", regexp.MustCompile(`NotEnoughReplicasException: .*min-isr-0`))
		must(t, err)
		evs := events(t, serverLogs(t, c, 1)...)
		if n := len(ofType(evs, "produce_rejected_min_isr", rejected)); n < 5 {
			t.Errorf("leader logged %d produce_rejected_min_isr for %s, want ≥5", n, rejected)
		}
		r := verify(t, serverLogs(t, c, 1)...)
		inv := r.invariant("min_isr_enforced")
		if inv.Status != "PASSED" || inv.Checked == 0 {
			t.Errorf("min_isr_enforced = %s checked %d, want PASSED with checked > 0\n%s", inv.Status, inv.Checked, r.Raw)
		}
	})

	t.Run("hw_stall_acks_1", func(t *testing.T) {
		hwBefore, err := c.HighWatermark(stalled, 0)
		must(t, err)
		res, err := c.Produce(ctx, stalled, 0, 5, sarama.WaitForLocal)
		must(t, err)
		if len(res.Errors) > 0 {
			t.Fatalf("acks=1 under min ISR rejected: %v", res.Errors)
		}
		leo, err := c.LogEndOffset(1, stalled, 0)
		must(t, err)
		hwAfter, err := c.HighWatermark(stalled, 0)
		must(t, err)
		t.Logf("Kafka %s under min ISR: HW %d → %d, leader LEO %d", c.Version(), hwBefore, hwAfter, leo)
		if leo != hwBefore+5 {
			t.Errorf("leader LEO (ListOffsets replica id -2) = %d, want %d", leo, hwBefore+5)
		}
		// Measured: 4.1.1 and 3.9.1 (KRaft, ≥3.7) both freeze the HW here.
		if hwAfter != hwBefore {
			t.Errorf("HW moved from %d to %d under min ISR", hwBefore, hwAfter)
		}
		_, err = c.WaitLogLine(ctx, 1, "server.log", regexp.MustCompile(
			`\[Partition hw-stall-0 broker=1\] Not increasing HWM because partition is under min ISR`))
		must(t, err)
		evs := events(t, serverLogs(t, c, 1)...)
		if len(ofType(evs, "hw_blocked_under_min_isr", stalled)) == 0 {
			t.Errorf("no hw_blocked_under_min_isr event for %s", stalled)
		}
	})

	must(t, c.StartNode(ctx, 2))
	must(t, c.StartNode(ctx, 3))
	_, err := c.WaitISR(ctx, stalled, 0, 3)
	must(t, err)
	// Once the ISR is back the HW catches up with the leader's LEO.
	leo, err := c.LogEndOffset(1, stalled, 0)
	must(t, err)
	err = waitHW(ctx, c, stalled, leo)
	if err != nil {
		t.Error(err)
	}
	verifyAllPass(t, c)
}

func waitHW(ctx context.Context, c *harness.Cluster, topic string, want int64) error {
	_, err := c.WaitPartition(ctx, topic, 0, "HW caught up", func(harness.PartitionState) bool {
		hw, err := c.HighWatermark(topic, 0)
		return err == nil && hw == want
	})
	if err != nil {
		return errors.Join(errors.New("high watermark did not catch up with the LEO"), err)
	}
	return nil
}
