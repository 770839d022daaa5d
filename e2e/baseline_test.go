package e2e

import (
	"context"
	"regexp"
	"testing"

	"github.com/IBM/sarama"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/harness"
)

// testBaseline: with kafka.cluster.Partition at TRACE on every
// node, acks=all traffic is fully visible in server.log (HW advances, ack
// progress) and every broker's log passes verify.
//
// What it asserts: kafka.cluster.Partition=TRACE set at runtime on every node; 50 acks=all messages; HW = 50
// (ListOffsets); every broker's server.log passes verify; the leader has hw_update and complete isr_ack_progress
// (awaiting nobody) events.
//
// Kafka 4.4.0 against the parser: every replication line the parser reads has the same format on 4.4.0 as on 4.1.1
// (internal/logparse/testdata/real-4.4.0-*, same event kinds as the 4.1.1 fixtures). Differences seen: the WARN "Truncating
// … below high watermark" (TestUncleanElection); a DEBUG "Submitting"/"Ignoring failed ISR update to
// PendingShrinkIsr(outOfSyncReplicaIds=[3], …" prints a Java list where 3.9.1 and 4.1.1 print Set(3) (the parser
// reads only PendingExpandIsr's newInSyncReplicaId); with a dedicated controller the leader's AlterPartition answer
// usually arrives before the metadata, so expansions show as INFO "ISR updated to 1,2,3 and version updated to N"
// more often than as DEBUG "Ignoring failed ISR update to PendingExpandIsr".
//
// kafka.cluster.Partition does not exist as a logger until the broker hosts a partition:
// IncrementalAlterConfigs(BROKER_LOGGER) before the first topic answers "INVALID_CONFIG: Logger
// kafka.cluster.Partition does not exist!", and right after CreateTopics it fails on whichever broker has not
// created the partition yet. SetLogLevel retries that answer. Levels are lost on restart.
func testBaseline(ctx context.Context, t *testing.T, c *harness.Cluster) {
	const topic, messages = "baseline", 50
	must(t, c.CreateTopic(ctx, harness.Topic{
		Name: topic, Assignment: [][]int32{{1, 2, 3}},
		Configs: map[string]string{"min.insync.replicas": "2"},
	}))
	// Only after a partition exists on a broker does its Partition logger
	// exist; before, Kafka rejects the change ("Logger … does not exist!").
	must(t, c.SetLogLevelAll(ctx, "kafka.cluster.Partition", "TRACE"))

	res, err := c.Produce(ctx, topic, 0, messages, sarama.WaitForAll)
	must(t, err)
	if len(res.Errors) > 0 || len(res.Offsets) != messages {
		t.Fatalf("acks=all produce: %d ok, errors %v", len(res.Offsets), res.Errors)
	}
	hw, err := c.HighWatermark(topic, 0)
	must(t, err)
	if hw != messages {
		t.Errorf("high watermark = %d, want %d", hw, messages)
	}
	got, err := c.Consume(ctx, topic, 0, sarama.OffsetOldest, messages)
	must(t, err)
	if len(got) != messages || got[0] != "message 0" {
		t.Errorf("consumed %d messages, first %q", len(got), got[0])
	}
	// Leader 1 logs its last HW advance; wait for it rather than for time.
	_, err = c.WaitLogLine(ctx, 1, "server.log",
		regexp.MustCompile(`\[Partition baseline-0 broker=1\] High watermark updated from .* to \(offset=50,`))
	must(t, err)

	for _, n := range c.Nodes() {
		r := verify(t, serverLogs(t, c, n.ID)...)
		if failed := r.failed(); len(failed) > 0 || r.ExitCode != 0 {
			t.Errorf("node %d: verify failed %v (exit %d):\n%s", n.ID, failed, r.ExitCode, r.Raw)
		}
	}
	evs := events(t, serverLogs(t, c, 1)...)
	if n := len(ofType(evs, "hw_update", topic)); n == 0 {
		t.Errorf("no hw_update events for %s on the leader", topic)
	}
	complete := 0
	for _, e := range ofType(evs, "isr_ack_progress", topic) {
		if len(e.list("awaiting")) == 0 {
			complete++
		}
	}
	if complete == 0 {
		t.Errorf("no complete isr_ack_progress events (awaiting nobody) for %s", topic)
	}
	t.Logf("leader events for %s: hw_update=%d isr_ack_progress complete=%d", topic,
		len(ofType(evs, "hw_update", topic)), complete)
}
