package e2e

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/harness"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/stack"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/metrics"
)

// TestSidecar runs one exporter beside each broker of a current Kafka cluster,
// as deployed (own logs, own broker's admin API, leader-scoped series), and
// follows /metrics through a follower crash, the loss of two nodes and a
// leader crash.
//
// What it asserts (4.4.0): each partition's admin series on exactly one sidecar; a crashed follower → at-min-ISR
// and the shrink/expand counters on the leader's sidecar; two nodes down → under-min-ISR, NotEnoughReplicas counted
// from the log, the HW stall on the busy topic and not on the idle one, the offline partition reported by exactly
// one sidecar; leader killed → the series move to the new leader's sidecar. It showed that a sidecar must count a
// shrink from the "Shrinking ISR" line itself: the controller can fence the follower before the leader's
// AlterPartition commits (no "ISR updated to" line), and a sidecar can start after the last ISR line. The follower
// crash needs the leader's own shrink before the controller's fence, so the cluster runs harness.LeaderShrinksFirst.
// 60 s.
func TestSidecar(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Kafka cluster; skipped with -short")
	}
	start := time.Now()
	defer func() { t.Logf("TestSidecar wall time %v", time.Since(start).Round(time.Second)) }()
	c := harness.StartT(t, harness.Options{
		Version:          kafkaCurrent,
		BrokerConfig:     harness.LeaderShrinksFirst,
		ControllerConfig: harness.LeaderShrinksFirst,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	minISR2 := map[string]string{"min.insync.replicas": "2"}
	topics := []harness.Topic{
		{Name: "spread", Partitions: 3, Configs: minISR2},                    // leaders spread over the nodes
		{Name: "pinned", Assignment: [][]int32{{1, 2, 3}}, Configs: minISR2}, // led by node 1
		{Name: "stall", Assignment: [][]int32{{1, 2, 3}}, Configs: minISR2},
		{Name: "idle", Assignment: [][]int32{{1, 2, 3}}, Configs: minISR2},
		{Name: "orphan", Assignment: [][]int32{{2, 3}}, Configs: map[string]string{"min.insync.replicas": "1"}},
	}
	for _, tp := range topics {
		must(t, c.CreateTopic(ctx, tp))
		n := max(tp.Partitions, 1)
		for p := range n {
			if _, err := c.Produce(ctx, tp.Name, p, 5, sarama.WaitForAll); err != nil {
				t.Fatal(err)
			}
		}
	}
	es, err := stack.StartExporters(ctx, c, exporterBinary(t), "--stall.threshold=10s")
	must(t, err)
	t.Cleanup(es.Close)
	s := &sidecars{t: t, es: es}

	t.Run("one_sidecar_per_partition", func(t *testing.T) {
		s.t = t
		for _, tp := range []string{"spread", "pinned"} {
			for p := range int32(3) {
				if tp == "pinned" && p > 0 {
					break
				}
				st, err := c.Partition(tp, p)
				must(t, err)
				s.eventually(ctx, 30*time.Second, fmt.Sprintf("%s-%d only on sidecar %d", tp, p, st.Leader), func(m map[int32]stack.Metrics) string {
					return onlyOn(m, "kafka_replication_partition_replicas", tp, p, st.Leader)
				})
			}
		}
		s.eventually(ctx, 10*time.Second, "kafka_replication_up 1 everywhere", func(m map[int32]stack.Metrics) string {
			for id, mm := range m {
				if v, ok := mm.Value("kafka_replication_up", nil); !ok || v != 1 {
					return fmt.Sprintf("sidecar %d: up %v (present %v)", id, v, ok)
				}
			}
			return ""
		})
	})

	t.Run("follower_crash", func(t *testing.T) {
		s.t = t
		// A crash, not a controlled shutdown: then the leader itself drops the
		// follower after replica.lag.time.max.ms and logs the new ISR.
		must(t, c.KillNode(ctx, 3))
		// The leader only counts a follower as lagging once there is something
		// to fetch: without writes it would stay in the ISR until the
		// controller fences it, and that shrink is not the leader's to log.
		produceOK(ctx, t, c, "pinned", 5, sarama.WaitForLocal)
		pinned := part("pinned", 0)
		s.eventually(ctx, 60*time.Second, "leader's sidecar: pinned-0 at min ISR", func(m map[int32]stack.Metrics) string {
			return expect(m[1], gauge("kafka_replication_partition_at_min_isr", pinned, eq(1)))
		})
		// Kafka 4.x prints the ISR in no fixed order (seen on 4.4.0:
		// "Shrinking ISR from 3,2,1 to 1,2", "ISR updated to 1,3,2").
		line, err := c.WaitLogLine(ctx, 1, "server.log", regexp.MustCompile(`\[Partition pinned-0 broker=1\] Shrinking ISR from [0-9,]+ to (1,2|2,1)\.`))
		must(t, err)
		if _, msg := s.poll(ctx, 10*time.Second, func(m map[int32]stack.Metrics) string {
			return expect(m[1], gauge("kafka_replication_partition_isr_shrinks_total", pinned, gt(0)))
		}); msg != "" {
			// Seen on 4.1.1: the first ISR change after the exporter starts is
			// not counted (the counter compares consecutive "ISR updated to"
			// lines, ignoring the "Shrinking ISR from A to B" line before it).
			t.Errorf("leader logged %.90q but its sidecar did not count the shrink: %s", line, msg)
		}
		must(t, c.StartNode(ctx, 3))
		s.eventually(ctx, 90*time.Second, "leader's sidecar: pinned-0 back to full ISR", func(m map[int32]stack.Metrics) string {
			return expect(m[1],
				gauge("kafka_replication_partition_at_min_isr", pinned, eq(0)),
				gauge("kafka_replication_partition_in_sync_replicas", pinned, eq(3)))
		})
		// The leader does not always log the expansion at INFO (seen on 4.1.1:
		// admin ISR back to 3 with no "ISR updated to 1,2,3" for minutes), and
		// the log counter can only count what is logged.
		expanded, err := c.GrepLog(1, "server.log", regexp.MustCompile(`\[Partition pinned-0 broker=1\] ISR updated to [123],[123],[123] `))
		must(t, err)
		if len(expanded) == 0 {
			t.Logf("ISR back to 1,2,3 but the leader logged no expansion at INFO: expand counter not checked")
			return
		}
		line = expanded[len(expanded)-1]
		if _, msg := s.poll(ctx, 10*time.Second, func(m map[int32]stack.Metrics) string {
			return expect(m[1], gauge("kafka_replication_partition_isr_expands_total", pinned, gt(0)))
		}); msg != "" {
			// Seen on 4.1.1 when the controller fenced the crashed follower
			// before the leader's own shrink committed: the leader logs
			// "Shrinking ISR" but no "ISR updated to 1,2", so the expand line
			// has no earlier "ISR updated to" to be compared with.
			t.Errorf("leader logged %.90q but its sidecar did not count the expand: %s", line, msg)
		}
	})

	t.Run("two_nodes_down", func(t *testing.T) {
		s.t = t
		restore(ctx, t, c)
		must(t, c.StopNode(ctx, 3))
		must(t, c.StopNode(ctx, 2))
		for _, tp := range []string{"pinned", "stall", "idle"} {
			_, err := c.WaitISR(ctx, tp, 0, 1)
			must(t, err)
		}
		s.eventually(ctx, 30*time.Second, "survivor's sidecar: pinned-0 under min ISR", func(m map[int32]stack.Metrics) string {
			return expect(m[1], gauge("kafka_replication_partition_under_min_isr", part("pinned", 0), eq(1)))
		})

		res, err := c.Produce(ctx, "pinned", 0, 3, sarama.WaitForAll)
		must(t, err)
		if n := res.Count(sarama.ErrNotEnoughReplicas); n == 0 {
			t.Errorf("acks=all under min ISR: no NOT_ENOUGH_REPLICAS (errors %v, offsets %v)", res.Errors, res.Offsets)
		}
		s.eventually(ctx, 30*time.Second, "survivor's sidecar: rejections counted from the log", func(m map[int32]stack.Metrics) string {
			return expect(m[1], gauge("kafka_replication_partition_produce_not_enough_replicas_total", part("pinned", 0), gt(0)))
		})

		res, err = c.Produce(ctx, "stall", 0, 5, sarama.WaitForLocal)
		must(t, err)
		if len(res.Errors) > 0 {
			t.Fatalf("acks=1 under min ISR rejected: %v", res.Errors)
		}
		took := s.eventually(ctx, 60*time.Second, "survivor's sidecar: stall-0 HW stalled, idle-0 not", func(m map[int32]stack.Metrics) string {
			return expect(m[1],
				gauge("kafka_replication_partition_high_watermark_stalled", part("stall", 0), eq(1)),
				gauge("kafka_replication_partition_high_watermark_stalled", part("idle", 0), eq(0)),
				gauge("kafka_replication_partition_under_min_isr", part("idle", 0), eq(1)))
		})
		t.Logf("HW stall reported %v after the acks=1 produce (--stall.threshold=10s)", took.Round(time.Second))

		// Sidecars 2 and 3 are blind and keep their last values (up=0), and a
		// sidecar's last good refresh may predate the hand-off of leadership:
		// what must hold is that exactly one sidecar reports orphan-0 as
		// offline (leader -1), the one of the lowest live broker.
		s.eventually(ctx, 30*time.Second, "orphan-0 reported offline by exactly the lowest live sidecar", func(m map[int32]stack.Metrics) string {
			var offlineOn []int32
			for id, mm := range m {
				if v, ok := mm.Value("kafka_replication_partition_leader", part("orphan", 0)); ok && v == -1 {
					offlineOn = append(offlineOn, id)
				}
			}
			if len(offlineOn) != 1 || offlineOn[0] != 1 {
				return fmt.Sprintf("orphan-0 with leader -1 on sidecars %v, want only on sidecar 1", offlineOn)
			}
			return ""
		})
	})

	t.Run("leader_killed", func(t *testing.T) {
		s.t = t
		restore(ctx, t, c)
		for _, tp := range []string{"pinned", "stall", "idle"} {
			_, err := c.WaitISR(ctx, tp, 0, 3)
			must(t, err)
		}
		st, err := c.Partition("pinned", 0)
		must(t, err)
		if st.Leader != 1 {
			t.Fatalf("pinned-0 led by %d, want 1 (no auto rebalance, no election yet)", st.Leader)
		}
		killed := time.Now()
		must(t, c.KillNode(ctx, 1))
		st, err = c.WaitPartition(ctx, "pinned", 0, "a new leader", func(p harness.PartitionState) bool {
			return p.Leader >= 0 && p.Leader != 1
		})
		must(t, err)
		elected := time.Since(killed)
		// Sidecar 1 is blind now: by design it keeps its last partition values
		// and says so with kafka_replication_up 0 (the alert rules inhibit on
		// that), so "exactly one" is among the sidecars that can see Kafka.
		took := s.eventually(ctx, 30*time.Second, fmt.Sprintf("pinned-0 series moved to sidecar %d", st.Leader), func(m map[int32]stack.Metrics) string {
			if msg := expect(m[1], gauge("kafka_replication_up", nil, eq(0))); msg != "" {
				return "sidecar 1 of the killed broker: " + msg
			}
			live := seeing(m)
			for _, tp := range []string{"pinned", "stall", "idle"} {
				if msg := onlyOn(live, "kafka_replication_partition_replicas", tp, 0, st.Leader); msg != "" {
					return msg
				}
			}
			return expect(m[st.Leader], gauge("kafka_replication_partition_leader", part("pinned", 0), eq(float64(st.Leader))))
		})
		m, err := s.scrape(ctx)
		must(t, err)
		t.Logf("blind sidecar 1 still exports %d kafka_replication_partition_replicas series (up=0, last values kept)",
			m[1].Count("kafka_replication_partition_replicas", nil))
		t.Logf("leader 1 killed: Kafka elected %d after %v; its sidecar had the series %v after that (refresh 2s)",
			st.Leader, elected.Round(100*time.Millisecond), took.Round(100*time.Millisecond))
	})
}

// restore restarts the nodes a previous step stopped.
func restore(ctx context.Context, t *testing.T, c *harness.Cluster) {
	t.Helper()
	for _, n := range c.Nodes() {
		if !n.Running() {
			must(t, c.StartNode(ctx, n.ID))
		}
	}
}

// sidecars scrapes every exporter of a cluster.
type sidecars struct {
	t  *testing.T
	es stack.Exporters
}

// eventually scrapes all sidecars until cond returns "" (holds) or within
// passes, then fails the test with cond's last complaint. It returns how long
// it took.
func (s *sidecars) eventually(ctx context.Context, within time.Duration, what string, cond func(map[int32]stack.Metrics) string) time.Duration {
	s.t.Helper()
	took, last := s.poll(ctx, within, cond)
	if last != "" {
		s.t.Fatalf("%s: not within %v: %s", what, within, last)
	}
	return took
}

// poll scrapes all sidecars until cond returns "" or within passes; it
// returns how long that took and cond's last complaint ("" when it held).
func (s *sidecars) poll(ctx context.Context, within time.Duration, cond func(map[int32]stack.Metrics) string) (time.Duration, string) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	ticker := time.NewTicker(500 * time.Millisecond)
	defer ticker.Stop()
	var last string
	for {
		// A scrape cut short by the deadline must not hide the last complaint.
		scrapeCtx, cancelScrape := context.WithTimeout(context.Background(), 5*time.Second)
		m, err := s.scrape(scrapeCtx)
		cancelScrape()
		if err != nil {
			last = err.Error()
		} else if last = cond(m); last == "" {
			return time.Since(start), ""
		}
		select {
		case <-ctx.Done():
			return time.Since(start), last
		case <-ticker.C:
		}
	}
}

func (s *sidecars) scrape(ctx context.Context) (map[int32]stack.Metrics, error) {
	m := make(map[int32]stack.Metrics, len(s.es))
	for _, e := range s.es {
		mm, err := stack.Scrape(ctx, e.URL)
		if err != nil {
			return nil, fmt.Errorf("sidecar %d: %w", e.NodeID, err)
		}
		m[e.NodeID] = mm
	}
	return m, nil
}

func part(topic string, p int32) map[string]string {
	return map[string]string{"topic": topic, "partition": fmt.Sprint(p)}
}

// onlyOn says what is wrong unless exactly sidecar `want` exports the
// partition's series of metric name.
func onlyOn(m map[int32]stack.Metrics, name, topic string, p int32, want int32) string {
	var where []string
	for id, mm := range m {
		if n := mm.Count(name, part(topic, p)); n > 0 {
			where = append(where, fmt.Sprintf("sidecar %d ×%d", id, n))
		}
	}
	if len(where) == 1 && m[want].Count(name, part(topic, p)) == 1 {
		return ""
	}
	return fmt.Sprintf("%s{%s-%d} on [%s], want only on sidecar %d", name, topic, p, strings.Join(where, ", "), want)
}

// seeing keeps the sidecars whose admin refresh works (kafka_replication_up 1).
func seeing(m map[int32]stack.Metrics) map[int32]stack.Metrics {
	live := map[int32]stack.Metrics{}
	for id, mm := range m {
		if v, ok := mm.Value("kafka_replication_up", nil); ok && v == 1 {
			live[id] = mm
		}
	}
	return live
}

type check func(stack.Metrics) string

// sparseFamilies are the families written only where not 0
// (exposition.Family.Sparse): where the row they belong to is exported, a
// missing series of theirs is a 0.
var sparseFamilies = func() map[string]bool {
	out := map[string]bool{}
	for _, f := range metrics.Families() {
		if f.Sparse {
			out[f.Name] = true
		}
	}
	return out
}()

// sparseValue reads a sparse family's series as 0 when it is missing but
// its row is exported: the group's committed offset (a share group's start
// offset) for a group position, the LSO for an LSO verdict, the partition's
// replica count otherwise.
func sparseValue(m stack.Metrics, name string, labels map[string]string) (float64, bool) {
	row := "kafka_replication_partition_replicas"
	switch {
	case strings.HasPrefix(name, "kafka_replication_consumer_group_"):
		row = "kafka_replication_consumer_group_committed_offset"
	case strings.HasPrefix(name, "kafka_replication_share_group_"):
		row = "kafka_replication_share_group_start_offset"
	case strings.HasPrefix(name, "kafka_replication_partition_last_stable_offset_"):
		row = "kafka_replication_partition_last_stable_offset"
	}
	match := maps.Clone(labels)
	delete(match, "replica")
	if _, exported := m.Value(row, match); exported {
		return 0, true
	}
	return 0, false
}

// gaugeValue is m.Value, reading a missing series of a sparse family as 0
// where its row is exported.
func gaugeValue(m stack.Metrics, name string, labels map[string]string) (float64, bool) {
	v, found := m.Value(name, labels)
	if !found && sparseFamilies[name] {
		return sparseValue(m, name, labels)
	}
	return v, found
}

func gauge(name string, labels map[string]string, ok func(float64) bool) check {
	return func(m stack.Metrics) string {
		v, found := gaugeValue(m, name, labels)
		if !found {
			return fmt.Sprintf("%s%v missing", name, labels)
		}
		if !ok(v) {
			return fmt.Sprintf("%s%v = %v", name, labels, v)
		}
		return ""
	}
}

func eq(want float64) func(float64) bool { return func(v float64) bool { return v == want } }
func gt(min float64) func(float64) bool  { return func(v float64) bool { return v > min } }

// expect runs the checks on one sidecar's scrape and joins the complaints.
func expect(m stack.Metrics, checks ...check) string {
	var bad []string
	for _, c := range checks {
		if msg := c(m); msg != "" {
			bad = append(bad, msg)
		}
	}
	return strings.Join(bad, "; ")
}
