package e2e

import (
	"context"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/harness"
)

// testSlowFollower: a follower is frozen with
// SIGSTOP, like a long GC pause, while the leader keeps taking writes. It
// leaves the ISR after replica.lag.time.max.ms (leader-driven: "Shrinking
// ISR"), and rejoins after SIGCONT. The test logs the timings.
//
// What it asserts: SIGSTOP of follower 3 with acks=1 traffic → the leader-driven "Shrinking ISR from 1,2,3 to 1,2";
// SIGCONT → back in the ISR; an isr_shrink event; verify passes.
//
// Seen: the leader logged "INFO [Partition slow-follower-0 broker=1] Shrinking ISR from 1,2,3 to 1,2. Leader:
// (highWatermark: 10, endOffset: 20). Out of sync replicas: (brokerId: 3, endOffset: 10, lastCaughtUpTimeMs: …)"
// 5.7 s after SIGSTOP (3.9.1), i.e. replica.lag.time.max.ms (5 s) plus up to one check interval (2.5 s). With the
// dedicated controller the follower leaves the admin API's ISR 5.3 s (4.4.0) / 6.1 s (3.9.1) after the pause and is
// back 0.3 s after SIGCONT (10–12 s with combined nodes, when the paused node was the active controller and the
// AlterPartition waited for a new one). The shrink must come before the controller fences the frozen broker: with
// an 8 s session the fence won once under load (7.6 s), so the cluster runs harness.LeaderShrinksFirst (12 s);
// seen since: the admin ISR [1 2] 5.5 s after SIGSTOP on 4.4.0 and 3.9.1.
func testSlowFollower(ctx context.Context, t *testing.T, c *harness.Cluster) {
	const topic = "slow-follower"
	must(t, c.CreateTopic(ctx, harness.Topic{Name: topic, Assignment: [][]int32{{1, 2, 3}}}))
	produceOK(ctx, t, c, topic, 10, sarama.WaitForAll)

	paused := time.Now()
	must(t, c.PauseNode(3))
	t.Logf("SIGSTOP node 3 at %s", paused.Format("15:04:05.000"))
	produceOK(ctx, t, c, topic, 10, sarama.WaitForLocal)
	st, err := c.WaitPartition(ctx, topic, 0, "node 3 out of the ISR", func(s harness.PartitionState) bool {
		return !slices.Contains(s.ISR, 3)
	})
	shrunk := time.Since(paused)
	if err != nil {
		must(t, c.ResumeNode(3))
		t.Fatal(err)
	}
	line, err := c.WaitLogLine(ctx, 1, "server.log",
		regexp.MustCompile(`\[Partition slow-follower-0 broker=1\] Shrinking ISR from [0-9,]+ to (1,2|2,1)\.`))
	if err != nil {
		t.Errorf("leader-driven shrink not logged: %v", err)
	}
	t.Logf("Kafka %s: ISR %v seen by the admin API %.1fs after SIGSTOP; leader logged: %s",
		c.Version(), st.ISR, shrunk.Seconds(), line)

	resumed := time.Now()
	must(t, c.ResumeNode(3))
	t.Logf("SIGCONT node 3 at %s", resumed.Format("15:04:05.000"))
	st, err = c.WaitPartition(ctx, topic, 0, "node 3 back in the ISR", func(s harness.PartitionState) bool {
		return slices.Contains(s.ISR, 3)
	})
	must(t, err)
	t.Logf("Kafka %s: ISR %v %.1fs after SIGCONT", c.Version(), st.ISR, time.Since(resumed).Seconds())
	// Whether the controller also fenced node 3 while it was frozen.
	fenced, _ := c.GrepLog(c.Controllers()[0].ID, "controller.log", regexp.MustCompile(`Fencing broker 3 `))
	t.Logf("controller.log fencing lines for broker 3: %d", len(fenced))

	evs := events(t, serverLogs(t, c, 1)...)
	if len(ofType(evs, "isr_shrink", topic)) == 0 {
		t.Errorf("no isr_shrink event for %s on the leader", topic)
	}
	verifyAllPass(t, c)
}
