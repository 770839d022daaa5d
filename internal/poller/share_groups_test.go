package poller

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/fakekafka"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

func withShareGroups(include, exclude string) func(*Config) {
	return func(c *Config) { c.Groups.Share, c.Groups.ShareInclude, c.Groups.ShareExclude = true, include, exclude }
}

// shareGroupTable renders the share groups as groupTable does, with the
// brokers by state.
func shareGroupTable(s *Snapshot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "brokers %v listed %d unread %v:", s.ShareGroupBrokers, s.ShareGroupsListed, s.ShareGroupsUnread)
	for _, g := range s.ShareGroups {
		fmt.Fprintf(&b, " %s:", g.Name)
		for _, p := range g.Partitions {
			fmt.Fprintf(&b, " %s/%d=%d %d %d %v %g", p.Topic, p.Partition, p.Committed, p.LagToHW, p.AboveHW, p.StarvedByReplication, p.LagSeconds)
		}
	}
	return b.String()
}

// TestShareGroupsRequests: off, a refresh sends no share-group request and
// the snapshot has none; on, each broker gets one ApiVersions on the first
// refresh and one ListGroups each, and each coordinator of a listed group
// one DescribeShareGroupOffsets.
func TestShareGroupsRequests(t *testing.T) {
	counts := func(on bool) (map[kmsg.Key]int, *Snapshot) {
		f := fakekafka.New(t)
		f.CreateTopic("orders", nil, 0, 1, 2)
		f.SetShareOffsets("shipping", map[logparse.PartitionKey]int64{key("orders", 0): 0})
		var tweak func(*Config)
		if on {
			tweak = withShareGroups(".*", "")
		}
		a, _ := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{}, tweak)
		a.refresh(context.Background())
		f.RequestCounts()
		a.refresh(context.Background())
		return f.RequestCounts(), a.Snapshot()
	}
	off, offSnap := counts(false)
	on, onSnap := counts(true)
	if off[kmsg.DescribeShareGroupOffsets] != 0 || offSnap.ShareGroups != nil || offSnap.Sent[RequestListShareGroups] {
		t.Errorf("off: want no share-group request and no share groups, got %v and %v", off, offSnap.ShareGroups)
	}
	if on[kmsg.DescribeShareGroupOffsets] != 1 || on[kmsg.ListGroups] != off[kmsg.ListGroups]+3 || on[kmsg.ApiVersions] != off[kmsg.ApiVersions] {
		t.Errorf("on: want 3 more ListGroups, 1 DescribeShareGroupOffsets and no new ApiVersions after the first refresh; off %v, on %v", off, on)
	}
	if !onSnap.Sent[RequestListShareGroups] || !onSnap.Sent[RequestDescribeShareGroupOffsets] {
		t.Errorf("on: the share-group requests are not marked sent: %v", onSnap.Sent)
	}
}

// TestShareGroupsStarved: a share group's start offset against the HW, the
// starved verdict once the HW has stalled with records above it, a share
// group merely behind not starved, and the filters.
func TestShareGroupsStarved(t *testing.T) {
	f := fakekafka.New(t)
	f.CreateTopic("orders", nil, 0, 1)
	f.SetOffsets(key("orders", 0), fakekafka.Offsets{HW: 100, LEO: 100})
	f.SetOffsets(key("orders", 1), fakekafka.Offsets{HW: 50, LEO: 80})
	f.SetShareOffsets("shipping", map[logparse.PartitionKey]int64{key("orders", 0): 100, key("orders", 1): 50})
	f.SetShareOffsets("slow", map[logparse.PartitionKey]int64{key("orders", 1): 20})
	f.SetShareOffsets("test-1", map[logparse.PartitionKey]int64{key("orders", 0): 0})

	a, clock := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{}, withShareGroups(".*", "test-.*"))
	a.refresh(context.Background())
	expect(t, "first refresh", shareGroupTable(a.Snapshot()),
		"brokers [3 0 0] listed 2 unread [0 0 0]: shipping: orders/0=100 0 0 false 0 orders/1=50 0 30 false 0 slow: orders/1=20 30 30 false 0")

	// The HW of orders/1 stays at 50 with 30 records above it for the stall
	// threshold: shipping, caught up there, is starved; slow is behind.
	clock.Advance(3 * time.Minute)
	a.refresh(context.Background())
	expect(t, "stalled", shareGroupTable(a.Snapshot()),
		"brokers [3 0 0] listed 2 unread [0 0 0]: shipping: orders/0=100 0 0 false 0 orders/1=50 0 30 true 0 slow: orders/1=20 30 30 false 180")
	if s := a.Snapshot(); s.Groups != nil {
		t.Errorf("consumer groups off: want none, got %v", s.Groups)
	}
}

// TestShareGroupsUnsupported: a cluster whose brokers have no share groups
// (share.version 0) is a state of each broker, not a request error, and
// sends no ListGroups of share groups.
func TestShareGroupsUnsupported(t *testing.T) {
	f := fakekafka.New(t)
	f.CreateTopic("orders", nil, 0)
	f.SetFeature("share.version", 0)
	a, _ := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{}, withShareGroups(".*", ""))
	a.refresh(context.Background())
	s := a.Snapshot()
	expect(t, "unsupported", shareGroupTable(s), "brokers [0 3 0] listed 0 unread [0 0 0]:")
	if s.RequestErrors[RequestListShareGroups] != 0 {
		t.Errorf("unsupported counted as %d request errors", s.RequestErrors[RequestListShareGroups])
	}
}
