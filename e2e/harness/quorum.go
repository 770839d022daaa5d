package harness

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// QuorumState is Kafka's own view of the KRaft metadata log, as
// DescribeQuorum returns it: the leader, its epoch and the high watermark.
type QuorumState struct {
	LeaderID    int32
	LeaderEpoch int32
	HW          int64
	Voters      []int32
	Replicas    []QuorumReplica // the voters, then the observers, as Kafka lists them
}

// QuorumReplica is one voter's or observer's row of DescribeQuorum. The
// times are milliseconds on the leader's clock, -1 when Kafka has none.
type QuorumReplica struct {
	ID                    int32
	Observer              bool
	LogEndOffset          int64
	LastFetchTimestamp    int64
	LastCaughtUpTimestamp int64
}

// Replica returns id's row, voter or observer, and whether Kafka listed it.
func (q QuorumState) Replica(id int32) (QuorumReplica, bool) {
	for _, r := range q.Replicas {
		if r.ID == id {
			return r, true
		}
	}
	return QuorumReplica{}, false
}

// LeaderNow is the leader's own last-caught-up time, its "now" in
// milliseconds, against which the other rows' times are ages.
func (q QuorumState) LeaderNow() int64 {
	r, _ := q.Replica(q.LeaderID)
	return r.LastCaughtUpTimestamp
}

// DescribeQuorum sends DescribeQuorum (API key 55) for __cluster_metadata-0
// to a running broker, which forwards it to the active controller. sarama
// does not implement it, so this uses franz-go, as the exporter does; a test
// compares the exporter's series with this answer.
func (c *Cluster) DescribeQuorum(ctx context.Context) (QuorumState, error) {
	return c.describeQuorum(ctx, -1)
}

// DescribeQuorumVia is DescribeQuorum sent to broker id only, for a test
// that freezes another broker: the client would pick any seed, a frozen one
// too, and wait out its timeout there.
func (c *Cluster) DescribeQuorumVia(ctx context.Context, id int32) (QuorumState, error) {
	return c.describeQuorum(ctx, id)
}

func (c *Cluster) describeQuorum(ctx context.Context, via int32) (QuorumState, error) {
	seeds := c.Bootstrap()
	if via >= 0 {
		seeds = []string{c.Node(via).BrokerAddr}
	}
	client, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ClientID("kre-e2e"))
	if err != nil {
		return QuorumState{}, err
	}
	defer client.Close()
	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = "__cluster_metadata"
	rt.Partitions = append(rt.Partitions, kmsg.NewDescribeQuorumRequestTopicPartition())
	req.Topics = append(req.Topics, rt)
	var resp *kmsg.DescribeQuorumResponse
	if via >= 0 {
		var r kmsg.Response
		if r, err = client.Broker(int(via)).Request(ctx, req); err == nil {
			resp = r.(*kmsg.DescribeQuorumResponse)
		}
	} else {
		resp, err = req.RequestWith(ctx, client)
	}
	if err != nil {
		return QuorumState{}, fmt.Errorf("DescribeQuorum: %w", err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return QuorumState{}, fmt.Errorf("DescribeQuorum: %w", err)
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if t.Topic != "__cluster_metadata" || p.Partition != 0 {
				continue
			}
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return QuorumState{}, fmt.Errorf("DescribeQuorum: %w", err)
			}
			st := QuorumState{LeaderID: p.LeaderID, LeaderEpoch: p.LeaderEpoch, HW: p.HighWatermark}
			row := func(r kmsg.DescribeQuorumResponseTopicPartitionReplicaState, observer bool) QuorumReplica {
				return QuorumReplica{
					ID: r.ReplicaID, Observer: observer, LogEndOffset: r.LogEndOffset,
					LastFetchTimestamp: r.LastFetchTimestamp, LastCaughtUpTimestamp: r.LastCaughtUpTimestamp,
				}
			}
			for _, v := range p.CurrentVoters {
				st.Voters = append(st.Voters, v.ReplicaID)
				st.Replicas = append(st.Replicas, row(v, false))
			}
			for _, o := range p.Observers {
				st.Replicas = append(st.Replicas, row(o, true))
			}
			return st, nil
		}
	}
	return QuorumState{}, fmt.Errorf("DescribeQuorum: __cluster_metadata-0 left out of the answer")
}
