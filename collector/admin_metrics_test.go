package collector

import (
	"bytes"
	"context"
	"flag"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/collector/admin"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/collector/internal/fakekafka"
)

const (
	mUp            = "kafka_replication_up"
	mReplicas      = "kafka_replication_partition_replicas"
	mISR           = "kafka_replication_partition_in_sync_replicas"
	mMinISR        = "kafka_replication_partition_min_insync_replicas"
	mUnderRepl     = "kafka_replication_partition_under_replicated"
	mUnderMinISR   = "kafka_replication_partition_under_min_isr"
	mAtMinISR      = "kafka_replication_partition_at_min_isr"
	mHeadroom      = "kafka_replication_partition_isr_headroom"
	mLeader        = "kafka_replication_partition_leader"
	mEpoch         = "kafka_replication_partition_leader_epoch"
	mHW            = "kafka_replication_partition_high_watermark"
	mLEO           = "kafka_replication_partition_log_end_offset"
	mLag           = "kafka_replication_partition_replica_lag"
	mStalled       = "kafka_replication_partition_high_watermark_stalled"
	mLastAdvance   = "kafka_replication_partition_high_watermark_last_advance_timestamp_seconds"
	mRegressions   = "kafka_replication_partition_high_watermark_regressions_total"
	mTopicMinISR   = "kafka_replication_topic_min_insync_replicas_config"
	mRequestErrors = "kafka_replication_admin_request_errors_total"
	mDisagreements = "kafka_replication_partition_source_disagreements_total"
	mLastRefresh   = "kafka_replication_last_refresh_timestamp_seconds"
	mStallCause    = "kafka_replication_partition_high_watermark_stall_cause"
	mResponsive    = "kafka_replication_broker_responsive"
	mELR           = "kafka_replication_partition_eligible_leader_replicas"
	mLastKnownELR  = "kafka_replication_partition_last_known_eligible_leader_replicas"
	mReassigning   = "kafka_replication_partition_reassigning"
	mAdding        = "kafka_replication_partition_reassignment_adding_replicas"
	mRemoving      = "kafka_replication_partition_reassignment_removing_replicas"
	mURPByMove     = "kafka_replication_partition_under_replicated_by_reassignment"
)

// goldenNames is every admin family except the refresh duration (wall time).
var goldenNames = []string{
	mUp, mLastRefresh, mRequestErrors, mDisagreements, mTopicMinISR,
	mReplicas, mISR, mMinISR, mUnderRepl, mUnderMinISR, mAtMinISR, mHeadroom,
	mLeader, mEpoch, mHW, mLEO, mLag, mStalled, mStallCause, mLastAdvance, mRegressions, mResponsive,
	mELR, mLastKnownELR, mReassigning, mAdding, mRemoving, mURPByMove,
}

var updateAdminGolden = flag.Bool("admin.update", false, "rewrite collector/fixtures/admin/*.prom from the current output")

// refreshedOnce runs a poller against servers until its first refresh is
// done and returns that snapshot with its wall-clock times set to testEpoch,
// so that the rendering can be compared with a fixed text.
func refreshedOnce(t *testing.T, servers []string, opts admin.Options) *snapshotSource {
	t.Helper()
	cfg := &admin.Config{
		Servers: servers, Version: "3.9.0", BrokerID: -1, Scope: admin.ScopeCluster,
		RefreshInterval: time.Hour, RequestTimeout: 2 * time.Second, StallThreshold: 2 * time.Minute,
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	p := admin.New(cfg, opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	for deadline := time.Now().Add(10 * time.Second); !p.Ready(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no refresh within 10s")
		}
	}
	cancel()
	<-done

	s := *p.Snapshot()
	s.LastSuccess = testEpoch
	s.Topics = slices.Clone(s.Topics)
	for i := range s.Topics {
		tp := &s.Topics[i]
		tp.Partitions = slices.Clone(tp.Partitions)
		for j := range tp.Partitions {
			if tp.Partitions[j].HWKnown {
				tp.Partitions[j].LastAdvance = testEpoch
			}
		}
	}
	return newSnapshotSource(&s)
}

// writeGolden renders the named families of c in the text exposition format.
func writeGolden(t *testing.T, c prometheus.Collector, path string, names []string) {
	t.Helper()
	var buf bytes.Buffer
	for _, mf := range gather(t, c) {
		if slices.Contains(names, mf.GetName()) {
			if _, err := expfmt.MetricFamilyToText(&buf, mf); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestAdminGolden: a healthy RF3 topic with min ISR 2 and a topic on the
// broker default, polled from kfake, every family checked against the
// golden file.
func TestAdminGolden(t *testing.T) {
	f := fakekafka.New(t)
	f.CreateTopic("orders", map[string]string{"min.insync.replicas": "2"}, 0, 1, 2)
	f.CreateTopic("audit", nil, 1)
	f.SetOffsets(fakekafka.Key{Topic: "orders", Partition: 0}, fakekafka.Offsets{HW: 100, LEO: 100})
	f.SetOffsets(fakekafka.Key{Topic: "orders", Partition: 1}, fakekafka.Offsets{HW: 40, LEO: 45, ReplicaLEO: map[int32]int64{2: 42, 0: 45}})
	f.SetOffsets(fakekafka.Key{Topic: "orders", Partition: 2}, fakekafka.Offsets{HW: 0, LEO: 0})
	f.SetOffsets(fakekafka.Key{Topic: "audit", Partition: 0}, fakekafka.Offsets{HW: 7, LEO: 7})
	a := NewAdminCollector(refreshedOnce(t, f.C.ListenAddrs(), admin.Options{}), true)

	const golden = "fixtures/admin/healthy.prom"
	if *updateAdminGolden {
		writeGolden(t, a, golden, goldenNames)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if err := testutil.CollectAndCompare(a, bytes.NewReader(want), goldenNames...); err != nil {
		t.Error(err)
	}
	if problems, err := testutil.CollectAndLint(a); err != nil || len(problems) > 0 {
		t.Errorf("want no lint problems, got %v %v", problems, err)
	}
}

// TestAdminRollup: without partition labels the series are per-topic sums
// and counts, the topic filter applies, and promlint is still happy.
func TestAdminRollup(t *testing.T) {
	f := fakekafka.New(t)
	f.CreateTopic("orders", map[string]string{"min.insync.replicas": "2"}, 0, 1, 2)
	f.CreateTopic("ignored", nil, 0)
	f.RewriteMetadata(func(topic string, p *kmsg.MetadataResponseTopicPartition) {
		if p.Partition == 0 {
			p.ISR = []int32{p.Leader}
		}
	})
	f.SetOffsets(fakekafka.Key{Topic: "orders", Partition: 0}, fakekafka.Offsets{HW: 10, LEO: 10})
	f.SetOffsets(fakekafka.Key{Topic: "orders", Partition: 1}, fakekafka.Offsets{HW: 20, LEO: 25})
	f.SetOffsets(fakekafka.Key{Topic: "orders", Partition: 2}, fakekafka.Offsets{HW: 30, LEO: 30})
	src := refreshedOnce(t, f.C.ListenAddrs(), admin.Options{TopicFilter: func(topic string) bool { return topic != "ignored" }})
	a := NewAdminCollector(src, false)
	err := testutil.CollectAndCompare(a, strings.NewReader(`
# HELP kafka_replication_partition_in_sync_replicas Sum of in-sync replicas (Metadata joined with this broker's logs: the fresher wins). Per-topic rollup over the exported partitions (partition labels disabled).
# TYPE kafka_replication_partition_in_sync_replicas gauge
kafka_replication_partition_in_sync_replicas{topic="orders"} 7
# HELP kafka_replication_partition_under_min_isr Number of partitions with ISR below the effective min.insync.replicas (min(config, RF)). Per-topic rollup over the exported partitions (partition labels disabled).
# TYPE kafka_replication_partition_under_min_isr gauge
kafka_replication_partition_under_min_isr{topic="orders"} 1
# HELP kafka_replication_partition_isr_headroom Smallest ISR minus effective min.insync.replicas among partitions. Per-topic rollup over the exported partitions (partition labels disabled).
# TYPE kafka_replication_partition_isr_headroom gauge
kafka_replication_partition_isr_headroom{topic="orders"} -1
# HELP kafka_replication_partition_high_watermark Sum of high watermarks (ListOffsets LATEST, read_uncommitted, sent to the leader) of the partitions whose leader answered. Per-topic rollup over the exported partitions (partition labels disabled).
# TYPE kafka_replication_partition_high_watermark gauge
kafka_replication_partition_high_watermark{topic="orders"} 60
# HELP kafka_replication_partition_log_end_offset Sum of leader log end offsets (ListOffsets LATEST with replica id -2, sent to the leader) of the partitions whose leader answered. Per-topic rollup over the exported partitions (partition labels disabled).
# TYPE kafka_replication_partition_log_end_offset gauge
kafka_replication_partition_log_end_offset{topic="orders"} 65
`), mISR, mUnderMinISR, mHeadroom, mHW, mLEO, mLeader, mLag)
	if err != nil {
		t.Error(err)
	}
	if problems, err := testutil.CollectAndLint(a); err != nil || len(problems) > 0 {
		t.Errorf("want no lint problems, got %v %v", problems, err)
	}
}

// TestAdminELRAndReassignment: the ELR and reassignment families per
// partition and rolled up per topic, absent where the poller read nothing;
// the adding and removing counts only while a reassignment runs.
func TestAdminELRAndReassignment(t *testing.T) {
	s := &admin.Snapshot{Topics: []admin.Topic{{Name: "old", Partitions: []admin.Partition{
		// Nothing read: no ELR on the cluster, ListPartitionReassignments refused.
		{Topic: "old", Partition: 0, Replicas: 3, ISR: 3},
	}}, {Name: "orders", Partitions: []admin.Partition{
		{Topic: "orders", Partition: 0, Replicas: 3, ISR: 1, ELRKnown: true, ELR: 2, ReassignmentKnown: true},
		{Topic: "orders", Partition: 1, Replicas: 3, ISR: 2, ELRKnown: true, LastKnownELR: 1, ReassignmentKnown: true,
			Reassigning: true, AddingReplicas: 1, RemovingReplicas: 1, UnderReplicatedByReassignment: true},
	}}}}
	names := []string{mELR, mLastKnownELR, mReassigning, mAdding, mRemoving, mURPByMove}
	for _, tc := range []struct {
		labels bool
		want   string
	}{{true, `
# HELP kafka_replication_partition_eligible_leader_replicas Eligible leader replicas (KIP-966): replicas outside the ISR that the controller can still elect without losing committed records; absent where the cluster has no ELR.
# TYPE kafka_replication_partition_eligible_leader_replicas gauge
kafka_replication_partition_eligible_leader_replicas{partition="0",topic="orders"} 2
kafka_replication_partition_eligible_leader_replicas{partition="1",topic="orders"} 0
# HELP kafka_replication_partition_last_known_eligible_leader_replicas Last-known eligible leader replicas (KIP-966): replicas that were eligible until they stopped uncleanly, a recovery's last resort; absent where the cluster has no ELR.
# TYPE kafka_replication_partition_last_known_eligible_leader_replicas gauge
kafka_replication_partition_last_known_eligible_leader_replicas{partition="0",topic="orders"} 0
kafka_replication_partition_last_known_eligible_leader_replicas{partition="1",topic="orders"} 1
# HELP kafka_replication_partition_reassigning 1 while a reassignment of the partition is in progress (ListPartitionReassignments).
# TYPE kafka_replication_partition_reassigning gauge
kafka_replication_partition_reassigning{partition="0",topic="orders"} 0
kafka_replication_partition_reassigning{partition="1",topic="orders"} 1
# HELP kafka_replication_partition_reassignment_adding_replicas Replicas the partition's reassignment is adding, exported only while one is in progress.
# TYPE kafka_replication_partition_reassignment_adding_replicas gauge
kafka_replication_partition_reassignment_adding_replicas{partition="1",topic="orders"} 1
# HELP kafka_replication_partition_reassignment_removing_replicas Replicas the partition's reassignment is removing, exported only while one is in progress.
# TYPE kafka_replication_partition_reassignment_removing_replicas gauge
kafka_replication_partition_reassignment_removing_replicas{partition="1",topic="orders"} 1
# HELP kafka_replication_partition_under_replicated_by_reassignment 1 if the partition is under-replicated only because a reassignment is adding replicas: every replica missing from the ISR is being added.
# TYPE kafka_replication_partition_under_replicated_by_reassignment gauge
kafka_replication_partition_under_replicated_by_reassignment{partition="0",topic="orders"} 0
kafka_replication_partition_under_replicated_by_reassignment{partition="1",topic="orders"} 1
`}, {false, `
# HELP kafka_replication_partition_eligible_leader_replicas Sum of eligible leader replicas (KIP-966, DescribeTopicPartitions). Per-topic rollup over the exported partitions (partition labels disabled).
# TYPE kafka_replication_partition_eligible_leader_replicas gauge
kafka_replication_partition_eligible_leader_replicas{topic="orders"} 2
# HELP kafka_replication_partition_last_known_eligible_leader_replicas Sum of last-known eligible leader replicas (KIP-966, DescribeTopicPartitions). Per-topic rollup over the exported partitions (partition labels disabled).
# TYPE kafka_replication_partition_last_known_eligible_leader_replicas gauge
kafka_replication_partition_last_known_eligible_leader_replicas{topic="orders"} 1
# HELP kafka_replication_partition_reassigning Number of partitions with a reassignment in progress (ListPartitionReassignments). Per-topic rollup over the exported partitions (partition labels disabled).
# TYPE kafka_replication_partition_reassigning gauge
kafka_replication_partition_reassigning{topic="orders"} 1
# HELP kafka_replication_partition_reassignment_adding_replicas Sum of replicas that reassignments in progress are adding. Per-topic rollup over the exported partitions (partition labels disabled).
# TYPE kafka_replication_partition_reassignment_adding_replicas gauge
kafka_replication_partition_reassignment_adding_replicas{topic="orders"} 1
# HELP kafka_replication_partition_reassignment_removing_replicas Sum of replicas that reassignments in progress are removing. Per-topic rollup over the exported partitions (partition labels disabled).
# TYPE kafka_replication_partition_reassignment_removing_replicas gauge
kafka_replication_partition_reassignment_removing_replicas{topic="orders"} 1
# HELP kafka_replication_partition_under_replicated_by_reassignment Number of partitions whose only replicas missing from the ISR are being added by a reassignment. Per-topic rollup over the exported partitions (partition labels disabled).
# TYPE kafka_replication_partition_under_replicated_by_reassignment gauge
kafka_replication_partition_under_replicated_by_reassignment{topic="orders"} 1
`}} {
		a := NewAdminCollector(newSnapshotSource(s), tc.labels)
		if err := testutil.CollectAndCompare(a, strings.NewReader(tc.want), names...); err != nil {
			t.Errorf("partition labels %v: %v", tc.labels, err)
		}
		sameText(t, registryText(t, a), directText(t, []prometheus.Collector{a.SmallFamilies()}, a))
	}
}
