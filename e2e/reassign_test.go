package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"go.yaml.in/yaml/v3"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/harness"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/stack"
)

const (
	reassignTopic = "moving"
	// The backlog the new replica copies under the throttle: about 15 s at
	// throttleRate, several refreshes of the sidecar (2 s).
	backlogMessages = 1500
	messageBytes    = 1024
	throttleRate    = 100 * 1024 // bytes per second
)

// TestReassignment: raising a topic's RF from 2 to 3 with a
// throttled reassignment, while an acks=all producer keeps writing, makes the
// partition under-replicated and at min ISR by design. The leader's sidecar
// says it is a reassignment (reassigning 1, under-replicated by reassignment
// 1) and back to 0 when done with ISR 3; Prometheus, evaluating the shipped
// rules time-scaled, never has KafkaPartitionUnderReplicated or
// KafkaPartitionAtMinISR even pending for it.
//
// What it asserts: topic moving, RF 2 on [1,2], min ISR 2, 1.5 MiB backlog; sidecars and Prometheus with the
// shipped rules time-scaled (÷30); acks=all every 250 ms; throttle 100 KiB/s, AlterPartitionReassignments to
// [1,2,3] → the leader's sidecar: reassigning 1, adding 1, replicas 3, ISR 2, under-replicated 1 and under-
// replicated-by-reassignment 1; then reassigning 0, ISR 3; the move lasts at least 3 refreshes; no acks=all
// failure; in Prometheus the URP, at-min-ISR and reassigning series reached 1, yet ALERTS for
// KafkaPartitionUnderReplicated and KafkaPartitionAtMinISR never existed for the topic (not even pending) and both
// rules' expressions, evaluated every second over the move, returned nothing.
//
// A replication throttle is checked between fetches, so one fetch can take up to replica.fetch.max.bytes (1 MiB by
// default) before it bites: with the default the 1.5 MiB backlog moved in 11.5 s, faster than its 15 s at 100
// KiB/s; the cluster of this scenario lowers the fetch size to 64 KiB so the copy follows the rate. At 100 KiB/s
// the move then lasted 18.5–19.5 s on the sidecar (ListPartitionReassignments listed adding [3] at once; the
// sidecar showed it 0.5–1.5 s after AlterPartitionReassignments), while 80 acks=all sends every 250 ms all
// succeeded: the ISR [1 2] met min ISR 2 throughout, and Kafka throttles only replicas outside the ISR. During the
// move the partition is under-replicated and at min ISR (RF 3 counts the adding replica), which is what the two
// alerts' "unless … under_replicated_by_reassignment" exists for. Wall time 46 s alone.
func TestReassignment(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Kafka cluster and Prometheus; skipped with -short")
	}
	if _, err := stack.Tool("prometheus"); err != nil {
		t.Skip(err)
	}
	start := time.Now()
	defer func() { t.Logf("TestReassignment wall time %v", time.Since(start).Round(time.Second)) }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	// Small fetches, so the throttle paces the copy: it is checked between
	// fetches, and one default fetch (1 MiB) takes most of the backlog.
	c := harness.StartT(t, harness.Options{
		Version:      kafkaCurrent,
		BrokerConfig: map[string]string{"replica.fetch.max.bytes": "65536"},
	})
	must(t, c.CreateTopic(ctx, harness.Topic{
		Name: reassignTopic, Assignment: [][]int32{{1, 2}},
		Configs: map[string]string{"min.insync.replicas": "2"},
	}))
	produceBacklog(t, c, reassignTopic, backlogMessages, messageBytes)

	es, err := stack.StartExporters(ctx, c, exporterBinary(t))
	must(t, err)
	t.Cleanup(es.Close)
	s := &sidecars{t: t, es: es}
	dir := t.TempDir()
	rules := filepath.Join(dir, "kafka-replication.rules.yml")
	must(t, stack.ScaleRuleFile("../alerts/kafka-replication.rules.yml", rules, ruleScale, ruleFloor))
	prom, err := stack.StartPrometheus(ctx, dir, es.Targets(), []string{rules}, "", time.Second)
	must(t, err)
	t.Cleanup(prom.Close)

	moving := part(reassignTopic, 0)
	s.eventually(ctx, 20*time.Second, "leader's sidecar: RF 2, ISR 2, no reassignment", func(m map[int32]stack.Metrics) string {
		return expect(m[1],
			gauge("kafka_replication_partition_replicas", moving, eq(2)),
			gauge("kafka_replication_partition_in_sync_replicas", moving, eq(2)),
			gauge("kafka_replication_partition_reassigning", moving, eq(0)),
			gauge("kafka_replication_partition_under_replicated_by_reassignment", moving, eq(0)))
	})

	var sent, failed atomic.Int64
	trafficCtx, stopTraffic := context.WithCancel(ctx)
	var traffic sync.WaitGroup
	traffic.Go(func() { produceAcksAll(trafficCtx, c, reassignTopic, 250*time.Millisecond, &sent, &failed) })
	defer func() { stopTraffic(); traffic.Wait() }()

	must(t, c.SetReplicationThrottle(reassignTopic, throttleRate))
	began := time.Now()
	must(t, c.Reassign(reassignTopic, 0, []int32{1, 2, 3}))
	if st, err := c.Reassignment(reassignTopic, 0); err != nil || st == nil {
		t.Fatalf("Kafka lists no reassignment of %s-0 right after starting it (err %v)", reassignTopic, err)
	} else {
		t.Logf("Kafka: reassignment of %s-0 in progress, replicas %v adding %v removing %v", reassignTopic, st.Replicas, st.AddingReplicas, st.RemovingReplicas)
	}

	seen := s.eventually(ctx, 30*time.Second, "leader's sidecar: a reassignment, not an outage", func(m map[int32]stack.Metrics) string {
		return expect(m[1],
			gauge("kafka_replication_partition_reassigning", moving, eq(1)),
			gauge("kafka_replication_partition_reassignment_adding_replicas", moving, eq(1)),
			gauge("kafka_replication_partition_replicas", moving, eq(3)),
			gauge("kafka_replication_partition_in_sync_replicas", moving, eq(2)),
			gauge("kafka_replication_partition_under_replicated", moving, eq(1)),
			gauge("kafka_replication_partition_under_replicated_by_reassignment", moving, eq(1)))
	})
	t.Logf("sidecar showed the reassignment %v after it began", seen.Round(100*time.Millisecond))

	done := s.eventually(ctx, 2*time.Minute, "leader's sidecar: reassignment done, ISR 3", func(m map[int32]stack.Metrics) string {
		return expect(m[1],
			gauge("kafka_replication_partition_reassigning", moving, eq(0)),
			gauge("kafka_replication_partition_replicas", moving, eq(3)),
			gauge("kafka_replication_partition_in_sync_replicas", moving, eq(3)),
			gauge("kafka_replication_partition_under_replicated", moving, eq(0)),
			gauge("kafka_replication_partition_under_replicated_by_reassignment", moving, eq(0)))
	})
	lasted := seen + done
	t.Logf("reassignment of %s-0 lasted %v on the sidecar (throttle %d KiB/s, backlog %d KiB)", reassignTopic,
		lasted.Round(100*time.Millisecond), throttleRate/1024, backlogMessages*messageBytes/1024)
	if lasted < 3*2*time.Second {
		t.Errorf("the reassignment lasted %v, under three refreshes: the throttle did not slow it", lasted)
	}
	if st, err := c.Reassignment(reassignTopic, 0); err != nil || st != nil {
		t.Errorf("Kafka still lists a reassignment of %s-0 (%+v, err %v)", reassignTopic, st, err)
	}
	st, err := c.WaitISR(ctx, reassignTopic, 0, 3)
	must(t, err)
	t.Logf("Kafka: %s-0 %+v", reassignTopic, st)
	must(t, c.SetReplicationThrottle(reassignTopic, 0))
	stopTraffic()
	traffic.Wait()
	if failed.Load() > 0 {
		t.Errorf("acks=all produce failed %d of %d times during the reassignment", failed.Load(), sent.Load())
	}
	t.Logf("acks=all producer: %d sent, %d failed", sent.Load(), failed.Load())

	// Prometheus: two scrapes after the end, then look back over the whole move.
	time.Sleep(3 * time.Second)
	window := fmt.Sprintf("%ds", int(time.Since(began).Seconds())+5)
	sel := fmt.Sprintf(`{cluster="local",topic=%q}`, reassignTopic)
	for _, name := range []string{
		"kafka_replication_partition_reassigning", "kafka_replication_partition_under_replicated",
		"kafka_replication_partition_at_min_isr", "kafka_replication_partition_under_replicated_by_reassignment",
	} {
		res, err := prom.Query(ctx, fmt.Sprintf("max_over_time(%s%s[%s])", name, sel, window))
		must(t, err)
		if len(res) != 1 || res[0].Value != 1 {
			t.Errorf("Prometheus: max of %s over the move = %v, want one series at 1", name, res)
		}
	}
	alerts := []string{"KafkaPartitionUnderReplicated", "KafkaPartitionAtMinISR"}
	res, err := prom.Query(ctx, fmt.Sprintf(`max_over_time(ALERTS{alertname=~%q,topic=%q}[%s])`, strings.Join(alerts, "|"), reassignTopic, window))
	must(t, err)
	for _, a := range res {
		t.Errorf("alert %s %s during the reassignment: %v", a.Labels["alertname"], a.Labels["alertstate"], a.Labels)
	}
	// The rule's condition at every step of the move, not only where the
	// rule engine happened to evaluate it.
	for name, expr := range alertExprs(t, rules, alerts...) {
		series, err := prom.QueryRange(ctx, expr, began.Add(-2*time.Second), time.Now(), time.Second)
		must(t, err)
		for _, sr := range series {
			if sr.Labels["topic"] == reassignTopic {
				t.Errorf("%s's expression held for %s during the reassignment at %d steps", name, reassignTopic, len(sr.Values))
			}
		}
	}
}

// produceBacklog writes n messages of size bytes with acks=all, batched.
func produceBacklog(t *testing.T, c *harness.Cluster, topic string, n, size int) {
	t.Helper()
	p, err := c.Producer(sarama.WaitForAll)
	must(t, err)
	defer p.Close()
	value := sarama.ByteEncoder(make([]byte, size))
	msgs := make([]*sarama.ProducerMessage, n)
	for i := range msgs {
		msgs[i] = &sarama.ProducerMessage{Topic: topic, Partition: 0, Value: value}
	}
	must(t, p.SendMessages(msgs))
}

// produceAcksAll sends one acks=all message every interval with one
// producer until ctx ends, counting sends and failures.
func produceAcksAll(ctx context.Context, c *harness.Cluster, topic string, interval time.Duration, sent, failed *atomic.Int64) {
	p, err := c.Producer(sarama.WaitForAll)
	if err != nil {
		failed.Add(1)
		return
	}
	defer p.Close()
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	value := sarama.ByteEncoder(make([]byte, messageBytes))
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			sent.Add(1)
			if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: topic, Partition: 0, Value: value}); err != nil {
				failed.Add(1)
			}
		}
	}
}

// alertExprs reads the expressions of the named alerts from a rule file.
func alertExprs(t *testing.T, file string, names ...string) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(file)
	must(t, err)
	var doc struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	must(t, yaml.Unmarshal(raw, &doc))
	out := map[string]string{}
	for _, g := range doc.Groups {
		for _, r := range g.Rules {
			for _, n := range names {
				if r.Alert == n {
					out[n] = r.Expr
				}
			}
		}
	}
	if len(out) != len(names) {
		t.Fatalf("%s: found alerts %v, want %v", file, out, names)
	}
	return out
}
