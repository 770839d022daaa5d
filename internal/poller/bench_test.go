package poller

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kfake"
)

// The 100k-partition benchmarks: 100 topics × 1000 partitions, RF 3, cluster
// scope (every partition exported, the worst case for one poller).
//
//	go test -run=^$ -bench=Admin -benchmem ./internal/poller/
//
// BenchmarkAdminRefresh100k polls a 3-broker kfake in the same process, so
// it includes kfake serving the requests; BenchmarkAdminProcess100k times
// only the poller's own work (planning, HW tracking, building the snapshot)
// on canned answers.
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
	a, _ := newTestPoller(b, c.ListenAddrs(), -1, ScopeCluster, Options{}, nil)
	a.refresh(context.Background()) // dial, ApiVersions
	if n := exportedPartitions(a); n != benchTopics*benchPartsPerTopic {
		b.Fatalf("want %d partitions exported, got %d", benchTopics*benchPartsPerTopic, n)
	}
	benchRefreshes(b, a)
	if !a.Snapshot().Up {
		b.Fatal("want up after refresh")
	}
	reportMemory(b)
}

func BenchmarkAdminProcess100k(b *testing.B) {
	a, _ := newTestPoller(b, []string{"127.0.0.1:1"}, -1, ScopeCluster, Options{}, nil)
	md := cannedMetadata(3)
	a.brokers = brokerAddrs(md)
	cpu := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		p := plan(md, a.brokers, a.brokerID, true, nil)
		got := cannedFetch(&p)
		a.snap.Store(a.build.build(&p, got, time.Now(), a.now()))
	}
	b.StopTimer()
	b.ReportMetric((cpuTime()-cpu).Seconds()/float64(b.N), "cpu-s/op")
	if n := exportedPartitions(a); n != benchTopics*benchPartsPerTopic {
		b.Fatalf("want %d partitions exported, got %d", benchTopics*benchPartsPerTopic, n)
	}
	reportMemory(b)
}

// cannedMetadata is a 100k-partition Metadata answer.
func cannedMetadata(brokers int32) *sarama.MetadataResponse {
	md := &sarama.MetadataResponse{Version: 11}
	for id := range brokers {
		md.AddBroker(fmt.Sprintf("broker-%d:9092", id), id)
	}
	for i := range benchTopics {
		tm := &sarama.TopicMetadata{Version: 11, Name: fmt.Sprintf("topic-%03d", i), Uuid: sarama.Uuid{byte(i + 1)}}
		for p := range int32(benchPartsPerTopic) {
			leader := p % brokers
			replicas := []int32{leader, (leader + 1) % brokers, (leader + 2) % brokers}
			tm.Partitions = append(tm.Partitions, &sarama.PartitionMetadata{
				Version: 11, ID: p, Leader: leader, LeaderEpoch: 3, Replicas: replicas, Isr: replicas,
			})
		}
		md.Topics = append(md.Topics, tm)
	}
	return md
}

// cannedFetch answers every request of the plan as the brokers of
// cannedMetadata would: what fetch returns after a good refresh.
func cannedFetch(p *refreshPlan) *fetched {
	got := &fetched{
		offsets: offsets{hwAt: make([]offsetAnswer, len(p.parts)), leoAt: make([]offsetAnswer, p.leoSlots)},
		minISR:  minISRReadings{ok: true, values: make(map[string]int, len(p.configTopics))},
	}
	for _, t := range p.configTopics {
		got.minISR.values[t] = 2
	}
	for i := range p.parts {
		pp := &p.parts[i]
		base := int64(pp.key.Partition) * 10
		got.offsets.hwAt[i] = offsetAnswer{offset: base, leaderEpoch: 3, ok: true}
		for j, r := range pp.replicas {
			if slot := pp.leoSlot(r); slot >= 0 {
				got.offsets.leoAt[slot] = offsetAnswer{offset: base + int64(3-j), ok: true}
			}
		}
	}
	return got
}

func brokerAddrs(md *sarama.MetadataResponse) map[int32]string {
	m := make(map[int32]string)
	for _, b := range md.Brokers {
		m[b.ID()] = b.Addr()
	}
	return m
}

func exportedPartitions(a *Poller) int {
	n := 0
	for _, t := range a.Snapshot().Topics {
		n += len(t.Partitions)
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

// benchRefreshes times a's refreshes: the benchmark's time per refresh, and
// the process's CPU time per refresh (the fake cluster's included).
func benchRefreshes(b *testing.B, a *Poller) {
	b.Helper()
	cpu := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		a.refresh(context.Background())
	}
	b.StopTimer()
	b.ReportMetric((cpuTime()-cpu).Seconds()/float64(b.N), "cpu-s/op")
}
