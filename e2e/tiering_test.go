package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/harness"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/stack"
)

// tieringVersions run TestTiering: the 4.1 line of the matrix, the newest
// whose kafka-storage test jar Maven Central has (none from 4.2 on), with
// that jar's LocalTieredStorage as remote storage: a jar of another line
// does not load (4.4 moved classes it uses, such as LogContext). Tiered
// storage is production-ready since 3.9, and the exporter's read is the
// same on every version with ListOffsets v9.
var tieringVersions = []string{kafkaELR}

const localTieredStorage = "org.apache.kafka.server.log.remote.storage.LocalTieredStorage"

// TestTiering: tiered storage with Kafka's own LocalTieredStorage. While
// replication is healthy the leader's sidecar shows the tiered offset moving
// and the tiering lag within a few segments; with both followers frozen
// under acks=1 traffic the HW stalls, nothing more is copied, and the
// sidecar says tiering is stalled with cause hw_stalled, its tiered offset
// the one ListOffsets −5 from the test's own client answers; after SIGCONT
// it clears. Then a transaction left open holds the LSO while the HW moves
// on: cause lso_stuck, cleared by the abort. The topic dashboard's tiering row
// has data in that Prometheus (the alert loop, without tiering, skips it).
//
// How: topic tiered RF 3 on [1,2,3], min ISR 2, remote.storage.enable=true, local.retention.ms=1000,
// segment.bytes 1 MiB; an acks=1 producer of 1 KiB records in batches of 20 (up to 1 MiB/s); brokers with
// remote.log.manager.task.interval.ms=1000, the default TopicBasedRemoteLogMetadataManager; sidecars with
// --collector.tiered-storage --collector.tiered-storage.stall-threshold=10s --stall.threshold=10s
// --collector.last-stable-offset --collector.last-stable-offset.stall-threshold=10s, Prometheus with the shipped
// rules (time ÷30); a franz-go transactional producer writes one record to partition 0 and aborts 12 s later.
//
// Measured (4.1.1, one run, load ≈2): tiering under way 28 s after the sidecars started (tiered offset 25000, local
// segments deleted); stalled with cause hw_stalled 14 s after the freeze, tiered offset 27000 = ListOffsets −5,
// lag 1000 (the records below the stalled HW in the active segment); KafkaPartitionTieringStalledByReplication
// firing 25 s after the freeze; the tiered offset moving and the verdict gone 3 s after the thaw. Second run, with
// the transaction: the same within a second or two, lso_stuck 12 s after the transaction began, cleared 2 s after
// the abort; wall time 84 s with the cluster start.
func TestTiering(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Kafka cluster; skipped with -short")
	}
	for _, version := range tieringVersions {
		t.Run(version, func(t *testing.T) { testTiering(t, version) })
	}
}

func testTiering(t *testing.T, version string) {
	start := time.Now()
	defer func() { t.Logf("wall time %v", time.Since(start).Round(time.Second)) }()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	rsm, err := harness.FetchTieredStorage(ctx, version)
	must(t, err)
	remote := t.TempDir()
	tiered := map[string]string{
		"remote.log.storage.system.enable":      "true",
		"remote.log.storage.manager.class.name": localTieredStorage,
		"remote.log.storage.manager.class.path": rsm,
		// A directory, so that LocalTieredStorage needs none of its test utilities.
		"rsm.config.dir": remote,
		"remote.log.metadata.manager.listener.name":                "PLAINTEXT",
		"rlmm.config.remote.log.metadata.topic.num.partitions":     "1",
		"rlmm.config.remote.log.metadata.topic.replication.factor": "3",
		"remote.log.manager.task.interval.ms":                      "1000",
		"log.retention.check.interval.ms":                          "1000",
	}
	c := harness.StartT(t, harness.Options{
		Version: version, BrokerConfig: tiered,
		ControllerConfig: map[string]string{"remote.log.storage.system.enable": "true"},
	})

	const (
		topic        = "tiered"
		segmentBytes = 1 << 20
		recordBytes  = 1024
	)
	must(t, c.CreateTopic(ctx, harness.Topic{
		Name: topic, Assignment: [][]int32{{1, 2, 3}},
		Configs: map[string]string{
			"min.insync.replicas": "2", "remote.storage.enable": "true", "local.retention.ms": "1000",
			"segment.bytes": fmt.Sprint(segmentBytes),
		},
	}))
	// About a thousand records a segment.
	const segmentRecords = segmentBytes / (recordBytes + 70)

	var wg sync.WaitGroup
	defer wg.Wait()
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	prod, err := c.Producer(sarama.WaitForLocal)
	must(t, err)
	t.Cleanup(func() { _ = prod.Close() })
	value := sarama.ByteEncoder(strings.Repeat("t", recordBytes))
	wg.Go(func() {
		batch := make([]*sarama.ProducerMessage, 20)
		for runCtx.Err() == nil {
			for i := range batch {
				batch[i] = &sarama.ProducerMessage{Topic: topic, Partition: 0, Value: value}
			}
			_ = prod.SendMessages(batch)
			time.Sleep(20 * time.Millisecond)
		}
	})

	const threshold = 10 * time.Second
	es, err := stack.StartExporters(ctx, c, exporterBinary(t), "--stall.threshold="+threshold.String(),
		"--collector.tiered-storage", "--collector.tiered-storage.stall-threshold="+threshold.String(),
		"--collector.last-stable-offset", "--collector.last-stable-offset.stall-threshold="+threshold.String())
	must(t, err)
	t.Cleanup(es.Close)
	s := &sidecars{t: t, es: es}
	var prom *stack.Prometheus
	promStarted := time.Now()
	if _, err := stack.Tool("prometheus"); err != nil {
		t.Logf("rule checks skipped: %v", err)
	} else {
		dir := t.TempDir()
		rules := filepath.Join(dir, "kafka-replication.rules.yml")
		must(t, stack.ScaleRuleFile("../alerts/kafka-replication.rules.yml", rules, ruleScale, ruleFloor))
		prom, err = stack.StartPrometheus(ctx, dir, es.Targets(), []string{rules}, "", time.Second)
		must(t, err)
		t.Cleanup(prom.Close)
	}

	p := part(topic, 0)
	// Healthy: segments are copied as they roll, the lag stays within a few.
	var firstTiered float64
	took := s.eventually(ctx, 90*time.Second, "tiering under way", func(m map[int32]stack.Metrics) string {
		firstTiered, _ = m[1].Value("kafka_replication_partition_tiered_offset", p)
		return expect(m[1],
			gauge("kafka_replication_partition_tiered_offset", p, gt(float64(segmentRecords))),
			gauge("kafka_replication_partition_local_log_start_offset", p, gt(0)),
			gauge("kafka_replication_partition_tiering_lag_offsets", p, lt(4*segmentRecords))) +
			noTieringStall(m[1], topic)
	})
	t.Logf("Kafka %s: tiering under way %v after the sidecars started, tiered offset %v", version, took.Round(time.Second), firstTiered)
	s.eventually(ctx, 30*time.Second, "the tiered offset moving, the lag within a few segments", func(m map[int32]stack.Metrics) string {
		return expect(m[1],
			gauge("kafka_replication_partition_tiered_offset", p, gt(firstTiered)),
			gauge("kafka_replication_partition_tiering_lag_offsets", p, lt(4*segmentRecords))) +
			noTieringStall(m[1], topic)
	})

	// Both followers frozen: acks=1 goes on, the HW stalls under min ISR,
	// nothing above it is copied.
	frozen := time.Now()
	must(t, c.PauseNode(2))
	must(t, c.PauseNode(3))
	defer func() { _ = c.ResumeNode(2); _ = c.ResumeNode(3) }()
	stalled := map[string]string{"topic": topic, "partition": "0", "cause": "hw_stalled"}
	var exported, lag float64
	took = s.eventually(ctx, 100*time.Second, "tiering stalled by the HW", func(m map[int32]stack.Metrics) string {
		exported, _ = m[1].Value("kafka_replication_partition_tiered_offset", p)
		lag, _ = m[1].Value("kafka_replication_partition_tiering_lag_offsets", p)
		return expect(m[1],
			gauge("kafka_replication_partition_tiering_stalled", stalled, eq(1)),
			gauge("kafka_replication_partition_high_watermark_stalled", p, eq(1)))
	})
	t.Logf("tiering stalled (hw_stalled) %v after the freeze; tiered offset %v, lag %v", took.Round(time.Second), exported, lag)
	// Kafka's own answer, from the test's client: the offset stands still now.
	kafkaTiered := latestTiered(ctx, t, c, topic)
	m, err := s.scrape(ctx)
	must(t, err)
	exported, _ = m[1].Value("kafka_replication_partition_tiered_offset", p)
	if float64(kafkaTiered) != exported {
		t.Errorf("ListOffsets -5 answers %d, the exporter says %v", kafkaTiered, exported)
	}
	if prom != nil {
		waitFiring(ctx, t, prom, fmt.Sprintf(`ALERTS{alertname="KafkaPartitionTieringStalledByReplication", alertstate="firing", topic=%q, partition="0", cause="hw_stalled"}`, topic), 30*time.Second)
		t.Logf("KafkaPartitionTieringStalledByReplication firing %v after the freeze", time.Since(frozen).Round(time.Second))
	}

	must(t, c.ResumeNode(2))
	must(t, c.ResumeNode(3))
	thawed := time.Now()
	s.eventually(ctx, 90*time.Second, "tiering moving again", func(m map[int32]stack.Metrics) string {
		return expect(m[1], gauge("kafka_replication_partition_tiered_offset", p, gt(exported))) + noTieringStall(m[1], topic)
	})
	t.Logf("tiering moving again, the verdict cleared, %v after the thaw", time.Since(thawed).Round(time.Second))
	if prom != nil {
		// The tiering row of the topic dashboard, over the healthy and the stalled tiering.
		checkDashboardPanels(ctx, t, prom, promStarted, topic, tieringPanel)
	}

	// A transaction left open: the LSO stays at its first offset while the
	// HW moves on, and the broker copies nothing above the LSO.
	txn, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.TransactionalID("tiering-hanging"),
		kgo.TransactionTimeout(90*time.Second), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	must(t, err)
	defer txn.Close()
	must(t, txn.BeginTransaction())
	must(t, txn.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: 0, Value: []byte("open")}).FirstErr())
	begun := time.Now()
	stuck := map[string]string{"topic": topic, "partition": "0", "cause": "lso_stuck"}
	took = s.eventually(ctx, 60*time.Second, "tiering stalled by the LSO", func(m map[int32]stack.Metrics) string {
		return expect(m[1],
			gauge("kafka_replication_partition_tiering_stalled", stuck, eq(1)),
			gauge("kafka_replication_partition_last_stable_offset_stalled", p, eq(1)),
			gauge("kafka_replication_partition_high_watermark_stalled", p, eq(0)))
	})
	t.Logf("tiering stalled (lso_stuck) %v after the transaction began", took.Round(time.Second))
	must(t, txn.EndTransaction(ctx, kgo.TryAbort))
	ended := time.Now()
	s.eventually(ctx, 60*time.Second, "tiering moving again after the abort", func(m map[int32]stack.Metrics) string {
		return noTieringStall(m[1], topic)
	})
	t.Logf("cleared %v after the abort (open %v)", time.Since(ended).Round(time.Second), ended.Sub(begun).Round(time.Second))
}

// noTieringStall complains of any tiering_stalled series of topic.
func noTieringStall(m stack.Metrics, topic string) string {
	for _, cause := range []string{"hw_stalled", "lso_stuck", "remote"} {
		if v, ok := m.Value("kafka_replication_partition_tiering_stalled", map[string]string{"topic": topic, "partition": "0", "cause": cause}); ok {
			return fmt.Sprintf("; tiering_stalled{cause=%q} = %v", cause, v)
		}
	}
	return ""
}

// latestTiered asks broker 1, the leader, for partition 0's ListOffsets −5.
func latestTiered(ctx context.Context, t *testing.T, c *harness.Cluster, topic string) int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()[0]))
	must(t, err)
	defer cl.Close()
	req := kmsg.NewPtrListOffsetsRequest()
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition, rp.Timestamp = 0, -5
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl.Broker(1))
	must(t, err)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("ListOffsets -5: unexpected answer %+v", resp)
	}
	got := resp.Topics[0].Partitions[0]
	must(t, kerr.ErrorForCode(got.ErrorCode))
	return got.Offset
}
