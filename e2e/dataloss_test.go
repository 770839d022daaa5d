package e2e

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/harness"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/stack"
)

// TestHighWatermarkRegression: acks=1 writes, RF 3, both
// followers frozen, so the leader alone commits; the leader is killed, the
// topic allows unclean elections, a follower is elected without those
// records, and the old leader comes back and lowers its own high watermark.
// Kafka's HW (ListOffsets) goes down, and the old leader says so in a WARN;
// the old leader's sidecar must count each of those WARNs for the partition,
// with their offsets.
//
// How: topic lost, RF 3 on [1,2,3], min ISR 1, unclean elections on; a sidecar per broker, Prometheus with the
// shipped rules (time ÷10) and Alertmanager; 100 acks=all, followers 2 and 3 SIGSTOPped → ISR [1]; 300 acks=1 →
// Kafka's HW 400 (ListOffsets); 6 s for the HW checkpoint; leader 1 SIGKILLed, followers SIGCONTed, unclean
// election → HW 100. With leader 1 still down, KafkaPartitionCommittedOffsetsLost{topic="lost"} reaches the webhook
// (11 s after its death: its sidecar drops the old HW at the first refresh its broker does not answer) and
// kafka_replication:partition_high_watermark_lost:offsets = 300 = Kafka's drop; leader 1 restarted → its "Non-
// monotonic update of high watermark from (offset=400…) to (offset=100…)" WARN; node 1's sidecar (from the
// beginning of its logs) has partition_high_watermark_lowered_total = Kafka's WARNs and …_lowered_offsets_total =
// their X − Y; no_unclean_election FAILS once on controller 101. Wall time 71 s alone.
func TestHighWatermarkRegression(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Kafka cluster; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c := harness.StartT(t, harness.Options{Version: kafkaCurrent})
	testDataLoss(ctx, t, c)
}

// TestUncleanElectionZooKeeper: the same loss on a
// ZooKeeper-mode cluster, whose controller logs the unclean election only as
// a state change to a leader outside the last ISR. verify over the
// controller's state-change.log must fail no_unclean_election, and the
// controller's sidecar must count it.
//
// How (3.9.1, ZooKeeper mode): the same loss with RF 2 on the two brokers that are not the controller (a frozen
// controller could not take the leader's ISR shrink), and topic clean on [leader, controller, follower] failing
// over cleanly at the same moment; the controller logs only "Changed partition lost-0 from OfflinePartition to
// OnlinePartition with state LeaderAndIsr(leader=3, …, leaderRecoveryState=RECOVERING, …)"; verify over its
// controller.log + state-change.log FAILS no_unclean_election exactly once; its sidecar counts 1 unclean election
// for lost-0, 0 for clean-0; the old leader's WARN is counted as on 4.4.0; broker 1's sidecar, which speaks for the
// metadata quorum, says metadata_quorum_unknown{reason="unsupported"} with no describe_quorum error. Wall time 38–43 s alone (the ZooKeeper
// server, JVM -Xmx128m, starts in about a second).
func TestUncleanElectionZooKeeper(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Kafka cluster; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c := harness.StartT(t, harness.Options{Version: kafkaZooKeeper, ZooKeeper: true})
	testDataLoss(ctx, t, c)
}

var nonMonotonicHW = regexp.MustCompile(`WARN \[(?:UnifiedLog|Log) partition=lost-0, dir=[^]]*\] Non-monotonic update of high watermark from \(offset=(\d+).* to \(offset=(\d+)`)

func testDataLoss(ctx context.Context, t *testing.T, c *harness.Cluster) {
	const topic = "lost"
	// In ZooKeeper mode the controller is a broker, and a frozen controller
	// cannot take the ISR shrink that lets the leader alone commit: it leads
	// nothing here and is not frozen (RF 2 on the other two brokers).
	leader, followers := int32(1), []int32{2, 3}
	var err error
	if c.ZooKeeper() {
		ctrl, err := c.ControllerID()
		must(t, err)
		var others []int32
		for _, id := range []int32{1, 2, 3} {
			if id != ctrl {
				others = append(others, id)
			}
		}
		leader, followers = others[0], others[1:]
		// A partition that fails over cleanly to the controller in the same
		// moment: the controller logs the same OfflinePartition →
		// OnlinePartition change, which must not count as unclean.
		must(t, c.CreateTopic(ctx, harness.Topic{
			Name: "clean", Assignment: [][]int32{{leader, ctrl, followers[0]}},
			Configs: map[string]string{"min.insync.replicas": "1"},
		}))
		_, err = c.WaitISR(ctx, "clean", 0, 3)
		must(t, err)
	}
	must(t, c.CreateTopic(ctx, harness.Topic{
		Name: topic, Assignment: [][]int32{append([]int32{leader}, followers...)},
		Configs: map[string]string{"min.insync.replicas": "1", "unclean.leader.election.enable": "true"},
	}))
	// A ZooKeeper-mode leader may answer UNKNOWN_TOPIC_OR_PARTITION for a
	// moment after the topic shows in Metadata: the first record is retried.
	must(t, waitFor(ctx, 30*time.Second, func() bool {
		res, err := c.Produce(ctx, topic, 0, 1, sarama.WaitForAll)
		return err == nil && len(res.Errors) == 0
	}))
	produceOK(ctx, t, c, topic, 99, sarama.WaitForAll)
	var loop *lossAlertLoop
	if !c.ZooKeeper() {
		loop = startLossAlertLoop(ctx, t, c)
	}

	for _, f := range followers {
		must(t, c.PauseNode(f))
	}
	_, err = c.WaitISR(ctx, topic, 0, 1)
	must(t, err)
	produceOK(ctx, t, c, topic, 300, sarama.WaitForLocal) // committed by the leader alone (ISR [leader], min ISR 1)
	before, err := c.HighWatermark(topic, 0)
	must(t, err)
	t.Logf("HW with the leader alone in the ISR: %d", before)
	if before < 400 {
		t.Fatalf("HW %d before the leader's death, want 400: the leader alone did not commit", before)
	}

	// The old leader lowers its HW on its return from the one it recovers
	// from its checkpoint, written every replica.high.watermark.checkpoint.interval.ms
	// (5 s): a leader killed sooner comes back below the loss and says nothing.
	time.Sleep(6 * time.Second)
	must(t, c.KillNode(ctx, leader))
	killedAt := time.Now()
	for _, f := range followers {
		must(t, c.ResumeNode(f))
	}
	var electErr error
	st, err := c.WaitPartition(ctx, topic, 0, "a follower leads", func(s harness.PartitionState) bool {
		if slices.Contains(followers, s.Leader) {
			return true
		}
		if !c.ZooKeeper() { // a ZooKeeper controller elects as soon as the follower is back
			electErr = c.ElectLeaders(sarama.UncleanElection, topic, 0)
		}
		return false
	})
	if err != nil && electErr != nil {
		t.Logf("last unclean election request: %v", electErr)
	}
	must(t, err)
	after, err := c.HighWatermark(topic, 0)
	must(t, err)
	t.Logf("unclean leader %d: HW %d → %d (%d committed offsets gone)", st.Leader, before, after, before-after)
	if after >= before {
		t.Fatalf("HW %d after the unclean election, want below %d", after, before)
	}

	if loop != nil {
		// The rule, from every sidecar's HW series, in a real Prometheus, to
		// Alertmanager, while the old leader is still dead: its WARN cannot
		// help, the drop shows once its sidecar stops exporting the old HW
		// (three refreshes, at least 30 s, after its broker died).
		waitAlert(ctx, t, loop.hook, "firing", "KafkaPartitionCommittedOffsetsLost", map[string]string{"topic": topic}, 90*time.Second)
		t.Logf("KafkaPartitionCommittedOffsetsLost at the webhook %v after the leader's death, the old leader still down", time.Since(killedAt).Round(time.Second))
		var got []stack.Sample
		waitErr := waitFor(ctx, 60*time.Second, func() bool {
			var err error
			got, err = loop.prom.Query(ctx, `max(max_over_time(kafka_replication:partition_high_watermark_lost:offsets{topic="lost"}[5m]))`)
			return err == nil && len(got) == 1
		})
		switch {
		case waitErr != nil:
			t.Errorf("no kafka_replication:partition_high_watermark_lost:offsets for %s-0 within 60 s", topic)
		case int64(got[0].Value) != before-after:
			t.Errorf("kafka_replication:partition_high_watermark_lost:offsets for %s-0 = %v, want Kafka's HW drop %d", topic, got, before-after)
		default:
			t.Logf("Prometheus: %s-0 lost %v offsets (Kafka's HW %d → %d)", topic, got[0].Value, before, after)
		}
	}

	must(t, c.StartNode(ctx, leader))
	_, err = c.WaitPartition(ctx, topic, 0, "the old leader back in the ISR", func(s harness.PartitionState) bool {
		return slices.Contains(s.ISR, leader)
	})
	must(t, err)

	// Kafka's own account of the old leader's loss.
	warns, err := c.GrepLog(leader, "server.log", nonMonotonicHW)
	must(t, err)
	var lowered int64
	for _, w := range warns {
		m := nonMonotonicHW.FindStringSubmatch(w)
		from, _ := strconv.ParseInt(m[1], 10, 64)
		to, _ := strconv.ParseInt(m[2], 10, 64)
		lowered += from - to
		t.Logf("old leader %d: %.300s", leader, w)
	}

	// The exporters, reading every node's logs from their beginning.
	bin := exporterBinary(t)
	scrape := func(n *harness.Node) stack.Metrics {
		t.Helper()
		speaks := n.ID == 1 && c.ZooKeeper()
		e, err := stack.StartExporter(ctx, n, bin, "--log.from-beginning")
		must(t, err)
		defer e.Close()
		// caught_up reads 1 for a moment after the start, before the first
		// read: wait for events, and for their count to hold still.
		var m stack.Metrics
		last := -1.0
		err = waitFor(ctx, 20*time.Second, func() bool {
			var err error
			if m, err = stack.Scrape(ctx, e.URL); err != nil {
				return false
			}
			v, _ := m.Value("kafka_replication_log_caught_up", nil)
			n := m.Sum("kafka_replication_log_events_total", nil)
			stable := v == 1 && n > 0 && n == last
			if speaks {
				// Broker 1's sidecar speaks for the quorum: wait for its first refresh's verdict.
				stable = stable && m.Count("kafka_replication_metadata_quorum_unknown", nil) > 0
			}
			last = n
			return stable
		})
		must(t, err)
		return m
	}
	if len(warns) == 0 {
		t.Errorf("old leader %d logged no Non-monotonic update of high watermark for %s-0", leader, topic)
	}
	lost := map[string]string{"topic": topic, "partition": "0"}
	old := scrape(c.Node(leader))
	gotN, _ := old.Value("kafka_replication_partition_high_watermark_lowered_total", lost)
	gotOffsets, _ := old.Value("kafka_replication_partition_high_watermark_lowered_offsets_total", lost)
	t.Logf("old leader's sidecar: lowered_total %v, lowered_offsets_total %v (Kafka: %d WARNs, %d offsets)", gotN, gotOffsets, len(warns), lowered)
	if int(gotN) != len(warns) || int64(gotOffsets) != lowered {
		t.Errorf("old leader's sidecar counts %v lowered HWs of %v offsets, Kafka's WARNs say %d of %d", gotN, gotOffsets, len(warns), lowered)
	}

	// The unclean election, counted by the controller's sidecar.
	var ctrlNode *harness.Node
	if cs := c.Controllers(); len(cs) > 0 {
		ctrlNode = cs[0]
	} else {
		id, err := c.ControllerID()
		must(t, err)
		ctrlNode = c.Node(id)
	}
	var files []string
	for _, f := range []string{"controller.log", "state-change.log"} {
		fs, err := ctrlNode.LogFiles(f)
		must(t, err)
		files = append(files, fs...)
	}
	r := verify(t, files...)
	if inv := r.invariant("no_unclean_election"); inv.Status != "FAILED" || inv.Violations != 1 {
		t.Errorf("no_unclean_election = %s (%d violations) on node %d's controller.log+state-change.log, want FAILED once\n%s",
			inv.Status, inv.Violations, ctrlNode.ID, r.Raw)
	}
	if ctrlNode.Role == harness.RoleBroker {
		m := scrape(ctrlNode)
		if v, _ := m.Value("kafka_replication_partition_unclean_leader_elections_total", lost); v != 1 {
			t.Errorf("controller %d's sidecar counts %v unclean elections of %s-0, want 1", ctrlNode.ID, v, topic)
		}
		clean := map[string]string{"topic": "clean", "partition": "0"}
		if st, err := c.Partition("clean", 0); err != nil || st.Leader == leader {
			t.Errorf("clean-0 did not fail over: %+v %v", st, err)
		}
		// Sparse: a partition without an unclean election has no series.
		if v, _ := m.Value("kafka_replication_partition_unclean_leader_elections_total", clean); v != 0 {
			t.Errorf("controller %d's sidecar counts %v unclean elections of clean-0, want 0", ctrlNode.ID, v)
		}
	}
	if c.ZooKeeper() {
		// ZooKeeper mode has no metadata quorum: a state said once, not an error per refresh.
		m := scrape(c.Node(1))
		unsupported := map[string]string{"reason": "unsupported"}
		if v, _ := m.Value("kafka_replication_metadata_quorum_unknown", unsupported); v != 1 {
			t.Errorf("broker 1's sidecar in ZooKeeper mode: metadata_quorum_unknown{reason=\"unsupported\"} = %v, want 1", v)
		}
		if v, _ := m.Value("kafka_replication_metadata_quorum_up", nil); v != 0 {
			t.Errorf("broker 1's sidecar in ZooKeeper mode: metadata_quorum_up = %v, want 0", v)
		}
		if v, _ := m.Value("kafka_replication_admin_request_errors_total", map[string]string{"request": "describe_quorum"}); v != 0 {
			t.Errorf("broker 1's sidecar in ZooKeeper mode counts %v describe_quorum errors, want 0", v)
		}
	}
	for _, id := range []int32{1, 2, 3} {
		lines, err := c.GrepLog(id, "state-change.log", regexp.MustCompile(`lost-0|\[lost,0\]`))
		must(t, err)
		for _, l := range lines {
			if interesting(l) || regexp.MustCompile(`Changed partition|LeaderAndIsr\(`).MatchString(l) {
				t.Logf("node %d state-change.log: %.400s", id, l)
			}
		}
	}
}

// waitFor polls cond every 250ms until it holds or d passes.
func waitFor(ctx context.Context, d time.Duration, cond func() bool) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("condition not met within %v", d)
		case <-time.After(250 * time.Millisecond):
		}
	}
	return nil
}

// lossAlertLoop is a sidecar per broker, Prometheus with the shipped rules
// and Alertmanager, for the regression rule.
type lossAlertLoop struct {
	es   stack.Exporters
	prom *stack.Prometheus
	hook *stack.Webhook
}

// lossRuleScale shrinks the rules' time axis less than the alert loop's: the
// 10m window of kafka_replication:partition_high_watermark_lost:offsets must
// still hold the old leader's HW when its sidecar drops the series (three
// refreshes, at least 30 s, after its broker died).
const lossRuleScale = 10

func startLossAlertLoop(ctx context.Context, t *testing.T, c *harness.Cluster) *lossAlertLoop {
	t.Helper()
	if err := alertingToolsMissing(); err != nil {
		t.Logf("no alert loop: %v", err)
		return nil
	}
	es, err := stack.StartExporters(ctx, c, exporterBinary(t))
	must(t, err)
	t.Cleanup(es.Close)
	prom, _, hook := startAlerting(ctx, t, t.TempDir(), es.Targets(), lossRuleScale)
	return &lossAlertLoop{es: es, prom: prom, hook: hook}
}
