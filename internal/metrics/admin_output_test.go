package metrics

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/exposition"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/poller"
)

var testEpoch = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

// snapshotSource is an AdminSnapshots whose snapshot the test sets.
type snapshotSource struct {
	snap atomic.Pointer[poller.Snapshot]
}

func newSnapshotSource(s *poller.Snapshot) *snapshotSource {
	src := &snapshotSource{}
	src.set(s)
	return src
}

func (s *snapshotSource) Snapshot() *poller.Snapshot { return s.snap.Load() }
func (s *snapshotSource) set(snap *poller.Snapshot)  { s.snap.Store(snap) }

// adminSnapshot has the awkward cases: partition and replica ids that sort
// differently as strings, a topic without min.insync.replicas, offline
// partitions, missing HW and LEO answers, followers without a LEO answer,
// HWs past 1e6, stalls and regressions, partitions with and without ELR and
// reassignment readings, a topic name that needs escaping.
func adminSnapshot() *poller.Snapshot {
	const brokers = 12
	s := &poller.Snapshot{Up: true, LastSuccess: testEpoch, Duration: 1234 * time.Millisecond}
	s.RequestErrors[poller.RequestListOffsetsLEO] = 2
	s.Disagreements[poller.FieldISR] = 1
	s.Brokers = []poller.BrokerStatus{{ID: 2, Responsive: true}, {ID: 10, Responsive: false}}
	s.LogDirs = []poller.LogDir{{Broker: 2, Path: "/data/a"}, {Broker: 2, Path: "/data/b", Offline: true}, {Broker: 10, Path: `C:\kafka "logs"`}}
	minISR := map[string]int{"orders": 2, "we\"ird": 3}
	n := 0
	for ti, topic := range []string{"orders", "audit", "we\"ird", "a.b_c-d"} {
		tp := poller.Topic{Name: topic, MinISRConfig: minISR[topic]}
		for p := range int32(13) {
			n++
			leader := (p*5 + int32(ti)) % brokers
			replicas := []int32{leader, (leader + 3) % brokers, (leader + 7) % brokers}
			part := poller.Partition{
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
					part.Lags = append(part.Lags, poller.ReplicaLag{Replica: r, Lag: int64(3 * (j + 1))})
				}
			}
			if n%9 == 2 && part.Leader >= 0 { // a replica in a failed log directory
				part.Lags = append(part.Lags, poller.ReplicaLag{Replica: replicas[2], Offline: true})
			}
			if part.HWKnown && part.LEOKnown && n%4 == 1 {
				part.Stalled, part.StallCause = true, poller.StallCause(1+n%3)
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
	slices.SortFunc(s.Topics, func(x, y poller.Topic) int { return strings.Compare(x.Name, y.Name) })
	return s
}

// adminText renders s as /metrics does.
func adminText(t testing.TB, s *poller.Snapshot, partitionLabels bool) string {
	t.Helper()
	return scrapeText(t, exposition.TableSource(NewAdminMetrics(newSnapshotSource(s), seriesFor(partitionLabels)).Tables))
}

// The awkward snapshot, a sparse one and an empty one render to expositions
// the Prometheus parser accepts, in both label modes, with every series the
// presence rules call for.
func TestAdminOutputParses(t *testing.T) {
	s := adminSnapshot()
	for _, labels := range []bool{true, false} {
		t.Run(fmt.Sprintf("partition-labels=%v", labels), func(t *testing.T) {
			text := adminText(t, s, labels)
			samples := checkExposition(t, text)
			want := map[string]int{
				upFamily.Name: 1, lastRefreshFamily.Name: 1, refreshDurationFamily.Name: 1,
				requestErrorsFamily.Name: len(defaultRequests), // no opt-in read disagreementsFamily.Name: int(poller.NumFields),
				topicMinISRFamily.Name:   2, brokerResponsiveFamily.Name: len(s.Brokers),
			}
			want[brokerLogDirOfflineFamily.Name] = len(s.LogDirs)
			var partitions, withMinISR, lags, offline, offlineTopics, stalls, reassigning int
			for _, tp := range s.Topics {
				inTopic := 0
				for _, p := range tp.Partitions {
					partitions++
					withMinISR += b2i(p.MinISR > 0)
					for _, l := range p.Lags {
						lags += b2i(!l.Offline)
						inTopic += b2i(l.Offline)
					}
					stalls += b2i(p.Stalled)
					reassigning += b2i(p.Reassigning)
				}
				offline += inTopic
				offlineTopics += b2i(inTopic > 0)
				if line := fmt.Sprintf("kafka_replication_partition_replica_offline{topic=%q} %d\n", tp.Name, inTopic); !labels && inTopic > 0 && !strings.Contains(text, line) {
					t.Errorf("want the topic's offline replicas counted: %s", line)
				}
			}
			if labels {
				want[replicasFamily.Name] = partitions
				want[minISRFamily.Name] = withMinISR
				want[replicaLagFamily.Name] = lags
				want[stallCauseFamily.Name] = stalls
				want[reassignAddingFamily.Name] = reassigning
				want[replicaOfflineFamily.Name] = offline
			} else {
				want[replicaOfflineFamily.Name] = offlineTopics
				want[replicasFamily.Name] = len(s.Topics)
				want[hwFamily.Name] = len(s.Topics)
				want[underMinISRFamily.Name] = 2 // the topics with min.insync.replicas
			}
			for name, n := range want {
				if samples[name] != n {
					t.Errorf("%s: want %d series, got %d", name, n, samples[name])
				}
			}
			for _, f := range []*exposition.Family{leaderFamily, replicaLagFamily, stallCauseFamily, lastAdvanceFamily, minISRFamily} {
				if !labels && samples[f.Name] != 0 {
					t.Errorf("%s: want no rollup, got %d series", f.Name, samples[f.Name])
				}
			}
			if labels && !strings.Contains(text, `kafka_replication_partition_replica_lag{partition="1",replica="10",topic="we\"ird"} 3`+"\n") {
				t.Error("want replica lag series")
			}
			if labels && !strings.Contains(text, `kafka_replication_partition_high_watermark_stall_cause{cause="isr_shrink_pending",partition=`) {
				t.Error("want stall cause series")
			}
			if !strings.Contains(text, `kafka_replication_broker_log_dir_offline{broker="2",dir="/data/b"} 1`+"\n") ||
				!strings.Contains(text, `kafka_replication_broker_log_dir_offline{broker="10",dir="C:\\kafka \"logs\""} 0`+"\n") {
				t.Error("want log directory series, escaped")
			}
			if offline == 0 || offlineTopics == 0 {
				t.Fatal("the snapshot has no offline replica")
			}
			if !strings.Contains(text, `kafka_replication_broker_responsive{broker="10"} 0`+"\n") {
				t.Error("want broker responsiveness series")
			}
		})
		t.Run(fmt.Sprintf("sparse-ids/partition-labels=%v", labels), func(t *testing.T) {
			s := &poller.Snapshot{Topics: []poller.Topic{
				{Name: "a", Partitions: []poller.Partition{{Topic: "a", Partition: 9}, {Topic: "a", Partition: 100_000}}},
				{Name: "b", Partitions: []poller.Partition{{Topic: "b", Partition: 10}, {Topic: "b", Partition: 100_000}}},
			}}
			samples := checkExposition(t, adminText(t, s, labels))
			if want := map[bool]int{true: 4, false: 2}[labels]; samples[replicasFamily.Name] != want {
				t.Errorf("want %d replica series, got %d", want, samples[replicasFamily.Name])
			}
		})
		t.Run(fmt.Sprintf("empty/partition-labels=%v", labels), func(t *testing.T) {
			samples := checkExposition(t, adminText(t, &poller.Snapshot{}, labels))
			if samples[upFamily.Name] != 1 || samples[lastRefreshFamily.Name] != 0 || samples[replicasFamily.Name] != 0 {
				t.Errorf("want up and no refresh time nor partitions before the first refresh, got %v", samples)
			}
		})
	}
}

// The admin tables hand their rows over in series order, so the writer
// does not sort 100k rows per scrape.
func TestAdminTablesInSeriesOrder(t *testing.T) {
	for _, labels := range []bool{true, false} {
		tables, release := NewAdminMetrics(newSnapshotSource(adminSnapshot()), seriesFor(labels)).Tables()
		for _, tb := range tables {
			if tb.Prepare != nil {
				tb.Prepare(tb)
			}
			n := len(tb.Columns[0].Family.Labels)
			if n == 0 || tb.Columns[0].Family == requestErrorsFamily || tb.Columns[0].Family == disagreementsFamily || tb.Columns[0].Family == brokerResponsiveFamily || tb.Columns[0].Family == stallCauseFamily ||
				tb.Columns[0].Family == brokerLogDirOfflineFamily || tb.Columns[0].Family == replicaOfflineFamily {
				continue // small tables (stalled partitions are few) the writer may sort
			}
			var prev []string
			for row := range tb.Rows {
				values := make([]string, n)
				tb.Labels(row, values)
				if prev != nil && slices.Compare(prev, values) > 0 {
					t.Errorf("%s (labels %v): row %d %q comes after %q", tb.Columns[0].Family.Name, labels, row, values, prev)
					break
				}
				prev = values
			}
		}
		if release != nil {
			release()
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// The per-topic rollup is folded once per snapshot and shared by the
// scrapes until the next refresh, which they then see.
func TestAdminRollupFollowsTheSnapshot(t *testing.T) {
	one := func(replicas int) *poller.Snapshot {
		return &poller.Snapshot{Topics: []poller.Topic{{Name: "t", Partitions: []poller.Partition{{Topic: "t", Replicas: replicas, ISR: replicas}}}}}
	}
	src := newSnapshotSource(one(1))
	tables := exposition.TableSource(NewAdminMetrics(src, TopicSeries).Tables)
	for want := range 4 {
		if want > 0 {
			src.set(one(want))
		}
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				got := family(scrapeText(t, tables), replicasFamily.Name)
				if want := fmt.Sprintf("%s{topic=\"t\"} %d\n", replicasFamily.Name, max(want, 1)); !strings.HasSuffix(got, want) {
					t.Errorf("want %q, got %q", want, got)
				}
			})
		}
		wg.Wait()
	}
}

// TestSparseAndDerivedFamilies: over a snapshot with every unhealthy state,
// each sparse family has series (and none at 0) in the per-partition form,
// and each derived family has none there but its per-topic rollup.
func TestSparseAndDerivedFamilies(t *testing.T) {
	s := adminSnapshot()
	s.Groups = []poller.ConsumerGroup{{Name: "billing", State: "Stable", Members: 1, Partitions: []poller.GroupPartition{
		{Topic: "orders", Partition: 2, Committed: 50, HWKnown: true, AboveHW: 30, AboveHWKnown: true, StarvedByReplication: true},
		{Topic: "orders", Partition: 3, Committed: 50, HWKnown: true, AboveHWKnown: true},
	}}}
	s.ShareGroups = []poller.ConsumerGroup{{Name: "shipping", Partitions: []poller.GroupPartition{
		{Topic: "orders", Partition: 2, Committed: 50, HWKnown: true, AboveHW: 30, AboveHWKnown: true, StarvedByReplication: true},
	}}}
	s.StableOffsets = []poller.StableOffset{
		{Topic: "orders", Partition: 2, LSO: 40, HWKnown: true, LagSeconds: 400, Stalled: true},
		{Topic: "orders", Partition: 3, LSO: 9, HWKnown: true},
	}
	s.Quorum = &poller.Quorum{Unknown: poller.QuorumTimeout}
	s.TieringRead = true
	s.Topics[0].Partitions[1].Tiering = &poller.PartitionTiering{
		LatestTiered: 99, LocalStart: 50, Lag: 400, LagKnown: true,
		Stalled: true, Cause: poller.TieringHWStalled,
	}
	perPartition := scrapeText(t, adminSource(newSnapshotSource(s), true))
	perTopic := scrapeText(t, adminSource(newSnapshotSource(s), false))
	for _, f := range Families() {
		if slices.Contains(logCounterFamilies[:], f) {
			continue // the log half's: TestLogMetrics
		}
		switch {
		case f.Sparse:
			if !strings.Contains(perPartition, "\n"+f.Name+"{") {
				t.Errorf("%s: sparse, but no series over an unhealthy snapshot", f.Name)
			}
			for line := range strings.Lines(perPartition) {
				if strings.HasPrefix(line, f.Name+"{") && strings.HasSuffix(line, "} 0\n") {
					t.Errorf("%s: sparse, but wrote a 0: %s", f.Name, line)
				}
			}
		case f.Derived:
			if strings.Contains(perPartition, "\n"+f.Name+"{") {
				t.Errorf("%s: derived, but written per partition", f.Name)
			}
			if !strings.Contains(perTopic, "\n"+f.Name+"{topic=") {
				t.Errorf("%s: derived, but no per-topic rollup", f.Name)
			}
		}
	}
}
