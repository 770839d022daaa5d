package metrics

import (
	"strings"
	"testing"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/exposition"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/poller"
)

// The LSO families: per partition, the LSO always, the lag where the HW was
// answered too and the stall verdict only where it is 1; without partition
// labels, the count of stalled LSOs per topic only.
func TestStableOffsetOutput(t *testing.T) {
	s := adminSnapshot()
	s.Sent[poller.RequestListOffsetsLSO] = true
	s.StableOffsets = []poller.StableOffset{
		{Topic: "audit", Partition: 0, LSO: 9, HWKnown: true},
		{Topic: "orders", Partition: 2, LSO: 40, HWKnown: true, LagSeconds: 420.5, Stalled: true},
		{Topic: "orders", Partition: 10, LSO: 7}, // the HW unanswered
		{Topic: "orders", Partition: 11, LSO: 3, HWKnown: true, LagSeconds: 361, Stalled: true},
	}
	for _, labels := range []bool{true, false} {
		text := adminText(t, s, labels)
		samples := checkExposition(t, text)
		want := map[string]int{lsoFamily.Name: 4, lsoLagSecondsFamily.Name: 3, lsoStalledFamily.Name: 2}
		lines := []string{
			`kafka_replication_partition_last_stable_offset{partition="2",topic="orders"} 40`,
			`kafka_replication_partition_last_stable_offset{partition="10",topic="orders"} 7`,
			`kafka_replication_partition_last_stable_offset_lag_seconds{partition="2",topic="orders"} 420.5`,
			`kafka_replication_partition_last_stable_offset_lag_seconds{partition="0",topic="audit"} 0`,
			`kafka_replication_partition_last_stable_offset_stalled{partition="2",topic="orders"} 1`,
			`kafka_replication_admin_request_errors_total{request="list_offsets_lso"} 0`,
		}
		if !labels {
			want = map[string]int{lsoFamily.Name: 0, lsoLagSecondsFamily.Name: 0, lsoStalledFamily.Name: 2}
			lines = []string{
				`kafka_replication_partition_last_stable_offset_stalled{topic="audit"} 0`,
				`kafka_replication_partition_last_stable_offset_stalled{topic="orders"} 2`,
			}
		}
		for name, n := range want {
			if samples[name] != n {
				t.Errorf("partition labels %v: %s: want %d series, got %d", labels, name, n, samples[name])
			}
		}
		for _, line := range lines {
			if !strings.Contains(text, line+"\n") {
				t.Errorf("partition labels %v: want %s", labels, line)
			}
		}
	}
	// Off: no LSO family, in either mode.
	s.StableOffsets = nil
	for _, labels := range []bool{true, false} {
		if text := adminText(t, s, labels); strings.Contains(text, "last_stable_offset") {
			t.Errorf("partition labels %v: want no LSO series with the read off", labels)
		}
	}
}

// TestStableOffsetUnhealthySeries: with --collector.partition-series=unhealthy
// a partition whose LSO is stalled is unhealthy, so it keeps its partition
// and LSO series; a healthy partition's LSO is folded into the per-topic
// count, 0, under the same name; and the sum over both is the per-topic
// count of --no-collector.partition-labels.
func TestStableOffsetUnhealthySeries(t *testing.T) {
	s := adminSnapshot()
	var healthy []*poller.Partition
	for i := range s.Topics {
		for j := range s.Topics[i].Partitions {
			if p := &s.Topics[i].Partitions[j]; !p.Unhealthy() && len(healthy) < 2 {
				healthy = append(healthy, p)
			}
		}
	}
	if len(healthy) < 2 {
		t.Fatal("the fixture has fewer than two healthy partitions")
	}
	stuck, fine := healthy[0], healthy[1]
	stuck.LSOStalled = true
	s.StableOffsets = []poller.StableOffset{
		{Topic: stuck.Topic, Partition: stuck.Partition, LSO: stuck.HW - 50, HWKnown: true, LagSeconds: 400, Stalled: true},
		{Topic: fine.Topic, Partition: fine.Partition, LSO: fine.HW, HWKnown: true},
	}
	if stuck.Topic > fine.Topic {
		s.StableOffsets[0], s.StableOffsets[1] = s.StableOffsets[1], s.StableOffsets[0]
	}
	text := scrapeText(t, exposition.TableSource(NewAdminMetrics(newSnapshotSource(s), UnhealthyPartitionSeries).Tables))
	checkExposition(t, text) // one HELP and TYPE per family
	got := parseSamples(t, text)
	id := func(p *poller.Partition) string { return "partition=" + idLabel(p.Partition) + ",topic=" + p.Topic }
	for _, name := range []string{hwFamily.Name, lsoFamily.Name, lsoLagSecondsFamily.Name, lsoStalledFamily.Name} {
		if _, ok := got[name][id(stuck)]; !ok {
			t.Errorf("%s{%s}: want a series of its own for the partition whose LSO is stalled", name, id(stuck))
		}
		if _, ok := got[name][id(fine)]; ok {
			t.Errorf("%s{%s}: a healthy partition has a series", name, id(fine))
		}
	}
	if v, ok := got[lsoStalledFamily.Name]["topic="+fine.Topic]; !ok || v != 0 {
		t.Errorf("want the healthy LSO folded into %s{topic=%q} 0, got %v (%v)", lsoStalledFamily.Name, fine.Topic, v, ok)
	}
	perTopic := parseSamples(t, adminText(t, s, false))[lsoStalledFamily.Name]
	sums := map[string]float64{}
	for set, v := range got[lsoStalledFamily.Name] {
		sums[labelValue(set, "topic")] += v
	}
	for set, want := range perTopic {
		if topic := labelValue(set, "topic"); sums[topic] != want {
			t.Errorf("%s, topic %s: folded %v, --no-collector.partition-labels says %v", lsoStalledFamily.Name, topic, sums[topic], want)
		}
	}
}
