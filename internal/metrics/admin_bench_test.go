package metrics

import (
	"fmt"
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/exposition"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/poller"
)

// The rendering of a 100k-partition snapshot: 100 topics × 1000 partitions,
// RF 3, every partition exported (cluster scope), as the poller's own
// benchmarks in internal/poller build it.
//
//	go test -run=^$ -bench=Admin -benchmem ./internal/metrics/
const (
	benchTopics        = 100
	benchPartsPerTopic = 1000
)

// snapshot100k is what a refresh of that cluster publishes.
func snapshot100k() *poller.Snapshot {
	const brokers = 3
	s := &poller.Snapshot{Up: true, LastSuccess: time.Now(), Duration: time.Second}
	for i := range benchTopics {
		tp := poller.Topic{Name: fmt.Sprintf("topic-%03d", i), MinISRConfig: 2}
		for p := range int32(benchPartsPerTopic) {
			leader := p % brokers
			hw := int64(p) * 10
			tp.Partitions = append(tp.Partitions, poller.Partition{
				Topic: tp.Name, Partition: p, Replicas: 3, ISR: 3, MinISR: 2, Leader: leader, LeaderEpoch: 3,
				HW: hw, HWKnown: true, LEO: hw + 3, LEOKnown: true, LastAdvance: s.LastSuccess,
				Lags: []poller.ReplicaLag{{Replica: (leader + 1) % brokers, Lag: 1}, {Replica: (leader + 2) % brokers, Lag: 2}},
			})
		}
		s.Topics = append(s.Topics, tp)
	}
	return s
}

// BenchmarkAdminScrape100k is a whole scrape of 100k partitions (~1.6M
// series) minus HTTP, per partition (the default) and rolled up per topic,
// and per partition through client_golang's registry (the baseline,
// registry_baseline_test.go). The output goes to io.Discard: gzip and the
// network come on top.
func BenchmarkAdminScrape100k(b *testing.B) {
	src := newSnapshotSource(snapshot100k())
	for _, bc := range []struct {
		name   string
		labels bool
		write  func(io.Writer, exposition.TableSource) error
	}{
		{"partitions", true, writeText},
		{"rollup", false, writeText},
		// A refresh between every two scrapes: the rollup folded each time.
		{"rollup-refreshed", false, func(w io.Writer, tables exposition.TableSource) error {
			s := *src.Snapshot()
			src.set(&s)
			return exposition.WriteText(w, nil, nil, tables)
		}},
		{"registry", true, func(w io.Writer, src exposition.TableSource) error { return registryText(w, src) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			tables := exposition.TableSource(NewAdminMetrics(src, seriesFor(bc.labels)).Tables)
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				if err := bc.write(io.Discard, tables); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric((cpuTime()-cpu).Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}

func writeText(w io.Writer, src exposition.TableSource) error {
	return exposition.WriteText(w, nil, nil, src)
}

// cpuTime is the process's user+system CPU time. The machine is shared, so
// wall time per op overstates cost; CPU per op does not.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
