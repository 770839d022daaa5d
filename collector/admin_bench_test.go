package collector

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/twmb/franz-go/pkg/kfake"
)

// The 100k-partition benchmarks: 100 topics × 1000 partitions, RF 3, on a
// 3-broker kfake in the same process, cluster scope (every partition
// exported, the worst case for one poller).
//
//	go test -run=^$ -bench=Admin -benchmem ./collector/
//
// BenchmarkAdminRefresh100k includes kfake serving the requests on the same
// cores; BenchmarkAdminProcess100k times only the exporter's own work
// (planning, HW tracking, building the snapshot) on canned answers.
const (
	benchTopics        = 100
	benchPartsPerTopic = 1000
)

func benchCluster(b *testing.B) *kfake.Cluster {
	b.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(3))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	for i := range benchTopics {
		if err := c.CreateTopic(fmt.Sprintf("topic-%03d", i), benchPartsPerTopic, map[string]string{"min.insync.replicas": "2"}); err != nil {
			b.Fatal(err)
		}
	}
	return c
}

func BenchmarkAdminRefresh100k(b *testing.B) {
	c := benchCluster(b)
	a, _ := newTestAdmin(b, c.ListenAddrs(), -1, ScopeCluster, nil, nil)
	a.refresh() // dial, ApiVersions
	if n := exportedPartitions(a); n != benchTopics*benchPartsPerTopic {
		b.Fatalf("want %d partitions exported, got %d", benchTopics*benchPartsPerTopic, n)
	}
	cpu := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		a.refresh()
	}
	b.StopTimer()
	b.ReportMetric((cpuTime()-cpu).Seconds()/float64(b.N), "cpu-s/op")
	if !a.snap.Load().up {
		b.Fatal("want up after refresh")
	}
	reportMemory(b)
}

func BenchmarkAdminCollect100k(b *testing.B) {
	a := cannedSnapshotAdmin(b)
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
	a := cannedSnapshotAdmin(b)
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
	a := cannedSnapshotAdmin(b)
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

func BenchmarkAdminProcess100k(b *testing.B) {
	a, md, got := cannedAdmin(b)
	cpu := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		a.gen++
		a.snap.Store(a.build(a.plan(md), got, time.Now()))
		a.tracker.forget(a.gen)
	}
	b.StopTimer()
	b.ReportMetric((cpuTime()-cpu).Seconds()/float64(b.N), "cpu-s/op")
	if n := exportedPartitions(a); n != benchTopics*benchPartsPerTopic {
		b.Fatalf("want %d partitions exported, got %d", benchTopics*benchPartsPerTopic, n)
	}
	reportMemory(b)
}

// cannedAdmin is a cluster-scope poller that knows the brokers and min ISR
// of cannedAnswers(3), which it also returns, without having refreshed.
func cannedAdmin(b *testing.B) (*Admin, *sarama.MetadataResponse, fetched) {
	a, _ := newTestAdmin(b, []string{"127.0.0.1:1"}, -1, ScopeCluster, nil, nil)
	md, got := cannedAnswers(3)
	a.brokers = brokerAddrs(md)
	a.minISR = got.minISR
	return a, md, got
}

// cannedSnapshotAdmin is cannedAdmin with the snapshot of those answers in
// place, as after a refresh: what a scrape reads.
func cannedSnapshotAdmin(b *testing.B) *Admin {
	a, md, got := cannedAdmin(b)
	a.snap.Store(a.build(a.plan(md), got, time.Now()))
	return a
}

// cannedAnswers is a 100k-partition Metadata answer and matching offsets,
// as a refresh would have received them.
func cannedAnswers(brokers int32) (*sarama.MetadataResponse, fetched) {
	md := &sarama.MetadataResponse{Version: 11}
	for id := range brokers {
		md.AddBroker(fmt.Sprintf("broker-%d:9092", id), id)
	}
	got := fetched{
		hw:     make(map[partitionKey]offsetAnswer),
		leo:    make(map[int32]map[partitionKey]offsetAnswer),
		minISR: make(map[string]int),
	}
	for id := range brokers {
		got.leo[id] = make(map[partitionKey]offsetAnswer)
	}
	for i := range benchTopics {
		name := fmt.Sprintf("topic-%03d", i)
		got.minISR[name] = 2
		tm := &sarama.TopicMetadata{Version: 11, Name: name, Uuid: sarama.Uuid{byte(i + 1)}}
		for p := range int32(benchPartsPerTopic) {
			leader := p % brokers
			replicas := []int32{leader, (leader + 1) % brokers, (leader + 2) % brokers}
			tm.Partitions = append(tm.Partitions, &sarama.PartitionMetadata{
				Version: 11, ID: p, Leader: leader, LeaderEpoch: 3, Replicas: replicas, Isr: replicas,
			})
			k := partitionKey{name, p}
			got.hw[k] = offsetAnswer{offset: int64(p) * 10, leaderEpoch: 3}
			for j, r := range replicas {
				got.leo[r][k] = offsetAnswer{offset: int64(p)*10 + int64(3-j)}
			}
		}
		md.Topics = append(md.Topics, tm)
	}
	return md, got
}

func brokerAddrs(md *sarama.MetadataResponse) map[int32]string {
	m := make(map[int32]string)
	for _, b := range md.Brokers {
		m[b.ID()] = b.Addr()
	}
	return m
}

func exportedPartitions(a *Admin) int {
	n := 0
	for _, t := range a.snap.Load().topics {
		n += len(t.partitions)
	}
	return n
}

// reportMemory reports the heap in use after a GC and the process's peak
// RSS (VmHWM), which includes kfake when it runs in-process.
func reportMemory(b *testing.B) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MB")
	if hwm := peakRSS(); hwm > 0 {
		b.ReportMetric(hwm/(1<<20), "peak-RSS-MB")
	}
}

// cpuTime is the process's user+system CPU time. The machine is shared, so
// wall time per op overstates cost; CPU per op does not (but includes every
// goroutine in the process, kfake's too).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func peakRSS() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			if err != nil {
				return 0
			}
			return kb * 1024
		}
	}
	return 0
}
