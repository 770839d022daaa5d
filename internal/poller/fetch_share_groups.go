package poller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/poller/elr"
)

// A fetcher, opt-in (--collector.share-groups): the share groups (KIP-932)
// and their share-partition start offsets on the exported partitions, over
// franz-go (sarama has no share-group requests). As for consumer groups, a
// broker lists only the groups it coordinates, so it is the one asked:
//
//	1 ApiVersions per broker address (until it lists share groups)
//	1 ListGroups v5 per broker, of type share
//	1 DescribeShareGroupOffsets per offsetFetchBatch groups
//
// A broker without DescribeShareGroupOffsets (before Kafka 4.1) or whose
// cluster has share.version 0 is unsupported: a state, asked again each
// refresh (the feature can be turned on), logged once. Its client has
// connections of its own and does not count in broker_responsive. Each
// request may take the probe budget once sent, as the consumer groups'.

// shareGroupReader keeps what outlives a refresh: the client, the brokers
// known to list share groups, and the last states, to log their changes
// once. Only the refresh goroutine uses it outside fetch's goroutines,
// which only read it.
type shareGroupReader struct {
	client *kgo.Client
	filter func(group string) bool // nil: every share group
	logger *slog.Logger
	// brokers are those whose ApiVersions listed share groups, and each
	// one's last state.
	brokers   brokerSupport[ShareGroupSupport]
	unreadNow [NumGroupUnread]bool
}

// shareGroupsRead is what the fetcher read; reads is nil when it is off.
type shareGroupsRead struct {
	reads   []groupRead
	listed  int
	unread  [NumGroupUnread]int
	brokers [NumShareGroupSupport]int
}

// newShareGroupReader makes the reader when share groups are read, else
// nil; nil too when the client cannot be made (the ELR reader has logged
// why).
func newShareGroupReader(cfg *GroupsConfig, ec elr.Config, logger *slog.Logger) *shareGroupReader {
	if !cfg.Share {
		return nil
	}
	filter, err := cfg.shareFilter()
	if err != nil {
		logger.Error("Share group filter is invalid; share groups are not read", "err", err)
		return nil
	}
	cl, err := ec.NewClient()
	if err != nil {
		return nil
	}
	return &shareGroupReader{client: cl, filter: filter, logger: logger, brokers: newBrokerSupport(ShareGroupsKnown)}
}

func (s *shareGroupReader) close() {
	if s != nil {
		s.client.Close()
	}
}

// shareCoordinatorRead is one broker's share groups.
type shareCoordinatorRead struct {
	id         int32
	state      ShareGroupSupport
	addr       string // the address that listed share groups, when newly supported
	err        error
	reads      []groupRead
	listed     int
	unread     [NumGroupUnread]int
	exportedAt map[logparse.PartitionKey]int32
}

// fetch reads every share group that passes the filter, or nothing when
// the read is off or no partition is exported.
func (s *shareGroupReader) fetch(ctx context.Context, r *round, p *refreshPlan) shareGroupsRead {
	if s == nil || p.exported == 0 {
		return shareGroupsRead{}
	}
	exportedAt := exportedIndex(p)
	var (
		mu  sync.Mutex
		wg  sync.WaitGroup
		all []*shareCoordinatorRead
	)
	for id, addr := range r.brokers {
		known := s.brokers.listed(id, addr)
		wg.Go(func() {
			c := &shareCoordinatorRead{id: id, exportedAt: exportedAt}
			s.readBroker(ctx, r, c, known)
			if c.state == ShareGroupsKnown && !known {
				c.addr = addr
			}
			if c.state == ShareGroupsRequestFailed {
				r.fail(RequestListShareGroups, id, c.err)
			}
			mu.Lock()
			all = append(all, c)
			mu.Unlock()
		})
	}
	wg.Wait()
	out := shareGroupsRead{reads: []groupRead{}}
	for _, c := range all {
		out.reads = append(out.reads, c.reads...)
		out.listed += c.listed
		out.brokers[c.state]++
		for why, n := range c.unread {
			out.unread[why] += n
		}
	}
	s.tell(all)
	s.unreadNow = logUnread(s.logger, "share", s.unreadNow, out.listed, len(out.reads), out.unread)
	return out
}

// readBroker asks broker c.id, whose ApiVersions is asked first unless
// known, for its share groups and their start offsets.
func (s *shareGroupReader) readBroker(ctx context.Context, r *round, c *shareCoordinatorRead, known bool) {
	b := s.client.Broker(int(c.id))
	if !known {
		ctx, cancel := r.deadline(ctx, c.id)
		av, err := apiVersions(ctx, b)
		cancel()
		if err != nil {
			c.state, c.err = ShareGroupsRequestFailed, fmt.Errorf("ApiVersions from broker %d: %w", c.id, err)
			return
		}
		if why := shareGroupsUnsupported(av); why != "" {
			c.state, c.err = ShareGroupsUnsupported, fmt.Errorf("broker %d: %s", c.id, why)
			return
		}
	}
	list := kmsg.NewPtrListGroupsRequest()
	list.Version, list.TypesFilter = 5, []string{"share"}
	resp, err := askWithin(ctx, r.probe, b, list)
	if err == nil {
		err = kerr.ErrorForCode(resp.(*kmsg.ListGroupsResponse).ErrorCode)
	}
	if err != nil {
		c.state, c.err = ShareGroupsRequestFailed, fmt.Errorf("ListGroups (share) from broker %d: %w", c.id, err)
		return
	}
	var names []string
	for _, g := range resp.(*kmsg.ListGroupsResponse).Groups {
		if s.filter == nil || s.filter(g.Group) {
			names = append(names, g.Group)
		}
	}
	slices.Sort(names)
	c.listed = len(names)
	c.describe(ctx, r, b, names, offsetFetchBatch)
}

// shareGroupsUnsupported says why a broker has no share groups to list, ""
// when it has.
func shareGroupsUnsupported(av *kmsg.ApiVersionsResponse) string {
	switch {
	case maxVersionOf(av, kmsg.DescribeShareGroupOffsets) < 0:
		return "no DescribeShareGroupOffsets (API 90): before Kafka 4.1"
	case maxVersionOf(av, kmsg.ListGroups) < 5:
		return "no ListGroups v5, which filters by group type"
	case finalizedLevel(av, "share.version") < 1:
		return "share.version is 0: share groups are off in this cluster"
	}
	return ""
}

// describe asks the start offsets of names, batch groups a request. A batch
// that goes unanswered in time is asked again one group at a time, so that
// a group the coordinator hangs on is the only one lost.
func (c *shareCoordinatorRead) describe(ctx context.Context, r *round, b *kgo.Broker, names []string, batch int) {
	for start := 0; start < len(names); start += batch {
		if ctx.Err() != nil {
			c.unread[GroupUnreadRefreshEnded] += len(names) - start
			return
		}
		group := names[start:min(start+batch, len(names))]
		err := c.describeBatch(ctx, r, b, group)
		switch {
		case err == nil:
		case len(group) > 1 && errors.Is(err, errNoAnswer):
			c.describe(ctx, r, b, group, 1)
		default:
			c.unread[unreadWhy(err)] += len(group)
		}
	}
}

// describeBatch asks the start offsets of group in one request, keeps those
// answered and counts those answered with an error code.
func (c *shareCoordinatorRead) describeBatch(ctx context.Context, r *round, b *kgo.Broker, group []string) error {
	req := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
	for _, name := range group {
		g := kmsg.NewDescribeShareGroupOffsetsRequestGroup()
		g.GroupID = name // no topics: all of the group's
		req.Groups = append(req.Groups, g)
	}
	resp, err := askWithin(ctx, r.probe, b, req)
	if err != nil {
		r.fail(RequestDescribeShareGroupOffsets, c.id, fmt.Errorf("DescribeShareGroupOffsets from broker %d: %w", c.id, err))
		return err
	}
	answers := resp.(*kmsg.DescribeShareGroupOffsetsResponse).Groups
	byName := make(map[string]*kmsg.DescribeShareGroupOffsetsResponseGroup, len(answers))
	for i := range answers {
		byName[answers[i].GroupID] = &answers[i]
	}
	for _, name := range group {
		a := byName[name]
		if a == nil || a.ErrorCode != 0 {
			c.unread[GroupUnreadErrorCode]++
			continue
		}
		g := groupRead{name: name}
		for _, t := range a.Topics {
			for _, p := range t.Partitions {
				// -1: the share-partition has no state yet.
				if p.ErrorCode != 0 || p.StartOffset < 0 {
					continue
				}
				if at, ok := c.exportedAt[logparse.PartitionKey{Topic: t.Topic, Partition: p.Partition}]; ok {
					g.offsets = append(g.offsets, groupOffset{at: at, committed: p.StartOffset})
				}
			}
		}
		c.reads = append(c.reads, g)
	}
	return nil
}

// askWithin sends req to b and gives it limit once sent, with callWithin's
// errors: errOutOfTime when the refresh ended first, errNoAnswer when the
// limit did.
func askWithin(ctx context.Context, limit time.Duration, b *kgo.Broker, req kmsg.Request) (kmsg.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("not asked: %w (%w)", errOutOfTime, err)
	}
	asked, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	resp, err := b.Request(asked, req)
	switch {
	case err == nil:
		return resp, nil
	case ctx.Err() != nil:
		return nil, fmt.Errorf("not answered before the refresh ended: %w (%w)", errOutOfTime, err)
	case asked.Err() != nil:
		return nil, fmt.Errorf("%w (%w)", errNoAnswer, err)
	}
	return nil, err
}

// tell keeps the brokers that list share groups and logs each broker's
// change of state once: unsupported and failing at WARN, the recovery at
// INFO.
func (s *shareGroupReader) tell(all []*shareCoordinatorRead) {
	slices.SortFunc(all, func(a, b *shareCoordinatorRead) int { return int(a.id) - int(b.id) })
	for _, c := range all {
		was, changed := s.brokers.observe(c.id, c.state, c.addr)
		if !changed {
			continue
		}
		switch c.state {
		case ShareGroupsKnown:
			s.logger.Info("The broker lists its share groups again", "broker", c.id, "was", was.String())
		case ShareGroupsUnsupported:
			s.logger.Warn("The broker has no share groups to list; share_groups_brokers{state=\"unsupported\"} counts it", "broker", c.id, "why", c.err)
		default:
			s.logger.Warn("Cannot list the share groups of the broker; its groups' series are absent until it answers", "broker", c.id, "err", c.err)
		}
	}
}
