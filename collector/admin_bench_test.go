package collector

import (
	"fmt"
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/collector/admin"
)

// The rendering of a 100k-partition snapshot: 100 topics × 1000 partitions,
// RF 3, every partition exported (cluster scope), as the poller's own
// benchmarks in collector/admin build it.
//
//	go test -run=^$ -bench=Admin -benchmem ./collector/
const (
	benchTopics        = 100
	benchPartsPerTopic = 1000
)

// snapshot100k is what a refresh of that cluster publishes.
func snapshot100k() *admin.Snapshot {
	const brokers = 3
	s := &admin.Snapshot{Up: true, LastSuccess: time.Now(), Duration: time.Second}
	for i := range benchTopics {
		tp := admin.Topic{Name: fmt.Sprintf("topic-%03d", i), MinISRConfig: 2}
		for p := range int32(benchPartsPerTopic) {
			leader := p % brokers
			hw := int64(p) * 10
			tp.Partitions = append(tp.Partitions, admin.Partition{
				Topic: tp.Name, Partition: p, Replicas: 3, ISR: 3, MinISR: 2, Leader: leader, LeaderEpoch: 3,
				HW: hw, HWKnown: true, LEO: hw + 3, LEOKnown: true, LastAdvance: s.LastSuccess,
				Lags: []admin.ReplicaLag{{Replica: (leader + 1) % brokers, Lag: 1}, {Replica: (leader + 2) % brokers, Lag: 2}},
			})
		}
		s.Topics = append(s.Topics, tp)
	}
	return s
}

func BenchmarkAdminCollect100k(b *testing.B) {
	a := NewAdminCollector(newSnapshotSource(snapshot100k()), true)
	cpu := cpuTime()
	b.ResetTimer()
	var n int
	for b.Loop() {
		ch := make(chan prometheus.Metric, 4096)
		done := make(chan int)
		go func() {
			k := 0
			for range ch {
				k++
			}
			done <- k
		}()
		a.Collect(ch)
		close(ch)
		n = <-done
	}
	b.StopTimer()
	b.ReportMetric((cpuTime()-cpu).Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(n), "series")
}

// BenchmarkAdminGather100k is a whole scrape minus HTTP: the registry's
// Gather (consistency checks, sorting) on top of Collect.
func BenchmarkAdminGather100k(b *testing.B) {
	a := NewAdminCollector(newSnapshotSource(snapshot100k()), true)
	reg := prometheus.NewRegistry()
	reg.MustRegister(a)
	cpu := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		if _, err := reg.Gather(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric((cpuTime()-cpu).Seconds()/float64(b.N), "cpu-s/op")
}

// BenchmarkAdminScrape100k is a whole scrape of 100k partitions (~1.6M
// series) minus HTTP: registry is the old path (Gather, then expfmt's text
// encoder), direct the one serve uses (the small families through the
// registry, the per-partition ones by WriteText). The output goes to
// io.Discard: gzip and the network come on top of either.
func BenchmarkAdminScrape100k(b *testing.B) {
	a := NewAdminCollector(newSnapshotSource(snapshot100k()), true)
	run := func(b *testing.B, scrape func() error) {
		b.ReportAllocs()
		cpu := cpuTime()
		for b.Loop() {
			if err := scrape(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric((cpuTime()-cpu).Seconds()/float64(b.N), "cpu-s/op")
	}
	b.Run("registry", func(b *testing.B) {
		reg := prometheus.NewRegistry()
		reg.MustRegister(a)
		run(b, func() error {
			mfs, err := reg.Gather()
			if err != nil {
				return err
			}
			enc := expfmt.NewEncoder(io.Discard, expfmt.NewFormat(expfmt.TypeTextPlain))
			for _, mf := range mfs {
				if err := enc.Encode(mf); err != nil {
					return err
				}
			}
			return nil
		})
	})
	b.Run("direct", func(b *testing.B) {
		reg := prometheus.NewRegistry()
		reg.MustRegister(a.SmallFamilies())
		run(b, func() error {
			mfs, err := reg.Gather()
			if err != nil {
				return err
			}
			return WriteText(io.Discard, mfs, nil, a)
		})
	})
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
