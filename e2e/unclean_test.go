package e2e

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/harness"
)

// TestUncleanElection: on an RF 2 topic with unclean leader
// election enabled, the out-of-sync follower becomes leader while the old
// leader is down, takes new writes, and the old leader truncates acknowledged
// data below its high watermark when it comes back. verify must flag both the
// unclean election (controller.log) and the truncation below HW (old leader).
// The test logs the lines that make this visible.
//
// Steps: RF 2 topic on [1,2], min ISR 1, unclean election on; 10 acks=all; stop follower 2; 10 more acks=all (acked
// by leader 1 alone, HW 20); stop leader 1; start node 2; it becomes leader uncleanly; 5 acks=all on it; start node
// 1 → it truncates 20 → 10. 10 acknowledged messages are gone (HW ends at 15). no_unclean_election FAILS on the
// controller node's controller.log, no_truncation_below_hw on the old leader's server.log. On every version the
// controller elected node 2 by itself as soon as it was unfenced (the test sends ElectLeaders only if not).
//
// The lines, on 3.9.1:
//
//	controller.log (every controller):
//	INFO [QuorumController id=1] UNCLEAN partition change for unclean-0 with topic ID …: isr: [1] -> [2], leader: -1 -> 2, leaderRecoveryState: RECOVERED -> RECOVERING, leaderEpoch: 1 -> 2, partitionEpoch: 2 -> 3 (org.apache.kafka.controller.ReplicationControlManager)
//	new leader 2, state-change.log:
//	INFO [Broker id=2] The topic partition unclean-0 was marked as RECOVERING. Marking the topic partition as RECOVERED.
//	INFO [Broker id=2] Leader unclean-0 … starts at leader epoch 2 from offset 10 with partition epoch 3, high watermark 9, ISR [2], …
//	old leader 1, server.log:
//	INFO [Partition unclean-0 broker=1] Log loaded for partition unclean-0 with initial high watermark 20 (kafka.cluster.Partition)
//	INFO [ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Truncating partition unclean-0 with TruncationState(offset=10, completed=true) due to leader epoch and offset EpochEndOffset(…) (kafka.server.ReplicaFetcherThread)
//	INFO [UnifiedLog partition=unclean-0, dir=…] Truncating to offset 10 (kafka.log.UnifiedLog)
//	WARN [UnifiedLog partition=unclean-0, dir=…] Non-monotonic update of high watermark from (offset=20, segment=[0:1540]) to (offset=10, segment=[0:770]) (kafka.log.UnifiedLog)
//	old leader 1, state-change.log:
//	INFO [Broker id=1] Follower unclean-0 starts at leader epoch 2 from offset 20 with partition epoch 3 and high watermark 20. Current leader is 2. …
//
// No "Truncating … below high watermark" WARN on 3.9.1 or 4.1.1 (KAFKA-19474); 4.4.0 logs it on the old leader,
// between the fetcher's and UnifiedLog's truncation lines: "WARN [UnifiedLog partition=unclean-0, dir=…] Truncating
// unclean-0 to offset 10 below high watermark 20 (org.apache.kafka.storage.internals.log.UnifiedLog)" (the parser's
// truncation_below_hw). The reliable signal on 3.9.1 and 4.1.1 alike: "Log loaded … initial high watermark 20" (or
// the follower line's "high watermark 20"), then "Truncating partition … with TruncationState(offset=10, …)" and
// "Truncating to offset 10" (UnifiedLog), confirmed by the WARN "Non-monotonic update of high watermark from
// (offset=20, …) to (offset=10, …)". 4.1.1 prints the same lines (UnifiedLog logger
// org.apache.kafka.storage.internals.log.UnifiedLog).
//
// With the dedicated controller, node 101's controller.log also has the active controller's own line, "INFO Setting
// new leader for topicId …, partition 0 to 2 using an unclean election. Previous partition:
// PartitionRegistration(…) (org.apache.kafka.controller.PartitionChangeBuilder)", before the "UNCLEAN partition
// change" line (the 3.9.1 and 4.1.1 fixtures, taken from a combined node's controller.log, have only the latter);
// the checker counts the two as one election. 4.1.1 and 4.4.0 (ELR on by default) print the same UNCLEAN line plus
// the ELR fields: "isr: [] -> [2], leader: -1 -> 2, leaderRecoveryState: RECOVERED -> RECOVERING, leaderEpoch: 1 ->
// 2, elr: [1] -> [], lastKnownElr: [1] -> [], partitionEpoch: 2 -> 3": node 1 had been moved to the ELR when it
// stopped, so the ISR was empty. The fixtures are internal/logparse/testdata/real-*-unclean-*.log.
//
// Wall time 23 s (4.4.0), 22 s (4.1.1), 15 s (3.9.1).
func TestUncleanElection(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Kafka cluster; skipped with -short")
	}
	for _, version := range everyVersion {
		t.Run(version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
			defer cancel()
			c := harness.StartT(t, harness.Options{Version: version})
			testUnclean(ctx, t, c)
		})
	}
}

func testUnclean(ctx context.Context, t *testing.T, c *harness.Cluster) {
	const topic = "unclean"
	must(t, c.CreateTopic(ctx, harness.Topic{
		Name: topic, Assignment: [][]int32{{1, 2}},
		Configs: map[string]string{"min.insync.replicas": "1", "unclean.leader.election.enable": "true"},
	}))
	must(t, c.SetLogLevel(ctx, 1, "kafka.cluster.Partition", "TRACE"))
	must(t, c.SetLogLevel(ctx, 2, "kafka.cluster.Partition", "TRACE"))
	produceOK(ctx, t, c, topic, 10, sarama.WaitForAll)

	must(t, c.StopNode(ctx, 2)) // the follower misses what comes next
	_, err := c.WaitISR(ctx, topic, 0, 1)
	must(t, err)
	produceOK(ctx, t, c, topic, 10, sarama.WaitForAll) // acked by leader 1 alone (min ISR 1)
	hw, err := c.HighWatermark(topic, 0)
	must(t, err)
	if hw != 20 {
		t.Fatalf("HW before the unclean election = %d, want 20", hw)
	}

	must(t, c.StopNode(ctx, 1))
	must(t, c.StartNode(ctx, 2))
	st, err := c.Partition(topic, 0)
	must(t, err)
	t.Logf("after restarting node 2 alone: %+v", st)
	// Usually the controller elects node 2 by itself as soon as it is
	// unfenced. Otherwise ask for the unclean election, as an operator would
	// (the periodic one runs every 5 minutes) — and ask again while waiting:
	// before node 2 is unfenced the controller answers "election not needed"
	// (seen on 3.9.1).
	var electErr error
	st, err = c.WaitPartition(ctx, topic, 0, "node 2 leader", func(s harness.PartitionState) bool {
		if s.Leader == 2 {
			return true
		}
		electErr = c.ElectLeaders(sarama.UncleanElection, topic, 0)
		return false
	})
	if err != nil && electErr != nil {
		t.Logf("last unclean election request: %v", electErr)
	}
	must(t, err)
	t.Logf("unclean leader: %+v", st)
	must(t, c.SetLogLevel(ctx, 2, "kafka.cluster.Partition", "TRACE"))
	produceOK(ctx, t, c, topic, 5, sarama.WaitForAll) // offsets 10..14 now differ from node 1's

	must(t, c.StartNode(ctx, 1))
	_, err = c.WaitPartition(ctx, topic, 0, "node 1 back in the ISR", func(s harness.PartitionState) bool {
		return slices.Contains(s.ISR, 1)
	})
	must(t, err)
	hw, err = c.HighWatermark(topic, 0)
	must(t, err)
	t.Logf("HW after the old leader rejoined: %d (10 acked messages lost)", hw)

	// Record the evidence, file by file.
	evidence := regexp.MustCompile(`unclean-0|unclean with topic|UNCLEAN|nclean leader election`)
	ctrl := c.Controllers()[0]
	for _, id := range []int32{1, 2, ctrl.ID} {
		for _, file := range []string{"server.log", "state-change.log", "controller.log"} {
			lines, err := c.GrepLog(id, file, evidence)
			must(t, err)
			for _, l := range lines {
				if interesting(l) {
					t.Logf("node %d %s: %.300s", id, file, l)
				}
			}
		}
	}

	// The election is the controller's decision, logged on the controller node.
	ctrlLog, err := ctrl.LogFiles("controller.log")
	must(t, err)
	r := verify(t, ctrlLog...)
	if inv := r.invariant("no_unclean_election"); inv.Status != "FAILED" {
		t.Errorf("no_unclean_election = %s on controller %d controller.log, want FAILED\n%s", inv.Status, ctrl.ID, r.Raw)
	}
	old := serverLogs(t, c, 1)
	r = verify(t, old...)
	if inv := r.invariant("no_truncation_below_hw"); inv.Status != "FAILED" {
		t.Errorf("no_truncation_below_hw = %s on the old leader's server.log, want FAILED\n%s", inv.Status, r.Raw)
	}
	sc, err := c.Node(1).LogFiles("state-change.log")
	must(t, err)
	r = verify(t, append(sc, old...)...)
	t.Logf("old leader server.log+state-change.log: failed %v", r.failed())
}

// interesting keeps the lines that say something about leadership, HW or
// truncation (not the routine fetcher add/remove or log loading chatter).
func interesting(line string) bool {
	if strings.Contains(line, "] TRACE ") || strings.Contains(line, "] DEBUG ") {
		return false
	}
	for _, s := range []string{
		"Truncat", "high watermark", "UNCLEAN", "nclean", "starts at leader epoch",
		"RECOVERING", "Non-monotonic", "ISR updated", "Shrinking ISR", "caused truncation",
	} {
		if strings.Contains(line, s) {
			return true
		}
	}
	return false
}
