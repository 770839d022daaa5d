package metrics

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/fakekafka"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/poller"
)

// staleCluster is three fake brokers with orders/0..2 led by brokers 0..2,
// every admin answer set: offsets with a lagging follower, an LSO, an ELR,
// a reassignment and online log directories.
func staleCluster(t *testing.T) *fakekafka.Kafka {
	f := fakekafka.New(t)
	f.CreateTopic("orders", map[string]string{"min.insync.replicas": "2"}, 0, 1, 2)
	elr := map[logparse.PartitionKey]fakekafka.ELR{}
	committed := map[logparse.PartitionKey]int64{}
	for p := range int32(3) {
		k := logparse.PartitionKey{Topic: "orders", Partition: p}
		lso := int64(90)
		f.SetOffsets(k, fakekafka.Offsets{HW: 100, LEO: 100, LSO: &lso, ReplicaLEO: map[int32]int64{(p + 1) % 3: 95}})
		committed[k] = 80
		elr[k] = fakekafka.ELR{ELR: []int32{(p + 1) % 3}, LastKnown: []int32{(p + 2) % 3}}
	}
	f.SetELR(elr)
	f.CommitOffsets("billing", committed)
	f.SetReassignments(map[logparse.PartitionKey]fakekafka.Reassignment{
		{Topic: "orders", Partition: 0}: {Replicas: []int32{0, 1, 2}, Adding: []int32{2}},
	})
	f.SetLogDirs(map[int32]fakekafka.LogDirs{
		0: {Dirs: map[string]int16{"/data/a": 0, "/data/b": 0}},
		1: {Dirs: map[string]int16{"/data/a": 0}},
		2: {Dirs: map[string]int16{"/data/a": 0}},
	})
	return f
}

// runPoller runs a poller against servers until the test ends, refreshing
// every interval.
func runPoller(t *testing.T, servers []string, scope string, brokerID int32, interval time.Duration) *poller.Poller {
	t.Helper()
	cfg := &poller.Config{
		Servers: servers, Version: "3.9.0", BrokerID: brokerID, Scope: scope,
		RefreshInterval: interval, RequestTimeout: interval, StallThreshold: time.Hour, LogDirs: true,
		Groups: poller.GroupsConfig{Enabled: true, Include: ".*", LastStableOffset: true, LSOStallThreshold: time.Hour},
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	p := poller.New(cfg, poller.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return p
}

// nextRefreshes waits for n refreshes published after now.
func nextRefreshes(t *testing.T, p *poller.Poller, n int) *poller.Snapshot {
	t.Helper()
	s := p.Snapshot()
	for deadline := time.Now().Add(20 * time.Second); n > 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no refresh within 20s")
		}
		if next := p.Snapshot(); next != s && p.Ready() {
			s = next
			n--
		}
	}
	return s
}

// TestAdminFamiliesAfterAFailedSource: each source of the admin families
// fails in turn after a healthy refresh. Every family fed by the source that
// failed has no series at the next refresh: an old answer must not go on
// saying "healthy" (a log directory online, a lag, an HW) for something the
// exporter could not read.
func TestAdminFamiliesAfterAFailedSource(t *testing.T) {
	const (
		mLSO        = "kafka_replication_partition_last_stable_offset"
		mLSOLag     = "kafka_replication_partition_last_stable_offset_lag_seconds"
		mGroupState = "kafka_replication_consumer_group_state"
		mMembers    = "kafka_replication_consumer_group_members"
		mCommitted  = "kafka_replication_consumer_group_committed_offset"
		mGroupLag   = "kafka_replication_consumer_group_lag_to_high_watermark"
		mAboveHW    = "kafka_replication_consumer_group_records_above_high_watermark"
		perRefresh  = 500 * time.Millisecond
		ownBroker   = int32(0)
		allRequests = kmsg.Key(-1)
	)
	partitionFamilies := []string{mReplicas, mISR, mMinISR, mLeader, mEpoch, mHW, mLEO, mLag, mELR, mLastKnownELR, mReassigning, mAdding, mLSO, mCommitted, mGroupLag, mAboveHW}
	for _, tc := range []struct {
		name    string
		scope   string
		own     bool // servers: the own broker's address only
		key     kmsg.Key
		broker  int32 // -1: every broker
		gone    []string
		staying []string // documented: kept from the last answer
	}{
		// Without Metadata the last refresh's series stay for the grace
		// period, with up 0 (TestPollerStaleAfterGrace), but for the log
		// directories; a sidecar whose own broker is silent drops the
		// partitions at once (leader scope), the groups' state stays.
		{
			name: "own broker down, its only server", scope: poller.ScopeLeader, own: true, key: allRequests, broker: ownBroker,
			gone: append([]string{mLogDirOffline}, partitionFamilies...), staying: []string{mGroupState, mMembers},
		},
		{
			name: "own broker down, metadata from another", scope: poller.ScopeLeader, key: allRequests, broker: ownBroker,
			gone: append([]string{mLogDirOffline}, partitionFamilies...),
		},
		{
			name: "every broker down", scope: poller.ScopeCluster, key: allRequests, broker: -1,
			gone: []string{mLogDirOffline}, staying: append([]string{mGroupState, mMembers}, partitionFamilies...),
		},
		{
			name: "describe log dirs failing", scope: poller.ScopeCluster, key: kmsg.DescribeLogDirs, broker: -1,
			gone: []string{mLogDirOffline},
		},
		{
			name: "describe log dirs failing on one broker", scope: poller.ScopeLeader, own: true, key: kmsg.DescribeLogDirs, broker: ownBroker,
			gone: []string{mLogDirOffline},
		},
		{
			name: "list offsets failing", scope: poller.ScopeCluster, key: kmsg.ListOffsets, broker: -1,
			gone: []string{mHW, mLEO, mLag, mStalled, mLSO, mLSOLag, mGroupLag, mAboveHW},
		},
		{
			name: "list groups failing", scope: poller.ScopeCluster, key: kmsg.ListGroups, broker: -1,
			gone: []string{mGroupState, mMembers, mCommitted, mGroupLag, mAboveHW},
		},
		{
			name: "describe groups failing", scope: poller.ScopeCluster, key: kmsg.DescribeGroups, broker: -1,
			gone: []string{mGroupState, mMembers},
		},
		{
			name: "offset fetch failing", scope: poller.ScopeCluster, key: kmsg.OffsetFetch, broker: -1,
			gone: []string{mCommitted, mGroupLag, mAboveHW},
		},
		{
			name: "describe topic partitions failing", scope: poller.ScopeCluster, key: kmsg.DescribeTopicPartitions, broker: -1,
			gone: []string{mELR, mLastKnownELR},
		},
		{
			name: "list partition reassignments failing", scope: poller.ScopeCluster, key: kmsg.ListPartitionReassignments, broker: -1,
			gone: []string{mReassigning, mAdding},
		},
		// A topic's configuration is not a health answer: the value last
		// read stands (kafka_replication_topics_min_insync_replicas_unknown).
		{
			name: "describe configs failing", scope: poller.ScopeCluster, key: kmsg.DescribeConfigs, broker: -1,
			staying: []string{mTopicMinISR, mMinISR},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := staleCluster(t)
			servers, brokerID := f.C.ListenAddrs(), int32(-1)
			if tc.scope == poller.ScopeLeader {
				brokerID = ownBroker
				if tc.own {
					servers = servers[ownBroker : ownBroker+1]
				}
			}
			p := runPoller(t, servers, tc.scope, brokerID, perRefresh)
			src := adminSource(p, true)
			nextRefreshes(t, p, 2)
			before := scrapeText(t, src)
			for _, name := range append(tc.gone, tc.staying...) {
				if name != mStalled && name != mLSOLag && seriesLines(family(before, name)) == "" {
					t.Fatalf("healthy refresh: no %s series to test with:\n%s", name, before)
				}
			}

			f.FailRequests(func(key kmsg.Key, broker int32) bool {
				return (tc.key == allRequests || key == tc.key) && (tc.broker < 0 || broker == tc.broker)
			})
			nextRefreshes(t, p, 2) // the first may have been under way
			after := scrapeText(t, src)
			for _, name := range tc.gone {
				if got := family(after, name); seriesLines(got) != "" {
					t.Errorf("%s still exported from the answer before the failure:\n%s", name, seriesLines(got))
				}
			}
			for _, name := range tc.staying {
				if seriesLines(family(after, name)) == "" {
					t.Errorf("%s dropped, want the last value kept", name)
				}
			}
			if t.Failed() {
				t.Logf("before:\n%s\nafter:\n%s", before, after)
			}
		})
	}
}

// seriesLines drops the HELP and TYPE lines of a family's text.
func seriesLines(text string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(text, "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			b.WriteString(l)
		}
	}
	return b.String()
}
