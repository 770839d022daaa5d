package poller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/poller/elr"
)

// A fetcher, opt-in (--collector.tiered-storage): the tiering offsets of the
// exported partitions of topics with remote.storage.enable=true (minisr.go
// reads that config), from their leaders. Per leader, two ListOffsets
// (franz-go: sarama caps ListOffsets at v6): timestamp -5, LATEST_TIERED
// (v9, Kafka 3.9), and -4, EARLIEST_LOCAL (v8); two because a broker refuses
// a partition listed twice in one request. Its client has connections of its
// own, like the quorum's, and does not count in broker_responsive.

const (
	latestTieredTimestamp  = -5 // ListOffsetsRequest.LATEST_TIERED_TIMESTAMP
	earliestLocalTimestamp = -4 // ListOffsetsRequest.EARLIEST_LOCAL_TIMESTAMP
	// latestTieredVersion is the first ListOffsets version with -5.
	latestTieredVersion = 9
)

// tieringReader sends the tiering reads over a franz-go client kept across
// refreshes. Only the refresh goroutine uses it outside fetchTiering's
// goroutines, which only read it.
type tieringReader struct {
	client *kgo.Client
	logger *slog.Logger
	// tiered are the tiered topics of the last DescribeConfigs answered,
	// used while it fails.
	tiered map[string]bool
	// brokers are the leaders whose ApiVersions listed ListOffsets v9 (asked
	// once per connection address), and each one's last outcome.
	brokers brokerSupport[TieringUnknown]
}

// newTieringReader makes the reader when tiering is read, else nil; nil too
// when the client cannot be made (the ELR reader has logged why).
func newTieringReader(cfg *Config, ec elr.Config, logger *slog.Logger) *tieringReader {
	if !cfg.Tiering.Enabled {
		return nil
	}
	cl, err := ec.NewClient()
	if err != nil {
		return nil
	}
	return &tieringReader{client: cl, logger: logger, brokers: newBrokerSupport(TieringKnown)}
}

func (t *tieringReader) close() {
	if t != nil {
		t.client.Close()
	}
}

// tieringAnswer is one partition's tiering offsets, or why there are none.
type tieringAnswer struct {
	asked         bool // the partition is exported and its topic tiered
	unknown       TieringUnknown
	tiered, local int64
}

// brokerTiering is one leader's outcome of a refresh.
type brokerTiering struct {
	id    int32
	state TieringUnknown // TieringKnown, TieringUnsupported or TieringRequestFailed
	addr  string         // the address that listed v9, when newly supported
	err   error
}

// fetchTiering reads the tiering offsets of the exported partitions of the
// tiered topics, by plan index; nil when the read is off: no request at all.
func fetchTiering(ctx context.Context, r *round, p *refreshPlan, t *tieringReader, cfg *minISRReadings) []tieringAnswer {
	if t == nil {
		return nil
	}
	if cfg.ok {
		t.tiered = cfg.tiered
	}
	got := make([]tieringAnswer, len(p.parts))
	if len(t.tiered) == 0 {
		return got
	}
	for i := range p.parts {
		if pp := &p.parts[i]; pp.export && t.tiered[pp.key.Topic] {
			got[i] = tieringAnswer{asked: true, unknown: TieringRequestFailed, tiered: -1, local: -1}
		}
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		outcomes []brokerTiering
	)
	miss := r.unusableAnswer(RequestListOffsetsTiered)
	for id, led := range p.hwByBroker {
		idx := make([]int32, 0, len(led))
		for _, i := range led {
			if got[i].asked {
				idx = append(idx, i)
			}
		}
		if len(idx) == 0 {
			continue
		}
		addr := r.brokers[id]
		known := t.brokers.listed(id, addr)
		wg.Go(func() {
			ctx, cancel := r.deadline(ctx, id)
			defer cancel()
			// The brokers write disjoint elements: a partition's offsets
			// come from its leader only.
			o := t.readBroker(ctx, id, known, p.parts, idx, got, miss)
			if o.state == TieringKnown && !known {
				o.addr = addr
			}
			if o.state == TieringRequestFailed {
				r.fail(RequestListOffsetsTiered, id, o.err)
			}
			mu.Lock()
			outcomes = append(outcomes, o)
			mu.Unlock()
		})
	}
	wg.Wait()
	t.tell(outcomes)
	return got
}

// readBroker asks leader id, whose ApiVersions is asked first unless known
// listed v9, for the tiering offsets of parts[i] of idx.
func (t *tieringReader) readBroker(ctx context.Context, id int32, known bool, parts []plannedPartition, idx []int32,
	got []tieringAnswer, miss func(Unusable),
) brokerTiering {
	b := t.client.Broker(int(id))
	if !known {
		av, err := apiVersions(ctx, b)
		v := int16(-1)
		if err == nil {
			v = maxVersionOf(av, kmsg.ListOffsets)
		}
		switch {
		case err != nil:
			return brokerTiering{id: id, state: TieringRequestFailed, err: fmt.Errorf("ApiVersions from broker %d: %w", id, err)}
		case v < latestTieredVersion:
			for _, i := range idx {
				got[i].unknown = TieringUnsupported
			}
			return brokerTiering{
				id: id, state: TieringUnsupported,
				err: fmt.Errorf("broker %d lists ListOffsets up to v%d; the latest tiered offset needs v%d (Kafka 3.9)", id, v, latestTieredVersion),
			}
		}
	}
	tiered, err := listOffsetsAt(ctx, b, parts, idx, latestTieredTimestamp)
	if err != nil {
		return brokerTiering{id: id, state: TieringRequestFailed, err: fmt.Errorf("ListOffsets LATEST_TIERED from broker %d: %w", id, err)}
	}
	local, err := listOffsetsAt(ctx, b, parts, idx, earliestLocalTimestamp)
	if err != nil {
		return brokerTiering{id: id, state: TieringRequestFailed, err: fmt.Errorf("ListOffsets EARLIEST_LOCAL from broker %d: %w", id, err)}
	}
	for _, i := range idx {
		k := parts[i].key
		x, y := tiered[k], local[k]
		why := x.why
		if why == usable {
			why = y.why
		}
		if why != usable {
			got[i].unknown = TieringUnusable
			miss(why)
			continue
		}
		got[i] = tieringAnswer{asked: true, unknown: TieringKnown, tiered: x.offset, local: y.offset}
	}
	return brokerTiering{id: id, state: TieringKnown}
}

// offsetAt is one partition's answer to listOffsetsAt: the offset, else why
// there is none.
type offsetAt struct {
	offset int64
	why    Unusable
}

// listOffsetsAt sends one ListOffsets of timestamp ts for parts[i] of idx
// and returns each one's answer; a partition left out is UnusableMissing.
func listOffsetsAt(ctx context.Context, b *kgo.Broker, parts []plannedPartition, idx []int32, ts int64) (map[logparse.PartitionKey]offsetAt, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	byTopic := make(map[string]int)
	for _, i := range idx {
		k := parts[i].key
		at, ok := byTopic[k.Topic]
		if !ok {
			at = len(req.Topics)
			byTopic[k.Topic] = at
			rt := kmsg.NewListOffsetsRequestTopic()
			rt.Topic = k.Topic
			req.Topics = append(req.Topics, rt)
		}
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp = k.Partition, ts
		req.Topics[at].Partitions = append(req.Topics[at].Partitions, rp)
	}
	resp, err := req.RequestWith(ctx, b)
	if err != nil {
		return nil, err
	}
	out := make(map[logparse.PartitionKey]offsetAt, len(idx))
	for _, i := range idx {
		out[parts[i].key] = offsetAt{why: UnusableMissing}
	}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			k := logparse.PartitionKey{Topic: rt.Topic, Partition: rp.Partition}
			if _, asked := out[k]; !asked {
				continue
			}
			switch err := kerr.ErrorForCode(rp.ErrorCode); {
			case err == nil:
				out[k] = offsetAt{offset: rp.Offset, why: usable}
			case errors.Is(err, kerr.UnsupportedVersion):
				return nil, err // the broker changed under the same address
			case errors.Is(err, kerr.TopicAuthorizationFailed):
				out[k] = offsetAt{why: UnusableAuthorization}
			default:
				out[k] = offsetAt{why: UnusableError}
			}
		}
	}
	return out, nil
}

// tell keeps the leaders that listed v9 and logs each leader's change of
// state once: unsupported and failing at WARN, the recovery at INFO.
func (t *tieringReader) tell(outcomes []brokerTiering) {
	slices.SortFunc(outcomes, func(a, b brokerTiering) int { return int(a.id) - int(b.id) })
	for _, o := range outcomes {
		was, changed := t.brokers.observe(o.id, o.state, o.addr)
		if !changed {
			continue
		}
		switch o.state {
		case TieringKnown:
			t.logger.Info("The broker answers the tiering offsets again", "broker", o.id, "was", was.String())
		case TieringUnsupported:
			t.logger.Warn("The broker cannot tell the latest tiered offset: its partitions' tiering series are absent "+
				"(partitions_tiering_unknown{reason=\"unsupported\"})", "broker", o.id, "err", o.err)
		default:
			t.logger.Warn("Cannot read the tiering offsets from the broker; its partitions' tiering series are absent until it answers",
				"broker", o.id, "err", o.err)
		}
	}
}
