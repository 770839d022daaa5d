package admin

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/IBM/sarama"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/logparse"
)

// A fetcher, opt-in (--collector.consumer-groups): the consumer groups and
// their committed offsets on the exported partitions. A broker lists only
// the groups it coordinates, so the broker that lists a group is the one to
// describe it and fetch its offsets from, and no FindCoordinator is needed:
//
//	1 ListGroups per broker
//	≤1 DescribeGroups per coordinator (its groups that pass the filter)
//	1 OffsetFetch per group read (all its partitions)
//
// Both classic and KIP-848 (consumer protocol) groups answer OffsetFetch,
// but only classic groups answer DescribeGroups: Kafka describes a KIP-848
// group there as Dead with no member (GROUP_ID_NOT_FOUND from v6), so the
// groups it calls Dead or not found are asked again with
// ConsumerGroupDescribe (≤1 per coordinator, none where every group is
// classic). Groups of other protocols (Connect, share groups) are left out.

// groupRead is one consumer group as its coordinator described it.
type groupRead struct {
	name    string
	state   string // as Kafka spells it: Stable, Empty, PreparingRebalance, …; "" = not described
	members int
	offsets []groupOffset // the exported partitions it has committed an offset for
}

// groupOffset is a group's committed offset of the plan's partition at.
type groupOffset struct {
	at        int32
	committed int64
}

// groupCollector is the consumer-group fetcher's configuration; nil when
// --collector.consumer-groups is off.
type groupCollector struct {
	filter func(group string) bool // nil: every group
}

// newGroupCollector returns nil when the collector is off.
func newGroupCollector(cfg *GroupsConfig, logger *slog.Logger) *groupCollector {
	if !cfg.Enabled {
		return nil
	}
	filter, err := cfg.filter()
	if err != nil {
		// Validate would have said so.
		logger.Error("Consumer group filter is invalid; consumer groups are not read", "err", err)
		return nil
	}
	return &groupCollector{filter: filter}
}

// fetch reads every consumer group that passes the filter, or nothing at
// all when the collector is off (g nil) or no partition is exported.
func (g *groupCollector) fetch(ctx context.Context, r *round, p *refreshPlan) []groupRead {
	if g == nil || p.exported == 0 {
		return nil
	}
	filter := g.filter
	exportedAt := make(map[logparse.PartitionKey]int32, p.exported)
	for i := range p.parts {
		if p.parts[i].export {
			exportedAt[p.parts[i].key] = int32(i)
		}
	}
	var (
		mu  sync.Mutex
		out = []groupRead{}
		wg  sync.WaitGroup
	)
	for id, addr := range r.brokers {
		wg.Go(func() {
			ctx, cancel := r.deadline(ctx, id)
			defer cancel()
			got, err := r.pool.readGroups(ctx, addr, filter, exportedAt)
			// A broker that answered with an error code (say, not
			// authorized) answered: only silence makes it unresponsive.
			var kerr sarama.KError
			r.record(id, err == nil || errors.As(err, &kerr))
			if err != nil {
				r.fail(err.kind, id, err)
			}
			mu.Lock()
			out = append(out, got...)
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

// groupError is a failed group request, with its kind for the counters.
type groupError struct {
	kind Request
	err  error
}

func (e *groupError) Error() string { return e.err.Error() }
func (e *groupError) Unwrap() error { return e.err }

// readGroups lists the groups the broker at addr coordinates, describes
// those that pass filter and fetches their offsets. What it read before a
// failure is returned with the error.
func (p *brokerPool) readGroups(
	ctx context.Context, addr string, filter func(string) bool, exportedAt map[logparse.PartitionKey]int32,
) ([]groupRead, *groupError) {
	list := &sarama.ListGroupsRequest{}
	if p.conf.Version.IsAtLeast(sarama.V2_6_0_0) {
		list.Version = 4
	}
	listed, err := call(ctx, p, addr, func(b *sarama.Broker) (*sarama.ListGroupsResponse, error) { return b.ListGroups(list) })
	if err == nil && listed.Err != sarama.ErrNoError {
		err = listed.Err
	}
	if err != nil {
		return nil, &groupError{RequestListGroups, fmt.Errorf("list groups from %s: %w", addr, err)}
	}
	var names []string
	for name, protocol := range listed.Groups {
		// "" is a group that only ever committed offsets (no members).
		if (protocol == "consumer" || protocol == "") && (filter == nil || filter(name)) {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	reads := make([]groupRead, len(names))
	for i, n := range names {
		reads[i].name = n
	}

	described, err := call(ctx, p, addr, func(b *sarama.Broker) (*sarama.DescribeGroupsResponse, error) {
		return b.DescribeGroups(&sarama.DescribeGroupsRequest{Groups: names})
	})
	if err != nil {
		return nil, &groupError{RequestDescribeGroups, fmt.Errorf("describe groups at %s: %w", addr, err)}
	}
	byName := make(map[string]*sarama.GroupDescription, len(described.Groups))
	var notClassic []string // listed a moment ago, yet Dead or not found
	for _, d := range described.Groups {
		if d == nil {
			continue
		}
		if d.Err == sarama.ErrNoError {
			byName[d.GroupId] = d
		}
		if (d.Err == sarama.ErrNoError && d.State == "Dead") || d.Err == sarama.ErrGroupIDNotFound {
			notClassic = append(notClassic, d.GroupId)
		}
	}
	for i := range reads {
		if d := byName[reads[i].name]; d != nil {
			reads[i].state, reads[i].members = d.State, len(d.Members)
		}
	}
	var describeErr *groupError
	if len(notClassic) > 0 {
		describeErr = p.describeConsumerGroups(ctx, addr, notClassic, reads)
	}

	for i := range reads {
		req := sarama.NewOffsetFetchRequest(p.conf.Version, reads[i].name, nil)
		resp, err := call(ctx, p, addr, func(b *sarama.Broker) (*sarama.OffsetFetchResponse, error) { return b.FetchOffset(req) })
		if err == nil {
			if kerr := resp.GroupError(); kerr != sarama.ErrNoError {
				err = kerr
			}
		}
		if err != nil {
			return reads[:i], &groupError{RequestOffsetFetch, fmt.Errorf("offset fetch of group %q at %s: %w", reads[i].name, addr, err)}
		}
		blocks := resp.Blocks
		if g := resp.GetGroup(reads[i].name); g != nil {
			blocks = g.Blocks
		}
		for topic, byPartition := range blocks {
			for part, blk := range byPartition {
				if blk == nil || blk.Err != sarama.ErrNoError || blk.Offset < 0 {
					continue
				}
				if at, ok := exportedAt[logparse.PartitionKey{Topic: topic, Partition: part}]; ok {
					reads[i].offsets = append(reads[i].offsets, groupOffset{at: at, committed: blk.Offset})
				}
			}
		}
	}
	if describeErr != nil {
		return reads, describeErr
	}
	return reads, nil
}

// describeConsumerGroups asks the coordinator at addr for the KIP-848
// description of the groups DescribeGroups called Dead or did not find, and
// sets the state and members of those it describes. A group it does not
// know either is a classic group gone since it was listed (Dead stays); a
// group it cannot answer for, or a failed request, leaves the state unknown
// rather than Dead. Its failures count as describe_groups errors: both describe a
// group's state.
func (p *brokerPool) describeConsumerGroups(ctx context.Context, addr string, names []string, reads []groupRead) *groupError {
	req := sarama.NewConsumerGroupDescribeRequest(p.conf.Version)
	req.GroupIDs = names
	resp, err := call(ctx, p, addr, func(b *sarama.Broker) (*sarama.ConsumerGroupDescribeResponse, error) {
		return b.ConsumerGroupDescribe(req)
	})
	byName := make(map[string]*sarama.ConsumerGroupDescription, len(names))
	if err == nil {
		for i := range resp.Groups {
			byName[resp.Groups[i].GroupID] = &resp.Groups[i]
		}
	}
	asked := make(map[string]bool, len(names))
	for _, n := range names {
		asked[n] = true
	}
	var failed error
	for i := range reads {
		if !asked[reads[i].name] {
			continue
		}
		d := byName[reads[i].name]
		switch {
		case d != nil && d.ErrorCode == sarama.ErrNoError:
			reads[i].state, reads[i].members = d.GroupState, len(d.Members)
		case d != nil && d.ErrorCode == sarama.ErrGroupIDNotFound:
			// Not a KIP-848 group either: a classic group gone since it was
			// listed; Dead as DescribeGroups said, or unknown.
		default:
			reads[i].state, reads[i].members = "", 0
			if err == nil && d != nil {
				failed = cmp.Or(failed, fmt.Errorf("group %q: %w", reads[i].name, d.ErrorCode))
			}
		}
	}
	if err != nil {
		failed = err
	}
	if failed != nil {
		return &groupError{RequestDescribeGroups, fmt.Errorf("consumer group describe at %s: %w", addr, failed)}
	}
	return nil
}
