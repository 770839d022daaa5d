package metrics

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/exposition"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/poller"
)

// withGroups100k adds to s (snapshot100k) 20 consumer groups with an
// offset on 10k partitions each, as bench/groups-cost.sh's fake cluster
// holds: group g on the 10k partitions from g×5k on, so every partition is
// read by two groups.
func withGroups100k(s *poller.Snapshot) *poller.Snapshot {
	const groups, perGroup = 20, 10_000
	var parts []*poller.Partition
	for t := range s.Topics {
		for i := range s.Topics[t].Partitions {
			parts = append(parts, &s.Topics[t].Partitions[i])
		}
	}
	for g := range groups {
		cg := poller.ConsumerGroup{Name: fmt.Sprintf("group-%02d", g), State: "Empty"}
		start := g * len(parts) / groups
		for i := range perGroup {
			p := parts[(start+i)%len(parts)]
			cg.Partitions = append(cg.Partitions, poller.GroupPartition{
				Topic: p.Topic, Partition: p.Partition, Committed: p.HW - int64(i%2), LagToHW: int64(i % 2), HWKnown: true,
				AboveHW: p.LEO - p.HW, AboveHWKnown: true, LagSeconds: float64(i % 2), LagSecondsKnown: true,
			})
		}
		// Sorted by topic, then partition, as the poller hands them over.
		slices.SortFunc(cg.Partitions, func(x, y poller.GroupPartition) int {
			return cmp.Or(strings.Compare(x.Topic, y.Topic), cmp.Compare(x.Partition, y.Partition))
		})
		s.Groups = append(s.Groups, cg)
	}
	return s
}

// BenchmarkGroupScrape100k is a scrape of 100k healthy partitions and 20
// groups × 10k partitions: the whole of it, with every partition's series
// and with the unhealthy ones' only, and one selecting a family without
// partitions (name[]=kafka_replication_up), which must not pay for the
// group rows.
func BenchmarkGroupScrape100k(b *testing.B) {
	src := newSnapshotSource(withGroups100k(snapshot100k()))
	for _, bc := range []struct {
		name   string
		series PartitionSeries
		keep   func(string) bool
	}{
		{"full", AllPartitionSeries, nil},
		{"unhealthy", UnhealthyPartitionSeries, nil},
		{"up-only", AllPartitionSeries, func(name string) bool { return name == "kafka_replication_up" }},
	} {
		tables := exposition.TableSource(NewAdminMetrics(src, bc.series).Tables)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				if err := exposition.WriteText(io.Discard, nil, bc.keep, tables); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric((cpuTime()-cpu).Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}
