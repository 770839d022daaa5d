package e2e

import (
	"context"
	"crypto/md5"
	"encoding/binary"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/harness"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/stack"
)

// TestShardedPrometheus: the rules that join one cluster's sidecars
// (kafka_replication:partition_high_watermark:max and the data-loss account
// built on it) on Prometheus sharded by target, as prometheus-operator shards
// by default, and sharded by the cluster label, each beside an unsharded
// Prometheus scraping every sidecar. Only with KRE_E2E_SHARDS=1
// (`make e2e-shards`).
//
// How (4.4.0): a sidecar per broker; five Prometheus with the shipped rules (time ÷10), scrapes and rules every
// second: "all" (unsharded), "target-0"/"target-1" (hashmod 2 over each target's instance label, one value kept per
// shard: a label unique per target, as __address__ is, but the same every run: kafka-2 alone on target-1, kafka-1
// and kafka-3 on target-0) and "cluster-0"/"cluster-1" (hashmod 2 over cluster: every sidecar on cluster-0).
// Topics moved and lost, RF 3 on [2,1,3]: broker 2 leads on target-1, its followers are on target-0. moved: 100
// acks=all, reassigned to [1,2,3], a preferred election makes broker 1 leader, 100 more. lost (min ISR 1, unclean
// elections on): 100 acks=all, followers 1 and 3 SIGSTOPped, 300 acks=1 (Kafka's HW 400, seen by every
// Prometheus), leader 2 SIGKILLed, followers SIGCONTed, an unclean election → Kafka's HW 100. Asserted, as
// measured (three runs, 48–52 s each alone):
//   - the clean move: moved-0's HW:max leaves target-1 with the leadership (no series there 2.7–3.9 s after the
//     election) and target-0 has it from the next second; no Prometheus records a loss: no false page, each
//     target shard sees a part of a rising HW;
//   - the unclean election: "all" and "cluster-0" fire KafkaPartitionCommittedOffsetsLost{topic="lost"} 9.1–9.8 s
//     after the leader's death, lost:offsets 300 = Kafka's drop; target-1 saw 100, 400 and then nothing,
//     target-0 100 from the new leader and nothing before (6–8 s later), so neither records a loss or fires:
//     300 lost committed offsets are not paged;
//   - cluster-0's firing set over the run equals the unsharded one's (that one alert), and so do every
//     partition's HW:max at the end; cluster-1 scrapes nothing.
func TestShardedPrometheus(t *testing.T) {
	if os.Getenv("KRE_E2E_SHARDS") != "1" {
		t.Skip("five Prometheus beside a real Kafka cluster: only with KRE_E2E_SHARDS=1 (make e2e-shards)")
	}
	if testing.Short() {
		t.Skip("starts a real Kafka cluster; skipped with -short")
	}
	if _, err := stack.Tool("prometheus"); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	defer func() { t.Logf("TestShardedPrometheus wall time %v", time.Since(began).Round(time.Second)) }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	c := harness.StartT(t, harness.Options{Version: kafkaCurrent})
	// Broker 2 leads both topics: alone on its target shard, its followers on the other.
	const leader = int32(2)
	followers := []int32{1, 3}
	must(t, c.CreateTopic(ctx, harness.Topic{
		Name: "moved", Assignment: [][]int32{{2, 1, 3}}, Configs: map[string]string{"min.insync.replicas": "2"},
	}))
	must(t, c.CreateTopic(ctx, harness.Topic{
		Name: "lost", Assignment: [][]int32{{2, 1, 3}},
		Configs: map[string]string{"min.insync.replicas": "1", "unclean.leader.election.enable": "true"},
	}))
	for _, topic := range []string{"moved", "lost"} {
		_, err := c.WaitISR(ctx, topic, 0, 3)
		must(t, err)
		produceOK(ctx, t, c, topic, 100, sarama.WaitForAll)
	}

	es, err := stack.StartExporters(ctx, c, exporterBinary(t))
	must(t, err)
	t.Cleanup(es.Close)
	dir := t.TempDir()
	rules := filepath.Join(dir, "kafka-replication.rules.yml")
	must(t, stack.ScaleRuleFile("../alerts/kafka-replication.rules.yml", rules, lossRuleScale, ruleFloor))

	var instances []string
	for _, tg := range es.Targets() {
		instances = append(instances, tg.Instance)
	}
	sort.Strings(instances)
	shards := []*promShard{{name: "all", want: instances}}
	for _, by := range []struct{ label, shard string }{{"instance", "target"}, {"cluster", "cluster"}} {
		for n := range uint64(2) {
			s := &promShard{name: fmt.Sprintf("%s-%d", by.shard, n), relabel: shardRelabel(by.label, 2, n)}
			for _, in := range instances {
				v := in
				if by.label == "cluster" {
					v = "local" // every target's cluster label (stack.Prometheus)
				}
				if hashmod(v, 2) == n {
					s.want = append(s.want, in)
				}
			}
			shards = append(shards, s)
		}
	}
	for _, s := range shards {
		sdir := filepath.Join(dir, s.name)
		must(t, os.MkdirAll(sdir, 0o755))
		if s.relabel == "" {
			s.prom, err = stack.StartPrometheus(ctx, sdir, es.Targets(), []string{rules}, "", time.Second)
		} else {
			s.prom, err = stack.StartPrometheusRelabeled(ctx, sdir, es.Targets(), []string{rules}, "", time.Second, s.relabel)
		}
		must(t, err)
		t.Cleanup(s.prom.Close)
	}
	promsUp := time.Now()
	all, target0, target1, cluster0, cluster1 := shards[0], shards[1], shards[2], shards[3], shards[4]
	// The split the test is built on: the leader alone on target-1.
	if !slices.Equal(target1.want, []string{fmt.Sprintf("kafka-%d", leader)}) || !slices.Equal(cluster0.want, instances) {
		t.Fatalf("hashmod split target-1 %v, cluster-0 %v: want kafka-%d alone, and every sidecar", target1.want, cluster0.want, leader)
	}
	for _, s := range shards {
		must(t, waitFor(ctx, 30*time.Second, func() bool {
			got, err := s.prom.Query(ctx, `up == 1`)
			if err != nil {
				return false
			}
			var ins []string
			for _, g := range got {
				ins = append(ins, g.Labels["instance"])
			}
			sort.Strings(ins)
			return slices.Equal(ins, s.want)
		}))
		t.Logf("%s scrapes %v", s.name, s.want)
	}

	hwMax := func(topic string) string {
		return fmt.Sprintf(`kafka_replication:partition_high_watermark:max{topic=%q,partition="0"}`, topic)
	}
	waitHW := func(what string, topic string, want float64, on []*promShard, absentOn []*promShard) {
		t.Helper()
		err := waitFor(ctx, 60*time.Second, func() bool {
			for _, s := range on {
				if v, ok := s.value(ctx, hwMax(topic)); !ok || v != want {
					return false
				}
			}
			for _, s := range absentOn {
				if _, ok := s.value(ctx, hwMax(topic)); ok {
					return false
				}
			}
			return true
		})
		if err != nil {
			for _, s := range shards {
				v, ok := s.value(ctx, hwMax(topic))
				t.Logf("%s: %s = %v (present %v)", s.name, hwMax(topic), v, ok)
			}
			t.Fatalf("%s: %s-0 HW:max %v on %v and absent on %v: %v", what, topic, want, names(on), names(absentOn), err)
		}
	}

	// (1) A clean leader move across the target shards.
	waitHW("before the move", "moved", 100, []*promShard{all, target1, cluster0}, []*promShard{target0, cluster1})
	must(t, c.Reassign("moved", 0, []int32{1, 2, 3}))
	var electErr error
	_, err = c.WaitPartition(ctx, "moved", 0, "broker 1 leads", func(s harness.PartitionState) bool {
		if s.Leader == 1 {
			return true
		}
		electErr = c.ElectLeaders(sarama.PreferredElection, "moved", 0)
		return false
	})
	if err != nil {
		t.Fatalf("%v (last preferred election: %v)", err, electErr)
	}
	movedAt := time.Now()
	produceOK(ctx, t, c, "moved", 100, sarama.WaitForAll)
	waitHW("after the move", "moved", 200, []*promShard{all, target0, cluster0}, []*promShard{target1, cluster1})
	t.Logf("moved-0: leader 2 → 1 (target-1 → target-0); HW:max 200 on all, target-0, cluster-0 and gone from target-1 %v after the election",
		time.Since(movedAt).Round(100*time.Millisecond))
	for _, s := range []*promShard{all, target0, target1} {
		s.logRange(ctx, t, hwMax("moved"), promsUp)
	}
	window := func() string { return fmt.Sprintf("%ds", int(time.Since(promsUp).Seconds())+2) }
	for _, s := range shards {
		if got, err := s.prom.Query(ctx, `max_over_time(kafka_replication:partition_high_watermark_lost:offsets{topic="moved"}[`+window()+`])`); err != nil || len(got) > 0 {
			t.Errorf("%s: a loss recorded for the clean move of moved-0: %v (err %v)", s.name, got, err)
		}
	}

	// (2) An unclean election from the leader's target shard to its followers'.
	waitHW("before the loss", "lost", 100, []*promShard{all, target1, cluster0}, []*promShard{target0, cluster1})
	for _, f := range followers {
		must(t, c.PauseNode(f))
	}
	_, err = c.WaitISR(ctx, "lost", 0, 1)
	must(t, err)
	produceOK(ctx, t, c, "lost", 300, sarama.WaitForLocal)
	before, err := c.HighWatermark("lost", 0)
	must(t, err)
	if before != 400 {
		t.Fatalf("Kafka's HW of lost-0 with leader 2 alone in the ISR = %d, want 400", before)
	}
	waitHW("the leader alone committed", "lost", 400, []*promShard{all, target1, cluster0}, []*promShard{target0, cluster1})
	must(t, c.KillNode(ctx, leader))
	killedAt := time.Now()
	for _, f := range followers {
		must(t, c.ResumeNode(f))
	}
	st, err := c.WaitPartition(ctx, "lost", 0, "a follower leads", func(s harness.PartitionState) bool {
		if slices.Contains(followers, s.Leader) {
			return true
		}
		electErr = c.ElectLeaders(sarama.UncleanElection, "lost", 0)
		return false
	})
	if err != nil {
		t.Fatalf("%v (last unclean election: %v)", err, electErr)
	}
	after, err := c.HighWatermark("lost", 0)
	must(t, err)
	t.Logf("lost-0: unclean leader %d, Kafka's HW %d → %d (%d committed offsets gone)", st.Leader, before, after, before-after)

	lostAlert := `ALERTS{alertname="KafkaPartitionCommittedOffsetsLost",alertstate="firing",topic="lost"}`
	for _, s := range []*promShard{all, cluster0} {
		if err := waitFor(ctx, 90*time.Second, func() bool { _, ok := s.value(ctx, lostAlert); return ok }); err != nil {
			t.Fatalf("%s: no KafkaPartitionCommittedOffsetsLost for lost-0 within 90 s of the leader's death", s.name)
		}
		t.Logf("%s: KafkaPartitionCommittedOffsetsLost{topic=\"lost\"} firing %v after the leader's death", s.name, time.Since(killedAt).Round(100*time.Millisecond))
	}
	// The target shards evaluate the same rules on the same schedule: once
	// the new leader's HW is on target-0, half as long again as the
	// unsharded Prometheus took to fire is the margin for an absence.
	waitHW("after the loss", "lost", float64(after), []*promShard{all, target0, cluster0}, []*promShard{target1, cluster1})
	time.Sleep(time.Since(killedAt) / 2)
	lostOffsets := `max_over_time(kafka_replication:partition_high_watermark_lost:offsets{topic="lost"}[` + window() + `])`
	for _, s := range shards {
		v, ok := s.value(ctx, lostOffsets)
		_, fired := s.value(ctx, `max_over_time(`+lostAlert+`[`+window()+`])`)
		t.Logf("%s: lost:offsets for lost-0 %v (recorded %v), KafkaPartitionCommittedOffsetsLost fired %v", s.name, v, ok, fired)
		wantLoss := s == all || s == cluster0
		switch {
		case wantLoss && (!ok || int64(v) != before-after):
			t.Errorf("%s: lost:offsets for lost-0 = %v (recorded %v), want Kafka's drop %d", s.name, v, ok, before-after)
		case wantLoss && !fired:
			t.Errorf("%s: KafkaPartitionCommittedOffsetsLost for lost-0 did not fire", s.name)
		case !wantLoss && (ok || fired):
			t.Errorf("%s: recorded a loss of %v for lost-0 (fired %v): a target shard measured none", s.name, v, fired)
		}
	}
	for _, s := range []*promShard{all, target0, target1} {
		s.logRange(ctx, t, hwMax("lost"), promsUp)
	}

	// (3) The firing sets over the whole run.
	sets := map[string][]string{}
	for _, s := range shards {
		sets[s.name] = s.firedSince(ctx, t, window())
		t.Logf("%s fired %d: %v", s.name, len(sets[s.name]), sets[s.name])
	}
	if !slices.Equal(sets["cluster-0"], sets["all"]) {
		t.Errorf("cluster-0 fired %v, the unsharded Prometheus %v", sets["cluster-0"], sets["all"])
	}
	// The values: every partition's HW:max, which nothing moves any more.
	var hwAll, hwCluster0 []string
	err = waitFor(ctx, 20*time.Second, func() bool {
		hwAll, hwCluster0 = samplesOf(ctx, all, "kafka_replication:partition_high_watermark:max"), samplesOf(ctx, cluster0, "kafka_replication:partition_high_watermark:max")
		return len(hwAll) > 0 && slices.Equal(hwAll, hwCluster0)
	})
	if err != nil {
		t.Errorf("HW:max differs: cluster-0 %v, the unsharded Prometheus %v", hwCluster0, hwAll)
	} else {
		t.Logf("HW:max of %d partitions equal on cluster-0 and the unsharded Prometheus", len(hwAll))
	}
	if len(sets["cluster-1"]) > 0 {
		t.Errorf("cluster-1, with no target, fired %v", sets["cluster-1"])
	}
	union := map[string]bool{}
	for _, a := range append(slices.Clone(sets["target-0"]), sets["target-1"]...) {
		union[a] = true
	}
	for _, a := range sets["all"] {
		if !union[a] {
			t.Logf("fired unsharded, on no target shard: %s", a)
		}
		delete(union, a)
	}
	for _, a := range slices.Sorted(maps.Keys(union)) {
		t.Logf("fired on a target shard, not unsharded: %s", a)
	}
}

// promShard is one Prometheus of the test and the sidecars it must scrape.
type promShard struct {
	name    string
	relabel string
	want    []string // instance labels, sorted
	prom    *stack.Prometheus
}

// value is the only sample of expr, if there is one.
func (s *promShard) value(ctx context.Context, expr string) (float64, bool) {
	got, err := s.prom.Query(ctx, expr)
	if err != nil || len(got) != 1 {
		return 0, false
	}
	return got[0].Value, true
}

// logRange logs where expr had samples since from, as runs of equal values.
func (s *promShard) logRange(ctx context.Context, t *testing.T, expr string, from time.Time) {
	t.Helper()
	// The API takes whole seconds: an end past now keeps the newest sample.
	series, err := s.prom.QueryRange(ctx, expr, from, time.Now().Add(time.Second), time.Second)
	if err != nil {
		t.Logf("%s: %s: %v", s.name, expr, err)
		return
	}
	if len(series) == 0 {
		t.Logf("%s: %s: no sample since %s", s.name, expr, from.Format("15:04:05"))
	}
	for _, ser := range series {
		var runs []string
		for i := 0; i < len(ser.Values); {
			j := i
			for j+1 < len(ser.Values) && ser.Values[j+1] == ser.Values[i] && ser.Times[j+1].Sub(ser.Times[j]) <= time.Second {
				j++
			}
			runs = append(runs, fmt.Sprintf("%v from %s to %s", ser.Values[i], ser.Times[i].Format("15:04:05"), ser.Times[j].Format("15:04:05")))
			i = j + 1
		}
		t.Logf("%s: %s: %s", s.name, expr, strings.Join(runs, "; "))
	}
}

// firedSince lists the alerts that fired within window, by name and labels.
func (s *promShard) firedSince(ctx context.Context, t *testing.T, window string) []string {
	t.Helper()
	got, err := s.prom.Query(ctx, `max_over_time(ALERTS{alertstate="firing"}[`+window+`])`)
	must(t, err)
	var out []string
	for _, g := range got {
		delete(g.Labels, "alertstate")
		name := g.Labels["alertname"]
		delete(g.Labels, "alertname")
		var ls []string
		for _, k := range slices.Sorted(maps.Keys(g.Labels)) {
			ls = append(ls, k+"="+g.Labels[k])
		}
		out = append(out, name+"{"+strings.Join(ls, ",")+"}")
	}
	sort.Strings(out)
	return out
}

// samplesOf lists expr's samples as sorted "labels value" strings.
func samplesOf(ctx context.Context, s *promShard, expr string) []string {
	got, err := s.prom.Query(ctx, expr)
	if err != nil {
		return nil
	}
	var out []string
	for _, g := range got {
		out = append(out, fmt.Sprintf("%v %v", g.Labels, g.Value))
	}
	sort.Strings(out)
	return out
}

func names(ss []*promShard) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.name)
	}
	return out
}

// shardRelabel keeps the targets whose label hashes to shard n of modulus,
// as prometheus-operator's shards do (over __address__, or __tmp_hash).
func shardRelabel(label string, modulus, n uint64) string {
	return fmt.Sprintf(`- source_labels: [%s]
  modulus: %d
  target_label: __tmp_hash
  action: hashmod
- source_labels: [__tmp_hash]
  regex: "%d"
  action: keep
`, label, modulus, n)
}

// hashmod is Prometheus' hashmod relabel action: the last 8 bytes of the
// value's MD5, big-endian, modulo modulus.
func hashmod(value string, modulus uint64) uint64 {
	h := md5.Sum([]byte(value))
	return binary.BigEndian.Uint64(h[8:]) % modulus
}
