package collector

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fakeKafka is a kfake cluster with the hooks the admin tests need: request
// counting, a Metadata rewrite (kfake always reports ISR == replicas) and a
// table of HW/LEO answers (kfake has no replication, so HW == LEO).
type fakeKafka struct {
	t *testing.T
	c *kfake.Cluster

	mu       sync.Mutex
	requests map[kmsg.Key]int
	// mdRewrite, when set, answers Metadata with a rewritten copy of mdBase.
	mdBase    *kmsg.MetadataResponse
	mdRewrite func(topic string, p *kmsg.MetadataResponseTopicPartition)
	// offsets, when set, answers every ListOffsets LATEST.
	offsets map[partitionKey]*fakeOffsets
}

// fakeOffsets is one partition's answers: hw to consumers, leo to replica
// id -2 unless the asked broker has its own entry in replicaLEO.
type fakeOffsets struct {
	hw, leo    int64
	replicaLEO map[int32]int64
}

func newFakeKafka(t *testing.T, opts ...kfake.Opt) *fakeKafka {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(3)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	f := &fakeKafka{t: t, c: c, requests: make(map[kmsg.Key]int)}
	f.install()
	return f
}

func (f *fakeKafka) install() {
	c := f.c
	// Counting runs first and never handles, so every request is seen.
	c.Control(func(req kmsg.Request) (kmsg.Response, error, bool) {
		f.mu.Lock()
		f.requests[kmsg.Key(req.Key())]++
		f.mu.Unlock()
		return nil, nil, false
	})
	// Control(-1) only runs when no key-specific control handled the
	// request, so the rewriting controls count for themselves.
	c.ControlKey(int16(kmsg.Metadata), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.mdRewrite == nil {
			return nil, nil, false
		}
		f.requests[kmsg.Metadata]++
		resp := *f.mdBase
		resp.Version = kreq.GetVersion()
		resp.Topics = slices.Clone(resp.Topics)
		for i := range resp.Topics {
			rt := &resp.Topics[i]
			rt.Partitions = slices.Clone(rt.Partitions)
			for j := range rt.Partitions {
				f.mdRewrite(*rt.Topic, &rt.Partitions[j])
			}
		}
		return &resp, nil, true
	})
	c.ControlKey(int16(kmsg.ListOffsets), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		node := c.CurrentNode()
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.offsets == nil {
			return nil, nil, false
		}
		f.requests[kmsg.ListOffsets]++
		req := kreq.(*kmsg.ListOffsetsRequest)
		resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
		resp.Version = req.Version
		for _, rt := range req.Topics {
			st := kmsg.NewListOffsetsResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				sp := kmsg.NewListOffsetsResponseTopicPartition()
				sp.Partition = rp.Partition
				sp.LeaderEpoch = -1
				o := f.offsets[partitionKey{rt.Topic, rp.Partition}]
				switch {
				case o == nil:
					sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				case req.ReplicaID == debugReplicaID:
					sp.Offset = o.leo
					if v, ok := o.replicaLEO[node]; ok {
						sp.Offset = v
					}
				default:
					sp.Offset = o.hw
				}
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
}

// rewriteMetadata freezes the current real Metadata and from now on answers
// with rewrite applied to every partition.
func (f *fakeKafka) rewriteMetadata(rewrite func(topic string, p *kmsg.MetadataResponseTopicPartition)) {
	f.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.c.ListenAddrs()...))
	if err != nil {
		f.t.Fatal(err)
	}
	defer cl.Close()
	// Drop our own controls while fetching the base.
	f.mu.Lock()
	f.mdRewrite = nil
	f.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	base, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	if err != nil {
		f.t.Fatal(err)
	}
	f.mu.Lock()
	f.mdBase, f.mdRewrite = base, rewrite
	f.mu.Unlock()
}

func (f *fakeKafka) setOffsets(k partitionKey, o fakeOffsets) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.offsets == nil {
		f.offsets = make(map[partitionKey]*fakeOffsets)
	}
	f.offsets[k] = &o
}

// requestCounts returns and resets the request counters.
func (f *fakeKafka) requestCounts() map[kmsg.Key]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.requests
	f.requests = make(map[kmsg.Key]int)
	return out
}

// createTopic creates a topic and places partition p's leader on
// leaders[p], so leader ids (and the leader epoch, 1) are deterministic.
func (f *fakeKafka) createTopic(name string, configs map[string]string, leaders ...int32) {
	f.t.Helper()
	if err := f.c.CreateTopic(name, int32(len(leaders)), configs); err != nil {
		f.t.Fatal(err)
	}
	for p, l := range leaders {
		if err := f.c.MoveTopicPartition(name, int32(p), l); err != nil {
			f.t.Fatal(err)
		}
	}
}

// fakeClock is the admin's injected clock.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time          { return c.now }
func (c *fakeClock) Advance(d time.Duration) { c.now = c.now.Add(d) }

var testEpoch = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

// newTestAdmin returns an Admin pointed at servers, refreshed only by the
// test (no Run goroutine), with a fake clock.
func newTestAdmin(t testing.TB, servers []string, brokerID int32, scope string, overlay LogOverlay, tweak func(*AdminConfig)) (*Admin, *fakeClock) {
	t.Helper()
	cfg := &AdminConfig{
		Servers:         servers,
		Version:         "3.9.0",
		BrokerID:        brokerID,
		Scope:           scope,
		RefreshInterval: 15 * time.Second,
		RequestTimeout:  2 * time.Second,
		StallThreshold:  2 * time.Minute,
		PartitionLabels: true,
	}
	if tweak != nil {
		tweak(cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	a := NewAdmin(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), overlay)
	clock := &fakeClock{now: testEpoch}
	a.now = clock.Now
	t.Cleanup(a.pool.close)
	return a, clock
}
