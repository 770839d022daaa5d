package poller

import (
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
	avReq := kmsg.NewPtrApiVersionsRequest()
	// From v3 a broker refuses a request without a valid software name.
	avReq.ClientSoftwareName, avReq.ClientSoftwareVersion = "kafka-replication-exporter", "1"
	av, err := avReq.RequestWith(ctx, b)
	if err != nil {
		return failedQuorum(fmt.Errorf("ApiVersions from broker %d: %w", id, err))
	}
	if err := kerr.ErrorForCode(av.ErrorCode); err != nil {
		return failedQuorum(fmt.Errorf("ApiVersions from broker %d: %w", id, err))
	}
	if !slices.ContainsFunc(av.ApiKeys, func(k kmsg.ApiVersionsResponseApiKey) bool { return k.ApiKey == int16(kmsg.DescribeQuorum) }) {
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
