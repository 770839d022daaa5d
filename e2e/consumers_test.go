package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/harness"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/stack"
)

// TestConsumersStarvedByReplication: an acks=1 topic, RF 3, min
// ISR 2, a consumer group reading it continuously. Both followers freeze:
// the leader shrinks the ISR to itself and, under min ISR, stops the HW
// (KAFKA-15583) while producers keep writing. Within the stall threshold
// plus a refresh the leader's sidecar says the group is starved by
// replication, its lag to the HW stays ~0 and the records above the HW grow;
// after the thaw the verdict clears.
//
// How: topic starve on [1,2,3], 20 records/s, a sarama consumer group (auto-commit 200 ms) coordinated by node 1,
// sidecars with --collector.consumer-groups --stall.threshold=10s. Measured (4.4.0): starved 14 s after the freeze,
// lag to the HW 7 records (3 in another run: the group's last commits fail, the offsets topic being under min ISR
// too), 260 records above the HW and growing; cleared 2 s after the thaw; wall time 39–44 s (80 s at load). 3.9.1:
// starved 14 s after the freeze, lag to the HW 0, 232 records above the HW, cleared 2–5 s after the thaw, 47–56 s.
// On both versions broker 1's sidecar, and only it, exports the metadata quorum as DescribeQuorum answers it.
//
// Share groups (KIP-932; the sidecars also run --collector.share-groups), on the same partition and freeze: one that
// keeps up (accepts and flushes every poll) and one that is slow (one record every 250 ms), both coordinated by broker
// 1, started at earliest (group config share.auto.offset.reset), __share_group_state with min ISR 1 (see
// shareBrokerConfig). Kafka's answers (DescribeShareGroupOffsets, ListOffsets, ListGroups [share]): the keeping-up
// group's start offset is 1 below the moving HW with Kafka's lag 0; while frozen it stays 1 below the stalled HW (lag
// 0, no acknowledgement failed) as ~320 records pile above it, the slow group's ~150-200 below; after the thaw both
// the HW and the keeping-up start offset move past the stalled HW at once. Broker 1's sidecar: 3 brokers known, the
// keeping-up group starved in the same refresh as the stalled HW (0 s, at most two refreshes allowed), the slow one
// not, both start offsets equal to Kafka's, both cleared after the thaw; no share-group state logged at WARN twice in
// a row for a broker. 3.9.1 has no share groups: every sidecar counts 3 brokers unsupported, logged once each (again
// after the freeze, which makes brokers 2 and 3 unreachable in between). 4.4.0: 37-47 s.
func TestConsumersStarvedByReplication(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Kafka cluster; skipped with -short")
	}
	for _, version := range consumerVersions {
		t.Run(version, func(t *testing.T) { testConsumersStarved(t, version) })
	}
}

// consumerVersions run the consumer scenarios: the current release, and the
// last 3.x line, which has the same HW stall under min ISR (KAFKA-15583,
// since 3.7) and is what the users who met it run.
var consumerVersions = []string{kafkaCurrent, kafka3}

func testConsumersStarved(t *testing.T, version string) {
	start := time.Now()
	defer func() { t.Logf("wall time %v", time.Since(start).Round(time.Second)) }()
	opts := harness.Options{Version: version}
	if hasShareGroups(version) {
		opts.BrokerConfig = shareBrokerConfig
	}
	c := harness.StartT(t, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	const topic = "starve"
	must(t, c.CreateTopic(ctx, harness.Topic{
		Name: topic, Assignment: [][]int32{{1, 2, 3}},
		Configs: map[string]string{"min.insync.replicas": "2"},
	}))
	group := groupCoordinatedBy(ctx, t, c, 1, "starved")

	var wg sync.WaitGroup
	defer wg.Wait()
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	// The producer: acks=1, 20 records a second, to the leader.
	produceSteadily(runCtx, t, &wg, c, topic, sarama.WaitForLocal, 50*time.Millisecond)
	// The consumer group: reads everything and auto-commits every 200ms.
	consumeSteadily(runCtx, t, &wg, c, group, topic, 200*time.Millisecond, markAll{})
	// Share groups on the same partition and freeze, where Kafka has them.
	var shares *shareGroups
	if hasShareGroups(version) {
		shares = startShareGroups(runCtx, t, &wg, c, topic)
	}

	const threshold = 10 * time.Second
	es, err := stack.StartExporters(ctx, c, exporterBinary(t), "--stall.threshold="+threshold.String(), "--collector.consumer-groups", "--collector.share-groups")
	must(t, err)
	t.Cleanup(es.Close)
	s := &sidecars{t: t, es: es}
	gp := map[string]string{"group": group, "topic": topic, "partition": "0"}
	checkQuorumSeries(ctx, t, c, s)
	// Some refreshes of a moving HW first: the verdict needs the HW's last
	// advance, which the sidecar learns from its own readings.
	s.eventually(ctx, 30*time.Second, "the group caught up, not starved", func(m map[int32]stack.Metrics) string {
		return expect(m[1],
			gauge("kafka_replication_consumer_group_starved_by_replication", gp, eq(0)),
			gauge("kafka_replication_consumer_group_lag_to_high_watermark", gp, lt(50)),
			gauge("kafka_replication_consumer_group_committed_offset", gp, gt(150)))
	})
	if shares != nil {
		shares.caughtUp(ctx)
		shares.exporterCaughtUp(ctx, s)
	} else {
		checkShareGroupsUnsupported(ctx, s)
	}

	frozen := time.Now()
	must(t, c.PauseNode(2))
	must(t, c.PauseNode(3))
	defer func() { _ = c.ResumeNode(2); _ = c.ResumeNode(3) }()
	// ISR shrink after replica.lag.time.max.ms (5s), then the stall
	// threshold, then one refresh (2s) and a scrape.
	var above, lagToHW float64
	took := s.eventually(ctx, 5*time.Second+threshold+15*time.Second, "the group starved by replication", func(m map[int32]stack.Metrics) string {
		above, _ = m[1].Value("kafka_replication_consumer_group_records_above_high_watermark", gp)
		stalled, _ := m[1].Value("kafka_replication_partition_high_watermark_stalled", part(topic, 0))
		if shares != nil {
			shares.watch(m[1])
		}
		lag, _ := m[1].Value("kafka_replication_consumer_group_lag_to_high_watermark", gp)
		lagToHW = lag
		committed, _ := m[1].Value("kafka_replication_consumer_group_committed_offset", gp)
		hw, _ := m[1].Value("kafka_replication_partition_high_watermark", part(topic, 0))
		isr, _ := m[1].Value("kafka_replication_partition_in_sync_replicas", part(topic, 0))
		bad := expect(m[1],
			gauge("kafka_replication_consumer_group_starved_by_replication", gp, eq(1)),
			gauge("kafka_replication_consumer_group_partitions_starved_by_replication", map[string]string{"group": group}, eq(1)),
			gauge("kafka_replication_consumer_group_lag_to_high_watermark", gp, lt(50)))
		if bad == "" {
			return ""
		}
		return fmt.Sprintf("[stalled %v isr %v hw %v committed %v lag %v above %v] %s", stalled, isr, hw, committed, lag, above, bad)
	})
	t.Logf("Kafka %s: starved by replication %v after freezing both followers (stall threshold %v); lag to the HW %v, %v records above the HW",
		c.Version(), took.Round(time.Second), threshold, lagToHW, above)
	var stalledHW int64
	if shares != nil {
		shares.exporterStarved(ctx, s)
		stalledHW = shares.starved(ctx)
	}
	s.eventually(ctx, 10*time.Second, "the records above the HW growing", func(m map[int32]stack.Metrics) string {
		if v, _ := m[1].Value("kafka_replication_consumer_group_records_above_high_watermark", gp); v <= above {
			return fmt.Sprintf("records above the HW %v, was %v", v, above)
		}
		return ""
	})
	t.Logf("frozen for %v", time.Since(frozen).Round(time.Second))

	must(t, c.ResumeNode(2))
	must(t, c.ResumeNode(3))
	took = s.eventually(ctx, 45*time.Second, "the verdict cleared after the thaw", func(m map[int32]stack.Metrics) string {
		return expect(m[1], gauge("kafka_replication_consumer_group_starved_by_replication", gp, eq(0)))
	})
	t.Logf("verdict cleared %v after the thaw", took.Round(time.Second))
	if shares != nil {
		shares.exporterThawed(ctx, s)
		shares.thawed(ctx, stalledHW)
	}
	checkShareWarningsOnce(t, c)
}

// markAll is a consumer group handler that marks every record it reads.
type markAll struct{}

func (markAll) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (markAll) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (markAll) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for msg := range claim.Messages() {
		sess.MarkMessage(msg, "")
	}
	return nil
}

// checkQuorumSeries: broker 1's sidecar, the lowest id, speaks for the
// cluster's metadata quorum, and its leader, epoch and voters are Kafka's own
// (DescribeQuorum from the test's client). It runs here, where every version
// of consumerVersions starts a KRaft cluster with sidecars, so that the
// 3.9.1 request and answer shapes are covered without a cluster of their own.
func checkQuorumSeries(ctx context.Context, t *testing.T, c *harness.Cluster, s *sidecars) {
	t.Helper()
	q, err := c.DescribeQuorum(ctx)
	must(t, err)
	s.eventually(ctx, 20*time.Second, "broker 1's sidecar exporting Kafka's quorum", func(m map[int32]stack.Metrics) string {
		return expect(m[1],
			gauge("kafka_replication_metadata_quorum_up", nil, eq(1)),
			gauge("kafka_replication_metadata_quorum_leader_id", nil, eq(float64(q.LeaderID))),
			gauge("kafka_replication_metadata_quorum_leader_epoch", nil, eq(float64(q.LeaderEpoch))),
			gauge("kafka_replication_metadata_quorum_voters", nil, eq(float64(len(q.Voters)))),
			gauge("kafka_replication_metadata_quorum_high_watermark", nil, gt(0)))
	})
	m, err := s.scrape(ctx)
	must(t, err)
	for _, id := range []int32{2, 3} {
		if n := m[id].Count("kafka_replication_metadata_quorum_up", nil); n != 0 {
			t.Errorf("broker %d's sidecar exports the quorum too (%d series): one sidecar speaks for the cluster", id, n)
		}
	}
}

func lt(max float64) func(float64) bool { return func(v float64) bool { return v < max } }

// groupCoordinatedBy returns a group name, prefix-N, whose coordinator is
// broker id: the leader of __consumer_offsets partition abs(hash(group)) %
// partitions, so freezing the other brokers leaves the group's coordinator
// answering.
func groupCoordinatedBy(ctx context.Context, t *testing.T, c *harness.Cluster, id int32, prefix string) string {
	t.Helper()
	client, err := sarama.NewClient(c.Bootstrap(), sarama.NewConfig())
	must(t, err)
	defer client.Close()
	// FindCoordinator creates __consumer_offsets (3 partitions in the harness).
	for ctx.Err() == nil {
		if _, err := client.Coordinator("probe"); err == nil {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	for i := range 100 {
		g := fmt.Sprintf("%s-%d", prefix, i)
		st, err := c.Partition("__consumer_offsets", javaHashAbs(g)%3)
		must(t, err)
		if st.Leader == id {
			return g
		}
	}
	t.Fatalf("no group name coordinated by broker %d", id)
	return ""
}

// javaHashAbs is Kafka's Utils.abs(group.hashCode()) for an ASCII name.
func javaHashAbs(s string) int32 {
	var h int32
	for _, r := range s {
		h = 31*h + r
	}
	return h & 0x7fffffff
}
