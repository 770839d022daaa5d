package e2e

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/harness"
)

// The steady traffic of the consumer and transaction scenarios: a producer
// and a consumer group that run in the background until the scenario's
// context ends, on its WaitGroup, and close when the test ends.

// produceSteadily sends one record to partition 0 of topic every interval
// with acks until ctx ends. A send that fails is not retried: the scenarios
// freeze and stop brokers under it.
func produceSteadily(ctx context.Context, t *testing.T, wg *sync.WaitGroup, c *harness.Cluster, topic string, acks sarama.RequiredAcks, interval time.Duration) {
	t.Helper()
	prod, err := c.Producer(acks)
	must(t, err)
	t.Cleanup(func() { _ = prod.Close() })
	wg.Go(func() {
		for ctx.Err() == nil {
			_, _, _ = prod.SendMessage(&sarama.ProducerMessage{Topic: topic, Partition: 0, Value: sarama.StringEncoder("x")})
			time.Sleep(interval)
		}
	})
}

// consumeSteadily joins group (sarama, the classic protocol) through the
// cluster's first broker and reads topic from its start with handler,
// auto-committing every commitEvery, until ctx ends; after an error (a
// rebalance, a coordinator that moved) it joins again.
func consumeSteadily(ctx context.Context, t *testing.T, wg *sync.WaitGroup, c *harness.Cluster, group, topic string,
	commitEvery time.Duration, handler sarama.ConsumerGroupHandler,
) {
	t.Helper()
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V3_9_0_0
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.AutoCommit.Interval = commitEvery
	cg, err := sarama.NewConsumerGroup(c.Bootstrap()[:1], group, cfg)
	must(t, err)
	t.Cleanup(func() { _ = cg.Close() })
	wg.Go(func() {
		for ctx.Err() == nil {
			if err := cg.Consume(ctx, []string{topic}, handler); err != nil && ctx.Err() == nil {
				time.Sleep(200 * time.Millisecond)
			}
		}
	})
}
