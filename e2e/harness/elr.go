package harness

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ELRState is Kafka's own view of one partition's Eligible Leader Replicas
// (KIP-966), as DescribeTopicPartitions returns it.
type ELRState struct {
	Leader       int32
	ISR          []int32
	ELR          []int32
	LastKnownELR []int32
}

// DescribeELR sends DescribeTopicPartitions (API key 75, Kafka ≥ 3.7) for
// one partition to a running broker. sarama does not implement the request,
// so this uses franz-go, as the exporter does; a test compares the
// exporter's series with this answer rather than with the exporter's own code.
func (c *Cluster) DescribeELR(ctx context.Context, topic string, partition int32) (ELRState, error) {
	client, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.ClientID("kre-e2e"))
	if err != nil {
		return ELRState{}, err
	}
	defer client.Close()
	req := kmsg.NewPtrDescribeTopicPartitionsRequest()
	rt := kmsg.NewDescribeTopicPartitionsRequestTopic()
	rt.Topic = topic
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, client)
	if err != nil {
		return ELRState{}, fmt.Errorf("DescribeTopicPartitions %s: %w", topic, err)
	}
	for _, t := range resp.Topics {
		if t.Topic == nil || *t.Topic != topic {
			continue
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return ELRState{}, fmt.Errorf("DescribeTopicPartitions %s: %w", topic, err)
		}
		for _, p := range t.Partitions {
			if p.Partition != partition {
				continue
			}
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil && !errors.Is(err, kerr.LeaderNotAvailable) {
				return ELRState{}, fmt.Errorf("DescribeTopicPartitions %s-%d: %w", topic, partition, err)
			}
			st := ELRState{Leader: p.LeaderID, ISR: p.ISR, ELR: p.EligibleLeaderReplicas, LastKnownELR: p.LastKnownELR}
			for _, s := range [][]int32{st.ISR, st.ELR, st.LastKnownELR} {
				slices.Sort(s)
			}
			return st, nil
		}
	}
	return ELRState{}, fmt.Errorf("DescribeTopicPartitions: %s-%d not in the answer", topic, partition)
}
