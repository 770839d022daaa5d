package poller

import (
	"context"
	"testing"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/fakekafka"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// TestGroupsStarvedBehindASmallLastStep: the HW froze just after a refresh,
// so its last advance is 1 record (49 → 50), while the group's last commits
// failed a few records earlier (45). The HW passed 45 about 21.7s before 50
// was first read, within a refresh (15s) plus the commit grace (10s): the
// group kept up and is starved, not lagging. A group the HW passed before
// all of that (30) is lagging on its own.
func TestGroupsStarvedBehindASmallLastStep(t *testing.T) {
	f := fakekafka.New(t)
	f.CreateTopic("orders", nil, 0)
	a, clock := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{}, withGroups(".*", ""))
	for _, hw := range []int64{20, 40, 49} {
		f.SetOffsets(key("orders", 0), fakekafka.Offsets{HW: hw, LEO: hw})
		a.refresh(context.Background())
		clock.Advance(15 * time.Second)
	}
	f.SetOffsets(key("orders", 0), fakekafka.Offsets{HW: 50, LEO: 60})
	f.CommitOffsets("keeps-up", map[logparse.PartitionKey]int64{key("orders", 0): 45})
	f.CommitOffsets("behind", map[logparse.PartitionKey]int64{key("orders", 0): 30})
	a.refresh(context.Background())
	for range 2 {
		clock.Advance(2 * time.Minute)
		a.refresh(context.Background())
	}
	expect(t, "stalled at 50 after 49", groupTable(a.Snapshot()),
		"behind(Empty,0): orders/0=30 20 10 false 277.5 | keeps-up(Empty,0): orders/0=45 5 10 true 261.666666752")
}
