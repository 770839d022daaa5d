package e2e

import (
	"context"
	"fmt"
	"slices"
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
