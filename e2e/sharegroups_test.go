package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/harness"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/stack"
)

// hasShareGroups says whether a Kafka version runs share groups (KIP-932)
// by default; 3.x has none, so its consumer scenario runs without them.
func hasShareGroups(version string) bool { return !strings.HasPrefix(version, "3.") }

// shareBrokerConfig makes __share_group_state 3 partitions, not 50: the
// share coordinator's topic is created on the first share fetch and would
// otherwise cost the cluster 150 replicas. Its min ISR is 1, not Kafka's 2,
// so that freezing both followers starves the data partition but not the
// share state: under min ISR 2 the share-state partition's HW stalls as the
// data partition's does, and Kafka 4.4.0 then answers DescribeShareGroupOffsets
// (v0 and v1) only after 63–70 s, with start offset -1, lag -1 and no error
// code (server.log: "Exhausted max retries for read state summary RPC"), and
// fails the slow group's acknowledgements (write state RPC:
// CoordinatorNotAvailableException).
var shareBrokerConfig = map[string]string{
	"share.coordinator.state.topic.num.partitions": "3",
	"share.coordinator.state.topic.min.isr":        "1",
}

// shareGroups are two share groups reading partition 0 of one topic,
// coordinated (group and share-state) by broker 1 so that freezing brokers
// 2 and 3 leaves both coordinators answering: "keeping" acknowledges all it
// gets as fast as it comes, "slow" one record every 250 ms.
type shareGroups struct {
	t             *testing.T
	c             *harness.Cluster
	admin         *kgo.Client // the test's own client, seeded with broker 1
	topic         string
	keeping, slow string
	acks          map[string]*ackLog
	lag           atomic.Int64 // the keeping-up group's Lag (DescribeShareGroupOffsets v1)
	// The first scrapes of broker 1's sidecar that said the HW stalled and
	// the keeping-up group starved (watch).
	stalledAt, starvedAt time.Time
}

// ackLog counts a share consumer's acknowledgement outcomes as the broker
// reports them, so a test can say whether acks failed during a freeze.
type ackLog struct {
	ok, failed atomic.Int64
	lastErr    atomic.Value // string
	lastOK     atomic.Value // time.Time
}

func (a *ackLog) String() string {
	s := fmt.Sprintf("%d acknowledged, %d failed", a.ok.Load(), a.failed.Load())
	if at, ok := a.lastOK.Load().(time.Time); ok {
		s += fmt.Sprintf(", last ok %v ago", time.Since(at).Round(100*time.Millisecond))
	}
	if e, _ := a.lastErr.Load().(string); e != "" {
		s += " (last: " + e + ")"
	}
	return s
}

// startShareGroups checks that Kafka has share groups on (share.version),
// names both groups, makes them start at the earliest offset and starts
// their consumers until ctx ends.
func startShareGroups(ctx context.Context, t *testing.T, wg *sync.WaitGroup, c *harness.Cluster, topic string) *shareGroups {
	t.Helper()
	admin, err := kgo.NewClient(kgo.SeedBrokers(c.Node(1).BrokerAddr))
	must(t, err)
	t.Cleanup(admin.Close)
	s := &shareGroups{t: t, c: c, admin: admin, topic: topic, acks: map[string]*ackLog{}}
	level := s.shareVersion(ctx)
	t.Logf("Kafka %s: share.version finalized at level %d", c.Version(), level)
	if level < 1 {
		t.Fatalf("Kafka %s has share groups off (share.version %d)", c.Version(), level)
	}
	s.keeping = s.groupCoordinatedBy(ctx, 1, "share-keeping")
	s.slow = s.groupCoordinatedBy(ctx, 1, "share-slow")
	for _, g := range []string{s.keeping, s.slow} {
		s.startAtEarliest(ctx, g)
		s.acks[g] = &ackLog{}
	}
	// Keeping up: every poll's records are accepted and flushed at once
	// (ShareAcknowledge), not with the next fetch.
	s.consume(ctx, wg, s.keeping, nil, func(ctx context.Context, cl *kgo.Client) {
		cl.MarkAcks(kgo.AckAccept)
		fctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		_ = cl.FlushAcks(fctx)
	})
	s.consume(ctx, wg, s.slow, []kgo.Opt{kgo.ShareMaxRecords(1), kgo.ShareMaxRecordsStrict()}, func(ctx context.Context, _ *kgo.Client) {
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	})
	return s
}

// consume runs one share consumer of group: each poll's records are
// accepted by the next poll (kgo's default), after pause.
func (s *shareGroups) consume(ctx context.Context, wg *sync.WaitGroup, group string, opts []kgo.Opt, pause func(context.Context, *kgo.Client)) {
	acks := s.acks[group]
	opts = append(opts,
		kgo.SeedBrokers(s.c.Node(1).BrokerAddr),
		kgo.ShareGroup(group), kgo.ConsumeTopics(s.topic),
		kgo.ShareAckCallback(func(_ *kgo.Client, rs kgo.ShareAckResults) {
			for _, r := range rs {
				if r.Err != nil {
					acks.failed.Add(1)
					acks.lastErr.Store(r.Err.Error())
				} else {
					acks.ok.Add(1)
					acks.lastOK.Store(time.Now())
				}
			}
		}))
	cl, err := kgo.NewClient(opts...)
	must(s.t, err)
	s.t.Cleanup(cl.Close)
	wg.Go(func() {
		for ctx.Err() == nil {
			cl.PollFetches(ctx)
			pause(ctx, cl)
		}
	})
}

// shareVersion is the finalized level of feature share.version (ApiVersions).
func (s *shareGroups) shareVersion(ctx context.Context) int16 {
	s.t.Helper()
	resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, s.admin)
	must(s.t, err)
	for _, f := range resp.FinalizedFeatures {
		if f.Name == "share.version" {
			return f.MaxVersionLevel
		}
	}
	return 0
}

// startAtEarliest sets the group config share.auto.offset.reset=earliest
// (IncrementalAlterConfigs, resource type GROUP): a new share group starts at
// the latest offset otherwise.
func (s *shareGroups) startAtEarliest(ctx context.Context, group string) {
	s.t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType = kmsg.ConfigResourceTypeGroupConfig
	res.ResourceName = group
	cfg := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	cfg.Name = "share.auto.offset.reset"
	cfg.Op = kmsg.IncrementalAlterConfigOpSet
	cfg.Value = kmsg.StringPtr("earliest")
	res.Configs = append(res.Configs, cfg)
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(ctx, s.admin)
	must(s.t, err)
	for _, r := range resp.Resources {
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			s.t.Fatalf("group %s: share.auto.offset.reset: %v", group, err)
		}
	}
}

// groupCoordinatedBy returns a group name prefix-N for which Kafka names
// broker id both as the group coordinator (FindCoordinator key type 0) and
// as the share coordinator of its share-partition topic-0 (key type 2,
// "group:topicId:0"), the leader of the __share_group_state partition its
// acknowledgements are written to.
func (s *shareGroups) groupCoordinatedBy(ctx context.Context, id int32, prefix string) string {
	s.t.Helper()
	topicID := s.topicID(ctx)
	for i := range 100 {
		g := fmt.Sprintf("%s-%d", prefix, i)
		if s.coordinator(ctx, 0, g) == id && s.coordinator(ctx, 2, fmt.Sprintf("%s:%s:0", g, topicID)) == id {
			return g
		}
	}
	s.t.Fatalf("no share group name coordinated by broker %d", id)
	return ""
}

// topicID is the topic's id as Kafka prints it (Uuid.toString: URL-safe
// base64 without padding), the form share coordinator keys use.
func (s *shareGroups) topicID(ctx context.Context) string {
	s.t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(s.topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, s.admin)
	must(s.t, err)
	if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 {
		s.t.Fatalf("metadata of %s: %+v", s.topic, resp.Topics)
	}
	return base64.RawURLEncoding.EncodeToString(resp.Topics[0].TopicID[:])
}

// coordinator asks broker 1 for the coordinator of key (FindCoordinator,
// key type 0: a group, 2: a share-partition). The first share request
// creates __share_group_state, so this waits out
// COORDINATOR_NOT_AVAILABLE for a while.
func (s *shareGroups) coordinator(ctx context.Context, keyType int8, key string) int32 {
	s.t.Helper()
	var last error
	for range 60 {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorType = keyType
		req.CoordinatorKey = key
		req.CoordinatorKeys = []string{key}
		resp, err := req.RequestWith(ctx, s.admin.Broker(1))
		if err == nil {
			if len(resp.Coordinators) == 1 {
				err = kerr.ErrorForCode(resp.Coordinators[0].ErrorCode)
				if err == nil {
					return resp.Coordinators[0].NodeID
				}
			} else if err = kerr.ErrorForCode(resp.ErrorCode); err == nil {
				return resp.NodeID
			}
		}
		last = err
		time.Sleep(500 * time.Millisecond)
	}
	s.t.Fatalf("FindCoordinator type %d %q: %v", keyType, key, last)
	return -1
}

// startOffset is Kafka's share-partition start offset of group on
// topic-0: DescribeShareGroupOffsets (API 90) to the group's coordinator,
// broker 1 by the choice of its name.
func (s *shareGroups) startOffset(ctx context.Context, group string) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
	rg := kmsg.NewDescribeShareGroupOffsetsRequestGroup()
	rg.GroupID = group
	rt := kmsg.NewDescribeShareGroupOffsetsRequestGroupTopic()
	rt.Topic = s.topic
	rt.Partitions = []int32{0}
	rg.Topics = append(rg.Topics, rt)
	req.Groups = append(req.Groups, rg)
	resp, err := req.RequestWith(ctx, s.admin.Broker(1))
	if err != nil {
		return 0, fmt.Errorf("DescribeShareGroupOffsets v%d %s: %w", req.Version, group, err)
	}
	for _, g := range resp.Groups {
		if err := kerr.ErrorForCode(g.ErrorCode); err != nil {
			return 0, fmt.Errorf("group %s: %w", group, err)
		}
		for _, t := range g.Topics {
			for _, p := range t.Partitions {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
					return 0, fmt.Errorf("group %s %s-%d: %w", group, t.Topic, p.Partition, err)
				}
				if group == s.keeping {
					s.lag.Store(p.Lag)
				}
				return p.StartOffset, nil
			}
		}
	}
	return 0, fmt.Errorf("group %s: no share-partition %s-0 in %+v", group, s.topic, resp.Groups)
}

// listed is what ListGroups v5 with TypesFilter ["share"] answers on broker
// 1, the coordinator of both groups: their names and states.
func (s *shareGroups) listed(ctx context.Context) map[string]string {
	s.t.Helper()
	req := kmsg.NewPtrListGroupsRequest()
	req.Version = 5
	req.TypesFilter = []string{"share"}
	resp, err := req.RequestWith(ctx, s.admin.Broker(1))
	must(s.t, err)
	must(s.t, kerr.ErrorForCode(resp.ErrorCode))
	groups := map[string]string{}
	for _, g := range resp.Groups {
		if g.GroupType != "share" {
			s.t.Errorf("ListGroups TypesFilter [share] lists %s of type %q", g.Group, g.GroupType)
		}
		groups[g.Group] = g.GroupState
	}
	return groups
}

// shareSample is one reading of partition 0: the HW and log end offset on
// its leader, broker 1, and both groups' start offsets.
type shareSample struct {
	at            time.Duration // since the sampler started
	hw, leo       int64
	keeping, slow int64
	lag           int64 // Kafka's Lag of the keeping-up group
}

func (x shareSample) String() string {
	return fmt.Sprintf("%5.1fs hw %d leo %d keeping %d (hw-%d, lag %d) slow %d (hw-%d)",
		x.at.Seconds(), x.hw, x.leo, x.keeping, x.hw-x.keeping, x.lag, x.slow, x.hw-x.slow)
}

// sample reads the start offsets before the HW, so that a start offset is
// never ahead of the HW it is compared with.
func (s *shareGroups) sample(ctx context.Context, since time.Time) (shareSample, error) {
	x := shareSample{at: time.Since(since)}
	var err error
	if x.keeping, err = s.startOffset(ctx, s.keeping); err != nil {
		return x, err
	}
	x.lag = s.lag.Load()
	if x.slow, err = s.startOffset(ctx, s.slow); err != nil {
		return x, err
	}
	if x.hw, err = s.c.HighWatermarkOf(1, s.topic, 0); err != nil {
		return x, fmt.Errorf("HW: %w", err)
	}
	if x.leo, err = s.c.LogEndOffset(1, s.topic, 0); err != nil {
		return x, fmt.Errorf("log end offset: %w", err)
	}
	return x, nil
}

// waitFor samples every 500 ms until ok holds, logging a reading every 2 s,
// and fails the test after within.
func (s *shareGroups) waitFor(ctx context.Context, within time.Duration, what string, ok func(shareSample) bool) shareSample {
	s.t.Helper()
	start := time.Now()
	var last shareSample
	var lastErr error
	logged := time.Time{}
	for time.Since(start) < within && ctx.Err() == nil {
		x, err := s.sample(ctx, start)
		if err == nil {
			last, lastErr = x, nil
			if ok(x) {
				s.t.Logf("share groups: %s after %v: %v", what, x.at.Round(100*time.Millisecond), x)
				return x
			}
			if time.Since(logged) >= 2*time.Second {
				s.t.Logf("share groups: waiting for %s: %v", what, x)
				logged = time.Now()
			}
		} else {
			lastErr = err
		}
		time.Sleep(500 * time.Millisecond)
	}
	s.t.Fatalf("share groups: %s: not within %v: last %v (error %v); acks: keeping %v, slow %v",
		what, within, last, lastErr, s.acks[s.keeping], s.acks[s.slow])
	return last
}

// caughtUp: before the freeze, Kafka lists both share groups and the
// keeping-up group's start offset reaches the moving HW while the slow
// group's stays well below it.
func (s *shareGroups) caughtUp(ctx context.Context) {
	s.t.Helper()
	s.waitFor(ctx, 20*time.Second, "keeping-up group at the HW, slow group behind", func(x shareSample) bool {
		return x.hw > 50 && x.hw-x.keeping <= 10 && x.hw-x.slow > 20
	})
	groups := s.listed(ctx)
	s.t.Logf("Kafka: ListGroups [share] on broker 1: %v", groups)
	for _, g := range []string{s.keeping, s.slow} {
		if _, ok := groups[g]; !ok {
			s.t.Errorf("ListGroups TypesFilter [share] does not list %s: %v", g, groups)
		}
	}
}

// starved: with both followers frozen the HW has stopped (the caller waited
// for it), records pile up above it, the keeping-up group's start offset
// stands still at or just below the stalled HW and the slow group's well
// below. It returns the stalled HW.
func (s *shareGroups) starved(ctx context.Context) int64 {
	s.t.Helper()
	s.t.Logf("share groups: acks before the check: keeping %v, slow %v", s.acks[s.keeping], s.acks[s.slow])
	first := s.waitFor(ctx, 10*time.Second, "a reading under the stalled HW", func(x shareSample) bool { return x.leo > x.hw })
	time.Sleep(2 * time.Second)
	x := s.waitFor(ctx, 10*time.Second, "a second reading", func(shareSample) bool { return true })
	if x.hw != first.hw {
		s.t.Fatalf("share groups: the HW moved while frozen: %v, then %v", first, x)
	}
	if x.leo-x.hw <= first.leo-first.hw {
		s.t.Errorf("share groups: records above the HW not growing: %v, then %v", first, x)
	}
	if x.keeping != first.keeping {
		s.t.Errorf("share groups: the keeping-up group's start offset moved under a stalled HW: %v, then %v", first, x)
	}
	// Kafka persists the last acknowledged batch as a state batch above the
	// start offset, so the start offset sits a record or two below the HW
	// while Kafka's own lag (v1) is 0.
	if x.hw-x.keeping > 10 || x.lag != 0 {
		s.t.Errorf("share groups: the keeping-up group is not at the stalled HW: %v", x)
	}
	if x.hw-x.slow <= 20 {
		s.t.Errorf("share groups: the slow group is not well below the HW: %v", x)
	}
	s.t.Logf("share groups: starved: keeping-up start offset %d, stalled HW %d (lag %d), %d records above the HW; acks: keeping %v, slow %v",
		x.keeping, x.hw, x.hw-x.keeping, x.leo-x.hw, s.acks[s.keeping], s.acks[s.slow])
	return x.hw
}

// thawed: after SIGCONT the HW moves past the stalled one and the
// keeping-up group's start offset follows it.
func (s *shareGroups) thawed(ctx context.Context, stalledHW int64) {
	s.t.Helper()
	s.waitFor(ctx, 45*time.Second, "the HW and the keeping-up start offset past the stalled HW", func(x shareSample) bool {
		return x.hw > stalledHW && x.keeping > stalledHW
	})
	s.t.Logf("share groups: acks after the thaw: keeping %v, slow %v", s.acks[s.keeping], s.acks[s.slow])
}

// shareRefresh is the sidecars' --kafka.refresh-interval (stack's default).
const shareRefresh = 2 * time.Second

// pos is a share group's position labels on partition 0.
func (s *shareGroups) pos(group string) map[string]string {
	return map[string]string{"group": group, "topic": s.topic, "partition": "0"}
}

// exporterCaughtUp: before the freeze, broker 1's sidecar (the partition
// leader's) knows the share groups of all three brokers and exports both
// groups, neither starved.
func (s *shareGroups) exporterCaughtUp(ctx context.Context, sc *sidecars) {
	s.t.Helper()
	sc.eventually(ctx, 20*time.Second, "the sidecar exporting both share groups", func(m map[int32]stack.Metrics) string {
		return expect(m[1],
			gauge("kafka_replication_share_groups_brokers", map[string]string{"state": "known"}, eq(3)),
			gauge("kafka_replication_share_group_start_offset", s.pos(s.keeping), gt(50)),
			gauge("kafka_replication_share_group_start_offset", s.pos(s.slow), gt(0)),
			gauge("kafka_replication_share_group_starved_by_replication", s.pos(s.keeping), eq(0)),
			gauge("kafka_replication_share_group_starved_by_replication", s.pos(s.slow), eq(0)))
	})
}

// watch notes when a scrape of broker 1's sidecar first said the HW stalled
// and the keeping-up group starved; a caller scraping for its own reasons
// during the freeze passes each scrape.
func (s *shareGroups) watch(m stack.Metrics) {
	now := time.Now()
	if v, _ := m.Value("kafka_replication_partition_high_watermark_stalled", part(s.topic, 0)); v == 1 && s.stalledAt.IsZero() {
		s.stalledAt = now
	}
	if v, _ := gaugeValue(m, "kafka_replication_share_group_starved_by_replication", s.pos(s.keeping)); v == 1 && s.starvedAt.IsZero() {
		s.starvedAt = now
	}
}

// exporterStarved: the keeping-up group is starved within two refreshes of
// the sidecar's stalled HW, the slow group is not, and both start offsets
// are Kafka's own.
func (s *shareGroups) exporterStarved(ctx context.Context, sc *sidecars) {
	s.t.Helper()
	sc.eventually(ctx, 2*shareRefresh+5*time.Second, "the keeping-up share group starved, the slow one not", func(m map[int32]stack.Metrics) string {
		s.watch(m[1])
		bad := expect(m[1],
			gauge("kafka_replication_partition_high_watermark_stalled", part(s.topic, 0), eq(1)),
			gauge("kafka_replication_share_group_starved_by_replication", s.pos(s.keeping), eq(1)),
			gauge("kafka_replication_share_group_partitions_starved_by_replication", map[string]string{"group": s.keeping}, eq(1)),
			gauge("kafka_replication_share_group_starved_by_replication", s.pos(s.slow), eq(0)))
		if bad == "" {
			return ""
		}
		return fmt.Sprintf("%s; keeping %s; slow %s", bad, s.exported(m[1], s.keeping), s.exported(m[1], s.slow))
	})
	// Scrapes 500 ms apart: up to one more between the refresh and its scrape.
	if took := s.starvedAt.Sub(s.stalledAt); took > 2*shareRefresh+500*time.Millisecond {
		s.t.Errorf("share groups: starved %v after the sidecar's HW stalled, more than two refreshes (%v)", took.Round(100*time.Millisecond), 2*shareRefresh)
	} else {
		s.t.Logf("share groups: the sidecar said starved %v after it said the HW stalled", took.Round(100*time.Millisecond))
	}
	// Kafka's start offsets and the sidecar's, both readings of the same
	// unmoving state: a slow group that moves is read again.
	var kafka shareSample
	sc.eventually(ctx, 3*shareRefresh+5*time.Second, "the sidecar's start offsets equal to Kafka's", func(m map[int32]stack.Metrics) string {
		x, err := s.sample(ctx, time.Now())
		if err != nil {
			return err.Error()
		}
		kafka = x
		return expect(m[1],
			gauge("kafka_replication_share_group_start_offset", s.pos(s.keeping), eq(float64(x.keeping))),
			gauge("kafka_replication_share_group_start_offset", s.pos(s.slow), eq(float64(x.slow))))
	})
	s.t.Logf("share groups: the sidecar's start offsets are Kafka's: keeping %d, slow %d", kafka.keeping, kafka.slow)
}

// exported is what the sidecar says of group's position, for a failure.
func (s *shareGroups) exported(m stack.Metrics, group string) string {
	var b strings.Builder
	for _, f := range []string{"start_offset", "lag_to_high_watermark", "lag_seconds", "starved_by_replication"} {
		v, ok := gaugeValue(m, "kafka_replication_share_group_"+f, s.pos(group))
		fmt.Fprintf(&b, "%s %v (%v) ", f, v, ok)
	}
	hw, _ := m.Value("kafka_replication_partition_high_watermark", part(s.topic, 0))
	fmt.Fprintf(&b, "hw %v", hw)
	return b.String()
}

// exporterThawed: after the thaw neither group is starved.
func (s *shareGroups) exporterThawed(ctx context.Context, sc *sidecars) {
	s.t.Helper()
	took := sc.eventually(ctx, 45*time.Second, "the share-group verdicts cleared after the thaw", func(m map[int32]stack.Metrics) string {
		return expect(m[1],
			gauge("kafka_replication_share_group_starved_by_replication", s.pos(s.keeping), eq(0)),
			gauge("kafka_replication_share_group_starved_by_replication", s.pos(s.slow), eq(0)))
	})
	s.t.Logf("share groups: the keeping-up group's verdict cleared %v after the consumer group's", took.Round(time.Second))
}

// checkShareGroupsUnsupported: on a Kafka without share groups, every
// sidecar counts the three brokers unsupported.
func checkShareGroupsUnsupported(ctx context.Context, sc *sidecars) {
	sc.t.Helper()
	sc.eventually(ctx, 20*time.Second, "every sidecar counting 3 brokers without share groups", func(m map[int32]stack.Metrics) string {
		for id, mm := range m {
			if bad := expect(mm, gauge("kafka_replication_share_groups_brokers", map[string]string{"state": "unsupported"}, eq(3))); bad != "" {
				return fmt.Sprintf("sidecar %d: %s", id, bad)
			}
		}
		return ""
	})
}

// checkShareWarningsOnce: a sidecar logs a broker's share-group state at
// WARN when it changes (unsupported, or unreachable while frozen), never the
// same state twice in a row, i.e. not every refresh.
func checkShareWarningsOnce(t *testing.T, c *harness.Cluster) {
	t.Helper()
	for _, n := range c.Nodes() {
		out, err := os.ReadFile(filepath.Join(n.Dir, "exporter.log"))
		must(t, err)
		last := map[string]string{} // broker → its last share-group line's msg
		var lines []string
		for l := range strings.Lines(string(out)) {
			if !strings.Contains(strings.ToLower(logField(l, "msg")), "share group") {
				continue
			}
			msg, broker := logField(l, "msg"), logField(l, "broker")
			if strings.Contains(l, "level=WARN") && last[broker] == msg {
				t.Errorf("sidecar %d logged at WARN twice in a row for broker %s: %s", n.ID, broker, msg)
			}
			last[broker] = msg
			lines = append(lines, fmt.Sprintf("%s broker %s: %s", logField(l, "level"), broker, msg))
		}
		t.Logf("sidecar %d: share-group lines %q", n.ID, lines)
	}
}

// logField is the value of key in a logfmt line, unquoted.
func logField(line, key string) string {
	i := strings.Index(line, " "+key+"=")
	if i < 0 {
		return ""
	}
	v := line[i+len(key)+2:]
	if strings.HasPrefix(v, `"`) {
		if u, err := strconv.QuotedPrefix(v); err == nil {
			s, _ := strconv.Unquote(u)
			return s
		}
	}
	v, _, _ = strings.Cut(v, " ")
	return strings.TrimSpace(v)
}
