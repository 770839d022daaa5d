package admin

import (
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/collector/internal/fakekafka"
)

// TestLastStableOffset: off, no read_committed request and no LSO; on, one
// per leader of an exported partition, and each partition's LSO.
func TestLastStableOffset(t *testing.T) {
	open := int64(40)
	for _, on := range []bool{false, true} {
		f := fakekafka.New(t)
		f.CreateTopic("orders", nil, 0, 1, 2)
		f.SetOffsets(key("orders", 0), fakekafka.Offsets{HW: 100, LEO: 100, LSO: &open})
		f.SetOffsets(key("orders", 1), fakekafka.Offsets{HW: 50, LEO: 50})
		f.SetOffsets(key("orders", 2), fakekafka.Offsets{HW: 7, LEO: 7})
		a, _ := newTestPoller(t, f.C.ListenAddrs(), 1, ScopeLeader, Options{}, func(c *Config) { c.Groups.LastStableOffset = on })
		a.refresh(context.Background())
		f.RequestCounts()
		a.refresh(context.Background())
		// Leader scope of broker 1: 3 ListOffsets LATEST for the HWs, 3 LEO
		// reads of orders/1's replicas, and the read_committed one.
		committed := f.RequestCounts()[kmsg.ListOffsets] - 6
		s := a.Snapshot()
		got := fmt.Sprint(s.StableOffsets)
		switch {
		case !on && (committed != 0 || s.StableOffsets != nil || s.Sent[RequestListOffsetsLSO]):
			t.Errorf("off: want no read_committed request and no LSO, got %d requests and %s", committed, got)
		case on && (committed != 1 || got != "[{orders 1 50}]" || !s.Sent[RequestListOffsetsLSO]):
			t.Errorf("on, leader scope of broker 1: want 1 read_committed request and orders/1=50, got %d and %s", committed, got)
		}
		if on {
			a, _ = newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{}, func(c *Config) { c.Groups.LastStableOffset = true })
			a.refresh(context.Background())
			expect(t, "cluster scope", fmt.Sprint(a.Snapshot().StableOffsets), "[{orders 0 40} {orders 1 50} {orders 2 7}]")
		}
	}
}
