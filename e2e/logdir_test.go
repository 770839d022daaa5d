package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/harness"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/stack"
)

// TestLogDirFailure (issue 20 item 2): broker 3 has two log directories and
// the second is replaced by a file while the broker runs. Kafka's own
// answers — Metadata's offline replicas, DescribeLogDirs' KAFKA_STORAGE_ERROR
// — against the exporter: each partition whose replica 3 Metadata lists as
// offline has `partition_replica_offline{replica="3"}` 1 on its leader's
// sidecar and no `partition_replica_lag{replica="3"}`.
func TestLogDirFailure(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Kafka cluster; skipped with -short")
	}
	const (
		topic      = "logdir"
		partitions = 6
		victim     = 3
	)
	began := time.Now()
	c := harness.StartT(t, harness.Options{Version: kafkaCurrent, NodeConfig: func(n *harness.Node) map[string]string {
		if n.ID == victim {
			return map[string]string{"log.dirs": n.DataDir + "," + n.DataDir + "-b"}
		}
		return nil
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	must(t, c.CreateTopic(ctx, harness.Topic{Name: topic, Partitions: partitions, Configs: map[string]string{"min.insync.replicas": "2"}}))
	es, err := stack.StartExporters(ctx, c, exporterBinary(t), "--kafka.refresh-interval=2s")
	must(t, err)
	defer es.Close()
	s := &sidecars{t: t, es: es}
	for p := range int32(partitions) {
		_, err := c.Produce(ctx, topic, p, 5, sarama.WaitForLocal)
		must(t, err)
	}

	second := c.Node(victim).DataDir + "-b"
	entries, err := os.ReadDir(second)
	must(t, err)
	var inSecond []string
	for _, e := range entries {
		if len(e.Name()) > len(topic) && e.Name()[:len(topic)+1] == topic+"-" {
			inSecond = append(inSecond, e.Name())
		}
	}
	if len(inSecond) == 0 {
		t.Fatalf("no replica of %s in %s; Kafka put them all in the first directory", topic, second)
	}
	broke := time.Now()
	must(t, os.Rename(second, second+".gone"))
	must(t, os.WriteFile(second, []byte("not a directory\n"), 0o644))
	// Writes make the broker touch the directory: appends as leader or
	// follower fail with an IOException and the directory goes offline.
	for p := range int32(partitions) {
		_, _ = c.Produce(ctx, topic, p, 5, sarama.WaitForLocal)
	}

	offline := map[int32]bool{}
	_ = waitFor(ctx, 60*time.Second, func() bool {
		for p := range int32(partitions) {
			st, err := c.Partition(topic, p)
			if err == nil && slices.Contains(st.Offline, victim) {
				offline[p] = true
			}
		}
		return len(offline) == len(inSecond)
	})
	kafkaAt := time.Since(broke)
	if len(offline) == 0 {
		t.Fatalf("Metadata lists no offline replica %d within 60 s; replicas in the second directory: %v", victim, inSecond)
	}
	t.Logf("replicas in %s: %v; Metadata offline replica %d on %d partitions %.1fs after the directory was replaced by a file", second, inSecond, victim, len(offline), kafkaAt.Seconds())

	adm, err := c.Admin()
	must(t, err)
	dirs, err := adm.DescribeLogDirs([]int32{victim})
	must(t, err)
	for _, d := range dirs[victim] {
		t.Logf("DescribeLogDirs broker %d: %s error %v, %d topics", victim, d.Path, d.ErrorCode, len(d.Topics))
		if d.Path == second && d.ErrorCode != sarama.ErrKafkaStorageError {
			t.Errorf("DescribeLogDirs: %s answered %v, want KAFKA_STORAGE_ERROR", d.Path, d.ErrorCode)
		}
	}

	took := s.eventually(ctx, 15*time.Second, "each offline replica exported as offline by its leader's sidecar", func(m map[int32]stack.Metrics) string {
		for p := range offline {
			st, err := c.Partition(topic, p)
			if err != nil {
				return err.Error()
			}
			rep := map[string]string{"topic": topic, "partition": fmt.Sprint(p), "replica": strconv.Itoa(victim)}
			if msg := expect(m[st.Leader], gauge("kafka_replication_partition_replica_offline", rep, eq(1))); msg != "" {
				return fmt.Sprintf("sidecar %d: %s", st.Leader, msg)
			}
			if m[st.Leader].Count("kafka_replication_partition_replica_lag", rep) > 0 {
				return fmt.Sprintf("sidecar %d still exports a lag for offline replica %d of %s-%d", st.Leader, victim, topic, p)
			}
		}
		return ""
	})
	t.Logf("exporter: partition_replica_offline{replica=\"%d\"} 1 on every such partition %.1fs after Kafka's Metadata; scenario %v",
		victim, took.Seconds(), time.Since(began).Round(time.Second))
}
