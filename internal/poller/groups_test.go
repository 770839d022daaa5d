package poller

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/fakekafka"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// groupTable renders the snapshot's groups as
// "group(state,members):topic/partition=committed lag above starved lagSeconds …".
func groupTable(s *Snapshot) string {
	var b strings.Builder
	for _, g := range s.Groups {
		if b.Len() > 0 {
			b.WriteString(" | ")
		}
		fmt.Fprintf(&b, "%s(%s,%d):", g.Name, g.State, g.Members)
		for _, p := range g.Partitions {
			fmt.Fprintf(&b, " %s/%d=%d %d %d %v %g", p.Topic, p.Partition, p.Committed, p.LagToHW, p.AboveHW, p.StarvedByReplication, p.LagSeconds)
		}
	}
	return b.String()
}

func key(topic string, p int32) logparse.PartitionKey {
	return logparse.PartitionKey{Topic: topic, Partition: p}
}

func withGroups(include, exclude string) func(*Config) {
	return func(c *Config) { c.Groups.Enabled, c.Groups.Include, c.Groups.Exclude = true, include, exclude }
}

// TestGroupsOffRequestsNothing: with the collector off (the default) a
// refresh sends no group request, and the snapshot has no groups.
func TestGroupsOffRequestsNothing(t *testing.T) {
	for _, on := range []bool{false, true} {
		f := fakekafka.New(t)
		f.CreateTopic("orders", nil, 0, 1, 2)
		f.CommitOffsets("billing", map[logparse.PartitionKey]int64{key("orders", 0): 1})
		var tweak func(*Config)
		if on {
			tweak = withGroups(".*", "")
		}
		a, _ := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{}, tweak)
		a.refresh(context.Background())
		f.RequestCounts()
		a.refresh(context.Background())
		got := f.RequestCounts()
		n := got[kmsg.ListGroups] + got[kmsg.DescribeGroups] + got[kmsg.OffsetFetch] + got[kmsg.FindCoordinator]
		switch {
		case !on && (n != 0 || a.Snapshot().Groups != nil):
			t.Errorf("collector off: want no group request and no groups, got %v and %v", got, a.Snapshot().Groups)
		case on && (got[kmsg.ListGroups] != 3 || got[kmsg.DescribeGroups] != 1 || got[kmsg.OffsetFetch] != 1 || got[kmsg.FindCoordinator] != 0):
			t.Errorf("collector on: want 3 ListGroups (one per broker), 1 DescribeGroups and 1 OffsetFetch, got %v", got)
		}
	}
}

// TestGroupsSplitLag: a group's lag to the HW and the records above the HW,
// the starved verdict once the HW has stalled, and the filters.
func TestGroupsSplitLag(t *testing.T) {
	f := fakekafka.New(t)
	f.CreateTopic("orders", nil, 0, 1)
	f.SetOffsets(key("orders", 0), fakekafka.Offsets{HW: 100, LEO: 100})
	f.SetOffsets(key("orders", 1), fakekafka.Offsets{HW: 50, LEO: 80})
	f.CommitOffsets("billing", map[logparse.PartitionKey]int64{key("orders", 0): 90, key("orders", 1): 50})
	f.CommitOffsets("audit", map[logparse.PartitionKey]int64{key("orders", 0): 100})
	f.CommitOffsets("test-1", map[logparse.PartitionKey]int64{key("orders", 0): 0})

	a, clock := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{}, withGroups(".*", "test-.*"))
	a.refresh(context.Background())
	expect(t, "first refresh", groupTable(a.Snapshot()),
		"audit(Empty,0): orders/0=100 0 0 false 0 | billing(Empty,0): orders/0=90 10 0 false 0 orders/1=50 0 30 false 0")

	// The HW of orders/1 stays at 50 with 30 records above it for the stall
	// threshold: billing, caught up there, is starved by replication.
	clock.Advance(3 * time.Minute)
	a.refresh(context.Background())
	expect(t, "stalled", groupTable(a.Snapshot()),
		"audit(Empty,0): orders/0=100 0 0 false 0 | billing(Empty,0): orders/0=90 10 0 false 180 orders/1=50 0 30 true 0")

	// Replication catches up and the group falls behind: its own lag.
	f.SetOffsets(key("orders", 1), fakekafka.Offsets{HW: 80, LEO: 80})
	clock.Advance(15 * time.Second)
	a.refresh(context.Background())
	expect(t, "caught up", groupTable(a.Snapshot()),
		"audit(Empty,0): orders/0=100 0 0 false 0 | billing(Empty,0): orders/0=90 10 0 false 195 orders/1=50 30 0 false 15")
}

// TestGroupsLeaderScope: a sidecar exports a group's offsets only on the
// partitions its broker leads.
func TestGroupsLeaderScope(t *testing.T) {
	f := fakekafka.New(t)
	f.CreateTopic("orders", nil, 0, 1, 2)
	f.CommitOffsets("billing", map[logparse.PartitionKey]int64{key("orders", 0): 1, key("orders", 1): 2, key("orders", 2): 3})
	a, _ := newTestPoller(t, f.C.ListenAddrs(), 1, ScopeLeader, Options{}, withGroups("bill.*", ""))
	a.refresh(context.Background())
	s := a.Snapshot()
	if len(s.Groups) != 1 || len(s.Groups[0].Partitions) != 1 || s.Groups[0].Partitions[0].Partition != 1 {
		t.Errorf("want billing on orders/1 only, got %s", groupTable(s))
	}
}

func TestGroupsConfigValidate(t *testing.T) {
	for _, c := range []struct {
		cfg     Config
		wantErr string
	}{
		{Config{Groups: GroupsConfig{Enabled: true, Include: ".*"}}, "--collector.consumer-groups needs --kafka.server"},
		{Config{Groups: GroupsConfig{Include: "("}}, "--collector.consumer-groups.include: "},
		{Config{Groups: GroupsConfig{Include: ".*", Exclude: "["}}, "--collector.consumer-groups.exclude: "},
		{Config{Groups: GroupsConfig{Include: ".*"}}, ""},
	} {
		err := c.cfg.Validate()
		if (err == nil) != (c.wantErr == "") || err != nil && !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("%+v: want error %q, got %v", c.cfg.Groups, c.wantErr, err)
		}
	}
	filter, _ := (&GroupsConfig{Include: "bill.*|audit", Exclude: "billing-test"}).filter()
	for group, want := range map[string]bool{"billing": true, "audit": true, "audit-2": false, "billing-test": false, "xbilling": false} {
		if filter(group) != want {
			t.Errorf("filter(%q) = %v, want %v", group, !want, want)
		}
	}
}

// TestGroupsStarvedWithinLastStep: while the HW stands still the group's
// last commits may fail (the offsets topic is under min ISR too), so a
// group within the HW's last advance is caught up; one further behind is
// lagging on its own.
func TestGroupsStarvedWithinLastStep(t *testing.T) {
	f := fakekafka.New(t)
	f.CreateTopic("orders", nil, 0)
	f.SetOffsets(key("orders", 0), fakekafka.Offsets{HW: 40, LEO: 40})
	a, clock := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{}, withGroups(".*", ""))
	a.refresh(context.Background())
	f.SetOffsets(key("orders", 0), fakekafka.Offsets{HW: 50, LEO: 60})
	f.CommitOffsets("keeps-up", map[logparse.PartitionKey]int64{key("orders", 0): 45})
	f.CommitOffsets("behind", map[logparse.PartitionKey]int64{key("orders", 0): 30})
	for range 2 {
		clock.Advance(2 * time.Minute)
		a.refresh(context.Background())
	}
	expect(t, "stalled at 50 after 40", groupTable(a.Snapshot()),
		"behind(Empty,0): orders/0=30 20 10 false 240 | keeps-up(Empty,0): orders/0=45 5 10 true 180")
}

// TestGroupsDroppedWithTheTopics: without a successful refresh for the
// grace period, the groups' series go with the partitions'.
func TestGroupsDroppedWithTheTopics(t *testing.T) {
	f := fakekafka.New(t)
	f.CreateTopic("orders", nil, 0)
	f.CommitOffsets("billing", map[logparse.PartitionKey]int64{key("orders", 0): 1})
	a, clock := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{}, func(c *Config) {
		withGroups(".*", "")(c)
		c.Groups.LastStableOffset = true
		c.RequestTimeout = 500 * time.Millisecond
	})
	a.refresh(context.Background())
	if s := a.Snapshot(); len(s.Groups) != 1 || len(s.StableOffsets) != 1 {
		t.Fatalf("want billing and one LSO, got %s and %v", groupTable(s), s.StableOffsets)
	}
	f.C.Close()
	clock.Advance(time.Minute)
	a.refresh(context.Background())
	if s := a.Snapshot(); s.Up || s.Topics != nil || s.Groups != nil || s.StableOffsets != nil {
		t.Errorf("want up 0 and no partitions, groups or LSOs after the grace, got up %v, %d topics, %s, %v", s.Up, len(s.Topics), groupTable(s), s.StableOffsets)
	}
}

// TestGroupsErrorCodeIsAnAnswer: a ListGroups refused with an error code
// counts as a request error, and the broker stays responsive.
func TestGroupsErrorCodeIsAnAnswer(t *testing.T) {
	f := fakekafka.New(t)
	f.CreateTopic("orders", nil, 0)
	f.C.ControlKey(int16(kmsg.ListGroups), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		f.C.KeepControl()
		resp := kreq.ResponseKind().(*kmsg.ListGroupsResponse)
		resp.Version = kreq.GetVersion()
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return resp, nil, true
	})
	a, _ := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{}, withGroups(".*", ""))
	a.refresh(context.Background())
	s := a.Snapshot()
	if s.RequestErrors[RequestListGroups] != 3 || len(s.Groups) != 0 || s.Groups == nil {
		t.Errorf("want 3 list_groups errors and no group, got %d and %s", s.RequestErrors[RequestListGroups], groupTable(s))
	}
	for _, b := range s.Brokers {
		if !b.Responsive {
			t.Errorf("broker %d: want responsive (it answered, with an error code)", b.ID)
		}
	}
}

// A group's partitions come out sorted by topic, then partition number, and
// several groups on the same partition each get it, whatever order the
// topics were created and the offsets committed in.
func TestGroupsPartitionOrder(t *testing.T) {
	f := fakekafka.New(t)
	f.CreateTopic("payments", nil, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2)
	f.CreateTopic("orders", nil, 0, 1, 2)
	f.CommitOffsets("billing", map[logparse.PartitionKey]int64{
		key("payments", 10): 1, key("orders", 2): 2, key("payments", 2): 3, key("orders", 0): 4, key("payments", 11): 5,
	})
	f.CommitOffsets("audit", map[logparse.PartitionKey]int64{key("payments", 2): 6, key("orders", 2): 7})
	a, _ := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{}, withGroups(".*", ""))
	a.refresh(context.Background())
	var got []string
	for _, g := range a.Snapshot().Groups {
		for _, p := range g.Partitions {
			got = append(got, fmt.Sprintf("%s:%s/%d=%d", g.Name, p.Topic, p.Partition, p.Committed))
		}
	}
	expect(t, "order", strings.Join(got, " "),
		"audit:orders/2=7 audit:payments/2=6 billing:orders/0=4 billing:orders/2=2 billing:payments/2=3 billing:payments/10=1 billing:payments/11=5")
}

// TestGroupsBehindBeforeTheHistoryNotStarved: a group already behind the HW
// when the exporter first read it, which then stalls, is behind, not
// starved: when the HW passed its offset is unknown, not "just now".
func TestGroupsBehindBeforeTheHistoryNotStarved(t *testing.T) {
	f := fakekafka.New(t)
	f.CreateTopic("orders", nil, 0)
	f.SetOffsets(key("orders", 0), fakekafka.Offsets{HW: 50, LEO: 80})
	f.CommitOffsets("slow", map[logparse.PartitionKey]int64{key("orders", 0): 20})
	f.CommitOffsets("billing", map[logparse.PartitionKey]int64{key("orders", 0): 50})
	a, clock := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{}, withGroups(".*", ""))
	a.refresh(context.Background())
	clock.Advance(3 * time.Minute)
	a.refresh(context.Background())
	expect(t, "stalled", groupTable(a.Snapshot()),
		"billing(Empty,0): orders/0=50 0 30 true 0 | slow(Empty,0): orders/0=20 30 30 false 180")
}
