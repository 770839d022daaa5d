package poller

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/fakekafka"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// fakeClock is the poller's injected clock.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time          { return c.now }
func (c *fakeClock) Advance(d time.Duration) { c.now = c.now.Add(d) }

var testEpoch = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

// newTestPoller returns a Poller pointed at servers, refreshed only by the
// test (no Run goroutine), with a fake clock.
func newTestPoller(t testing.TB, servers []string, brokerID int32, scope string, opts Options, tweak func(*Config)) (*Poller, *fakeClock) {
	t.Helper()
	cfg := &Config{
		Servers:         servers,
		Version:         "3.9.0",
		BrokerID:        brokerID,
		Scope:           scope,
		RefreshInterval: 15 * time.Second,
		RequestTimeout:  2 * time.Second,
		StallThreshold:  2 * time.Minute,
		Groups:          GroupsConfig{LSOStallThreshold: 5 * time.Minute},
		Tiering:         TieringConfig{StallThreshold: 10 * time.Minute},
	}
	if tweak != nil {
		tweak(cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	p := New(cfg, opts)
	clock := &fakeClock{now: testEpoch}
	p.now = clock.Now
	t.Cleanup(p.pool.close)
	if r := p.elr; r != nil {
		t.Cleanup(r.Close) // not a method of p, which would keep p alive for the benchmarks' heap figures
	}
	if q := p.quorum; q != nil {
		t.Cleanup(q.close)
	}
	if tr := p.tiering; tr != nil {
		t.Cleanup(tr.close)
	}
	return p, clock
}

// table renders one value of every exported partition, in snapshot order,
// as "topic/partition=value" separated by spaces.
func table(s *Snapshot, value func(p *Partition) any) string {
	var b strings.Builder
	for i := range s.Topics {
		for j := range s.Topics[i].Partitions {
			p := &s.Topics[i].Partitions[j]
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "%s/%d=%v", p.Topic, p.Partition, value(p))
		}
	}
	return b.String()
}

func expect(t *testing.T, what, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s:\nwant %s\ngot  %s", what, want, got)
	}
}

// TestPollerHealthy: a healthy RF3 topic with min ISR 2 and a topic on the
// broker default, every field of the snapshot.
func TestPollerHealthy(t *testing.T) {
	f := fakekafka.New(t)
	f.CreateTopic("orders", map[string]string{"min.insync.replicas": "2"}, 0, 1, 2)
	f.CreateTopic("audit", nil, 1)
	f.SetOffsets(logparse.PartitionKey{Topic: "orders", Partition: 0}, fakekafka.Offsets{HW: 100, LEO: 100})
	f.SetOffsets(logparse.PartitionKey{Topic: "orders", Partition: 1}, fakekafka.Offsets{HW: 40, LEO: 45, ReplicaLEO: map[int32]int64{2: 42, 0: 45}})
	f.SetOffsets(logparse.PartitionKey{Topic: "orders", Partition: 2}, fakekafka.Offsets{HW: 0, LEO: 0})
	f.SetOffsets(logparse.PartitionKey{Topic: "audit", Partition: 0}, fakekafka.Offsets{HW: 7, LEO: 7})

	a, _ := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{}, nil)
	a.refresh(context.Background())
	s := a.Snapshot()
	if !s.Up || !s.LastSuccess.Equal(testEpoch) || s.RequestErrors != [NumRequests]uint64{} || s.Disagreements != [NumFields]uint64{} {
		t.Errorf("want up at %v with no errors, got %+v", testEpoch, s)
	}
	if len(s.Topics) != 2 || s.Topics[0].Name != "audit" || s.Topics[1].Name != "orders" ||
		s.Topics[0].MinISRConfig != 1 || s.Topics[1].MinISRConfig != 2 {
		t.Fatalf("want audit (min ISR 1) and orders (min ISR 2), got %+v", s.Topics)
	}
	expect(t, "replicas/isr/min isr", table(s, func(p *Partition) any { return fmt.Sprint(p.Replicas, p.ISR, p.MinISR) }),
		"audit/0=3 3 1 orders/0=3 3 2 orders/1=3 3 2 orders/2=3 3 2")
	expect(t, "leader/epoch", table(s, func(p *Partition) any { return fmt.Sprint(p.Leader, p.LeaderEpoch) }),
		"audit/0=1 1 orders/0=0 1 orders/1=1 1 orders/2=2 1")
	expect(t, "hw/leo", table(s, func(p *Partition) any { return fmt.Sprint(p.HW, p.HWKnown, p.LEO, p.LEOKnown) }),
		"audit/0=7 true 7 true orders/0=100 true 100 true orders/1=40 true 45 true orders/2=0 true 0 true")
	expect(t, "lags", table(s, func(p *Partition) any { return fmt.Sprint(p.Lags) }),
		"audit/0=[{2 0} {0 0}] orders/0=[{1 0} {2 0}] orders/1=[{2 3} {0 0}] orders/2=[{0 0} {1 0}]")
	expect(t, "last advance/regressions/stalled", table(s, func(p *Partition) any {
		return fmt.Sprint(p.LastAdvance.Equal(testEpoch), p.Regressions, p.Stalled)
	}), "audit/0=true 0 false orders/0=true 0 false orders/1=true 0 false orders/2=true 0 false")
}

func TestPollerISRShrink(t *testing.T) {
	f := fakekafka.New(t)
	f.CreateTopic("orders", map[string]string{"min.insync.replicas": "2"}, 0, 1, 2)
	f.RewriteMetadata(func(topic string, p *kmsg.MetadataResponseTopicPartition) {
		switch p.Partition {
		case 0:
			p.ISR = []int32{p.Leader} // below min ISR
		case 1:
			p.ISR = []int32{p.Leader, p.Replicas[1]} // exactly at min ISR
		}
	})
	a, _ := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{}, nil)
	a.refresh(context.Background())
	s := a.Snapshot()
	expect(t, "under min ISR", table(s, func(p *Partition) any { return p.UnderMinISR() }), "orders/0=true orders/1=false orders/2=false")
	expect(t, "at min ISR", table(s, func(p *Partition) any { return p.AtMinISR() }), "orders/0=false orders/1=true orders/2=false")
	expect(t, "under-replicated", table(s, func(p *Partition) any { return p.UnderReplicated() }), "orders/0=true orders/1=true orders/2=false")
	expect(t, "ISR", table(s, func(p *Partition) any { return p.ISR }), "orders/0=1 orders/1=2 orders/2=3")
}

// TestPollerEffectiveMinISR: min.insync.replicas above RF is capped at RF, so
// an RF1 topic with min ISR 2 is not "under min ISR" for ever, nor "at min
// ISR" (there is no replica left to lose).
func TestPollerEffectiveMinISR(t *testing.T) {
	f := fakekafka.New(t, kfake.NumBrokers(1))
	f.CreateTopic("single", map[string]string{"min.insync.replicas": "2"}, 0)
	a, _ := newTestPoller(t, f.C.ListenAddrs(), 0, ScopeLeader, Options{}, nil)
	a.refresh(context.Background())
	s := a.Snapshot()
	if len(s.Topics) != 1 || s.Topics[0].MinISRConfig != 2 {
		t.Fatalf("want topic single with min ISR config 2, got %+v", s.Topics)
	}
	expect(t, "min ISR, under, at", table(s, func(p *Partition) any { return fmt.Sprint(p.MinISR, p.UnderMinISR(), p.AtMinISR()) }),
		"single/0=1 false false")
}

// TestPollerHWStall: HW frozen under min ISR while the LEO grows → stalled
// once the threshold has passed on the injected clock; an idle partition
// under min ISR (LEO == HW) never stalls.
func TestPollerHWStall(t *testing.T) {
	f := fakekafka.New(t)
	f.CreateTopic("orders", map[string]string{"min.insync.replicas": "2"}, 0, 0)
	f.RewriteMetadata(func(topic string, p *kmsg.MetadataResponseTopicPartition) {
		p.ISR = []int32{p.Leader}
	})
	a, clock := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{}, nil)
	stalled := func() string { return table(a.Snapshot(), func(p *Partition) any { return p.Stalled }) }
	for i, step := range []struct {
		advance time.Duration
		leo     int64
		want    string
	}{
		{0, 10, "orders/0=false orders/1=false"},
		{time.Minute, 20, "orders/0=false orders/1=false"},
		{time.Minute - time.Second, 30, "orders/0=false orders/1=false"},
		{time.Second, 40, "orders/0=true orders/1=false"},
		{time.Minute, 50, "orders/0=true orders/1=false"},
	} {
		clock.Advance(step.advance)
		f.SetOffsets(logparse.PartitionKey{Topic: "orders", Partition: 0}, fakekafka.Offsets{HW: 10, LEO: step.leo})
		f.SetOffsets(logparse.PartitionKey{Topic: "orders", Partition: 1}, fakekafka.Offsets{HW: 5, LEO: 5})
		a.refresh(context.Background())
		expect(t, fmt.Sprint("stalled, step ", i), stalled(), step.want)
	}
	expect(t, "last advance", table(a.Snapshot(), func(p *Partition) any { return p.LastAdvance.Equal(testEpoch) }),
		"orders/0=true orders/1=true")

	// The HW moves again: no longer stalled.
	clock.Advance(time.Second)
	f.SetOffsets(logparse.PartitionKey{Topic: "orders", Partition: 0}, fakekafka.Offsets{HW: 50, LEO: 60})
	a.refresh(context.Background())
	expect(t, "stalled after the HW moved", stalled(), "orders/0=false orders/1=false")
}

// TestPollerStallCause: HW frozen while the LEO grows stalls whatever the
// ISR says, and says why: under min ISR, a shrink the leader logged that
// the metadata does not show, or unknown. An idle partition never stalls.
func TestPollerStallCause(t *testing.T) {
	f := fakekafka.New(t)
	f.CreateTopic("orders", map[string]string{"min.insync.replicas": "2"}, 0, 1, 2, 0)
	f.RewriteMetadata(func(topic string, p *kmsg.MetadataResponseTopicPartition) {
		if p.Partition == 0 {
			p.ISR = []int32{p.Leader}
		}
	})
	view := fakeLogStore{{Topic: "orders", Partition: 1}: {pendingShrink: true}}
	a, clock := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{LogStore: view}, nil)
	causes := func() string {
		return table(a.Snapshot(), func(p *Partition) any { return fmt.Sprint(p.Stalled, p.StallCause) })
	}
	for i, step := range []struct {
		advance time.Duration
		leo     int64
		want    string
	}{
		{0, 10, "orders/0=false  orders/1=false  orders/2=false  orders/3=false "},
		{time.Minute, 20, "orders/0=false  orders/1=false  orders/2=false  orders/3=false "},
		{time.Minute - time.Second, 30, "orders/0=false  orders/1=false  orders/2=false  orders/3=false "},
		{time.Second, 40, "orders/0=true under_min_isr orders/1=true isr_shrink_pending orders/2=true unknown orders/3=false "},
	} {
		clock.Advance(step.advance)
		for p := range int32(3) {
			f.SetOffsets(logparse.PartitionKey{Topic: "orders", Partition: p}, fakekafka.Offsets{HW: 10, LEO: step.leo})
		}
		f.SetOffsets(logparse.PartitionKey{Topic: "orders", Partition: 3}, fakekafka.Offsets{HW: 5, LEO: 5})
		a.refresh(context.Background())
		expect(t, fmt.Sprint("stalled and cause, step ", i), causes(), step.want)
	}
}

// TestPollerHWRegression: a lower HW for the same topic id counts once; the
// same topic re-created (new topic id) starting from 0 does not count.
func TestPollerHWRegression(t *testing.T) {
	f := fakekafka.New(t)
	f.CreateTopic("orders", nil, 0)
	a, _ := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{}, nil)
	regressions := func() string { return table(a.Snapshot(), func(p *Partition) any { return p.Regressions }) }
	k := logparse.PartitionKey{Topic: "orders", Partition: 0}
	f.SetOffsets(k, fakekafka.Offsets{HW: 100, LEO: 100})
	a.refresh(context.Background())
	expect(t, "first reading", regressions(), "orders/0=0")
	oldID := a.Snapshot().Topics[0].ID

	f.SetOffsets(k, fakekafka.Offsets{HW: 90, LEO: 90})
	a.refresh(context.Background())
	expect(t, "HW went down", regressions(), "orders/0=1")

	a.refresh(context.Background()) // still 90: nothing new
	expect(t, "HW stayed", regressions(), "orders/0=1")

	if err := f.C.DeleteTopic("orders"); err != nil {
		t.Fatal(err)
	}
	f.CreateTopic("orders", nil, 0)
	f.SetOffsets(k, fakekafka.Offsets{HW: 0, LEO: 0})
	a.refresh(context.Background())
	expect(t, "topic re-created", regressions(), "orders/0=1")
	// The topic id as Kafka prints it (base64, 22 characters), new for the
	// new topic: what the rules tell a re-created topic apart by.
	newID := a.Snapshot().Topics[0].ID
	if len(oldID) != 22 || len(newID) != 22 || oldID == newID {
		t.Errorf("want two different 22-character topic ids across re-creation, got %q and %q", oldID, newID)
	}
}

// TestPollerOfflinePartition: a partition without a leader stays exported
// with leader -1, by exactly one sidecar (the lowest live broker id).
func TestPollerOfflinePartition(t *testing.T) {
	f := fakekafka.New(t)
	f.CreateTopic("orders", map[string]string{"min.insync.replicas": "2"}, 1, 2)
	f.RewriteMetadata(func(topic string, p *kmsg.MetadataResponseTopicPartition) {
		if p.Partition == 1 {
			p.Leader, p.ISR, p.OfflineReplicas = -1, nil, p.Replicas
			p.ErrorCode = 5 // LEADER_NOT_AVAILABLE, as Kafka answers
		}
	})
	leaders := map[int32]string{0: "orders/1=-1", 1: "orders/0=1", 2: ""}
	for id, w := range leaders {
		a, _ := newTestPoller(t, f.C.ListenAddrs(), id, ScopeLeader, Options{}, nil)
		a.refresh(context.Background())
		expect(t, fmt.Sprint("leaders exported by broker ", id), table(a.Snapshot(), func(p *Partition) any { return p.Leader }), w)
	}
	a, _ := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{}, nil)
	a.refresh(context.Background())
	expect(t, "under min ISR", table(a.Snapshot(), func(p *Partition) any { return p.UnderMinISR() }), "orders/0=false orders/1=true")
}

// TestPollerLeaderScope: the sidecar of broker 1, found by matching
// --kafka.server to the broker list, exports only the partitions broker 1
// leads.
func TestPollerLeaderScope(t *testing.T) {
	f := fakekafka.New(t)
	f.CreateTopic("orders", nil, 0, 1, 2, 1)
	a, _ := newTestPoller(t, f.C.ListenAddrs()[1:2], -1, ScopeLeader, Options{}, nil)
	a.refresh(context.Background())
	if a.brokerID != 1 {
		t.Fatalf("want broker id 1 detected, got %d", a.brokerID)
	}
	expect(t, "leaders", table(a.Snapshot(), func(p *Partition) any { return p.Leader }), "orders/1=1 orders/3=1")
}

// TestPollerTopicFilter: filtered topics are neither exported nor described.
func TestPollerTopicFilter(t *testing.T) {
	f := fakekafka.New(t)
	f.CreateTopic("orders", nil, 0)
	f.CreateTopic("ignored", nil, 0)
	var exists []string
	a, _ := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{
		TopicFilter: func(topic string) bool { return topic != "ignored" },
		LogStore: retainSpy{fakeLogStore{}, func(exist func(string) bool, _ func(logparse.PartitionKey) bool) {
			exists = exists[:0]
			for _, t := range []string{"orders", "ignored", "never"} {
				if exist(t) {
					exists = append(exists, t)
				}
			}
		}},
	}, nil)
	a.refresh(context.Background())
	expect(t, "exported", table(a.Snapshot(), func(p *Partition) any { return p.Leader }), "orders/0=0")
	if len(exists) != 2 {
		t.Errorf("want Retain told of both topics, filtered or not, got %v", exists)
	}
}

// TestPollerTellsTheLogStore: in leader scope the log store gets the
// Metadata ISR of the partitions this broker leads (and only those), and
// Retain the partitions it hosts.
func TestPollerTellsTheLogStore(t *testing.T) {
	f := fakekafka.New(t)
	f.CreateTopic("orders", nil, 0, 1, 2, 1)
	view := fakeLogStore{}
	var hostedOrders1 bool
	a, _ := newTestPoller(t, f.C.ListenAddrs()[1:2], 1, ScopeLeader, Options{
		LogStore: retainSpy{view, func(_ func(string) bool, hosted func(logparse.PartitionKey) bool) {
			hostedOrders1 = hosted != nil && hosted(logparse.PartitionKey{Topic: "orders", Partition: 1}) &&
				!hosted(logparse.PartitionKey{Topic: "orders", Partition: 9})
		}},
	}, nil)
	a.refresh(context.Background())
	var observed []string
	for k, e := range view {
		observed = append(observed, fmt.Sprintf("%s/%d=%d", k.Topic, k.Partition, e.observed))
	}
	slices.Sort(observed)
	if want := "orders/1=3 orders/3=3"; strings.Join(observed, " ") != want {
		t.Errorf("want ObserveISR for the led partitions %s, got %v", want, observed)
	}
	if !hostedOrders1 {
		t.Error("want Retain told that broker 1 hosts orders/1 and not orders/9")
	}
}

// TestPollerRequestsPerRefresh: the number of requests per refresh depends
// on the brokers, not on the partitions.
func TestPollerRequestsPerRefresh(t *testing.T) {
	counts := func(partitions int) map[kmsg.Key]int {
		f := fakekafka.New(t)
		leaders := make([]int32, partitions)
		for i := range leaders {
			leaders[i] = int32(i % 3)
		}
		f.CreateTopic("orders", nil, leaders...)
		a, _ := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{}, nil)
		a.refresh(context.Background()) // connection set-up (ApiVersions) happens here
		f.RequestCounts()
		a.refresh(context.Background())
		got := f.RequestCounts()
		delete(got, kmsg.ApiVersions)
		return got
	}
	one, many := counts(3), counts(200)
	// 1 Metadata + 1 DescribeConfigs + per broker 1 HW + 1 LEO, 1 ListPartitionReassignments
	// and 1 DescribeTopicPartitions page (ELR).
	want := map[kmsg.Key]int{
		kmsg.Metadata: 1, kmsg.DescribeConfigs: 1, kmsg.ListOffsets: 6,
		kmsg.ListPartitionReassignments: 1, kmsg.DescribeTopicPartitions: 1,
	}
	for k, n := range want {
		if one[k] != n || many[k] != n {
			t.Errorf("%s: want %d requests for 3 and 200 partitions, got %d and %d", k.Name(), n, one[k], many[k])
		}
	}
	if len(one) != len(want) || len(many) != len(want) {
		t.Errorf("want only %v, got %v and %v", want, one, many)
	}
}

// TestPollerUnreachable: no broker answers → up false with the last values
// kept (for the grace of TestPollerStaleAfterGrace), and a broker coming
// back is picked up by the next refresh.
func TestPollerUnreachable(t *testing.T) {
	ports := freePorts(t, 3)
	start := func() *kfake.Cluster {
		c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.Ports(ports...))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := start()
	if err := c.CreateTopic("orders", 1, nil); err != nil {
		t.Fatal(err)
	}
	a, _ := newTestPoller(t, c.ListenAddrs(), -1, ScopeCluster, Options{}, nil)
	upWithReplicas := func() string {
		s := a.Snapshot()
		return fmt.Sprint(s.Up, " ", table(s, func(p *Partition) any { return p.Replicas }))
	}
	a.refresh(context.Background())
	expect(t, "up", upWithReplicas(), "true orders/0=3")

	c.Close()
	a.refresh(context.Background())
	expect(t, "down: last values kept", upWithReplicas(), "false orders/0=3")
	if n := a.Snapshot().RequestErrors[RequestMetadata]; n < 1 {
		t.Errorf("want metadata errors counted, got %v", n)
	}

	c = start()
	defer c.Close()
	if err := c.CreateTopic("orders", 1, nil); err != nil {
		t.Fatal(err)
	}
	a.refresh(context.Background())
	expect(t, "back", upWithReplicas(), "true orders/0=3")
}

// TestPollerStaleAfterGrace: without a successful refresh for three refresh
// intervals (at least 30s) the partitions go; up, the last refresh time and
// the error counters stay.
func TestPollerStaleAfterGrace(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CreateTopic("orders", 1, nil); err != nil {
		t.Fatal(err)
	}
	a, clock := newTestPoller(t, c.ListenAddrs(), -1, ScopeCluster, Options{}, nil) // refresh interval 15s: grace 45s
	a.refresh(context.Background())
	c.Close()
	for _, step := range []struct {
		advance time.Duration
		want    string
	}{
		{15 * time.Second, "orders/0=0"},
		{29 * time.Second, "orders/0=0"},
		{time.Second, ""}, // 45s after the last success
		{15 * time.Second, ""},
	} {
		clock.Advance(step.advance)
		a.refresh(context.Background())
		s := a.Snapshot()
		expect(t, fmt.Sprint("partitions at +", clock.now.Sub(testEpoch)), table(s, func(p *Partition) any { return p.Leader }), step.want)
		if s.Up || !s.LastSuccess.Equal(testEpoch) || s.RequestErrors[RequestMetadata] == 0 {
			t.Errorf("want down since %v with metadata errors counted, got up %v last success %v errors %v", testEpoch, s.Up, s.LastSuccess, s.RequestErrors)
		}
	}
	if s := a.Snapshot(); len(s.Topics) != 0 {
		t.Errorf("want no topics, got %+v", s.Topics)
	}
}

// TestPollerNeverConnected: New and a refresh against nothing must not block
// beyond the request timeout, and report up false with no partitions.
func TestPollerNeverConnected(t *testing.T) {
	addr := freePorts(t, 1)
	a, _ := newTestPoller(t, []string{fmt.Sprintf("127.0.0.1:%d", addr[0])}, -1, ScopeLeader, Options{}, nil)
	if a.Ready() {
		t.Error("want not ready before the first refresh")
	}
	a.refresh(context.Background())
	if !a.Ready() {
		t.Error("want ready after the first refresh attempt")
	}
	if s := a.Snapshot(); s.Up || !s.LastSuccess.IsZero() || len(s.Topics) != 0 {
		t.Errorf("want down, never refreshed, no topics; got %+v", s)
	}
}

// TestPollerLogView: the fresher of Metadata and the broker's logs wins; a
// disagreement is counted once however many refreshes it lasts.
func TestPollerLogView(t *testing.T) {
	f := fakekafka.New(t)
	f.CreateTopic("orders", map[string]string{"min.insync.replicas": "2"}, 0, 0)
	view := fakeLogStore{
		// Newer than any refresh: the log saw a shrink Metadata has not.
		{Topic: "orders", Partition: 0}: {isr: 1, isrAt: testEpoch.Add(time.Hour), epoch: 2, epochAt: testEpoch.Add(time.Hour)},
		// Older than the refresh: Metadata wins.
		{Topic: "orders", Partition: 1}: {isr: 2, isrAt: testEpoch.Add(-time.Hour), epoch: 0, epochAt: testEpoch.Add(-time.Hour)},
	}
	a, _ := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{LogStore: view}, nil)
	a.refresh(context.Background())
	a.refresh(context.Background())
	s := a.Snapshot()
	expect(t, "ISR, leader epoch, under min ISR", table(s, func(p *Partition) any { return fmt.Sprint(p.ISR, p.LeaderEpoch, p.UnderMinISR()) }),
		"orders/0=1 2 true orders/1=3 1 false")
	if s.Disagreements[FieldISR] != 2 || s.Disagreements[FieldLeaderEpoch] != 2 {
		t.Errorf("want 2 disagreements on each field, got %v", s.Disagreements)
	}
}

// TestPollerPartitionLogLevel: with --kafka.partition-log-level, Run raises
// kafka.cluster.Partition on this broker only and deletes the override on
// exit (kfake cannot describe BROKER_LOGGER, so there is no previous level to
// put back).
func TestPollerPartitionLogLevel(t *testing.T) {
	f := fakekafka.New(t)
	type alter struct {
		node        int32
		name, level string
		op          int8
	}
	alters := make(chan alter, 4)
	f.C.ControlKey(int16(kmsg.IncrementalAlterConfigs), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		f.C.KeepControl()
		req := kreq.(*kmsg.IncrementalAlterConfigsRequest)
		resp := req.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
		resp.Version = req.Version
		for _, r := range req.Resources {
			for _, c := range r.Configs {
				level := ""
				if c.Value != nil {
					level = *c.Value
				}
				alters <- alter{f.C.CurrentNode(), r.ResourceName + "/" + c.Name, level, int8(c.Op)}
			}
			rr := kmsg.NewIncrementalAlterConfigsResponseResource()
			rr.ResourceType, rr.ResourceName = r.ResourceType, r.ResourceName
			resp.Resources = append(resp.Resources, rr)
		}
		return resp, nil, true
	})
	a, _ := newTestPoller(t, f.C.ListenAddrs(), 2, ScopeLeader, Options{}, func(c *Config) { c.PartitionLogLevel = "TRACE" })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { a.Run(ctx); close(done) }()

	want := []alter{
		{node: 2, name: "2/kafka.cluster.Partition", level: "TRACE", op: 0},
		{node: 2, name: "2/kafka.cluster.Partition", level: "", op: 1},
	}
	for i, w := range want {
		select {
		case got := <-alters:
			if got != w {
				t.Errorf("alter %d: want %+v, got %+v", i, w, got)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("alter %d: want %+v, got nothing", i, w)
		}
		if i == 0 {
			cancel()
		}
	}
	<-done
}

// TestPollerReadOnlyByDefault: without the flag no alter request is sent.
func TestPollerReadOnlyByDefault(t *testing.T) {
	f := fakekafka.New(t)
	f.CreateTopic("orders", nil, 0)
	a, _ := newTestPoller(t, f.C.ListenAddrs(), 0, ScopeLeader, Options{}, nil)
	a.refresh(context.Background())
	a.refresh(context.Background())
	for k := range f.RequestCounts() {
		switch k {
		case kmsg.Metadata, kmsg.DescribeConfigs, kmsg.ListOffsets, kmsg.ApiVersions,
			kmsg.ListPartitionReassignments, kmsg.DescribeTopicPartitions:
		default:
			t.Errorf("want read-only requests, got %s", k.Name())
		}
	}
}

type logStoreEntry struct {
	isr           int
	isrAt         time.Time
	epoch         int64
	epochAt       time.Time
	pendingShrink bool
	observed      int // the last ObserveISR size
}

type fakeLogStore map[logparse.PartitionKey]logStoreEntry

func (v fakeLogStore) LogPartitionState(topic string, partition int32) (int, time.Time, int64, time.Time, bool) {
	e, ok := v[logparse.PartitionKey{Topic: topic, Partition: partition}]
	return e.isr, e.isrAt, e.epoch, e.epochAt, ok
}

func (v fakeLogStore) PendingISRShrink(topic string, partition int32) bool {
	return v[logparse.PartitionKey{Topic: topic, Partition: partition}].pendingShrink
}

// ObserveISR records the last Metadata ISR handed over, as observed.
func (v fakeLogStore) ObserveISR(topic string, partition int32, size int) {
	k := logparse.PartitionKey{Topic: topic, Partition: partition}
	e := v[k]
	e.observed = size
	v[k] = e
}

// Retain is told nothing a test looks at.
func (v fakeLogStore) Retain(func(string) bool, func(logparse.PartitionKey) bool) {}

func (v fakeLogStore) LogBrokerID() (int32, bool) { return -1, false }

// retainSpy is a fakeLogStore that hands what Retain is told to retain.
type retainSpy struct {
	fakeLogStore
	retain func(exists func(string) bool, hosted func(logparse.PartitionKey) bool)
}

func (s retainSpy) Retain(exists func(string) bool, hosted func(logparse.PartitionKey) bool) {
	s.retain(exists, hosted)
}

// freePorts reserves n loopback ports and releases them for the caller.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// TestPollerWarnsWithoutTopicIDs: a Metadata version without topic ids
// (--kafka.version below 2.8.0) leaves every topic's ID empty, so no
// kafka_replication_topic_info, and says so at WARN once, not every refresh.
func TestPollerWarnsWithoutTopicIDs(t *testing.T) {
	f := fakekafka.New(t)
	f.CreateTopic("orders", nil, 0)
	var logs bytes.Buffer
	a, _ := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{Logger: slogTo(&logs)}, func(c *Config) { c.Version = "2.7.0" })
	a.refresh(context.Background())
	a.refresh(context.Background())
	if id := a.Snapshot().Topics[0].ID; id != "" {
		t.Errorf("want no topic id from Metadata v9, got %q", id)
	}
	if n := strings.Count(logs.String(), "level=WARN msg=\"Metadata carries no topic ids"); n != 1 {
		t.Errorf("want one WARN about missing topic ids, got %d:\n%s", n, logs.String())
	}
}
