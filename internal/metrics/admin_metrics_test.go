package metrics

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
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/exposition"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/fakekafka"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/poller"
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
	mLogDirOffline = "kafka_replication_broker_log_dir_offline"
)

// goldenNames is every admin family except the refresh duration (wall time).
var goldenNames = []string{
	mUp, mLastRefresh, mRequestErrors, mDisagreements, mTopicMinISR,
	mReplicas, mISR, mMinISR, mUnderRepl, mUnderMinISR, mAtMinISR, mHeadroom,
	mLeader, mEpoch, mHW, mLEO, mLag, mStalled, mStallCause, mLastAdvance, mRegressions, mResponsive,
	mELR, mLastKnownELR, mReassigning, mAdding, mRemoving, mURPByMove, mLogDirOffline,
}

var updateAdminGolden = flag.Bool("admin.update", false, "rewrite internal/metrics/fixtures/admin/*.prom from the current output")

// refreshedOnce runs a poller against servers until its first refresh is
// done and returns that snapshot with its wall-clock times set to testEpoch,
// so that the rendering can be compared with a fixed text.
func refreshedOnce(t *testing.T, servers []string, opts poller.Options) *snapshotSource {
	t.Helper()
	cfg := &poller.Config{
		Servers: servers, Version: "3.9.0", BrokerID: -1, Scope: poller.ScopeCluster,
		RefreshInterval: time.Hour, RequestTimeout: 2 * time.Second, StallThreshold: 2 * time.Minute, LogDirs: true,
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	p := poller.New(cfg, opts)
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

// seriesFor is the PartitionSeries of --[no-]collector.partition-labels.
func seriesFor(partitionLabels bool) PartitionSeries {
	if partitionLabels {
		return AllPartitionSeries
	}
	return TopicSeries
}

// adminSource renders src as /metrics does.
func adminSource(src AdminSnapshots, partitionLabels bool) exposition.TableSource {
	return exposition.TableSource(NewAdminMetrics(src, seriesFor(partitionLabels)).Tables)
}

// textGatherer gathers what WriteText writes for src, parsed back by expfmt,
// so that testutil compares and lints the text /metrics serves.
func textGatherer(t testing.TB, src exposition.TableSource) prometheus.Gatherer {
	return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		parser := expfmt.NewTextParser(model.UTF8Validation)
		byName, err := parser.TextToMetricFamilies(strings.NewReader(scrapeText(t, src)))
		if err != nil {
			return nil, err
		}
		mfs := make([]*dto.MetricFamily, 0, len(byName))
		for _, mf := range byName {
			mfs = append(mfs, mf)
		}
		slices.SortFunc(mfs, func(a, b *dto.MetricFamily) int { return strings.Compare(a.GetName(), b.GetName()) })
		return mfs, nil
	})
}

// TestAdminGolden: a healthy RF3 topic with min ISR 2 and a topic on the
// broker default, polled from kfake, every family checked against the
// golden file.
func TestAdminGolden(t *testing.T) {
	f := fakekafka.New(t)
	f.CreateTopic("orders", map[string]string{"min.insync.replicas": "2"}, 0, 1, 2)
	f.CreateTopic("audit", nil, 1)
	f.SetOffsets(logparse.PartitionKey{Topic: "orders", Partition: 0}, fakekafka.Offsets{HW: 100, LEO: 100})
	f.SetOffsets(logparse.PartitionKey{Topic: "orders", Partition: 1}, fakekafka.Offsets{HW: 40, LEO: 45, ReplicaLEO: map[int32]int64{2: 42, 0: 45}})
	f.SetOffsets(logparse.PartitionKey{Topic: "orders", Partition: 2}, fakekafka.Offsets{HW: 0, LEO: 0})
	f.SetOffsets(logparse.PartitionKey{Topic: "audit", Partition: 0}, fakekafka.Offsets{HW: 7, LEO: 7})
	f.SetLogDirs(map[int32]fakekafka.LogDirs{
		0: {Dirs: map[string]int16{"/var/lib/kafka/data": 0}},
		1: {Dirs: map[string]int16{"/var/lib/kafka/data": 0}},
		2: {Dirs: map[string]int16{"/var/lib/kafka/data": 0, "/var/lib/kafka/data-b": 0}},
	})
	a := adminSource(refreshedOnce(t, f.C.ListenAddrs(), poller.Options{}), true)

	const golden = "fixtures/admin/healthy.prom"
	var b bytes.Buffer
	if err := exposition.WriteText(&b, nil, func(name string) bool { return slices.Contains(goldenNames, name) }, a); err != nil {
		t.Fatal(err)
	}
	if *updateAdminGolden {
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Split(b.String(), "\n"), strings.Split(string(want), "\n"); !slices.Equal(got, want) {
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				t.Fatalf("scrape differs from %s at line %d (rerun with -admin.update and review the diff):\nwant %s\ngot  %s", golden, i+1, want[i], got[i])
			}
		}
		t.Fatalf("scrape differs from %s in length: want %d lines, got %d", golden, len(want), len(got))
	}
	if problems, err := testutil.GatherAndLint(textGatherer(t, a)); err != nil || len(problems) > 0 {
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
	f.SetOffsets(logparse.PartitionKey{Topic: "orders", Partition: 0}, fakekafka.Offsets{HW: 10, LEO: 10})
	f.SetOffsets(logparse.PartitionKey{Topic: "orders", Partition: 1}, fakekafka.Offsets{HW: 20, LEO: 25})
	f.SetOffsets(logparse.PartitionKey{Topic: "orders", Partition: 2}, fakekafka.Offsets{HW: 30, LEO: 30})
	src := refreshedOnce(t, f.C.ListenAddrs(), poller.Options{TopicFilter: func(topic string) bool { return topic != "ignored" }})
	a := adminSource(src, false)
	err := testutil.GatherAndCompare(textGatherer(t, a), strings.NewReader(`
# HELP kafka_replication_partition_in_sync_replicas Sum of in-sync replicas over the topic's exported partitions (Metadata joined with this broker's logs).
# TYPE kafka_replication_partition_in_sync_replicas gauge
kafka_replication_partition_in_sync_replicas{topic="orders"} 7
# HELP kafka_replication_partition_under_min_isr Number of the topic's exported partitions with ISR below the effective min.insync.replicas.
# TYPE kafka_replication_partition_under_min_isr gauge
kafka_replication_partition_under_min_isr{topic="orders"} 1
# HELP kafka_replication_partition_isr_headroom Smallest ISR minus effective min.insync.replicas among the topic's exported partitions.
# TYPE kafka_replication_partition_isr_headroom gauge
kafka_replication_partition_isr_headroom{topic="orders"} -1
# HELP kafka_replication_partition_high_watermark Sum of high watermarks over the topic's exported partitions whose leader answered.
# TYPE kafka_replication_partition_high_watermark gauge
kafka_replication_partition_high_watermark{topic="orders"} 60
# HELP kafka_replication_partition_log_end_offset Sum of leader log end offsets over the topic's exported partitions whose leader answered.
# TYPE kafka_replication_partition_log_end_offset gauge
kafka_replication_partition_log_end_offset{topic="orders"} 65
`), mISR, mUnderMinISR, mHeadroom, mHW, mLEO, mLeader, mLag)
	if err != nil {
		t.Error(err)
	}
	if problems, err := testutil.GatherAndLint(textGatherer(t, a)); err != nil || len(problems) > 0 {
		t.Errorf("want no lint problems, got %v %v", problems, err)
	}
}

// TestAdminELRAndReassignment: the ELR and reassignment families per
// partition and rolled up per topic, absent where the poller read nothing;
// the adding and removing counts only while a reassignment runs.
func TestAdminELRAndReassignment(t *testing.T) {
	s := &poller.Snapshot{Topics: []poller.Topic{{Name: "old", Partitions: []poller.Partition{
		// Nothing read: no ELR on the cluster, ListPartitionReassignments refused.
		{Topic: "old", Partition: 0, Replicas: 3, ISR: 3},
	}}, {Name: "orders", Partitions: []poller.Partition{
		{Topic: "orders", Partition: 0, Replicas: 3, ISR: 1, ELRKnown: true, ELR: 2, ReassignmentKnown: true},
		{
			Topic: "orders", Partition: 1, Replicas: 3, ISR: 2, ELRKnown: true, LastKnownELR: 1, ReassignmentKnown: true,
			Reassigning: true, AddingReplicas: 1, RemovingReplicas: 1, UnderReplicatedByReassignment: true,
		},
	}}}}
	names := []string{mELR, mLastKnownELR, mReassigning, mAdding, mRemoving, mURPByMove}
	for _, tc := range []struct {
		labels bool
		want   string
	}{{true, `
# HELP kafka_replication_partition_eligible_leader_replicas Eligible leader replicas of the partition (KIP-966, DescribeTopicPartitions).
# TYPE kafka_replication_partition_eligible_leader_replicas gauge
kafka_replication_partition_eligible_leader_replicas{partition="0",topic="orders"} 2
# HELP kafka_replication_partition_last_known_eligible_leader_replicas Last-known eligible leader replicas of the partition (KIP-966, DescribeTopicPartitions).
# TYPE kafka_replication_partition_last_known_eligible_leader_replicas gauge
kafka_replication_partition_last_known_eligible_leader_replicas{partition="1",topic="orders"} 1
# HELP kafka_replication_partition_reassigning 1 while a reassignment of the partition is in progress (ListPartitionReassignments).
# TYPE kafka_replication_partition_reassigning gauge
kafka_replication_partition_reassigning{partition="1",topic="orders"} 1
# HELP kafka_replication_partition_reassignment_adding_replicas Replicas the partition's reassignment is adding, exported only while one is in progress.
# TYPE kafka_replication_partition_reassignment_adding_replicas gauge
kafka_replication_partition_reassignment_adding_replicas{partition="1",topic="orders"} 1
# HELP kafka_replication_partition_reassignment_removing_replicas Replicas the partition's reassignment is removing, exported only while one is in progress.
# TYPE kafka_replication_partition_reassignment_removing_replicas gauge
kafka_replication_partition_reassignment_removing_replicas{partition="1",topic="orders"} 1
# HELP kafka_replication_partition_under_replicated_by_reassignment 1 if every replica missing from the partition's ISR is being added by a reassignment.
# TYPE kafka_replication_partition_under_replicated_by_reassignment gauge
kafka_replication_partition_under_replicated_by_reassignment{partition="1",topic="orders"} 1
`}, {false, `
# HELP kafka_replication_partition_eligible_leader_replicas Sum of eligible leader replicas over the topic's exported partitions (KIP-966).
# TYPE kafka_replication_partition_eligible_leader_replicas gauge
kafka_replication_partition_eligible_leader_replicas{topic="orders"} 2
# HELP kafka_replication_partition_last_known_eligible_leader_replicas Sum of last-known eligible leader replicas over the topic's exported partitions (KIP-966).
# TYPE kafka_replication_partition_last_known_eligible_leader_replicas gauge
kafka_replication_partition_last_known_eligible_leader_replicas{topic="orders"} 1
# HELP kafka_replication_partition_reassigning Number of the topic's exported partitions with a reassignment in progress.
# TYPE kafka_replication_partition_reassigning gauge
kafka_replication_partition_reassigning{topic="orders"} 1
# HELP kafka_replication_partition_reassignment_adding_replicas Sum of replicas that the topic's reassignments in progress are adding.
# TYPE kafka_replication_partition_reassignment_adding_replicas gauge
kafka_replication_partition_reassignment_adding_replicas{topic="orders"} 1
# HELP kafka_replication_partition_reassignment_removing_replicas Sum of replicas that the topic's reassignments in progress are removing.
# TYPE kafka_replication_partition_reassignment_removing_replicas gauge
kafka_replication_partition_reassignment_removing_replicas{topic="orders"} 1
# HELP kafka_replication_partition_under_replicated_by_reassignment Number of the topic's exported partitions whose only replicas missing from the ISR are being added by a reassignment.
# TYPE kafka_replication_partition_under_replicated_by_reassignment gauge
kafka_replication_partition_under_replicated_by_reassignment{topic="orders"} 1
`}} {
		a := adminSource(newSnapshotSource(s), tc.labels)
		if err := testutil.GatherAndCompare(textGatherer(t, a), strings.NewReader(tc.want), names...); err != nil {
			t.Errorf("partition labels %v: %v", tc.labels, err)
		}
	}
}

// TestAdminTopicInfo: one info series per exported topic with the topic id
// Kafka gave it, as Kafka prints it, in every partition series mode; none
// for a topic whose Metadata carried no id (there is nothing to join on).
func TestAdminTopicInfo(t *testing.T) {
	s := &poller.Snapshot{Topics: []poller.Topic{
		{Name: "legacy", Partitions: []poller.Partition{{Topic: "legacy", Partition: 0, Replicas: 1, ISR: 1}}},
		{Name: "orders", ID: "Zb7WlVhSTtWnsrN9bx1D0A", Partitions: []poller.Partition{{Topic: "orders", Partition: 0, Replicas: 3, ISR: 3}}},
	}}
	const want = `
# HELP kafka_replication_topic_info 1 for each exported topic, labeled with the topic id Kafka's Metadata gives it: a topic deleted and re-created under its name has a new one.
# TYPE kafka_replication_topic_info gauge
kafka_replication_topic_info{topic="orders",topic_id="Zb7WlVhSTtWnsrN9bx1D0A"} 1
`
	for _, series := range []PartitionSeries{AllPartitionSeries, UnhealthyPartitionSeries, TopicSeries} {
		src := exposition.TableSource(NewAdminMetrics(newSnapshotSource(s), series).Tables)
		if err := testutil.GatherAndCompare(textGatherer(t, src), strings.NewReader(want), "kafka_replication_topic_info"); err != nil {
			t.Errorf("partition series %v: %v", series, err)
		}
	}
}
