package elr

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// ErrUnsupported is returned by Read when the broker does not implement
// DescribeTopicPartitions: the caller exports no ELR series and counts no
// error.
var ErrUnsupported = errors.New("elr: broker does not implement DescribeTopicPartitions (API key 75, Kafka >= 3.7)")

// elrFeature is the KIP-584 feature that turns ELR on; the controller keeps
// ELR only while it is finalized at level 1 or above.
const elrFeature = "eligible.leader.replicas.version"

const (
	// pageLimit is Kafka's own default cap on partitions per response
	// (max.request.partition.size.limit): asking for more gains nothing.
	pageLimit = 2000
	// maxPartitions bounds one Read: a KRaft cluster is far below it, and a
	// peer that describes more is not one to trust with our memory.
	maxPartitions = 2 << 20
	// maxReplicaIDs bounds the ELR and last-known-ELR ids kept by one Read
	// (four per partition on average at maxPartitions).
	maxReplicaIDs = 4 * maxPartitions
)

// Partition is one partition's ELR state as the controller last published it.
type Partition struct {
	// ELR are replicas outside the ISR that still hold every committed
	// record: the ISR fell below min ISR, so the high watermark stopped,
	// and the controller can elect one of them cleanly once the ISR is empty.
	ELR []int32
	// LastKnownELR are replicas that were eligible and no longer are (they
	// stopped uncleanly), or a leaderless partition's last leader: the last
	// resort of a recovery, not a clean candidate.
	LastKnownELR []int32
}

// Result is one Read.
type Result struct {
	// Enabled is whether the cluster keeps ELR at all; when false nothing
	// was described and no ELR series should be exported.
	Enabled bool
	// Partitions holds only the partitions with a non-empty ELR or
	// last-known ELR: on a healthy cluster that is none, so a Read of any
	// size keeps almost nothing. Use Lookup, which knows the rest.
	Partitions map[logparse.PartitionKey]Partition
	// Described is, per topic, one more than the highest partition the
	// broker described (its partition count).
	Described map[string]int32
	// TopicErrors has the topics the broker would not describe (deleted
	// since the caller listed them, not authorized); the rest were read.
	TopicErrors map[string]error
	// Pages is how many DescribeTopicPartitions requests the Read made.
	Pages int
}

// Lookup returns a partition's ELR state and whether the Read described the
// partition; a described partition missing from Partitions has both sets
// empty. The caller exports ELR series only where ok is true.
func (res *Result) Lookup(topic string, partition int32) (p Partition, ok bool) {
	if partition < 0 || partition >= res.Described[topic] {
		return Partition{}, false
	}
	return res.Partitions[logparse.PartitionKey{Topic: topic, Partition: partition}], true
}

// Reader reads ELR over one franz-go client kept across Reads.
type Reader struct {
	client  *kgo.Client
	timeout time.Duration

	// Limits; tests lower them.
	pageLimit     int32
	maxPartitions int
	maxReplicaIDs int
}

// New makes a Reader; it does not connect until the first Read.
func New(cfg Config) (*Reader, error) { return newReader(cfg, maxResponseBytes) }

func newReader(cfg Config, maxReadBytes int32) (*Reader, error) {
	opts, err := cfg.clientOptions(maxReadBytes)
	if err != nil {
		return nil, err
	}
	client, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("elr: %w", err)
	}
	return &Reader{
		client:        client,
		timeout:       cfg.Timeout,
		pageLimit:     pageLimit,
		maxPartitions: maxPartitions,
		maxReplicaIDs: maxReplicaIDs,
	}, nil
}

// Close closes the connections.
func (r *Reader) Close() { r.client.Close() }

// Read describes the given topics, or every topic when topics is empty. Each
// request has the Config's timeout; ctx bounds the whole Read. It returns
// ErrUnsupported (wrapped) when the broker lacks the API, and a Result with
// Enabled false when the cluster has ELR off.
func (r *Reader) Read(ctx context.Context, topics []string) (*Result, error) {
	broker, enabled, err := r.probe(ctx)
	if err != nil {
		return nil, err
	}
	if !enabled {
		return &Result{}, nil
	}
	return r.describe(ctx, broker, topics)
}

// probe asks one broker for its ApiVersions and returns that broker, so that
// the pages go where the check was made, and whether ELR is on.
func (r *Reader) probe(ctx context.Context) (*kgo.Broker, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	shards := r.client.RequestSharded(ctx, kmsg.NewPtrApiVersionsRequest())
	if len(shards) != 1 {
		return nil, false, fmt.Errorf("elr: ApiVersions: %d answers, want 1", len(shards))
	}
	shard := shards[0]
	if shard.Err != nil {
		return nil, false, fmt.Errorf("elr: ApiVersions: %w", shard.Err)
	}
	resp, ok := shard.Resp.(*kmsg.ApiVersionsResponse)
	if !ok {
		return nil, false, fmt.Errorf("elr: ApiVersions: answered with %T", shard.Resp)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, false, fmt.Errorf("elr: ApiVersions: %w", err)
	}
	if !hasKey(resp, kmsg.DescribeTopicPartitions) {
		return nil, false, fmt.Errorf("%w (broker %d)", ErrUnsupported, shard.Meta.NodeID)
	}
	return r.client.Broker(int(shard.Meta.NodeID)), finalizedLevel(resp, elrFeature) >= 1, nil
}

func hasKey(resp *kmsg.ApiVersionsResponse, key kmsg.Key) bool {
	for _, k := range resp.ApiKeys {
		if k.ApiKey == int16(key) && k.MaxVersion >= 0 {
			return true
		}
	}
	return false
}

// finalizedLevel is the feature's finalized level; a broker lists only
// features above level 0, so an absent one is 0.
func finalizedLevel(resp *kmsg.ApiVersionsResponse, feature string) int16 {
	for _, f := range resp.FinalizedFeatures {
		if f.Name == feature {
			return f.MaxVersionLevel
		}
	}
	return 0
}

// describe follows the response cursor until the broker returns none.
func (r *Reader) describe(ctx context.Context, broker *kgo.Broker, topics []string) (*Result, error) {
	res := &Result{Enabled: true, Partitions: make(map[logparse.PartitionKey]Partition), Described: make(map[string]int32)}
	req := kmsg.NewPtrDescribeTopicPartitionsRequest()
	req.ResponsePartitionLimit = r.pageLimit
	for _, t := range topics {
		rt := kmsg.NewDescribeTopicPartitionsRequestTopic()
		rt.Topic = t
		req.Topics = append(req.Topics, rt)
	}
	var budget pageBudget
	for {
		resp, err := r.page(ctx, broker, req)
		if err != nil {
			return nil, err
		}
		res.Pages++
		described, err := res.add(resp, &budget, r.maxPartitions, r.maxReplicaIDs)
		if err != nil {
			return nil, fmt.Errorf("elr: DescribeTopicPartitions page %d: %w", res.Pages, err)
		}
		next := resp.NextCursor
		if next == nil {
			break
		}
		// Every page counts against maxPartitions, so a peer cannot page
		// for ever; these two catch a stuck cursor at once.
		if described == 0 || (req.Cursor != nil && next.Topic == req.Cursor.Topic && next.Partition == req.Cursor.Partition) {
			return nil, fmt.Errorf("elr: DescribeTopicPartitions page %d: cursor %s-%d does not move", res.Pages, next.Topic, next.Partition)
		}
		cursor := kmsg.NewDescribeTopicPartitionsRequestCursor()
		cursor.Topic = next.Topic
		cursor.Partition = next.Partition
		req.Cursor = &cursor
	}
	return res, nil
}

func (r *Reader) page(ctx context.Context, broker *kgo.Broker, req *kmsg.DescribeTopicPartitionsRequest) (*kmsg.DescribeTopicPartitionsResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	kresp, err := broker.RetriableRequest(ctx, req)
	if errors.Is(err, kerr.UnsupportedVersion) {
		return nil, fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	if err != nil {
		return nil, fmt.Errorf("elr: DescribeTopicPartitions: %w", err)
	}
	resp, ok := kresp.(*kmsg.DescribeTopicPartitionsResponse)
	if !ok {
		return nil, fmt.Errorf("elr: DescribeTopicPartitions: answered with %T", kresp)
	}
	return resp, nil
}

// pageBudget counts what a Read has taken in so far.
type pageBudget struct {
	partitions int
	replicaIDs int
}

// add copies what one page says into res and returns how many partitions it
// described. The page's ids go into one array, so a page costs at most one
// allocation besides the map entries of partitions with an ELR, and the page
// itself can be dropped.
func (res *Result) add(resp *kmsg.DescribeTopicPartitionsResponse, b *pageBudget, maxPartitions, maxIDs int) (int, error) {
	described, ids := 0, 0
	for i := range resp.Topics {
		t := &resp.Topics[i]
		if t.Topic == nil {
			return 0, errors.New("a topic without a name")
		}
		described += len(t.Partitions)
		for j := range t.Partitions {
			ids += len(t.Partitions[j].EligibleLeaderReplicas) + len(t.Partitions[j].LastKnownELR)
		}
	}
	b.partitions += described
	b.replicaIDs += ids
	switch {
	case b.partitions > maxPartitions:
		return 0, fmt.Errorf("more than %d partitions described", maxPartitions)
	case b.replicaIDs > maxIDs:
		return 0, fmt.Errorf("more than %d eligible leader replica ids described", maxIDs)
	}
	var arena []int32
	if ids > 0 {
		arena = make([]int32, 0, ids)
	}
	take := func(src []int32) []int32 {
		if len(src) == 0 {
			return nil
		}
		start := len(arena)
		arena = append(arena, src...)
		return arena[start:len(arena):len(arena)]
	}
	for i := range resp.Topics {
		t := &resp.Topics[i]
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			if res.TopicErrors == nil {
				res.TopicErrors = make(map[string]error)
			}
			res.TopicErrors[*t.Topic] = err
			continue
		}
		count := res.Described[*t.Topic]
		for j := range t.Partitions {
			p := &t.Partitions[j]
			if p.Partition < 0 {
				return 0, fmt.Errorf("topic %s: partition %d", *t.Topic, p.Partition)
			}
			count = max(count, p.Partition+1)
			// A partition without a leader still carries its ELR, which
			// is then what matters most, so partition errors are kept.
			if len(p.EligibleLeaderReplicas) > 0 || len(p.LastKnownELR) > 0 {
				k := logparse.PartitionKey{Topic: *t.Topic, Partition: p.Partition}
				res.Partitions[k] = Partition{ELR: take(p.EligibleLeaderReplicas), LastKnownELR: take(p.LastKnownELR)}
			}
		}
		res.Described[*t.Topic] = count
	}
	return described, nil
}
