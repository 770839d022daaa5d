package poller

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/fakekafka"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

func elrTable(s *Snapshot) string {
	return table(s, func(p *Partition) any {
		if !p.ELRKnown {
			return "-"
		}
		return fmt.Sprintf("%d/%d", p.ELR, p.LastKnownELR)
	})
}

// TestPollerELR: each exported partition gets its ELR and last-known ELR
// sizes, zero where the sets are empty.
func TestPollerELR(t *testing.T) {
	f := fakekafka.New(t)
	f.CreateTopic("orders", map[string]string{"min.insync.replicas": "2"}, 0, 1, 2)
	f.RewriteMetadata(func(topic string, p *kmsg.MetadataResponseTopicPartition) {
		if p.Partition == 0 {
			p.ISR = []int32{p.Leader}
		}
	})
	f.SetELR(map[logparse.PartitionKey]fakekafka.ELR{
		{Topic: "orders", Partition: 0}: {ELR: []int32{1, 2}},
		{Topic: "orders", Partition: 1}: {LastKnown: []int32{2}},
		{Topic: "orders", Partition: 2}: {},
	})
	a, _ := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{}, nil)
	a.refresh(context.Background())
	s := a.Snapshot()
	expect(t, "ELR/last-known ELR", elrTable(s), "orders/0=2/0 orders/1=0/1 orders/2=0/0")
	if s.RequestErrors != [NumRequests]uint64{} {
		t.Errorf("want no request errors, got %v", s.RequestErrors)
	}
}

// TestPollerELRLeaderScope: a leader-scoped sidecar describes only the
// topics it exports, not the whole cluster.
func TestPollerELRLeaderScope(t *testing.T) {
	f := fakekafka.New(t)
	f.CreateTopic("orders", nil, 0, 1)
	f.CreateTopic("elsewhere", nil, 1, 2)
	var (
		mu    sync.Mutex
		asked [][]string
	)
	f.C.ControlKey(int16(kmsg.DescribeTopicPartitions), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		f.C.KeepControl()
		var topics []string
		for _, t := range kreq.(*kmsg.DescribeTopicPartitionsRequest).Topics {
			topics = append(topics, t.Topic)
		}
		mu.Lock()
		asked = append(asked, topics)
		mu.Unlock()
		return nil, nil, false
	})
	a, _ := newTestPoller(t, f.C.ListenAddrs(), 0, ScopeLeader, Options{}, nil)
	a.refresh(context.Background())
	expect(t, "ELR of what broker 0 leads", elrTable(a.Snapshot()), "orders/0=0/0")
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 || !slices.Equal(asked[0], []string{"orders"}) {
		t.Errorf("want one request for [orders], got %q", asked)
	}
}

// TestPollerELRAbsent: a broker without DescribeTopicPartitions (3.6) or a
// cluster with ELR off (4.0 by default) gives no ELR values and no error.
func TestPollerELRAbsent(t *testing.T) {
	for name, vs := range map[string]*kversion.Versions{"3.6": kversion.V3_6_0(), "4.0": kversion.V4_0_0()} {
		t.Run(name, func(t *testing.T) {
			f := fakekafka.New(t, kfake.MaxVersions(vs))
			f.CreateTopic("orders", nil, 0, 1)
			a, _ := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{}, nil)
			a.refresh(context.Background())
			s := a.Snapshot()
			if !s.Up {
				t.Fatal("want up")
			}
			expect(t, "ELR", elrTable(s), "orders/0=- orders/1=-")
			if n := s.RequestErrors[RequestDescribeTopicPartitions]; n != 0 {
				t.Errorf("want no describe_topic_partitions error, got %d", n)
			}
		})
	}
}

// TestPollerELRFailure: a read that fails is counted and leaves no ELR
// values for that refresh; the next good read brings them back.
func TestPollerELRFailure(t *testing.T) {
	f := fakekafka.New(t)
	f.CreateTopic("orders", nil, 0)
	var fail atomic.Bool
	fail.Store(true)
	f.C.ControlKey(int16(kmsg.DescribeTopicPartitions), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		f.C.KeepControl()
		if !fail.Load() {
			return nil, nil, false
		}
		// A cursor that describes nothing and does not move.
		resp := kreq.ResponseKind().(*kmsg.DescribeTopicPartitionsResponse)
		resp.Version = kreq.GetVersion()
		next := kmsg.NewDescribeTopicPartitionsResponseNextCursor()
		next.Topic = "orders"
		resp.NextCursor = &next
		return resp, nil, true
	})
	a, _ := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{}, nil)
	a.refresh(context.Background())
	s := a.Snapshot()
	expect(t, "ELR after a failed read", elrTable(s), "orders/0=-")
	if n := s.RequestErrors[RequestDescribeTopicPartitions]; n != 1 {
		t.Errorf("want 1 describe_topic_partitions error, got %d", n)
	}
	fail.Store(false)
	a.refresh(context.Background())
	expect(t, "ELR after a good read", elrTable(a.Snapshot()), "orders/0=0/0")
}
