package poller

import (
	"runtime"
	"testing"
	"time"
)

// BenchmarkAdminProcessLSO100k is BenchmarkAdminProcess100k with the HWs
// moving every refresh (so that a HW history fills up, its worst case): the
// LSO off; the LSO read, one partition in a hundred held below its HW by an
// open transaction; the same with consumer groups on (no group is read),
// whose HW history the LSO then uses too. One at a time, for each one's
// peak RSS:
//
//	go test -run=^$ -bench='ProcessLSO100k/lso$' -benchtime=80x -benchmem ./internal/poller/
func BenchmarkAdminProcessLSO100k(b *testing.B) {
	for _, mode := range []string{"off", "lso", "lso+groups"} {
		on := mode != "off"
		b.Run(mode, func(b *testing.B) {
			a, clock := newTestPoller(b, []string{"127.0.0.1:1"}, -1, ScopeCluster, Options{}, func(c *Config) {
				c.Groups.LastStableOffset = on
				c.Groups.Enabled = mode == "lso+groups"
			})
			md := cannedMetadata(3)
			a.brokers = brokerAddrs(md)
			var refresh int64
			cpu := cpuTime()
			b.ResetTimer()
			for b.Loop() {
				refresh++
				clock.Advance(15 * time.Second)
				p := plan(md, a.brokers, a.brokerID, true, nil)
				got := cannedFetch(&p)
				for i := range got.offsets.hwAt {
					got.offsets.hwAt[i].offset += 100 * refresh
				}
				if on {
					got.lso = make([]offsetAnswer, len(p.parts))
					for i, hw := range got.offsets.hwAt {
						got.lso[i] = hw
						if i%100 == 0 {
							got.lso[i].offset = 0 // a transaction open since the start
						}
					}
				}
				a.snap.Store(a.build.build(&p, got, a.now(), a.now()))
			}
			b.StopTimer()
			b.ReportMetric((cpuTime()-cpu).Seconds()/float64(b.N), "cpu-s/op")
			if n := exportedPartitions(a); n != benchTopics*benchPartsPerTopic {
				b.Fatalf("want %d partitions exported, got %d", benchTopics*benchPartsPerTopic, n)
			}
			if on && len(a.Snapshot().StableOffsets) != benchTopics*benchPartsPerTopic {
				b.Fatalf("want every LSO, got %d", len(a.Snapshot().StableOffsets))
			}
			reportMemory(b)
			runtime.KeepAlive(a) // its history and tracker count in the heap
		})
	}
}
