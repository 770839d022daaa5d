package fakekafka

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Quorum is the DescribeQuorum answer of a KRaft metadata quorum, which
// kfake does not have.
type Quorum struct {
	ErrorCode          int16 // for the whole request; 0: none
	PartitionErrorCode int16 // for __cluster_metadata-0; 0: none
	LeaderID           int32
	LeaderEpoch        int32
	HW                 int64
	Voters, Observers  []QuorumReplica
	OnlyV0             bool          // list DescribeQuorum v0 only, as Kafka before 3.3
	Delay              time.Duration // before answering, as a broker waiting on a frozen controller
}

// QuorumReplica is one voter or observer: its log end offset and the
// leader's times of its last fetch and of when it was last caught up (-1:
// unknown).
type QuorumReplica struct {
	ID                      int32
	LEO                     int64
	LastFetch, LastCaughtUp int64
}

// SetQuorum makes every broker list DescribeQuorum (API 55) in ApiVersions
// and answer it with q; nil: the key is not listed, as a ZooKeeper broker
// does. Clients must connect after the first call: ApiVersions is asked once
// per connection.
func (f *Kafka) SetQuorum(q *Quorum) {
	f.t.Helper()
	f.mu.Lock()
	installed := f.apiVersions != nil
	f.mu.Unlock()
	if !installed {
		f.installQuorum()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.quorum = q
}

// installQuorum reads kfake's own ApiVersions answer once, then answers
// ApiVersions with it and, while a quorum is set, API 55 added, and answers
// DescribeQuorum from the quorum.
func (f *Kafka) installQuorum() {
	c := f.C
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		f.t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	base, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl)
	if err != nil {
		f.t.Fatal(err)
	}
	f.mu.Lock()
	f.apiVersions = base
	f.mu.Unlock()
	c.ControlKey(int16(kmsg.ApiVersions), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.quorum == nil || kreq.GetVersion() > f.apiVersions.Version {
			return nil, nil, false // kfake's own answer, and its downgrade
		}
		resp := *f.apiVersions
		resp.Version = kreq.GetVersion()
		key := kmsg.NewApiVersionsResponseApiKey()
		key.ApiKey, key.MaxVersion = int16(kmsg.DescribeQuorum), 2
		if f.quorum.OnlyV0 {
			key.MaxVersion = 0
		}
		resp.ApiKeys = append(append([]kmsg.ApiVersionsResponseApiKey(nil), resp.ApiKeys...), key)
		return &resp, nil, true
	})
	c.ControlKey(int16(kmsg.DescribeQuorum), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		f.mu.Lock()
		defer f.mu.Unlock()
		q := f.quorum
		if q == nil {
			return nil, nil, false
		}
		f.requests[kmsg.DescribeQuorum]++
		if q.Delay > 0 {
			f.mu.Unlock()
			c.SleepControl(func() { time.Sleep(q.Delay) })
			f.mu.Lock()
		}
		req := kreq.(*kmsg.DescribeQuorumRequest)
		resp := req.ResponseKind().(*kmsg.DescribeQuorumResponse)
		resp.Version = req.Version
		resp.ErrorCode = q.ErrorCode
		if q.ErrorCode != 0 {
			return resp, nil, true
		}
		for _, rt := range req.Topics {
			st := kmsg.NewDescribeQuorumResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				sp := kmsg.NewDescribeQuorumResponseTopicPartition()
				sp.Partition = rp.Partition
				sp.ErrorCode = q.PartitionErrorCode
				sp.LeaderID, sp.LeaderEpoch, sp.HighWatermark = q.LeaderID, q.LeaderEpoch, q.HW
				sp.CurrentVoters, sp.Observers = replicaStates(q.Voters), replicaStates(q.Observers)
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
}

func replicaStates(rs []QuorumReplica) []kmsg.DescribeQuorumResponseTopicPartitionReplicaState {
	out := make([]kmsg.DescribeQuorumResponseTopicPartitionReplicaState, 0, len(rs))
	for _, r := range rs {
		s := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
		s.ReplicaID, s.LogEndOffset, s.LastFetchTimestamp, s.LastCaughtUpTimestamp = r.ID, r.LEO, r.LastFetch, r.LastCaughtUp
		out = append(out, s)
	}
	return out
}
