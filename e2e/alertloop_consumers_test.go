package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/harness"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/stack"
)

// The alert loop's consumer group: it reads the busy topic and keeps up, so
// that the consumer-impact panels have data and the two stopped nodes starve
// it (KafkaConsumersStarvedByReplication).

// startCommittingConsumer starts a consumer group, coordinated by broker 1
// (the node the loop keeps), that reads topic from the start and commits
// every 100ms in the background; stop ends it and waits. Not a synchronous
// commit per record: an acks=all commit waits for the followers' fetch
// (up to replica.fetch.wait.max.ms, 500ms), so on a loaded machine such a
// group read 1.3 of the 2 records a second and fell behind for good.
func startCommittingConsumer(ctx context.Context, t *testing.T, c *harness.Cluster, topic string) (group string, stop func()) {
	t.Helper()
	group = groupCoordinatedBy(ctx, t, c, 1, "alertloop")
	runCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	consumeSteadily(runCtx, t, &wg, c, group, topic, 100*time.Millisecond, markAll{})
	stop = func() {
		cancel()
		wg.Wait()
	}
	// Caught up before the sidecars start, so that none sees it first behind
	// (a group that has not joined yet: its lag is then the age of the
	// exporter's oldest HW reading, and under --collector.partition-series=unhealthy
	// that briefly gave it a series with a lag, which KafkaConsumerGroupStalled's
	// window held as pending through the healthy baseline).
	admin, err := c.Admin()
	must(t, err)
	defer admin.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		hw, err := c.HighWatermark(topic, 0)
		must(t, err)
		got, err := admin.ListConsumerGroupOffsets(group, map[string][]int32{topic: {0}})
		if err == nil {
			if b := got.GetBlock(topic, 0); b != nil && b.Offset >= hw {
				return group, stop
			}
		}
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("consumer group %s did not commit up to the HW %d of %s within 30s", group, hw, topic)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitGroupCaughtUp waits until Prometheus has a sample of the group with
// lag 0 on every partition: from then on KafkaConsumerGroupStalled's window
// holds a 0 until it is full, so a group first seen a record behind cannot
// make it pending.
func waitGroupCaughtUp(ctx context.Context, t *testing.T, prom *stack.Prometheus, group string, within time.Duration) {
	t.Helper()
	q := fmt.Sprintf(`max by (group) (kafka_replication_consumer_group_lag_to_high_watermark{group=%q}) == 0`, group)
	deadline := time.Now().Add(within)
	for {
		got, err := prom.Query(ctx, q)
		must(t, err)
		if len(got) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Prometheus has no sample of group %s caught up within %v", group, within)
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// waitGroupAlert waits until the webhook has received alertname for group
// in the given status (firing, resolved) with cluster="local".
func waitGroupAlert(ctx context.Context, t *testing.T, hook *stack.Webhook, status, alertname, group string, within time.Duration) {
	t.Helper()
	waitAlert(ctx, t, hook, status, alertname, map[string]string{"group": group}, within)
}

// logGroupSeries logs, for a failed loop, what Prometheus holds of the
// group's position and its partition since from, one line per series.
func logGroupSeries(t *testing.T, prom *stack.Prometheus, group, topic string, from time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, q := range []string{
		fmt.Sprintf(`{__name__=~"kafka_replication_consumer_group_.*", group=%q}`, group),
		fmt.Sprintf(`{__name__=~"kafka_replication_partition_(high_watermark|log_end_offset|high_watermark_stalled)", topic=%q}`, topic),
	} {
		series, err := prom.QueryRange(ctx, q, from, time.Now(), 2*time.Second)
		if err != nil {
			t.Logf("%s: %v", q, err)
			continue
		}
		for _, s := range series {
			var b strings.Builder
			for i, v := range s.Values {
				fmt.Fprintf(&b, " %s=%g", s.Times[i].Format("04:05"), v)
			}
			t.Logf("%s%v:%s", s.Labels["__name__"], s.Labels, b.String())
		}
	}
}
