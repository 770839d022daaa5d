package poller

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"os"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/poller/elr"
)

// A fetcher: the KRaft metadata quorum, one DescribeQuorum (API 55, franz-go:
// sarama lacks it) per refresh, by the one sidecar that speaks for the
// cluster, sent to its own broker, which forwards it to the active
// controller. Its client has connections of its own (elr.Config.NewClient)
// and its answer does not count in broker_responsive: a slow controller is
// not a slow broker.

// metadataTopic is the KRaft metadata log, the one partition described.
const metadataTopic = "__cluster_metadata"

// quorumReader sends DescribeQuorum over a franz-go client kept across refreshes.
type quorumReader struct {
	client *kgo.Client
}

// newQuorumReader makes the reader, or nil when the configuration is refused
// (the ELR reader has logged why): no quorum series are exported then.
func newQuorumReader(cfg elr.Config) *quorumReader {
	cl, err := cfg.NewClient()
	if err != nil {
		return nil
	}
	return &quorumReader{client: cl}
}

func (q *quorumReader) close() {
	if q != nil {
		q.client.Close()
	}
}

// quorumSpeaker is the broker a sidecar sends DescribeQuorum to, and whether
// it speaks at all: in cluster scope always (its own broker if known, else
// the lowest id); in leader scope only the sidecar of the lowest broker id
// in Metadata, so that the quorum is exported once per cluster.
func quorumSpeaker(brokers map[int32]string, brokerID int32, cluster bool) (int32, bool) {
	if len(brokers) == 0 {
		return -1, false
	}
	lowest := slices.Min(slices.Collect(maps.Keys(brokers)))
	if cluster {
		if _, ok := brokers[brokerID]; ok {
			return brokerID, true
		}
		return lowest, true
	}
	return brokerID, brokerID >= 0 && brokerID == lowest
}

// quorumRead is one refresh's DescribeQuorum: the partition answered, or
// why there is none.
type quorumRead struct {
	part    *kmsg.DescribeQuorumResponseTopicPartition
	version int16 // of the answer; v0 has no timestamps
	unknown QuorumUnknown
	err     error // why not QuorumKnown
}

// fetchQuorum asks broker p.quorumBroker within ctx; nil when this sidecar
// does not speak for the cluster. Errors and timeouts count as request
// errors; denied and unsupported are states, told by the unknown gauge.
func fetchQuorum(ctx context.Context, r *round, p *refreshPlan, q *quorumReader) *quorumRead {
	if q == nil || !p.quorumSpeaks {
		return nil
	}
	ctx, cancel := r.deadline(ctx, p.quorumBroker)
	defer cancel()
	got := q.read(ctx, p.quorumBroker)
	if got.unknown == QuorumError || got.unknown == QuorumTimeout {
		r.fail(RequestDescribeQuorum, p.quorumBroker, got.err)
	}
	return &got
}

// read asks broker id for its ApiVersions, then for the metadata partition.
func (q *quorumReader) read(ctx context.Context, id int32) quorumRead {
	b := q.client.Broker(int(id))
	av, err := apiVersions(ctx, b)
	if err != nil {
		return failedQuorum(fmt.Errorf("ApiVersions from broker %d: %w", id, err))
	}
	if maxVersionOf(av, kmsg.DescribeQuorum) < 0 {
		return quorumRead{unknown: QuorumUnsupported, err: fmt.Errorf("broker %d does not list DescribeQuorum (API 55): ZooKeeper mode or before Kafka 2.7", id)}
	}
	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = metadataTopic
	rp := kmsg.NewDescribeQuorumRequestTopicPartition()
	rt.Partitions = append(rt.Partitions, rp) // partition 0
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, b)
	if err != nil {
		return failedQuorum(fmt.Errorf("DescribeQuorum from broker %d: %w", id, err))
	}
	return readQuorum(resp, id)
}

// readQuorum finds the metadata partition in an answer.
func readQuorum(resp *kmsg.DescribeQuorumResponse, id int32) quorumRead {
	if err := codeErr(resp.ErrorCode, resp.ErrorMessage); err != nil {
		return failedQuorum(fmt.Errorf("DescribeQuorum from broker %d: %w", id, err))
	}
	for i := range resp.Topics {
		t := &resp.Topics[i]
		for j := range t.Partitions {
			part := &t.Partitions[j]
			if t.Topic != metadataTopic || part.Partition != 0 {
				continue
			}
			if err := codeErr(part.ErrorCode, part.ErrorMessage); err != nil {
				return failedQuorum(fmt.Errorf("DescribeQuorum from broker %d: %w", id, err))
			}
			if part.LeaderID < 0 {
				return quorumRead{unknown: QuorumNoLeader, err: fmt.Errorf("DescribeQuorum from broker %d: no leader (epoch %d)", id, part.LeaderEpoch)}
			}
			return quorumRead{part: part, version: resp.Version}
		}
	}
	return failedQuorum(fmt.Errorf("DescribeQuorum from broker %d: %s-0 left out of the answer", id, metadataTopic))
}

// codeErr is a Kafka error code with its message, nil for none.
func codeErr(code int16, msg *string) error {
	err := kerr.ErrorForCode(code)
	if err != nil && msg != nil && *msg != "" {
		return fmt.Errorf("%w: %s", err, *msg)
	}
	return err
}

// failedQuorum sorts a failure by why.
func failedQuorum(err error) quorumRead {
	var netErr net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded),
		errors.As(err, &netErr) && netErr.Timeout():
		return quorumRead{unknown: QuorumTimeout, err: err}
	case errors.Is(err, kerr.ClusterAuthorizationFailed):
		return quorumRead{unknown: QuorumDenied, err: err}
	case errors.Is(err, kerr.UnsupportedVersion):
		return quorumRead{unknown: QuorumUnsupported, err: err}
	}
	return quorumRead{unknown: QuorumError, err: err}
}

// quorumWatch turns the reads into the snapshot's Quorum, keeping what one
// refresh hands the next: the last high watermark, the regressions counted,
// and the state last logged. Only the refresh goroutine uses it.
type quorumWatch struct {
	logger      *slog.Logger
	lastHW      int64 // the last high watermark answered, when hwSeen
	hwSeen      bool
	regressions uint64
	state       QuorumUnknown
	speaking    bool // the last refresh read the quorum
	toldUnsup   bool // the INFO that the cluster has no KRaft quorum was logged
}

// The build: the snapshot's metadata quorum, from one refresh's read.

// observe turns a read into the snapshot's Quorum: nil when this sidecar
// does not speak for the cluster; only the reason when the read failed.
// brokers are this refresh's Metadata. It logs each change of state once.
func (w *quorumWatch) observe(read *quorumRead, brokers map[int32]string) *Quorum {
	if read == nil {
		if w.speaking {
			w.speaking = false
			w.logger.Info("This sidecar no longer speaks for the cluster's metadata quorum; another sidecar exports it")
		}
		return nil
	}
	if !w.speaking {
		w.speaking = true
		w.logger.Info("This sidecar speaks for the cluster's metadata quorum (DescribeQuorum each refresh)")
	}
	w.tell(read)
	if read.unknown != QuorumKnown {
		return &Quorum{Unknown: read.unknown}
	}
	part := read.part
	if hw := part.HighWatermark; hw >= 0 {
		if w.hwSeen && hw < w.lastHW {
			w.regressions++
			w.logger.Warn("The metadata log's high watermark went back", "from", w.lastHW, "to", hw, "leader", part.LeaderID, "epoch", part.LeaderEpoch)
		}
		w.lastHW, w.hwSeen = hw, true
	}
	q := &Quorum{
		LeaderID:      part.LeaderID,
		LeaderEpoch:   part.LeaderEpoch,
		HighWatermark: part.HighWatermark,
		HWRegressions: w.regressions,
		Voters:        len(part.CurrentVoters),
		Replicas:      quorumReplicas(part, read.version),
	}
	seen := make(map[int32]bool, len(q.Replicas))
	for _, r := range q.Replicas {
		seen[r.Node] = true
	}
	for id := range brokers {
		if !seen[id] {
			q.BrokersMissing++
		}
	}
	return q
}

// tell logs a change of state: unsupported once at INFO (a ZooKeeper
// cluster stays one), the failures at WARN, the recovery at INFO.
func (w *quorumWatch) tell(read *quorumRead) {
	if read.unknown == w.state {
		return
	}
	was := w.state
	w.state = read.unknown
	switch read.unknown {
	case QuorumKnown:
		w.logger.Info("DescribeQuorum answers again; metadata quorum series are exported", "was", was.String())
	case QuorumUnsupported:
		if !w.toldUnsup {
			w.toldUnsup = true
			w.logger.Info("The cluster has no KRaft metadata quorum to describe; metadata_quorum_unknown{reason=\"unsupported\"} is 1", "err", read.err)
		}
	default:
		w.logger.Warn("The KRaft metadata quorum is unknown; only metadata_quorum_up 0 and metadata_quorum_unknown are exported until it answers",
			"reason", read.unknown.String(), "err", read.err)
	}
}

// quorumReplicas are the voters, then the observers, each by node id, with
// their lags behind the leader. The leader's LastCaughtUpTimestamp is its
// now; v0 has no timestamps.
func quorumReplicas(part *kmsg.DescribeQuorumResponseTopicPartition, version int16) []QuorumReplica {
	leaderLEO, leaderNow := int64(-1), int64(-1)
	for _, v := range part.CurrentVoters {
		if v.ReplicaID == part.LeaderID {
			leaderLEO, leaderNow = v.LogEndOffset, v.LastCaughtUpTimestamp
		}
	}
	if version < 1 {
		leaderNow = -1
	}
	out := make([]QuorumReplica, 0, len(part.CurrentVoters)+len(part.Observers))
	add := func(states []kmsg.DescribeQuorumResponseTopicPartitionReplicaState, observer bool) {
		from := len(out)
		for _, s := range states {
			r := QuorumReplica{Node: s.ReplicaID, Observer: observer}
			if s.LogEndOffset >= 0 && leaderLEO >= 0 {
				r.LogEndOffset, r.LagRecords, r.LEOKnown = s.LogEndOffset, max(leaderLEO-s.LogEndOffset, 0), true
			}
			if leaderNow >= 0 && s.LastCaughtUpTimestamp >= 0 {
				r.LagSeconds, r.LagKnown = msSeconds(leaderNow-s.LastCaughtUpTimestamp), true
			}
			if leaderNow >= 0 && s.LastFetchTimestamp >= 0 && s.ReplicaID != part.LeaderID {
				r.LastFetchAgeSeconds, r.FetchKnown = msSeconds(leaderNow-s.LastFetchTimestamp), true
			}
			out = append(out, r)
		}
		slices.SortFunc(out[from:], func(a, b QuorumReplica) int { return cmp.Compare(a.Node, b.Node) })
	}
	add(part.CurrentVoters, false)
	add(part.Observers, true)
	return out
}

// msSeconds is a span of the leader's milliseconds in seconds, never negative.
func msSeconds(ms int64) float64 { return float64(max(ms, 0)) / 1000 }
