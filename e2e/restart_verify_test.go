package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	dto "github.com/prometheus/client_model/go"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/harness"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/stack"
)

// TestRestartsAgreeWithVerify: node 1's sidecar follows its
// server.log and state-change.log with a position file and is restarted every
// few seconds while leadership moves and ISRs shrink and expand (nodes 2 and 3
// stopped and started in turn under acks=all traffic). Each restart cuts the
// story at a random point: node 1 is frozen (SIGSTOP) so its files stop
// growing, the sidecar settles on them, its counters are read, it is stopped
// (SIGTERM) and node 1 thawed. Summed over the runs, every event type equals
// what verify counts in the same files, and no HW violation, epoch regression
// or truncation below the HW is counted where verify finds none: before the one
// ordered stream, a restart could raise the critical alerts on a healthy broker.
//
// How: a topic of 3 partitions, RF 3, spread over the brokers, Partition DEBUG; the sidecar reads server.log and
// state-change.log with --log.position-file and is restarted 8 times; verify runs with node 1 still frozen after
// the last run. Measured: 857 events, 64 s.
func TestRestartsAgreeWithVerify(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Kafka cluster; skipped with -short")
	}
	start := time.Now()
	defer func() { t.Logf("TestRestartsAgreeWithVerify wall time %v", time.Since(start).Round(time.Second)) }()
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	c := harness.StartT(t, harness.Options{
		Version:   kafkaCurrent,
		LogLevels: map[string]string{"kafka.cluster.Partition": "DEBUG"},
	})
	const topic = "restart-verify"
	must(t, c.CreateTopic(ctx, harness.Topic{Name: topic, Assignment: [][]int32{{1, 2, 3}, {2, 3, 1}, {3, 1, 2}}}))
	produceOK(ctx, t, c, topic, 20, sarama.WaitForAll)

	node := c.Node(1)
	files := []string{filepath.Join(node.LogDir, "server.log"), filepath.Join(node.LogDir, "state-change.log")}
	args := []string{
		"--log.file=" + files[0], "--log.file=" + files[1], "--log.from-beginning",
		"--log.position-file=" + filepath.Join(c.Dir(), "restart-positions"),
	}

	churnCtx, stopChurn := context.WithCancel(ctx)
	defer stopChurn()
	var churn sync.WaitGroup
	churn.Add(1)
	go func() {
		defer churn.Done()
		for i := 0; churnCtx.Err() == nil; i++ {
			id := int32(2 + i%2)
			// Churn, not a check: a produce may fail while a node is down.
			_, _ = c.Produce(churnCtx, topic, int32(i%3), 50, sarama.WaitForAll)
			if err := c.StopNode(churnCtx, id); err != nil {
				return
			}
			_, _ = c.Produce(churnCtx, topic, int32(i%3), 50, sarama.WaitForAll)
			sleepCtx(churnCtx, 2*time.Second)
			if err := c.StartNode(ctx, id); err != nil { // ctx: a stopped node is always restarted
				t.Errorf("restarting node %d: %v", id, err)
				return
			}
			sleepCtx(churnCtx, 3*time.Second)
		}
	}()

	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 18))
	events := map[string]float64{}
	var violations float64
	const runs = 8
	for run := range runs {
		e, err := stack.StartExporter(ctx, node, exporterBinary(t), args...)
		must(t, err)
		sleepCtx(ctx, time.Duration(2000+rng.IntN(3000))*time.Millisecond)
		if run == runs-1 {
			stopChurn()
			churn.Wait()
		}
		must(t, c.PauseNode(1)) // node 1's files stop growing: the story is cut here
		m := settleOnFiles(ctx, t, e, files)
		for _, mf := range m["kafka_replication_log_events_total"].GetMetric() {
			events[typeLabel(mf)] += mf.GetCounter().GetValue()
		}
		for _, name := range []string{
			"kafka_replication_partition_high_watermark_violations_total",
			"kafka_replication_partition_epoch_regressions_total", "kafka_replication_partition_truncations_below_high_watermark_total",
		} {
			violations += m.Sum(name, nil)
		}
		e.Close()
		if run < runs-1 {
			must(t, c.ResumeNode(1))
		}
	}

	// Node 1 stays frozen: verify reads the files as the last run left them.
	r := verify(t, files...)
	must(t, c.ResumeNode(1))
	for typ, n := range r.Events {
		if float64(n) != events[typ] {
			t.Errorf("%s: the sidecar applied %v over %d runs, verify counts %d in the files", typ, events[typ], runs, n)
		}
	}
	for _, name := range []string{"hw_monotonic", "partition_epoch_monotonic", "no_truncation_below_hw"} {
		if inv := r.invariant(name); inv.Violations != 0 {
			t.Logf("verify finds %d %s violations", inv.Violations, name)
		}
	}
	if violations != 0 && len(r.failed()) == 0 {
		t.Errorf("the sidecar counted %v HW violations, epoch regressions or truncations below the HW over %d runs; verify finds none", violations, runs)
	}
	t.Logf("Kafka %s: %d sidecar runs over %d events (%v leader starts, %v follower starts, %v ISR updates)", c.Version(), runs,
		sumValues(r.Events), events["leader_start"], events["follower_start"], events["isr_update"])
}

// settleOnFiles waits until the sidecar has read the files (frozen by the
// caller) to their end and applied the last record (held for a poll interval
// of quiet), and returns its metrics.
func settleOnFiles(ctx context.Context, t *testing.T, e *stack.Exporter, files []string) stack.Metrics {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		m, err := stack.Scrape(ctx, e.URL)
		atEnd := err == nil
		last = fmt.Sprint(err)
		for _, f := range files {
			fi, serr := os.Stat(f)
			must(t, serr)
			if pos, _ := m.Value("kafka_replication_log_file_position_bytes", map[string]string{"file": f}); int64(pos) != fi.Size() {
				atEnd = false
				last = fmt.Sprintf("%s read to %v of %d bytes", f, pos, fi.Size())
			}
		}
		if atEnd {
			sleepCtx(ctx, time.Second) // the quiet flush of the last record
			if m, err = stack.Scrape(ctx, e.URL); err == nil {
				return m
			}
		}
		sleepCtx(ctx, 200*time.Millisecond)
	}
	t.Fatalf("the sidecar never read the frozen files to their end: %s", last)
	return nil
}

func typeLabel(m *dto.Metric) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == "type" {
			return l.GetValue()
		}
	}
	return ""
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

func sumValues(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}
