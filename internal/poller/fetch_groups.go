package poller

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/IBM/sarama"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// A fetcher, opt-in (--collector.consumer-groups): the consumer groups and
// their committed offsets on the exported partitions. A broker lists only
// the groups it coordinates, so the broker that lists a group is the one to
// describe it and fetch its offsets from, and no FindCoordinator is needed:
//
//	1 ListGroups per broker
//	≤1 DescribeGroups per coordinator (its groups that pass the filter)
//	1 OffsetFetch per offsetFetchBatch groups (v8; one per group before Kafka 3.0)
//
// Both classic and KIP-848 (consumer protocol) groups answer OffsetFetch,
// but only classic groups answer DescribeGroups: Kafka describes a KIP-848
// group there as Dead with no member (GROUP_ID_NOT_FOUND from v6), so the
// groups it calls Dead or not found are asked again with
// ConsumerGroupDescribe (≤1 per coordinator, none where every group is
// classic). Groups of other protocols (Connect, share groups) are left out.
//
// Each request may take the probe budget once sent (round.probe): a
// coordinator slower than that to answer one did not answer in time. A group
// that cannot be read is left out and counted by why (GroupUnread), never
// the groups asked with it: an error code is the group's own, and a batch
// that goes unanswered is asked again one group at a time.

// offsetFetchBatch is how many groups one OffsetFetch asks for: it bounds
// the answer's size and what one group that hangs holds up.
const offsetFetchBatch = 100

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

// groupsRead is what the fetcher read: the groups, and how many of those
// listed it could not read, by why.
type groupsRead struct {
	reads  []groupRead // nil when the collector is off
	listed int
	unread [NumGroupUnread]int
}

// groupCollector is the consumer-group fetcher's configuration; nil when
// --collector.consumer-groups is off.
type groupCollector struct {
	filter func(group string) bool // nil: every group
	logger *slog.Logger
	// unreadNow says why groups went unread in the last refresh, for the
	// WARN once per change.
	unreadNow [NumGroupUnread]bool
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
	return &groupCollector{filter: filter, logger: logger}
}

// fetch reads every consumer group that passes the filter, or nothing at
// all when the collector is off (g nil) or no partition is exported.
func (g *groupCollector) fetch(ctx context.Context, r *round, p *refreshPlan) groupsRead {
	if g == nil || p.exported == 0 {
		return groupsRead{}
	}
	exportedAt := exportedIndex(p)
	var (
		mu  sync.Mutex
		out = groupsRead{reads: []groupRead{}}
		wg  sync.WaitGroup
	)
	for id, addr := range r.brokers {
		wg.Go(func() {
			c := &coordinatorRead{ctx: ctx, r: r, id: id, addr: addr, filter: g.filter, exportedAt: exportedAt}
			c.read()
			mu.Lock()
			out.reads = append(out.reads, c.reads...)
			out.listed += c.listed
			for why, n := range c.unread {
				out.unread[why] += n
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	g.unreadNow = logUnread(g.logger, "consumer", g.unreadNow, out.listed, len(out.reads), out.unread)
	return out
}

// exportedIndex is the plan index of each exported partition.
func exportedIndex(p *refreshPlan) map[logparse.PartitionKey]int32 {
	at := make(map[logparse.PartitionKey]int32, p.exported)
	for i := range p.parts {
		if p.parts[i].export {
			at[p.parts[i].key] = int32(i)
		}
	}
	return at
}

// logUnread logs, once per change of why groups of kind (consumer, share)
// go unread, that some listed groups are not read: their series are absent
// until they are. It returns the reasons seen now, for the next call's was.
func logUnread(logger *slog.Logger, kind string, was [NumGroupUnread]bool, listed, read int, unread [NumGroupUnread]int) [NumGroupUnread]bool {
	var now [NumGroupUnread]bool
	by := make([]any, 0, 2*int(NumGroupUnread))
	for why, n := range unread {
		if now[why] = n > 0; n > 0 {
			by = append(by, GroupUnread(why).String(), n)
		}
	}
	switch now {
	case was:
	case [NumGroupUnread]bool{}:
		logger.Info("Every listed "+kind+" group is read again", "groups", listed)
	default:
		logger.Warn("Some "+kind+" groups could not be read; their series are absent until they are",
			append([]any{"listed", listed, "read", read}, by...)...)
	}
	return now
}

// coordinatorRead is the read of the groups one broker coordinates.
type coordinatorRead struct {
	ctx        context.Context
	r          *round
	id         int32
	addr       string
	filter     func(string) bool
	exportedAt map[logparse.PartitionKey]int32

	reads  []groupRead
	listed int
	unread [NumGroupUnread]int
}

// ask sends one request of kind, which may take the probe budget once
// sent, and records what its outcome says of the broker: an answer or
// silence. A request the refresh ran out of time for, or that sarama
// could not encode for the broker's version, says nothing of it.
func ask[R any](c *coordinatorRead, kind Request, req func(*sarama.Broker) (R, error)) (R, error) {
	resp, err := callWithin(c.ctx, c.r.probe, c.r.pool, c.addr, req)
	var encoding sarama.PacketEncodingError
	switch {
	case errors.As(err, &encoding):
		return resp, err
	case !errors.Is(err, errOutOfTime):
		c.r.record(c.id, err == nil)
	}
	if err != nil {
		c.r.fail(kind, c.id, err)
	}
	return resp, err
}

// unreadWhy is why the groups of a failed request went unread.
func unreadWhy(err error) GroupUnread {
	if errors.Is(err, errOutOfTime) {
		return GroupUnreadRefreshEnded
	}
	return GroupUnreadNoAnswer
}

// read lists the groups the broker coordinates, describes those that pass
// the filter and fetches their offsets.
func (c *coordinatorRead) read() {
	list := &sarama.ListGroupsRequest{}
	if c.r.pool.conf.Version.IsAtLeast(sarama.V2_6_0_0) {
		list.Version = 4
	}
	listed, err := ask(c, RequestListGroups, func(b *sarama.Broker) (*sarama.ListGroupsResponse, error) { return b.ListGroups(list) })
	if err != nil {
		return
	}
	if listed.Err != sarama.ErrNoError {
		c.r.fail(RequestListGroups, c.id, fmt.Errorf("list groups from %s: %w", c.addr, listed.Err))
		return
	}
	var names []string
	for name, protocol := range listed.Groups {
		// "" is a group that only ever committed offsets (no members).
		if (protocol == "consumer" || protocol == "") && (c.filter == nil || c.filter(name)) {
			names = append(names, name)
		}
	}
	c.listed = len(names)
	if len(names) == 0 {
		return
	}
	reads := make([]groupRead, len(names))
	for i, n := range names {
		reads[i].name = n
	}

	described, err := ask(c, RequestDescribeGroups, func(b *sarama.Broker) (*sarama.DescribeGroupsResponse, error) {
		return b.DescribeGroups(&sarama.DescribeGroupsRequest{Groups: names})
	})
	if err != nil {
		c.unread[unreadWhy(err)] += len(names)
		return
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
	if len(notClassic) > 0 {
		c.describeConsumerGroups(notClassic, reads)
	}
	batch := offsetFetchBatch
	if sarama.NewOffsetFetchRequest(c.r.pool.conf.Version, "", nil).Version < 8 {
		batch = 1
	}
	c.fetchOffsets(reads, batch)
}

// fetchOffsets asks the committed offsets of reads, batch groups a
// request. A batch that goes unanswered in time is asked again one group
// at a time, so that a group the coordinator hangs on is the only one
// lost; so is the rest when the broker cannot take a batch (OffsetFetch
// below v8).
func (c *coordinatorRead) fetchOffsets(reads []groupRead, batch int) {
	for start := 0; start < len(reads); start += batch {
		if c.ctx.Err() != nil {
			c.unread[GroupUnreadRefreshEnded] += len(reads) - start
			return
		}
		group := reads[start:min(start+batch, len(reads))]
		err := c.offsetFetch(group)
		var encoding sarama.PacketEncodingError
		switch {
		case err == nil:
		case len(group) > 1 && errors.As(err, &encoding):
			c.fetchOffsets(reads[start:], 1)
			return
		case len(group) > 1 && errors.Is(err, errNoAnswer):
			c.fetchOffsets(group, 1)
		default:
			c.unread[unreadWhy(err)] += len(group)
		}
	}
}

// offsetFetch asks the committed offsets of group in one request, keeps
// those answered and counts those answered with an error code.
func (c *coordinatorRead) offsetFetch(group []groupRead) error {
	req := sarama.NewOffsetFetchRequest(c.r.pool.conf.Version, group[0].name, nil)
	if req.Version >= 8 {
		req.Groups = make([]sarama.OffsetFetchRequestGroup, len(group))
		for i := range group {
			req.Groups[i].GroupId = group[i].name
		}
	}
	resp, err := ask(c, RequestOffsetFetch, func(b *sarama.Broker) (*sarama.OffsetFetchResponse, error) { return b.FetchOffset(req) })
	if err != nil {
		return err
	}
	answers := resp.Groups
	if resp.Version < 8 { // sarama sets the version the broker took
		answers = []sarama.OffsetFetchResponseGroup{{GroupId: group[0].name, Blocks: resp.Blocks, Err: resp.Err}}
	}
	byName := make(map[string]*sarama.OffsetFetchResponseGroup, len(answers))
	for i := range answers {
		byName[answers[i].GroupId] = &answers[i]
	}
	for _, g := range group {
		a := byName[g.name]
		if a == nil || a.Err != sarama.ErrNoError {
			c.unread[GroupUnreadErrorCode]++
			continue
		}
		for topic, byPartition := range a.Blocks {
			for part, blk := range byPartition {
				if blk == nil || blk.Err != sarama.ErrNoError || blk.Offset < 0 {
					continue
				}
				if at, ok := c.exportedAt[logparse.PartitionKey{Topic: topic, Partition: part}]; ok {
					g.offsets = append(g.offsets, groupOffset{at: at, committed: blk.Offset})
				}
			}
		}
		c.reads = append(c.reads, g)
	}
	return nil
}

// describeConsumerGroups asks the coordinator for the KIP-848 description
// of the groups DescribeGroups called Dead or did not find, and sets the
// state and members of those it describes. A group it does not know
// either is a classic group gone since it was listed (Dead stays); a
// group it cannot answer for, or a failed request, leaves the state
// unknown rather than Dead. Its failures count as describe_groups errors:
// both describe a group's state.
func (c *coordinatorRead) describeConsumerGroups(names []string, reads []groupRead) {
	req := sarama.NewConsumerGroupDescribeRequest(c.r.pool.conf.Version)
	req.GroupIDs = names
	resp, err := ask(c, RequestDescribeGroups, func(b *sarama.Broker) (*sarama.ConsumerGroupDescribeResponse, error) {
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
	var refused error
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
				refused = cmp.Or(refused, fmt.Errorf("group %q: %w", reads[i].name, d.ErrorCode))
			}
		}
	}
	if refused != nil {
		c.r.fail(RequestDescribeGroups, c.id, fmt.Errorf("consumer group describe at %s: %w", c.addr, refused))
	}
}
