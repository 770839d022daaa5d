package harness

import (
	"context"
	"errors"
	"fmt"

	"github.com/IBM/sarama"
)

// ProduceResult is what the client saw for each message of a Produce call.
type ProduceResult struct {
	Offsets []int64 // offsets of the acknowledged messages, in send order
	Errors  []error // one per rejected message (sarama errors, e.g. sarama.ErrNotEnoughReplicas)
}

// Count returns how many messages failed with target (errors.Is).
func (r ProduceResult) Count(target error) int {
	n := 0
	for _, err := range r.Errors {
		if errors.Is(err, target) {
			n++
		}
	}
	return n
}

// Produce sends n messages one at a time to one partition with the given
// acks (sarama.WaitForAll, sarama.WaitForLocal, sarama.NoResponse) and
// records each outcome. Messages are sent without client retries, so a
// broker rejection shows up as that message's error. The returned error is
// only for failures to produce at all (no client, canceled context).
func (c *Cluster) Produce(ctx context.Context, topic string, partition int32, n int, acks sarama.RequiredAcks) (ProduceResult, error) {
	var res ProduceResult
	producer, err := c.Producer(acks)
	if err != nil {
		return res, err
	}
	defer producer.Close()
	for i := range n {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		msg := &sarama.ProducerMessage{
			Topic: topic, Partition: partition,
			Value: sarama.StringEncoder(fmt.Sprintf("message %d", i)),
		}
		_, offset, err := producer.SendMessage(msg)
		if err != nil {
			res.Errors = append(res.Errors, err)
			continue
		}
		res.Offsets = append(res.Offsets, offset)
	}
	return res, nil
}

// Producer opens a synchronous producer on the running nodes with the given
// acks, no client retries and explicit partitions (the message's Partition).
// Close it.
func (c *Cluster) Producer(acks sarama.RequiredAcks) (sarama.SyncProducer, error) {
	cfg := saramaConfig()
	cfg.Producer.RequiredAcks = acks
	p, err := sarama.NewSyncProducer(c.Bootstrap(), cfg)
	if err != nil {
		return nil, fmt.Errorf("producer: %w", err)
	}
	return p, nil
}

// Consume reads messages of one partition from offset until it has n of them
// or ctx ends; it returns the values read.
func (c *Cluster) Consume(ctx context.Context, topic string, partition int32, offset int64, n int) ([]string, error) {
	consumer, err := sarama.NewConsumer(c.Bootstrap(), saramaConfig())
	if err != nil {
		return nil, err
	}
	defer consumer.Close()
	pc, err := consumer.ConsumePartition(topic, partition, offset)
	if err != nil {
		return nil, err
	}
	defer pc.Close()
	var values []string
	for len(values) < n {
		select {
		case m := <-pc.Messages():
			values = append(values, string(m.Value))
		case err := <-pc.Errors():
			return values, err
		case <-ctx.Done():
			return values, fmt.Errorf("consumed %d of %d: %w", len(values), n, ctx.Err())
		}
	}
	return values, nil
}
