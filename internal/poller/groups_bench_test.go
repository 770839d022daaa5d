package poller

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/fakekafka"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// The consumer-group read at 100k partitions: 20 groups with an offset on
// 10k partitions each (group g on the 10k from g×5k on), as
// bench/groups-cost.sh's fake cluster holds.
const (
	benchGroups          = 20
	benchGroupPartitions = 10_000
)

// commitBenchGroups commits the groups' offsets on c, as an admin tool does.
func commitBenchGroups(b *testing.B, c *kfake.Cluster) {
	b.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.MaxVersions(kversion.V3_9_0()))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	total := benchTopics * benchPartsPerTopic
	for g := range benchGroups {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Group, req.Generation = fmt.Sprintf("group-%02d", g), -1
		for i := range benchGroupPartitions {
			at := (g*total/benchGroups + i) % total
			topic := fmt.Sprintf("topic-%03d", at/benchPartsPerTopic)
			if n := len(req.Topics); n == 0 || req.Topics[n-1].Topic != topic {
				rt := kmsg.NewOffsetCommitRequestTopic()
				rt.Topic = topic
				req.Topics = append(req.Topics, rt)
			}
			p := kmsg.NewOffsetCommitRequestTopicPartition()
			p.Partition = int32(at % benchPartsPerTopic)
			req.Topics[len(req.Topics)-1].Partitions = append(req.Topics[len(req.Topics)-1].Partitions, p)
		}
		if _, err := req.RequestWith(context.Background(), cl); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGroupsRefresh100k(b *testing.B) {
	c := benchCluster(b)
	commitBenchGroups(b, c)
	a, _ := newTestPoller(b, c.ListenAddrs(), -1, ScopeCluster, Options{}, func(cfg *Config) {
		withGroups(".*", "")(cfg)
		cfg.RequestTimeout = 30 * time.Second // as bench/groups-cost.sh runs it
	})
	a.refresh(context.Background())
	n := 0
	for _, g := range a.Snapshot().Groups {
		n += len(g.Partitions)
	}
	if n != benchGroups*benchGroupPartitions {
		b.Fatalf("want %d group partitions, got %d", benchGroups*benchGroupPartitions, n)
	}
	benchRefreshes(b, a)
	reportMemory(b)
}

// BenchmarkHWHistory100k fills the HW history of 100k partitions whose HW
// moves at every refresh, 2 × hwSamples refreshes long (half of them
// thinning), and reports the heap it holds, its worst case, and the time a
// full history's refresh takes.
func BenchmarkHWHistory100k(b *testing.B) {
	keys := cannedKeys()
	for b.Loop() {
		before := heapInUse()
		h := newHWHistory()
		now := time.Unix(0, 0)
		var full time.Duration
		for gen := range uint64(2 * hwSamples) {
			start := time.Now()
			for _, k := range keys {
				h.observe(k, [16]byte{1}, int64(gen)*10, now, gen)
			}
			if gen >= hwSamples {
				full += time.Since(start)
			}
			now = now.Add(10 * time.Second)
		}
		b.ReportMetric(float64(heapInUse()-before)/(1<<20), "history-MB")
		b.ReportMetric(full.Seconds()*1e3/hwSamples, "ms/full-refresh")
		runtime.KeepAlive(h)
	}
}

// cannedKeys are the partitions of cannedMetadata.
func cannedKeys() []logparse.PartitionKey {
	var keys []logparse.PartitionKey
	for i := range benchTopics {
		for p := range int32(benchPartsPerTopic) {
			keys = append(keys, logparse.PartitionKey{Topic: fmt.Sprintf("topic-%03d", i), Partition: p})
		}
	}
	return keys
}

func heapInUse() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse)
}

// BenchmarkShareGroupsRefresh100k is BenchmarkGroupsRefresh100k with share
// groups: the same 20 groups' positions, as share-partition start offsets.
func BenchmarkShareGroupsRefresh100k(b *testing.B) {
	c := benchCluster(b)
	total := benchTopics * benchPartsPerTopic
	for g := range benchGroups {
		offsets := make(map[logparse.PartitionKey]int64, benchGroupPartitions)
		for i := range benchGroupPartitions {
			at := (g*total/benchGroups + i) % total
			offsets[logparse.PartitionKey{Topic: fmt.Sprintf("topic-%03d", at/benchPartsPerTopic), Partition: int32(at % benchPartsPerTopic)}] = 0
		}
		fakekafka.SetShareOffsets(b, c.ListenAddrs(), fmt.Sprintf("share-%02d", g), offsets)
	}
	a, _ := newTestPoller(b, c.ListenAddrs(), -1, ScopeCluster, Options{}, func(cfg *Config) {
		withShareGroups(".*", "")(cfg)
		cfg.RequestTimeout = 30 * time.Second // as BenchmarkGroupsRefresh100k
	})
	a.refresh(context.Background())
	n := 0
	for _, g := range a.Snapshot().ShareGroups {
		n += len(g.Partitions)
	}
	if n != benchGroups*benchGroupPartitions {
		b.Fatalf("want %d share-group partitions, got %d", benchGroups*benchGroupPartitions, n)
	}
	benchRefreshes(b, a)
	reportMemory(b)
}
