package elr

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// cluster is a kfake cluster that counts DescribeTopicPartitions requests.
type cluster struct {
	*kfake.Cluster
	mu    sync.Mutex
	pages int
}

func newCluster(t *testing.T, opts ...kfake.Opt) *cluster {
	t.Helper()
	kc, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(3)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	c := &cluster{Cluster: kc}
	// Runs only when no key-specific control handled the request, so the
	// fake pages below count for themselves.
	kc.Control(func(req kmsg.Request) (kmsg.Response, error, bool) {
		if req.Key() == int16(kmsg.DescribeTopicPartitions) {
			c.mu.Lock()
			c.pages++
			c.mu.Unlock()
		}
		return nil, nil, false
	})
	return c
}

func (c *cluster) pagesServed() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pages
}

// fakePart is one partition of a canned DescribeTopicPartitions answer.
type fakePart struct {
	topic     string
	partition int32
	leader    int32
	isr, elr  []int32
	lastKnown []int32
}

// serveCanned answers DescribeTopicPartitions from parts (sorted by topic,
// then partition) the way a broker pages: from the request's cursor, at most
// ResponsePartitionLimit partitions, and a cursor to the next one. kfake's
// own handler has no ELR to show. It returns the cursors the client sent.
func (c *cluster) serveCanned(parts []fakePart) func() []string {
	var mu sync.Mutex
	var cursors []string
	c.ControlKey(int16(kmsg.DescribeTopicPartitions), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := kreq.(*kmsg.DescribeTopicPartitionsRequest)
		resp := req.ResponseKind().(*kmsg.DescribeTopicPartitionsResponse)
		start := 0
		cursor := "-"
		if req.Cursor != nil {
			cursor = req.Cursor.Topic + "/" + strconv.Itoa(int(req.Cursor.Partition))
			start = slices.IndexFunc(parts, func(p fakePart) bool {
				return p.topic == req.Cursor.Topic && p.partition == req.Cursor.Partition
			})
		}
		mu.Lock()
		cursors = append(cursors, cursor)
		mu.Unlock()
		c.mu.Lock()
		c.pages++
		c.mu.Unlock()
		end := min(start+int(req.ResponsePartitionLimit), len(parts))
		for _, p := range parts[start:end] {
			if n := len(resp.Topics); n == 0 || *resp.Topics[n-1].Topic != p.topic {
				rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
				rt.Topic = kmsg.StringPtr(p.topic)
				resp.Topics = append(resp.Topics, rt)
			}
			rp := kmsg.NewDescribeTopicPartitionsResponseTopicPartition()
			rp.Partition = p.partition
			rp.LeaderID = p.leader
			if p.leader < 0 {
				rp.ErrorCode = kerr.LeaderNotAvailable.Code
			}
			rp.Replicas = []int32{1, 2, 3}
			// A real broker sends empty lists, never null ones.
			rp.ISR = append([]int32{}, p.isr...)
			rp.EligibleLeaderReplicas = append([]int32{}, p.elr...)
			rp.LastKnownELR = append([]int32{}, p.lastKnown...)
			rp.OfflineReplicas = []int32{}
			t := &resp.Topics[len(resp.Topics)-1]
			t.Partitions = append(t.Partitions, rp)
		}
		if end < len(parts) {
			next := kmsg.NewDescribeTopicPartitionsResponseNextCursor()
			next.Topic, next.Partition = parts[end].topic, parts[end].partition
			resp.NextCursor = &next
		}
		return resp, nil, true
	})
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(cursors)
	}
}

func newTestReader(t *testing.T, c *kfake.Cluster, pageLimit int32) *Reader {
	t.Helper()
	r, err := New(Config{Seeds: c.ListenAddrs(), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	r.pageLimit = pageLimit
	return r
}

func read(t *testing.T, r *Reader, topics ...string) (*Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return r.Read(ctx, topics)
}

func TestReadFollowsTheCursorThroughEveryPage(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(5, "alpha", "bravo", "charlie"))
	r := newTestReader(t, c.Cluster, 4)

	res, err := read(t, r)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Enabled {
		t.Fatal("Enabled = false on a 4.4 cluster, whose ELR feature is finalized at 1")
	}
	// 15 partitions at 4 a page.
	if res.Pages != 4 || c.pagesServed() != 4 {
		t.Errorf("pages = %d read, %d served; want 4", res.Pages, c.pagesServed())
	}
	want := map[string]int32{"alpha": 5, "bravo": 5, "charlie": 5}
	if !maps.Equal(res.Described, want) {
		t.Errorf("Described = %v, want %v", res.Described, want)
	}
	// kfake sends null sets; nothing is kept for them.
	if len(res.Partitions) != 0 {
		t.Errorf("Partitions = %v, want none", res.Partitions)
	}
	for topic := range want {
		for p := range int32(5) {
			got, ok := res.Lookup(topic, p)
			if !ok || got.ELR != nil || got.LastKnownELR != nil {
				t.Errorf("Lookup(%s, %d) = %+v, %v; want described with both sets empty", topic, p, got, ok)
			}
		}
	}
	if _, ok := res.Lookup("alpha", 5); ok {
		t.Error("Lookup(alpha, 5): a partition the broker did not describe reads as described")
	}
	if res.TopicErrors != nil {
		t.Errorf("TopicErrors = %v", res.TopicErrors)
	}
}

func TestReadKeepsEachPartitionsEligibleLeaderReplicas(t *testing.T) {
	c := newCluster(t)
	parts := []fakePart{
		{topic: "audit", partition: 0, leader: 1, isr: []int32{1, 2, 3}},
		{topic: "audit", partition: 1, leader: 2, isr: []int32{2, 3, 1}},
		{topic: "orders", partition: 0, leader: 1, isr: []int32{1}, elr: []int32{2}},
		// Leaderless: both followers stopped cleanly after the ISR
		// shrank, then the leader died; it is the last known leader.
		{topic: "orders", partition: 1, leader: -1, elr: []int32{2, 3}, lastKnown: []int32{1}},
		{topic: "orders", partition: 2, leader: 3, isr: []int32{3, 1, 2}},
		{topic: "payments", partition: 0, leader: 2, isr: []int32{2}, elr: []int32{3}, lastKnown: []int32{1}},
		{topic: "payments", partition: 1, leader: 3, isr: []int32{3, 1, 2}},
	}
	cursors := c.serveCanned(parts)
	r := newTestReader(t, c.Cluster, 3)

	res, err := read(t, r)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"-", "orders/1", "payments/1"}; !slices.Equal(cursors(), want) {
		t.Errorf("cursors sent = %q, want %q", cursors(), want)
	}
	if res.Pages != 3 {
		t.Errorf("Pages = %d, want 3", res.Pages)
	}
	// Only the three partitions with a set are kept.
	if len(res.Partitions) != 3 {
		t.Errorf("Partitions = %v, want the 3 with a set", res.Partitions)
	}
	for _, p := range parts {
		got, ok := res.Lookup(p.topic, p.partition)
		if !ok || !slices.Equal(got.ELR, p.elr) || !slices.Equal(got.LastKnownELR, p.lastKnown) {
			t.Errorf("Lookup(%s, %d) = %+v, %v; want ELR %v last known %v", p.topic, p.partition, got, ok, p.elr, p.lastKnown)
		}
		// Empty sets cost nothing: a real broker's empty lists are not kept.
		if len(p.elr) == 0 && got.ELR != nil {
			t.Errorf("%s-%d: empty ELR kept as %#v", p.topic, p.partition, got.ELR)
		}
	}
	// Appending to one partition's set must not write into another's.
	o1 := res.Partitions[logparse.PartitionKey{Topic: "orders", Partition: 1}]
	_ = append(o1.ELR, 9)
	if got := res.Partitions[logparse.PartitionKey{Topic: "orders", Partition: 1}].LastKnownELR; !slices.Equal(got, []int32{1}) {
		t.Errorf("append to ELR changed LastKnownELR to %v", got)
	}
}

func TestReadAsksOnlyForTheGivenTopics(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(3, "alpha", "bravo"))
	r := newTestReader(t, c.Cluster, 2)

	res, err := read(t, r, "bravo", "gone")
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]int32{"bravo": 3}; !maps.Equal(res.Described, want) {
		t.Errorf("Described = %v, want %v", res.Described, want)
	}
	if _, ok := res.Lookup("gone", 0); ok {
		t.Error("Lookup(gone, 0): a topic the broker did not know reads as described")
	}
	if err := res.TopicErrors["gone"]; !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Errorf("TopicErrors[gone] = %v, want UNKNOWN_TOPIC_OR_PARTITION", err)
	}
}

func TestReadReportsABrokerWithoutTheAPIAsUnsupported(t *testing.T) {
	c := newCluster(t, kfake.MaxVersions(kversion.V3_6_0()), kfake.SeedTopics(1, "alpha"))
	r := newTestReader(t, c.Cluster, 2000)

	res, err := read(t, r)
	if !errors.Is(err, ErrUnsupported) {
		t.Fatalf("Read on 3.6 = %+v, %v; want ErrUnsupported", res, err)
	}
	if n := c.pagesServed(); n != 0 {
		t.Errorf("%d DescribeTopicPartitions sent to a broker that does not know it", n)
	}
}

func TestReadReportsELROffAsDisabled(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []kfake.Opt
		off  bool // turn the feature off with UpdateFeatures first
	}{
		{name: "3.9 has the API but no ELR feature", opts: []kfake.Opt{kfake.MaxVersions(kraft39())}},
		{name: "4.0 has ELR off unless enabled", opts: []kfake.Opt{kfake.MaxVersions(kversion.V4_0_0())}},
		{name: "4.4 with the feature downgraded to 0", off: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, append(tc.opts, kfake.SeedTopics(1, "alpha"))...)
			if tc.off {
				disableELR(t, c.Cluster)
			}
			r := newTestReader(t, c.Cluster, 2000)
			res, err := read(t, r)
			if err != nil {
				t.Fatal(err)
			}
			if res.Enabled || res.Partitions != nil || res.Described != nil {
				t.Errorf("Result = %+v, want Enabled false and no partitions", res)
			}
			if n := c.pagesServed(); n != 0 {
				t.Errorf("%d DescribeTopicPartitions sent with ELR off", n)
			}
		})
	}
}

// kraft39 is a KRaft 3.9 broker: kversion's 3.x tables are ZooKeeper
// brokers', which never had DescribeTopicPartitions.
func kraft39() *kversion.Versions {
	vs := kversion.V3_9_0()
	vs.SetMaxKeyVersion(int16(kmsg.DescribeTopicPartitions), 0)
	return vs
}

func TestReadSeesELRTurnedOffBetweenReads(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(1, "alpha"))
	r := newTestReader(t, c.Cluster, 2000)

	if res, err := read(t, r); err != nil || !res.Enabled {
		t.Fatalf("first Read = %+v, %v; want Enabled", res, err)
	}
	disableELR(t, c.Cluster)
	if res, err := read(t, r); err != nil || res.Enabled {
		t.Fatalf("Read after the downgrade = %+v, %v; want Enabled false", res, err)
	}
}

func disableELR(t *testing.T, c *kfake.Cluster) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrUpdateFeaturesRequest()
	u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
	u.Feature = elrFeature
	u.MaxVersionLevel = 0
	u.UpgradeType = 2 // safe downgrade
	req.FeatureUpdates = append(req.FeatureUpdates, u)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		t.Fatal(err)
	}
}
