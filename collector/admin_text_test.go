package collector

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/collector/admin"
)

var testEpoch = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

// snapshotSource is an AdminSnapshots whose snapshot the test sets.
type snapshotSource struct {
	snap atomic.Pointer[admin.Snapshot]
}

func newSnapshotSource(s *admin.Snapshot) *snapshotSource {
	src := &snapshotSource{}
	src.set(s)
	return src
}

func (s *snapshotSource) Snapshot() *admin.Snapshot { return s.snap.Load() }
func (s *snapshotSource) set(snap *admin.Snapshot)  { s.snap.Store(snap) }

// adminState renders a snapshot with the awkward cases: partition and
// replica ids that sort differently as strings, a topic without
// min.insync.replicas, offline partitions, missing HW and LEO answers,
// followers without a LEO answer, HWs past 1e6, stalls and regressions,
// partitions with and without ELR and reassignment readings.
func adminState(t testing.TB, partitionLabels bool) *AdminCollector {
	t.Helper()
	const brokers = 12
	s := &admin.Snapshot{Up: true, LastSuccess: testEpoch, Duration: 1234 * time.Millisecond}
	s.RequestErrors[admin.RequestListOffsetsLEO] = 2
	s.Disagreements[admin.FieldISR] = 1
	s.Brokers = []admin.BrokerStatus{{ID: 2, Responsive: true}, {ID: 10, Responsive: false}}
	minISR := map[string]int{"orders": 2, "we\"ird": 3}
	n := 0
	for ti, topic := range []string{"orders", "audit", "we\"ird", "a.b_c-d"} {
		tp := admin.Topic{Name: topic, MinISRConfig: minISR[topic]}
		for p := range int32(13) {
			n++
			leader := (p*5 + int32(ti)) % brokers
			replicas := []int32{leader, (leader + 3) % brokers, (leader + 7) % brokers}
			part := admin.Partition{
				Topic: topic, Partition: p, Replicas: len(replicas), ISR: 3 - n%3, Leader: leader, LeaderEpoch: int64(n % 6),
				Regressions: uint64(n % 3),
			}
			if n%11 == 0 {
				part.Leader = -1
			}
			if tp.MinISRConfig > 0 {
				part.MinISR = min(tp.MinISRConfig, part.Replicas)
			}
			if n%4 != 0 {
				part.HW, part.HWKnown = int64(n)*100_003, true
				if n%6 != 0 {
					part.LastAdvance = testEpoch.Add(-time.Duration(n) * time.Second)
				}
			}
			if part.Leader >= 0 && n%5 != 0 {
				part.LEO, part.LEOKnown = int64(n)*100_003+7, true
				for j, r := range replicas[1:] {
					if j == 1 && n%2 == 0 {
						continue // this follower did not answer
					}
					part.Lags = append(part.Lags, admin.ReplicaLag{Replica: r, Lag: int64(3 * (j + 1))})
				}
			}
			if part.StallKnown() && n%4 == 1 {
				part.Stalled, part.StallCause = true, admin.StallCause(1+n%3)
			}
			if n%3 != 0 { // ELR read; the others: not described
				part.ELRKnown, part.ELR, part.LastKnownELR = true, int32(n%3), int32(n%2)
			}
			if n%7 != 0 { // reassignments read
				part.ReassignmentKnown = true
				if n%5 == 1 {
					part.Reassigning, part.AddingReplicas, part.RemovingReplicas = true, 1, int32(n%2)
					part.UnderReplicatedByReassignment = n%10 == 1
				}
			}
			tp.Partitions = append(tp.Partitions, part)
		}
		s.Topics = append(s.Topics, tp)
	}
	slices.SortFunc(s.Topics, func(x, y admin.Topic) int { return strings.Compare(x.Name, y.Name) })
	return NewAdminCollector(newSnapshotSource(s), partitionLabels)
}

func TestAdminDirectText(t *testing.T) {
	for _, labels := range []bool{true, false} {
		t.Run(fmt.Sprintf("partition-labels=%v", labels), func(t *testing.T) {
			a := adminState(t, labels)
			want := registryText(t, a)
			got := directText(t, []prometheus.Collector{a.SmallFamilies()}, a)
			sameText(t, want, got)
			if labels && !strings.Contains(got, `kafka_replication_partition_replica_lag{partition="1",replica="10",topic="we\"ird"}`) {
				t.Error("want replica lag series")
			}
			if labels != strings.Contains(got, `kafka_replication_partition_high_watermark_stall_cause{cause="isr_shrink_pending",partition=`) {
				t.Errorf("want stall cause series only with partition labels (labels %v)", labels)
			}
			if !strings.Contains(got, `kafka_replication_broker_responsive{broker="10"} 0`) {
				t.Error("want broker responsiveness series")
			}
		})
		t.Run(fmt.Sprintf("sparse-ids/partition-labels=%v", labels), func(t *testing.T) {
			s := &admin.Snapshot{Topics: []admin.Topic{
				{Name: "a", Partitions: []admin.Partition{{Topic: "a", Partition: 9}, {Topic: "a", Partition: 100_000}}},
				{Name: "b", Partitions: []admin.Partition{{Topic: "b", Partition: 10}, {Topic: "b", Partition: 100_000}}},
			}}
			a := NewAdminCollector(newSnapshotSource(s), labels)
			sameText(t, registryText(t, a), directText(t, []prometheus.Collector{a.SmallFamilies()}, a))
		})
		t.Run(fmt.Sprintf("empty/partition-labels=%v", labels), func(t *testing.T) {
			a := NewAdminCollector(newSnapshotSource(&admin.Snapshot{}), labels)
			sameText(t, registryText(t, a), directText(t, []prometheus.Collector{a.SmallFamilies()}, a))
		})
	}
}
