package poller

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/fakekafka"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logstate"
)

// TestChurnStaysBounded is the soak of topic churn: every refresh the
// cluster's topics are all new and the last refresh's are gone (as if
// created and deleted between two refreshes), the broker's log names each
// one, and the admin API and the log disagree on every ISR. The memory of
// every map keyed by topic or partition, in the poller (min ISR, the open
// disagreements, the HW history) and in the log store (its partitions and
// its checker), stays that of one refresh's topics, and the heap stays flat.
func TestChurnStaysBounded(t *testing.T) {
	const (
		topics    = 2000
		refreshes = 80 // 160 000 topics created and deleted
	)
	if testing.Short() {
		t.Skip("soak")
	}
	f := fakekafka.New(t)
	gen := 0
	name := func(g, i int) string { return fmt.Sprintf("churn-%d-%d", g, i) }
	hostileMetadataFunc(t, f, func() ([]string, [][]int32) {
		names := make([]string, topics)
		parts := make([][]int32, topics)
		for i := range names {
			names[i], parts[i] = name(gen, i), []int32{0}
		}
		return names, parts
	})
	f.C.ControlKey(int16(kmsg.DescribeConfigs), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		f.C.KeepControl()
		req := kreq.(*kmsg.DescribeConfigsRequest)
		resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
		resp.Version = req.Version
		for i, r := range req.Resources {
			rr := kmsg.NewDescribeConfigsResponseResource()
			rr.ResourceType, rr.ResourceName = r.ResourceType, r.ResourceName
			c := kmsg.NewDescribeConfigsResponseResourceConfig()
			c.Name, c.Value = minISRConfig, kmsg.StringPtr("2")
			if i%3 == 0 {
				c.Value = kmsg.StringPtr("abc") // a third unusable: the broker default stands in
			}
			rr.Configs = append(rr.Configs, c)
			resp.Resources = append(resp.Resources, rr)
		}
		return resp, nil, true
	})
	f.C.ControlKey(int16(kmsg.ListOffsets), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		f.C.KeepControl()
		req := kreq.(*kmsg.ListOffsetsRequest)
		resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
		resp.Version = req.Version
		for _, rt := range req.Topics {
			st := kmsg.NewListOffsetsResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				sp := kmsg.NewListOffsetsResponseTopicPartition()
				sp.Partition, sp.Offset, sp.LeaderEpoch = rp.Partition, 10, -1
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	store := logstate.NewStore(nil)
	a, clock := newTestPoller(t, f.C.ListenAddrs(), 0, ScopeCluster, Options{LogStore: store}, nil)
	// The log's lines are an hour old by the store's clock, so that Retain
	// drops what Metadata no longer lists at once rather than after its grace.
	logAt := time.Now().Add(-time.Hour)

	var heap [2]uint64
	var snap logstate.Snapshot
	for gen = range refreshes {
		store.Tick(logAt)
		for i := range topics {
			ev := logparse.Event{Type: logparse.ISRUpdate, Time: logAt, Broker: 0, Topic: name(gen, i), TopicID: fmt.Sprintf("id-%d-%d", gen, i), Partition: 0, ISR: []int32{0, 1, 2}}
			store.Apply(&ev)
		}
		clock.Advance(15 * time.Second)
		a.refresh(context.Background())
		if s := a.Snapshot(); !s.Up || len(s.Topics) != topics {
			t.Fatalf("refresh %d: up %v, %d topics", gen, s.Up, len(s.Topics))
		}
		store.Snapshot(&snap)
		b := &a.build
		if n := len(b.minISR.topics); n != topics {
			t.Fatalf("refresh %d: min ISR of %d topics kept, want %d", gen, n, topics)
		}
		if n := len(b.join.open); n > topics {
			t.Fatalf("refresh %d: %d open disagreements kept, want ≤ %d", gen, n, topics)
		}
		if n := len(b.tracker.parts); n > topics {
			t.Fatalf("refresh %d: HW history of %d partitions kept, want ≤ %d", gen, n, topics)
		}
		if n := len(snap.Partitions); n > topics {
			t.Fatalf("refresh %d: the log store keeps %d partitions, want ≤ %d", gen, n, topics)
		}
		switch gen {
		case refreshes/2 - 1, refreshes - 1:
			// Half way: the maps have reached the size their churn of
			// deletes and inserts settles at (Go maps do not shrink).
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			heap[gen*2/refreshes] = ms.HeapAlloc
		}
	}
	t.Logf("heap after %d refreshes %d B, after %d: %d B", refreshes/2, heap[0], refreshes, heap[1])
	if float64(heap[1]) > 1.1*float64(heap[0]) {
		t.Errorf("heap grew from %d to %d B over %d refreshes of churn (more than 10%%)", heap[0], heap[1], refreshes/2)
	}
}
