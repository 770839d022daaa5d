package e2e

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/harness"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/stack"
)

// TestMetadataQuorum: the KRaft metadata quorum as one cluster-scope sidecar
// exports it, against the test's own DescribeQuorum and through voters
// frozen with SIGSTOP.
//
// What it asserts (4.4.0, three dedicated controllers 101–103, one sidecar
// beside broker 1 in cluster scope, refresh 2 s): leader id and epoch equal
// the test's DescribeQuorum, and the exporter's metadata HW lies between the
// test's HW read before the last refresh and after the scrape; voters 3,
// brokers missing 0. One non-leader voter frozen → its replica_lag_seconds
// and last_fetch_age_seconds pass 5 s; SIGCONT → both under 2 s. The two
// non-leader voters frozen → metadata_quorum_up 0, or the metadata HW
// unchanged over at least three refreshes; SIGCONT both → up 1 and the HW
// moving again.
//
// What it saw (first run): leader 101 epoch 1, Kafka's HW 37 then 42 around
// the scrape, the exporter's 41 (the active controller's NoOpRecords move it
// about twice a second); voter 102 frozen passed 5 s of lag and fetch age
// 5.6 s after SIGSTOP and was back under 2 s 2 s after SIGCONT; with 102 and
// 103 frozen the quorum went unknown (up 0) 5.7 s after the freeze, once the
// leader had resigned for want of a majority's fetches, and was up again with
// the HW past 57 within 0.5 s of SIGCONT. Wall time 61 s alone, with the
// cluster start.
//
// Last, the active controller killed (SIGKILL), under a log-only sidecar on
// each controller (stack.StartControllerExporters: server.log and
// controller.log, no --kafka.server). SIGKILL is the case that breaks a naive
// reading: the old leader writes no resignation, and the survivors learn of
// it only by their fetch timeouts (a SIGTERM would have it resign first, a
// ResignedState transition in its own log and no fetch-timeout wait).
// Asserted against Kafka's DescribeQuorum: a new leader at a higher epoch; its
// sidecar's metadata_log_elections_total and transitions_total{state="leader"}
// up within 20 s, the election counted once though server.log (the
// transition to Leader) and controller.log ("Becoming the active
// controller") both tell it; the surviving voter's sidecar up one election
// (the new epoch's leader it saw, logged in both files) and a transition to
// follower, none to leader; the cluster-scope sidecar's leader id and epoch
// Kafka's; the killed controller's sidecar, whose files stopped, counts
// nothing after the kill and reads nothing more, its two files still open.
//
// Seen (2026-12-05, 2 shared cores): leader 101 at epoch 3 killed; Kafka's
// DescribeQuorum named 103 at epoch 5 2.8 s later (a split vote: 102 and 103
// both candidates at epoch 4); 103's sidecar counted the election and the
// leader transition 2.8 s after the kill, 102's its follower transition 3.3 s
// after (fetch timeout 1, prospective 1, candidate 1, unattached 2, follower
// 1, elections 1), the cluster-scope sidecar leader 103 epoch 5 at 3.3 s;
// 101's sidecar showed no change. Wall time 41 s alone with the kill step.
func TestMetadataQuorum(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Kafka cluster; skipped with -short")
	}
	start := time.Now()
	defer func() { t.Logf("TestMetadataQuorum wall time %v", time.Since(start).Round(time.Second)) }()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c := harness.StartT(t, harness.Options{Version: kafkaCurrent, Controllers: 3})
	e, err := stack.StartExporter(ctx, c.Node(1), exporterBinary(t), "--kafka.refresh-interval=2s", "--scope=cluster")
	must(t, err)
	t.Cleanup(e.Close)
	const refresh = 2 * time.Second

	// Kafka's view, and the exporter's within a refresh of it.
	before, err := c.DescribeQuorum(ctx)
	must(t, err)
	time.Sleep(refresh + 500*time.Millisecond) // the next scrape shows a refresh after before
	m := waitQuorum(ctx, t, e, 10*time.Second, "healthy quorum", func(m stack.Metrics) string {
		return expect(m,
			gauge("kafka_replication_metadata_quorum_up", nil, eq(1)),
			gauge("kafka_replication_metadata_quorum_leader_id", nil, eq(float64(before.LeaderID))),
			gauge("kafka_replication_metadata_quorum_leader_epoch", nil, eq(float64(before.LeaderEpoch))),
			gauge("kafka_replication_metadata_quorum_voters", nil, eq(3)),
			gauge("kafka_replication_metadata_quorum_brokers_missing", nil, eq(0)))
	})
	after, err := c.DescribeQuorum(ctx)
	must(t, err)
	hw, _ := m.Value("kafka_replication_metadata_quorum_high_watermark", nil)
	t.Logf("Kafka's quorum %+v then HW %d; the exporter's HW %v", before, after.HW, hw)
	if hw < float64(before.HW) || hw > float64(after.HW) {
		t.Errorf("exporter's metadata HW %v outside Kafka's %d..%d around the scrape", hw, before.HW, after.HW)
	}
	if after.LeaderID != before.LeaderID {
		t.Fatalf("the quorum leader moved from %d to %d on a healthy cluster", before.LeaderID, after.LeaderID)
	}
	followers := slices.DeleteFunc(slices.Clone(before.Voters), func(id int32) bool { return id == before.LeaderID })
	if len(followers) != 2 {
		t.Fatalf("voters %v with leader %d: want two followers", before.Voters, before.LeaderID)
	}
	for _, id := range followers {
		t.Cleanup(func() { _ = c.ResumeNode(id) }) // never leave a stopped JVM behind
	}

	// One follower frozen: its lag in time and its last fetch grow.
	voter := map[string]string{"node": fmt.Sprint(followers[0]), "role": "voter"}
	must(t, c.PauseNode(followers[0]))
	took := waitScrape(ctx, t, e, 20*time.Second, fmt.Sprintf("voter %d frozen: lag and fetch age past 5 s", followers[0]), func(m stack.Metrics) string {
		return expect(m,
			gauge("kafka_replication_metadata_quorum_up", nil, eq(1)),
			gauge("kafka_replication_metadata_quorum_replica_lag_seconds", voter, gt(5)),
			gauge("kafka_replication_metadata_quorum_replica_last_fetch_age_seconds", voter, gt(5)))
	})
	t.Logf("voter %d frozen: lag and fetch age past 5 s after %v", followers[0], took.Round(100*time.Millisecond))
	must(t, c.ResumeNode(followers[0]))
	took = waitScrape(ctx, t, e, 20*time.Second, fmt.Sprintf("voter %d resumed: lag and fetch age under 2 s", followers[0]), func(m stack.Metrics) string {
		return expect(m,
			gauge("kafka_replication_metadata_quorum_replica_lag_seconds", voter, lt(2)),
			gauge("kafka_replication_metadata_quorum_replica_last_fetch_age_seconds", voter, lt(2)))
	})
	t.Logf("voter %d resumed: back under 2 s after %v", followers[0], took.Round(100*time.Millisecond))

	// Both followers frozen: no majority, so the HW stops (or the quorum
	// is unknown once the leader resigns).
	must(t, c.PauseNode(followers[0]))
	must(t, c.PauseNode(followers[1]))
	frozen := time.Now()
	var (
		stuckHW   = -1.0
		stuckFrom time.Time
		verdict   string
	)
	for verdict == "" && time.Since(frozen) < 30*time.Second {
		m, err := stack.Scrape(ctx, e.URL)
		must(t, err)
		up, _ := m.Value("kafka_replication_metadata_quorum_up", nil)
		hw, known := m.Value("kafka_replication_metadata_quorum_high_watermark", nil)
		switch {
		case up == 0:
			verdict = fmt.Sprintf("metadata_quorum_up 0 %v after the freeze", time.Since(frozen).Round(100*time.Millisecond))
		case !known || hw != stuckHW:
			stuckHW, stuckFrom = hw, time.Now()
		case time.Since(stuckFrom) >= 3*refresh:
			verdict = fmt.Sprintf("metadata HW %v unchanged for %v", hw, time.Since(stuckFrom).Round(100*time.Millisecond))
		}
		time.Sleep(500 * time.Millisecond)
	}
	if verdict == "" {
		t.Fatalf("two of three voters frozen for 30 s: the exporter still showed the quorum up with a moving HW (last %v)", stuckHW)
	}
	t.Logf("two voters frozen: %s", verdict)
	must(t, c.ResumeNode(followers[0]))
	must(t, c.ResumeNode(followers[1]))
	resumed := time.Now()
	waitScrape(ctx, t, e, 30*time.Second, "both voters resumed: quorum up, HW moving", func(m stack.Metrics) string {
		return expect(m, gauge("kafka_replication_metadata_quorum_up", nil, eq(1)),
			gauge("kafka_replication_metadata_quorum_high_watermark", nil, gt(stuckHW)))
	})
	t.Logf("both voters resumed: quorum up, HW past %v after %v", stuckHW, time.Since(resumed).Round(100*time.Millisecond))

	killActiveController(ctx, t, c, e)
}

// waitScrape scrapes e every 500 ms until check finds nothing wrong, and
// returns how long that took; it fails the test after timeout.
func waitScrape(ctx context.Context, t *testing.T, e *stack.Exporter, timeout time.Duration, what string, check func(stack.Metrics) string) time.Duration {
	t.Helper()
	start := time.Now()
	waitQuorum(ctx, t, e, timeout, what, check)
	return time.Since(start)
}

// waitQuorum is waitScrape returning the scrape that passed.
func waitQuorum(ctx context.Context, t *testing.T, e *stack.Exporter, timeout time.Duration, what string, check func(stack.Metrics) string) stack.Metrics {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for {
		m, err := stack.Scrape(ctx, e.URL)
		if err == nil {
			if last = check(m); last == "" {
				return m
			}
		} else {
			last = err.Error()
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v: %s", what, timeout, last)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// killActiveController is TestMetadataQuorum's last step: a log-only sidecar
// on each of the three controllers, then the active controller killed with
// SIGKILL, checked against Kafka's DescribeQuorum and the controllers' own
// lines. e is the cluster-scope sidecar beside broker 1.
func killActiveController(ctx context.Context, t *testing.T, c *harness.Cluster, e *stack.Exporter) {
	t.Helper()
	before := waitQuorumLeader(ctx, t, c, -1)
	cs, err := stack.StartControllerExporters(ctx, c, exporterBinary(t))
	must(t, err)
	t.Cleanup(cs.Close)
	t.Logf("controller sidecars %v; quorum leader %d epoch %d", cs.URLs(), before.LeaderID, before.LeaderEpoch)
	base := map[int32]map[string]float64{}
	for _, s := range cs {
		base[s.NodeID] = stableMetadataLog(ctx, t, s)
	}

	killed := before.LeaderID
	must(t, c.KillNode(ctx, killed))
	at := time.Now()
	time.Sleep(time.Second) // four log polls: what the killed node wrote is read
	atKill, err := stack.Scrape(ctx, cs.Node(killed).URL)
	must(t, err)
	after := waitQuorumLeader(ctx, t, c, before.LeaderEpoch)
	t.Logf("Kafka's DescribeQuorum: leader %d epoch %d, %v after SIGKILL of %d", after.LeaderID, after.LeaderEpoch,
		time.Since(at).Round(100*time.Millisecond), killed)
	if after.LeaderID == killed {
		t.Fatalf("Kafka names the killed controller %d leader at epoch %d", killed, after.LeaderEpoch)
	}
	leader, epoch := after.LeaderID, int64(after.LeaderEpoch)
	var survivor int32
	for _, id := range before.Voters {
		if id != killed && id != leader {
			survivor = id
		}
	}

	// The new leader's sidecar: an election and a transition to leader.
	waitQuorum(ctx, t, cs.Node(leader), 20*time.Second, fmt.Sprintf("new leader %d: an election and a transition to leader", leader),
		func(m stack.Metrics) string {
			now := metadataLog(m)
			return expect(m, rose(now, base[leader], electionsKey(leader), 1), rose(now, base[leader], transitionsKey(leader, "leader"), 1))
		})
	t.Logf("new leader %d's sidecar: elections and transitions{state=leader} up %v after SIGKILL", leader, time.Since(at).Round(100*time.Millisecond))

	// The surviving voter's sidecar: the new epoch's leader, as a follower.
	waitQuorum(ctx, t, cs.Node(survivor), 20*time.Second, fmt.Sprintf("voter %d: an election and a transition to follower", survivor),
		func(m stack.Metrics) string {
			now := metadataLog(m)
			return expect(m, rose(now, base[survivor], electionsKey(survivor), 1), rose(now, base[survivor], transitionsKey(survivor, "follower"), 1))
		})
	t.Logf("voter %d's sidecar: elections and transitions{state=follower} up %v after SIGKILL", survivor, time.Since(at).Round(100*time.Millisecond))

	// The cluster-scope sidecar agrees with Kafka.
	waitQuorum(ctx, t, e, 20*time.Second, "cluster-scope sidecar: the new leader and epoch", func(m stack.Metrics) string {
		return expect(m,
			gauge("kafka_replication_metadata_quorum_leader_id", nil, eq(float64(leader))),
			gauge("kafka_replication_metadata_quorum_leader_epoch", nil, eq(float64(epoch))))
	})
	t.Logf("cluster-scope sidecar: leader %d epoch %d %v after SIGKILL", leader, epoch, time.Since(at).Round(100*time.Millisecond))

	// Both files of each survivor tell the election: it counts once.
	lines := map[int32][2]string{
		leader: {
			fmt.Sprintf(`Completed transition to Leader\(.*[ (,]epoch=%d,.* from `, epoch),
			fmt.Sprintf(`Becoming the active controller at epoch %d,`, epoch),
		},
		survivor: {
			fmt.Sprintf(`Completed transition to FollowerState\(.*[ (,]epoch=%d, leader=%d,.* from `, epoch, leader),
			fmt.Sprintf(`In the new epoch %d, the leader is %d\.`, epoch, leader),
		},
	}
	for id, res := range lines {
		for i, file := range []string{"server.log", "controller.log"} {
			line, err := c.WaitLogLine(ctx, id, file, regexp.MustCompile(fmt.Sprintf(`\[(RaftManager|QuorumController) id=%d\] %s`, id, res[i])))
			must(t, err)
			t.Logf("node %d %s: %.160s", id, file, line)
		}
	}
	time.Sleep(2 * time.Second) // eight log polls past the lines
	end := map[int32]map[string]float64{}
	for _, s := range cs {
		m, err := stack.Scrape(ctx, s.URL)
		must(t, err)
		end[s.NodeID] = metadataLog(m)
		if s.NodeID == killed {
			// The killed node's log stopped: no line read since, the files still followed.
			files := []string{"kafka_replication_log_file_position_bytes", "kafka_replication_log_file_last_read_timestamp_seconds"}
			if d := changed(seriesOf(m, files...), seriesOf(atKill, files...)); len(d) > 0 {
				t.Errorf("killed controller %d's sidecar read on after SIGKILL: %v", killed, d)
			}
			if v := m.Sum("kafka_replication_log_file_open", nil); v != 2 {
				t.Errorf("killed controller %d's sidecar: %v of its 2 files open", killed, v)
			}
		}
		t.Logf("node %d's sidecar since it started: %v", s.NodeID, changed(end[s.NodeID], base[s.NodeID]))
	}
	if d := changed(end[killed], base[killed]); len(d) > 0 {
		t.Errorf("killed controller %d's sidecar counted events after SIGKILL, which wrote no line: %v", killed, d)
	}
	for _, id := range []int32{leader, survivor} {
		if d := end[id][electionsKey(id)] - base[id][electionsKey(id)]; d != 1 {
			t.Errorf("node %d: %v elections for Kafka's one new epoch %d (server.log and controller.log both tell it)", id, d, epoch)
		}
	}
	if d := end[survivor][transitionsKey(survivor, "leader")] - base[survivor][transitionsKey(survivor, "leader")]; d != 0 {
		t.Errorf("voter %d, a follower of %d at epoch %d, counted %v transitions to leader", survivor, leader, epoch, d)
	}
}

// stableMetadataLog scrapes s until two scrapes a second apart show the same
// kafka_replication_metadata_log_* series, and returns them.
func stableMetadataLog(ctx context.Context, t *testing.T, s *stack.Exporter) map[string]float64 {
	t.Helper()
	var last map[string]float64
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		m, err := stack.Scrape(ctx, s.URL)
		must(t, err)
		now := metadataLog(m)
		if last != nil && maps.Equal(now, last) {
			return now
		}
		last = now
	}
	t.Fatalf("node %d's sidecar: the metadata log counters kept moving for 15 s on a healthy quorum (last %v)", s.NodeID, last)
	return nil
}

// metadataLog is every kafka_replication_metadata_log_* series of m (keys as seriesOf's).
func metadataLog(m stack.Metrics) map[string]float64 {
	out := map[string]float64{}
	for name := range m {
		if strings.HasPrefix(name, "kafka_replication_metadata_log_") {
			maps.Copy(out, seriesOf(m, name))
		}
	}
	return out
}

// seriesOf is every series of the named families, keyed name{label=value,…}.
func seriesOf(m stack.Metrics, names ...string) map[string]float64 {
	out := map[string]float64{}
	for _, name := range names {
		mf := m[name]
		if mf == nil {
			continue
		}
		for _, s := range mf.GetMetric() {
			var labels []string
			for _, lp := range s.GetLabel() {
				labels = append(labels, lp.GetName()+"="+lp.GetValue())
			}
			slices.Sort(labels)
			v := s.GetCounter().GetValue() + s.GetGauge().GetValue() + s.GetUntyped().GetValue()
			out[name+"{"+strings.Join(labels, ",")+"}"] = v
		}
	}
	return out
}

func electionsKey(node int32) string {
	return fmt.Sprintf("kafka_replication_metadata_log_elections_total{node=%d}", node)
}

func transitionsKey(node int32, state string) string {
	return fmt.Sprintf("kafka_replication_metadata_log_transitions_total{node=%d,state=%s}", node, state)
}

// rose checks that series key rose by at least n from before to now (a
// series not there yet is 0: a counter starts at the node's first line).
func rose(now, before map[string]float64, key string, n float64) check {
	return func(stack.Metrics) string {
		if d := now[key] - before[key]; d < n {
			return fmt.Sprintf("%s up %v, want %v", key, d, n)
		}
		return ""
	}
}

// changed lists the series of now that differ from before, with the change.
func changed(now, before map[string]float64) []string {
	var out []string
	for k, v := range now {
		if v != before[k] {
			out = append(out, fmt.Sprintf("%s %+v", k, v-before[k]))
		}
	}
	for k, v := range before {
		if _, ok := now[k]; !ok {
			out = append(out, fmt.Sprintf("%s gone (was %v)", k, v))
		}
	}
	slices.Sort(out)
	return out
}
