package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/harness"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/stack"
)

// transactionVersions run TestTransactionHanging.
var transactionVersions = []string{kafkaCurrent, kafka3}

// transactionsCommand is kafka-transactions.sh's main class.
const transactionsCommand = "org.apache.kafka.tools.TransactionsCommand"

// TestTransactionHanging: a transactional producer begins a
// transaction on a partition, writes to it and never ends it, while a plain
// producer keeps writing to the same partition. The LSO stays at the
// transaction's first offset while the HW moves on: within the stall
// threshold plus a refresh the leader's sidecar says the LSO is stalled,
// KafkaPartitionTransactionHanging fires in a real Prometheus, and the LSO
// is the start offset kafka-transactions.sh describe-producers reports.
// Aborting the transaction with kafka-transactions.sh abort --start-offset
// clears it within a refresh.
//
// How: topic txn RF 3 on [1,2,3], min ISR 2, the plain producer acks=all at 20 records/s; sidecars with
// --collector.last-stable-offset --collector.last-stable-offset.stall-threshold=10s, Prometheus with the shipped
// rules (time ÷30); a franz-go transactional producer (TransactionTimeout 60 s) writes 2 records to partition 0.
//
// Measured (four runs each, load average 7–9): on node 1's sidecar only, LSO = the transaction's first offset,
// last_stable_offset_stalled 1 10.5–12 s after it began,
// KafkaPartitionTransactionHanging{topic="txn",partition="0"} firing 13.6–15.5 s after; kafka-transactions
// describe-producers gives the same start offset, describe the transaction Ongoing on txn-0 for 16.4–23.3 s while
// the sidecar's lag_seconds says 14.9–22.7 s a moment later (the sidecar dates the LSO from its HW readings, within
// a refresh, 2 s); find-hanging --max-transaction-timeout 0 lists nothing (Kafka calls a transaction hanging only
// once its coordinator has lost it); abort --start-offset <LSO> → stalled 0 and the LSO past it 0–2 s after the
// tool returned, the alert resolved 1–3.5 s after. Wall time 37–54 s (3.9.1), 43–70 s (4.4.0).
func TestTransactionHanging(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Kafka cluster; skipped with -short")
	}
	for _, version := range transactionVersions {
		t.Run(version, func(t *testing.T) { testTransactionHanging(t, version) })
	}
}

func testTransactionHanging(t *testing.T, version string) {
	start := time.Now()
	defer func() { t.Logf("wall time %v", time.Since(start).Round(time.Second)) }()
	c := harness.StartT(t, harness.Options{Version: version})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The tools' jars, before anything is timed (a first run downloads them).
	_, err := harness.FetchTools(ctx, version)
	must(t, err)

	const topic = "txn"
	must(t, c.CreateTopic(ctx, harness.Topic{
		Name: topic, Assignment: [][]int32{{1, 2, 3}},
		Configs: map[string]string{"min.insync.replicas": "2"},
	}))
	// The plain producer: 20 records a second to the leader, all along.
	var wg sync.WaitGroup
	defer wg.Wait()
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	produceSteadily(runCtx, t, &wg, c, topic, sarama.WaitForAll, 50*time.Millisecond)

	const (
		threshold = 10 * time.Second
		refresh   = 2 * time.Second // stack.StartExporters' --kafka.refresh-interval
	)
	es, err := stack.StartExporters(ctx, c, exporterBinary(t),
		"--collector.last-stable-offset", "--collector.last-stable-offset.stall-threshold="+threshold.String())
	must(t, err)
	t.Cleanup(es.Close)
	s := &sidecars{t: t, es: es}
	var prom *stack.Prometheus
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
	s.eventually(ctx, 30*time.Second, "the LSO at the moving HW", func(m map[int32]stack.Metrics) string {
		return expect(m[1],
			gauge("kafka_replication_partition_last_stable_offset", p, gt(20)),
			gauge("kafka_replication_partition_last_stable_offset_stalled", p, eq(0)),
			gauge("kafka_replication_partition_last_stable_offset_lag_seconds", p, lt(refresh.Seconds()+1)))
	})

	// The transaction: begun, written to partition 0, never ended. Its
	// timeout bounds the scenario: the coordinator aborts it after 60s.
	txn, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.TransactionalID("lso-hanging"),
		kgo.TransactionTimeout(60*time.Second), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	must(t, err)
	defer txn.Close()
	must(t, txn.BeginTransaction())
	res := txn.ProduceSync(ctx,
		&kgo.Record{Topic: topic, Partition: 0, Value: []byte("open-1")},
		&kgo.Record{Topic: topic, Partition: 0, Value: []byte("open-2")})
	must(t, res.FirstErr())
	begun := time.Now()
	first := res[0].Record.Offset
	for _, r := range res {
		first = min(first, r.Record.Offset)
	}
	t.Logf("transaction begun at offset %d", first)

	// Stalled within the threshold and a refresh or two (the sidecar dates
	// the LSO from its HW readings before and after the transaction began).
	var lso, lagSeconds, hw float64
	took := s.eventually(ctx, threshold+3*refresh+5*time.Second, "the LSO stalled", func(m map[int32]stack.Metrics) string {
		lso, _ = m[1].Value("kafka_replication_partition_last_stable_offset", p)
		lagSeconds, _ = m[1].Value("kafka_replication_partition_last_stable_offset_lag_seconds", p)
		hw, _ = m[1].Value("kafka_replication_partition_high_watermark", p)
		bad := expect(m[1],
			gauge("kafka_replication_partition_last_stable_offset_stalled", p, eq(1)),
			gauge("kafka_replication_partition_last_stable_offset", p, eq(float64(first))),
			gauge("kafka_replication_partition_high_watermark", p, gt(float64(first)+20)))
		if bad == "" {
			bad = onlyOn(m, "kafka_replication_partition_last_stable_offset_stalled", topic, 0, 1)
		}
		return bad
	})
	t.Logf("Kafka %s: LSO %v stalled %v after the transaction began (threshold %v, seen %v after the first poll); held %vs, HW %v",
		version, lso, time.Since(begun).Round(100*time.Millisecond), threshold, took.Round(100*time.Millisecond), lagSeconds, hw)
	if lagSeconds < threshold.Seconds() || lagSeconds > time.Since(begun).Seconds()+refresh.Seconds() {
		t.Errorf("lag seconds %v: want at least the threshold %v and at most the transaction's age %v", lagSeconds, threshold, time.Since(begun))
	}
	if prom != nil {
		waitFiring(ctx, t, prom, fmt.Sprintf(`ALERTS{alertname="KafkaPartitionTransactionHanging", alertstate="firing", topic=%q, partition="0"}`, topic), 20*time.Second)
		t.Logf("KafkaPartitionTransactionHanging firing %v after the transaction began", time.Since(begun).Round(100*time.Millisecond))
	}

	// Kafka's own view. describe-producers: the open transaction's start
	// offset is the exporter's LSO.
	bs := "--bootstrap-server=" + strings.Join(c.Bootstrap(), ",")
	out, err := harness.RunKafkaTool(ctx, c, transactionsCommand, bs, "describe-producers", "--topic", topic, "--partition", "0")
	must(t, err)
	var producerID string
	for _, row := range parseToolTable(out) {
		if row["CurrentTransactionStartOffset"] == fmt.Sprint(first) {
			producerID = row["ProducerId"]
		}
	}
	if producerID == "" {
		t.Fatalf("describe-producers: no producer with a transaction open at %d:\n%s", first, out)
	}
	// describe: the coordinator still tracks it (Ongoing, with the partition).
	out, err = harness.RunKafkaTool(ctx, c, transactionsCommand, bs, "describe", "--transactional-id", "lso-hanging")
	must(t, err)
	rows := parseToolTable(out)
	if len(rows) != 1 || rows[0]["TransactionState"] != "Ongoing" || rows[0]["ProducerId"] != producerID ||
		!strings.Contains(rows[0]["TopicPartitions"], topic+"-0") {
		t.Fatalf("describe: want producer %s Ongoing on %s-0, got:\n%s", producerID, topic, out)
	}
	m, err := s.scrape(ctx)
	must(t, err)
	held, _ := m[1].Value("kafka_replication_partition_last_stable_offset_lag_seconds", p)
	t.Logf("the same moment: describe says the transaction has been open %sms, the exporter that the LSO has held consumers back %vs",
		rows[0]["TransactionDurationMs"], held)
	// find-hanging lists only what the coordinator no longer tracks: this
	// transaction is not hanging by its measure, only open too long.
	out, err = harness.RunKafkaTool(ctx, c, transactionsCommand, bs, "find-hanging", "--topic", topic, "--partition", "0", "--max-transaction-timeout", "0")
	must(t, err)
	if rows := parseToolTable(out); len(rows) != 0 {
		t.Errorf("find-hanging: want nothing (the coordinator tracks the transaction), got:\n%s", out)
	}

	// Abort it at the exporter's LSO, as the runbook says.
	_, err = harness.RunKafkaTool(ctx, c, transactionsCommand, bs, "abort", "--topic", topic, "--partition", "0", "--start-offset", strconv.FormatFloat(lso, 'f', 0, 64))
	must(t, err)
	aborted := time.Now()
	took = s.eventually(ctx, 3*refresh+5*time.Second, "the LSO moving again", func(m map[int32]stack.Metrics) string {
		return expect(m[1],
			gauge("kafka_replication_partition_last_stable_offset_stalled", p, eq(0)),
			gauge("kafka_replication_partition_last_stable_offset", p, gt(lso)),
			gauge("kafka_replication_partition_last_stable_offset_lag_seconds", p, lt(refresh.Seconds()+1)))
	})
	t.Logf("cleared %v after the abort", took.Round(100*time.Millisecond))
	if prom != nil {
		waitQuiet(ctx, t, prom, `ALERTS{alertname="KafkaPartitionTransactionHanging", alertstate="firing"}`, 20*time.Second)
		t.Logf("alert resolved %v after the abort", time.Since(aborted).Round(100*time.Millisecond))
	}
}

// parseToolTable reads kafka-transactions.sh's tables (a header row, then
// one row per line, tab-separated padded columns) into one map per row.
func parseToolTable(out string) []map[string]string {
	var header []string
	var rows []map[string]string
	for _, line := range strings.Split(out, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		cols := strings.Split(strings.TrimRight(line, "\t"), "\t")
		for i := range cols {
			cols[i] = strings.TrimSpace(cols[i])
		}
		if header == nil {
			header = cols
			continue
		}
		row := map[string]string{}
		for i, h := range header {
			if i < len(cols) {
				row[h] = cols[i]
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// waitFiring waits until query returns a series in Prometheus.
func waitFiring(ctx context.Context, t *testing.T, prom *stack.Prometheus, query string, within time.Duration) {
	t.Helper()
	waitQuery(ctx, t, prom, query, within, func(n int) bool { return n > 0 }, "firing")
}

// waitQuiet waits until query returns nothing in Prometheus.
func waitQuiet(ctx context.Context, t *testing.T, prom *stack.Prometheus, query string, within time.Duration) {
	t.Helper()
	waitQuery(ctx, t, prom, query, within, func(n int) bool { return n == 0 }, "quiet")
}

func waitQuery(ctx context.Context, t *testing.T, prom *stack.Prometheus, query string, within time.Duration, done func(int) bool, what string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		got, err := prom.Query(ctx, query)
		must(t, err)
		if done(len(got)) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not %s within %v: %v", query, what, within, got)
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(time.Second):
		}
	}
}
