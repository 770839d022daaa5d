package collector

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	mUp             = "kafka_replication_up"
	mReplicas       = "kafka_replication_partition_replicas"
	mISR            = "kafka_replication_partition_in_sync_replicas"
	mMinISR         = "kafka_replication_partition_min_insync_replicas"
	mUnderRepl      = "kafka_replication_partition_under_replicated"
	mUnderMinISR    = "kafka_replication_partition_under_min_isr"
	mAtMinISR       = "kafka_replication_partition_at_min_isr"
	mHeadroom       = "kafka_replication_partition_isr_headroom"
	mLeader         = "kafka_replication_partition_leader"
	mEpoch          = "kafka_replication_partition_leader_epoch"
	mHW             = "kafka_replication_partition_high_watermark"
	mLEO            = "kafka_replication_partition_log_end_offset"
	mLag            = "kafka_replication_partition_replica_lag"
	mStalled        = "kafka_replication_partition_high_watermark_stalled"
	mLastAdvance    = "kafka_replication_partition_high_watermark_last_advance_timestamp_seconds"
	mRegressions    = "kafka_replication_partition_high_watermark_regressions_total"
	mTopicMinISR    = "kafka_replication_topic_min_insync_replicas_config"
	mRequestErrors  = "kafka_replication_admin_request_errors_total"
	mDisagreements  = "kafka_replication_partition_source_disagreements_total"
	mLastRefresh    = "kafka_replication_last_refresh_timestamp_seconds"
	mRefreshSeconds = "kafka_replication_refresh_duration_seconds"
)

// goldenNames is every admin family except the refresh duration (wall time).
var goldenNames = []string{
	mUp, mLastRefresh, mRequestErrors, mDisagreements, mTopicMinISR,
	mReplicas, mISR, mMinISR, mUnderRepl, mUnderMinISR, mAtMinISR, mHeadroom,
	mLeader, mEpoch, mHW, mLEO, mLag, mStalled, mLastAdvance, mRegressions,
}

var updateAdminGolden = flag.Bool("admin.update", false, "rewrite collector/fixtures/admin/*.prom from the current output")

// writeGolden renders the named families of c in the text exposition format.
func writeGolden(t *testing.T, c prometheus.Collector, path string, names []string) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	for _, mf := range mfs {
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

func compare(t *testing.T, a *Admin, want string, names ...string) {
	t.Helper()
	if err := testutil.CollectAndCompare(a, strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}
}

// TestAdminGolden: a healthy RF3 topic with min ISR 2 and a topic on the
// broker default, every family checked against the golden file.
func TestAdminGolden(t *testing.T) {
	f := newFakeKafka(t)
	f.createTopic("orders", map[string]string{"min.insync.replicas": "2"}, 0, 1, 2)
	f.createTopic("audit", nil, 1)
	f.setOffsets(partitionKey{"orders", 0}, fakeOffsets{hw: 100, leo: 100})
	f.setOffsets(partitionKey{"orders", 1}, fakeOffsets{hw: 40, leo: 45, replicaLEO: map[int32]int64{2: 42, 0: 45}})
	f.setOffsets(partitionKey{"orders", 2}, fakeOffsets{hw: 0, leo: 0})
	f.setOffsets(partitionKey{"audit", 0}, fakeOffsets{hw: 7, leo: 7})

	a, _ := newTestAdmin(t, f.c.ListenAddrs(), -1, ScopeCluster, nil, nil)
	a.refresh()

	const golden = "fixtures/admin/healthy.prom"
	if *updateAdminGolden {
		writeGolden(t, a, golden, goldenNames)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	compare(t, a, string(want), goldenNames...)
	if problems, err := testutil.CollectAndLint(a); err != nil || len(problems) > 0 {
		t.Errorf("want no lint problems, got %v %v", problems, err)
	}
}

func TestAdminISRShrink(t *testing.T) {
	f := newFakeKafka(t)
	f.createTopic("orders", map[string]string{"min.insync.replicas": "2"}, 0, 1, 2)
	f.rewriteMetadata(func(topic string, p *kmsg.MetadataResponseTopicPartition) {
		switch p.Partition {
		case 0:
			p.ISR = []int32{p.Leader} // below min ISR
		case 1:
			p.ISR = []int32{p.Leader, p.Replicas[1]} // exactly at min ISR
		}
	})
	a, _ := newTestAdmin(t, f.c.ListenAddrs(), -1, ScopeCluster, nil, nil)
	a.refresh()

	compare(t, a, `
# HELP kafka_replication_partition_under_min_isr 1 if the ISR is below the effective min.insync.replicas: acks=all produce fails and the HW cannot advance.
# TYPE kafka_replication_partition_under_min_isr gauge
kafka_replication_partition_under_min_isr{partition="0",topic="orders"} 1
kafka_replication_partition_under_min_isr{partition="1",topic="orders"} 0
kafka_replication_partition_under_min_isr{partition="2",topic="orders"} 0
# HELP kafka_replication_partition_at_min_isr 1 if the ISR is exactly the effective min.insync.replicas while RF is larger: one more loss blocks acks=all.
# TYPE kafka_replication_partition_at_min_isr gauge
kafka_replication_partition_at_min_isr{partition="0",topic="orders"} 0
kafka_replication_partition_at_min_isr{partition="1",topic="orders"} 1
kafka_replication_partition_at_min_isr{partition="2",topic="orders"} 0
# HELP kafka_replication_partition_under_replicated 1 if the ISR is smaller than the replica set (Metadata).
# TYPE kafka_replication_partition_under_replicated gauge
kafka_replication_partition_under_replicated{partition="0",topic="orders"} 1
kafka_replication_partition_under_replicated{partition="1",topic="orders"} 1
kafka_replication_partition_under_replicated{partition="2",topic="orders"} 0
# HELP kafka_replication_partition_isr_headroom ISR size minus effective min.insync.replicas (negative = under min ISR).
# TYPE kafka_replication_partition_isr_headroom gauge
kafka_replication_partition_isr_headroom{partition="0",topic="orders"} -1
kafka_replication_partition_isr_headroom{partition="1",topic="orders"} 0
kafka_replication_partition_isr_headroom{partition="2",topic="orders"} 1
`, mUnderMinISR, mAtMinISR, mUnderRepl, mHeadroom)
}

// TestAdminEffectiveMinISR: min.insync.replicas above RF is capped at RF, so
// an RF1 topic with min ISR 2 is not "under min ISR" for ever, nor "at min
// ISR" (there is no replica left to lose).
func TestAdminEffectiveMinISR(t *testing.T) {
	f := newFakeKafka(t, kfake.NumBrokers(1))
	f.createTopic("single", map[string]string{"min.insync.replicas": "2"}, 0)
	a, _ := newTestAdmin(t, f.c.ListenAddrs(), 0, ScopeLeader, nil, nil)
	a.refresh()
	compare(t, a, `
# HELP kafka_replication_partition_min_insync_replicas Effective min.insync.replicas of the partition: min(topic config from DescribeConfigs, replication factor).
# TYPE kafka_replication_partition_min_insync_replicas gauge
kafka_replication_partition_min_insync_replicas{partition="0",topic="single"} 1
# HELP kafka_replication_partition_under_min_isr 1 if the ISR is below the effective min.insync.replicas: acks=all produce fails and the HW cannot advance.
# TYPE kafka_replication_partition_under_min_isr gauge
kafka_replication_partition_under_min_isr{partition="0",topic="single"} 0
# HELP kafka_replication_topic_min_insync_replicas_config min.insync.replicas of the topic from DescribeConfigs (topic override, else the broker default).
# TYPE kafka_replication_topic_min_insync_replicas_config gauge
kafka_replication_topic_min_insync_replicas_config{topic="single"} 2
# HELP kafka_replication_partition_at_min_isr 1 if the ISR is exactly the effective min.insync.replicas while RF is larger: one more loss blocks acks=all.
# TYPE kafka_replication_partition_at_min_isr gauge
kafka_replication_partition_at_min_isr{partition="0",topic="single"} 0
`, mMinISR, mUnderMinISR, mTopicMinISR, mAtMinISR)
}

// TestAdminHWStall: HW frozen under min ISR while the LEO grows → stalled
// once the threshold has passed on the injected clock; an idle partition
// under min ISR (LEO == HW) never stalls.
func TestAdminHWStall(t *testing.T) {
	f := newFakeKafka(t)
	f.createTopic("orders", map[string]string{"min.insync.replicas": "2"}, 0, 0)
	f.rewriteMetadata(func(topic string, p *kmsg.MetadataResponseTopicPartition) {
		p.ISR = []int32{p.Leader}
	})
	a, clock := newTestAdmin(t, f.c.ListenAddrs(), -1, ScopeCluster, nil, nil)

	stalled := func(p0, p1 int) string {
		return fmt.Sprintf(`
# HELP kafka_replication_partition_high_watermark_stalled 1 if the partition is under min ISR with records beyond the HW (LEO > HW) and the HW has not moved for --stall.threshold (KAFKA-15583).
# TYPE kafka_replication_partition_high_watermark_stalled gauge
kafka_replication_partition_high_watermark_stalled{partition="0",topic="orders"} %d
kafka_replication_partition_high_watermark_stalled{partition="1",topic="orders"} %d
`, p0, p1)
	}
	for i, step := range []struct {
		advance time.Duration
		leo     int64
		want    string
	}{
		{0, 10, stalled(0, 0)},
		{time.Minute, 20, stalled(0, 0)},
		{time.Minute - time.Second, 30, stalled(0, 0)},
		{time.Second, 40, stalled(1, 0)},
		{time.Minute, 50, stalled(1, 0)},
	} {
		clock.Advance(step.advance)
		f.setOffsets(partitionKey{"orders", 0}, fakeOffsets{hw: 10, leo: step.leo})
		f.setOffsets(partitionKey{"orders", 1}, fakeOffsets{hw: 5, leo: 5})
		a.refresh()
		t.Run(fmt.Sprint("step", i), func(t *testing.T) { compare(t, a, step.want, mStalled) })
	}
	compare(t, a, fmt.Sprintf(`
# HELP kafka_replication_partition_high_watermark_last_advance_timestamp_seconds Unix time the poller last saw the high watermark change (ListOffsets LATEST).
# TYPE kafka_replication_partition_high_watermark_last_advance_timestamp_seconds gauge
kafka_replication_partition_high_watermark_last_advance_timestamp_seconds{partition="0",topic="orders"} %d
kafka_replication_partition_high_watermark_last_advance_timestamp_seconds{partition="1",topic="orders"} %d
`, testEpoch.Unix(), testEpoch.Unix()), mLastAdvance)

	// The HW moves again: no longer stalled.
	clock.Advance(time.Second)
	f.setOffsets(partitionKey{"orders", 0}, fakeOffsets{hw: 50, leo: 60})
	a.refresh()
	compare(t, a, stalled(0, 0), mStalled)
}

// TestAdminHWRegression: a lower HW for the same topic id counts once; the
// same topic re-created (new topic id) starting from 0 does not count.
func TestAdminHWRegression(t *testing.T) {
	f := newFakeKafka(t)
	f.createTopic("orders", nil, 0)
	a, _ := newTestAdmin(t, f.c.ListenAddrs(), -1, ScopeCluster, nil, nil)
	regressions := func(n int) string {
		return fmt.Sprintf(`
# HELP kafka_replication_partition_high_watermark_regressions_total High watermark decreases seen between polls for the same topic id (a re-created topic does not count).
# TYPE kafka_replication_partition_high_watermark_regressions_total counter
kafka_replication_partition_high_watermark_regressions_total{partition="0",topic="orders"} %d
`, n)
	}
	k := partitionKey{"orders", 0}
	f.setOffsets(k, fakeOffsets{hw: 100, leo: 100})
	a.refresh()
	compare(t, a, regressions(0), mRegressions)

	f.setOffsets(k, fakeOffsets{hw: 90, leo: 90})
	a.refresh()
	compare(t, a, regressions(1), mRegressions)

	a.refresh() // still 90: nothing new
	compare(t, a, regressions(1), mRegressions)

	if err := f.c.DeleteTopic("orders"); err != nil {
		t.Fatal(err)
	}
	f.createTopic("orders", nil, 0)
	f.setOffsets(k, fakeOffsets{hw: 0, leo: 0})
	a.refresh()
	compare(t, a, regressions(1), mRegressions)
}

// TestAdminOfflinePartition: a partition without a leader stays exported with
// leader -1, by exactly one sidecar (the lowest live broker id).
func TestAdminOfflinePartition(t *testing.T) {
	f := newFakeKafka(t)
	f.createTopic("orders", map[string]string{"min.insync.replicas": "2"}, 1, 2)
	f.rewriteMetadata(func(topic string, p *kmsg.MetadataResponseTopicPartition) {
		if p.Partition == 1 {
			p.Leader, p.ISR, p.OfflineReplicas = -1, nil, p.Replicas
			p.ErrorCode = 5 // LEADER_NOT_AVAILABLE, as Kafka answers
		}
	})
	want := map[int32]string{
		0: `
# HELP kafka_replication_partition_leader Broker id of the partition leader from Metadata; -1 = offline (no leader).
# TYPE kafka_replication_partition_leader gauge
kafka_replication_partition_leader{partition="1",topic="orders"} -1
`,
		1: `
# HELP kafka_replication_partition_leader Broker id of the partition leader from Metadata; -1 = offline (no leader).
# TYPE kafka_replication_partition_leader gauge
kafka_replication_partition_leader{partition="0",topic="orders"} 1
`,
		2: ``,
	}
	for id, w := range want {
		a, _ := newTestAdmin(t, f.c.ListenAddrs(), id, ScopeLeader, nil, nil)
		a.refresh()
		t.Run(fmt.Sprint("broker", id), func(t *testing.T) { compare(t, a, w, mLeader) })
	}
	a, _ := newTestAdmin(t, f.c.ListenAddrs(), -1, ScopeCluster, nil, nil)
	a.refresh()
	compare(t, a, `
# HELP kafka_replication_partition_under_min_isr 1 if the ISR is below the effective min.insync.replicas: acks=all produce fails and the HW cannot advance.
# TYPE kafka_replication_partition_under_min_isr gauge
kafka_replication_partition_under_min_isr{partition="0",topic="orders"} 0
kafka_replication_partition_under_min_isr{partition="1",topic="orders"} 1
`, mUnderMinISR)
}

// TestAdminLeaderScope: the sidecar of broker 1, found by matching
// --kafka.server to the broker list, exports only the partitions broker 1
// leads.
func TestAdminLeaderScope(t *testing.T) {
	f := newFakeKafka(t)
	f.createTopic("orders", nil, 0, 1, 2, 1)
	a, _ := newTestAdmin(t, f.c.ListenAddrs()[1:2], -1, ScopeLeader, nil, nil)
	a.refresh()
	if a.brokerID != 1 {
		t.Fatalf("want broker id 1 detected, got %d", a.brokerID)
	}
	compare(t, a, `
# HELP kafka_replication_partition_leader Broker id of the partition leader from Metadata; -1 = offline (no leader).
# TYPE kafka_replication_partition_leader gauge
kafka_replication_partition_leader{partition="1",topic="orders"} 1
kafka_replication_partition_leader{partition="3",topic="orders"} 1
`, mLeader)
}

// TestAdminRequestsPerRefresh: the number of requests per refresh depends on
// the brokers, not on the partitions.
func TestAdminRequestsPerRefresh(t *testing.T) {
	counts := func(partitions int) map[kmsg.Key]int {
		f := newFakeKafka(t)
		leaders := make([]int32, partitions)
		for i := range leaders {
			leaders[i] = int32(i % 3)
		}
		f.createTopic("orders", nil, leaders...)
		a, _ := newTestAdmin(t, f.c.ListenAddrs(), -1, ScopeCluster, nil, nil)
		a.refresh() // connection set-up (ApiVersions) happens here
		f.requestCounts()
		a.refresh()
		got := f.requestCounts()
		delete(got, kmsg.ApiVersions)
		return got
	}
	one, many := counts(3), counts(200)
	// 1 Metadata + 1 DescribeConfigs + per broker 1 HW + 1 LEO.
	want := map[kmsg.Key]int{kmsg.Metadata: 1, kmsg.DescribeConfigs: 1, kmsg.ListOffsets: 6}
	for k, n := range want {
		if one[k] != n || many[k] != n {
			t.Errorf("%s: want %d requests for 3 and 200 partitions, got %d and %d", k.Name(), n, one[k], many[k])
		}
	}
	if len(one) != len(want) || len(many) != len(want) {
		t.Errorf("want only %v, got %v and %v", want, one, many)
	}
}

// TestAdminUnreachable: no broker answers → up 0, Collect returns at once,
// and a broker coming back is picked up by the next refresh.
func TestAdminUnreachable(t *testing.T) {
	ports := freePorts(t, 3)
	start := func() *kfake.Cluster {
		c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.Ports(ports...))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := start()
	if err := c.CreateTopic("orders", 1, nil); err != nil {
		t.Fatal(err)
	}
	a, _ := newTestAdmin(t, c.ListenAddrs(), -1, ScopeCluster, nil, nil)
	a.refresh()
	upWithReplicas := func(up int) string {
		return fmt.Sprintf(`
# HELP kafka_replication_up 1 if the last Metadata request to Kafka succeeded, 0 if no broker answered.
# TYPE kafka_replication_up gauge
kafka_replication_up %d
# HELP kafka_replication_partition_replicas Assigned replicas of the partition (Metadata).
# TYPE kafka_replication_partition_replicas gauge
kafka_replication_partition_replicas{partition="0",topic="orders"} 3
`, up)
	}
	compare(t, a, upWithReplicas(1), mUp, mReplicas)

	c.Close()
	a.refresh()
	began := time.Now()
	compare(t, a, upWithReplicas(0), mUp, mReplicas) // last values kept
	if d := time.Since(began); d > 500*time.Millisecond {
		t.Errorf("want Collect to answer from memory, took %v", d)
	}
	if n := a.snap.Load().counts.requestErrors[reqMetadata]; n < 1 {
		t.Errorf("want metadata errors counted, got %v", n)
	}

	c = start()
	defer c.Close()
	if err := c.CreateTopic("orders", 1, nil); err != nil {
		t.Fatal(err)
	}
	a.refresh()
	compare(t, a, upWithReplicas(1), mUp, mReplicas)
}

// TestAdminNeverConnected: NewAdmin and a refresh against nothing must not
// block beyond the request timeout, and report up 0 with no partitions.
func TestAdminNeverConnected(t *testing.T) {
	addr := freePorts(t, 1)
	a, _ := newTestAdmin(t, []string{fmt.Sprintf("127.0.0.1:%d", addr[0])}, -1, ScopeLeader, nil, nil)
	if a.Ready() {
		t.Error("want not ready before the first refresh")
	}
	a.refresh()
	if !a.Ready() {
		t.Error("want ready after the first refresh attempt")
	}
	compare(t, a, `
# HELP kafka_replication_up 1 if the last Metadata request to Kafka succeeded, 0 if no broker answered.
# TYPE kafka_replication_up gauge
kafka_replication_up 0
`, mUp, mReplicas, mLastRefresh)
}

// TestAdminLogOverlay: the fresher of Metadata and the broker's logs wins; a
// disagreement is counted once however many refreshes it lasts.
func TestAdminLogOverlay(t *testing.T) {
	f := newFakeKafka(t)
	f.createTopic("orders", map[string]string{"min.insync.replicas": "2"}, 0, 0)
	overlay := fakeOverlay{
		// Newer than any refresh: the log saw a shrink Metadata has not.
		{"orders", 0}: {isr: 1, isrAt: testEpoch.Add(time.Hour), epoch: 2, epochAt: testEpoch.Add(time.Hour)},
		// Older than the refresh: Metadata wins.
		{"orders", 1}: {isr: 2, isrAt: testEpoch.Add(-time.Hour), epoch: 0, epochAt: testEpoch.Add(-time.Hour)},
	}
	a, _ := newTestAdmin(t, f.c.ListenAddrs(), -1, ScopeCluster, overlay, nil)
	a.refresh()
	a.refresh()
	compare(t, a, `
# HELP kafka_replication_partition_in_sync_replicas In-sync replicas of the partition (Metadata joined with this broker's logs: the fresher wins).
# TYPE kafka_replication_partition_in_sync_replicas gauge
kafka_replication_partition_in_sync_replicas{partition="0",topic="orders"} 1
kafka_replication_partition_in_sync_replicas{partition="1",topic="orders"} 3
# HELP kafka_replication_partition_leader_epoch Leader epoch of the partition (Metadata joined with this broker's logs: the fresher wins).
# TYPE kafka_replication_partition_leader_epoch gauge
kafka_replication_partition_leader_epoch{partition="0",topic="orders"} 2
kafka_replication_partition_leader_epoch{partition="1",topic="orders"} 1
# HELP kafka_replication_partition_under_min_isr 1 if the ISR is below the effective min.insync.replicas: acks=all produce fails and the HW cannot advance.
# TYPE kafka_replication_partition_under_min_isr gauge
kafka_replication_partition_under_min_isr{partition="0",topic="orders"} 1
kafka_replication_partition_under_min_isr{partition="1",topic="orders"} 0
# HELP kafka_replication_partition_source_disagreements_total Times the admin API (Metadata) and this broker's logs reported different values for a partition field; the fresher reading is exported.
# TYPE kafka_replication_partition_source_disagreements_total counter
kafka_replication_partition_source_disagreements_total{field="isr"} 2
kafka_replication_partition_source_disagreements_total{field="leader_epoch"} 2
`, mISR, mEpoch, mUnderMinISR, mDisagreements)
}

// TestAdminRollup: without partition labels the series are per-topic sums
// and counts, the topic filter applies, and promlint is still happy.
func TestAdminRollup(t *testing.T) {
	f := newFakeKafka(t)
	f.createTopic("orders", map[string]string{"min.insync.replicas": "2"}, 0, 1, 2)
	f.createTopic("ignored", nil, 0)
	f.rewriteMetadata(func(topic string, p *kmsg.MetadataResponseTopicPartition) {
		if p.Partition == 0 {
			p.ISR = []int32{p.Leader}
		}
	})
	f.setOffsets(partitionKey{"orders", 0}, fakeOffsets{hw: 10, leo: 10})
	f.setOffsets(partitionKey{"orders", 1}, fakeOffsets{hw: 20, leo: 25})
	f.setOffsets(partitionKey{"orders", 2}, fakeOffsets{hw: 30, leo: 30})
	a, _ := newTestAdmin(t, f.c.ListenAddrs(), -1, ScopeCluster, nil, func(c *AdminConfig) {
		c.PartitionLabels = false
		c.TopicFilter = func(topic string) bool { return topic != "ignored" }
	})
	a.refresh()
	compare(t, a, `
# HELP kafka_replication_partition_in_sync_replicas Sum of in-sync replicas (Metadata joined with this broker's logs: the fresher wins). Per-topic rollup over the exported partitions (partition labels disabled).
# TYPE kafka_replication_partition_in_sync_replicas gauge
kafka_replication_partition_in_sync_replicas{topic="orders"} 7
# HELP kafka_replication_partition_under_min_isr Number of partitions with ISR below the effective min.insync.replicas (min(config, RF)). Per-topic rollup over the exported partitions (partition labels disabled).
# TYPE kafka_replication_partition_under_min_isr gauge
kafka_replication_partition_under_min_isr{topic="orders"} 1
# HELP kafka_replication_partition_isr_headroom Smallest ISR minus effective min.insync.replicas among partitions. Per-topic rollup over the exported partitions (partition labels disabled).
# TYPE kafka_replication_partition_isr_headroom gauge
kafka_replication_partition_isr_headroom{topic="orders"} -1
# HELP kafka_replication_partition_high_watermark Sum of high watermarks (ListOffsets LATEST, read_uncommitted, sent to the leader). Per-topic rollup over the exported partitions (partition labels disabled).
# TYPE kafka_replication_partition_high_watermark gauge
kafka_replication_partition_high_watermark{topic="orders"} 60
# HELP kafka_replication_partition_log_end_offset Sum of leader log end offsets (ListOffsets LATEST with replica id -2, sent to the leader). Per-topic rollup over the exported partitions (partition labels disabled).
# TYPE kafka_replication_partition_log_end_offset gauge
kafka_replication_partition_log_end_offset{topic="orders"} 65
`, mISR, mUnderMinISR, mHeadroom, mHW, mLEO, mLeader, mLag)
	if problems, err := testutil.CollectAndLint(a); err != nil || len(problems) > 0 {
		t.Errorf("want no lint problems, got %v %v", problems, err)
	}
}

// TestAdminPartitionLogLevel: with --kafka.partition-log-level, Run raises
// kafka.cluster.Partition on this broker only and deletes the override on
// exit (kfake cannot describe BROKER_LOGGER, so there is no previous level to
// put back).
func TestAdminPartitionLogLevel(t *testing.T) {
	f := newFakeKafka(t)
	type alter struct {
		node        int32
		name, level string
		op          int8
	}
	alters := make(chan alter, 4)
	f.c.ControlKey(int16(kmsg.IncrementalAlterConfigs), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		f.c.KeepControl()
		req := kreq.(*kmsg.IncrementalAlterConfigsRequest)
		resp := req.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
		resp.Version = req.Version
		for _, r := range req.Resources {
			for _, c := range r.Configs {
				level := ""
				if c.Value != nil {
					level = *c.Value
				}
				alters <- alter{f.c.CurrentNode(), r.ResourceName + "/" + c.Name, level, int8(c.Op)}
			}
			rr := kmsg.NewIncrementalAlterConfigsResponseResource()
			rr.ResourceType, rr.ResourceName = r.ResourceType, r.ResourceName
			resp.Resources = append(resp.Resources, rr)
		}
		return resp, nil, true
	})
	a, _ := newTestAdmin(t, f.c.ListenAddrs(), 2, ScopeLeader, nil, func(c *AdminConfig) { c.PartitionLogLevel = "TRACE" })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { a.Run(ctx); close(done) }()

	want := []alter{
		{node: 2, name: "2/kafka.cluster.Partition", level: "TRACE", op: 0},
		{node: 2, name: "2/kafka.cluster.Partition", level: "", op: 1},
	}
	for i, w := range want {
		select {
		case got := <-alters:
			if got != w {
				t.Errorf("alter %d: want %+v, got %+v", i, w, got)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("alter %d: want %+v, got nothing", i, w)
		}
		if i == 0 {
			cancel()
		}
	}
	<-done
}

// TestAdminReadOnlyByDefault: without the flag no alter request is sent.
func TestAdminReadOnlyByDefault(t *testing.T) {
	f := newFakeKafka(t)
	f.createTopic("orders", nil, 0)
	a, _ := newTestAdmin(t, f.c.ListenAddrs(), 0, ScopeLeader, nil, nil)
	a.refresh()
	a.refresh()
	for k := range f.requestCounts() {
		switch k {
		case kmsg.Metadata, kmsg.DescribeConfigs, kmsg.ListOffsets, kmsg.ApiVersions:
		default:
			t.Errorf("want read-only requests, got %s", k.Name())
		}
	}
}

type overlayEntry struct {
	isr     int
	isrAt   time.Time
	epoch   int64
	epochAt time.Time
}

type fakeOverlay map[partitionKey]overlayEntry

func (o fakeOverlay) LogPartitionState(topic string, partition int32) (int, time.Time, int64, time.Time, bool) {
	e, ok := o[partitionKey{topic, partition}]
	return e.isr, e.isrAt, e.epoch, e.epochAt, ok
}

// freePorts reserves n loopback ports and releases them for the caller.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}
