package metrics

import (
	"math"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/exposition"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/poller"
)

// parseSamples parses an exposition into name → label set → value, the
// label set as `k="v",…` without the braces.
func parseSamples(t *testing.T, text string) map[string]map[string]float64 {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("the exposition does not parse: %v", err)
	}
	out := map[string]map[string]float64{}
	for name, mf := range families {
		out[name] = map[string]float64{}
		for _, m := range mf.GetMetric() {
			var b strings.Builder
			for i, lp := range m.GetLabel() {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(lp.GetName() + "=" + lp.GetValue())
			}
			out[name][b.String()] = sampleValue(m)
		}
	}
	return out
}

func sampleValue(m *dto.Metric) float64 {
	if m.GetCounter() != nil {
		return m.GetCounter().GetValue()
	}
	return m.GetGauge().GetValue()
}

// labelValue is the value of name in a `k=v,…` label set.
func labelValue(set, name string) string {
	for _, kv := range strings.Split(set, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v
		}
	}
	return ""
}

// TestUnhealthyPartitionSeries: with --collector.partition-series=unhealthy
// only unhealthy partitions have series of their own, each family is one
// block, and folding them with the per-topic series of the same name gives
// what --no-collector.partition-labels gives: `sum by (topic)` (or min) is
// the topic's total in every mode.
func TestUnhealthyPartitionSeries(t *testing.T) {
	s := adminSnapshot()
	bad := unhealthyPartitions(s)
	if len(bad) == 0 {
		t.Fatal("the fixture has no unhealthy partition")
	}
	text := scrapeText(t, exposition.TableSource(NewAdminMetrics(newSnapshotSource(s), UnhealthyPartitionSeries).Tables))
	checkExposition(t, text) // one HELP and TYPE per family
	got := parseSamples(t, text)
	perTopic := parseSamples(t, adminText(t, s, false))

	healthy := 0
	for i := range s.Topics {
		for j := range s.Topics[i].Partitions {
			if !s.Topics[i].Partitions[j].Unhealthy() {
				healthy++
			}
		}
	}
	if healthy == 0 {
		t.Fatal("the fixture has no healthy partition")
	}
	for name, series := range got {
		for set := range series {
			p := labelValue(set, "partition")
			if p == "" {
				continue
			}
			topic := labelValue(set, "topic")
			found := false
			for k := range bad {
				if k.topic == topic && idLabel(k.partition) == p {
					found = true
				}
			}
			if !found && !strings.HasPrefix(name, "kafka_replication_consumer_group_") {
				t.Errorf("%s{%s}: a healthy partition has a series", name, set)
			}
		}
	}
	for _, f := range Families() {
		if f.Rollup == nil {
			continue
		}
		for topicSet, want := range perTopic[f.Name] {
			topic := labelValue(topicSet, "topic")
			var acc float64
			some := false
			for set, v := range got[f.Name] {
				if labelValue(set, "topic") != topic {
					continue
				}
				switch {
				case !some:
					acc, some = v, true
				case f.Rollup.Fold == exposition.Min:
					acc = math.Min(acc, v)
				default:
					acc += v
				}
			}
			if f.Derived { // PromQL's in_sync_replicas - min_insync_replicas of the partitions with series
				for set, isr := range got[isrFamily.Name] {
					if minISR, ok := got[minISRFamily.Name][set]; ok && labelValue(set, "topic") == topic {
						acc = math.Min(acc, isr-minISR)
					}
				}
			}
			if acc != want {
				t.Errorf("%s, topic %s: folded %v, --no-collector.partition-labels says %v", f.Name, topic, acc, want)
			}
		}
	}
}

// TestUnhealthyPartitionSeriesLeaveNoStaleSeries: a partition that recovers
// has no series of its own at the next scrape, and a cluster of healthy
// partitions has none at all.
func TestUnhealthyPartitionSeriesLeaveNoStaleSeries(t *testing.T) {
	s := adminSnapshot()
	src := newSnapshotSource(s)
	m := NewAdminMetrics(src, UnhealthyPartitionSeries)
	if !strings.Contains(scrapeText(t, exposition.TableSource(m.Tables)), "partition=") {
		t.Fatal("no partition series over an unhealthy snapshot")
	}
	healed := *s
	healed.Topics = make([]poller.Topic, len(s.Topics))
	for i, tp := range s.Topics {
		healed.Topics[i] = tp
		healed.Topics[i].Partitions = make([]poller.Partition, len(tp.Partitions))
		for j, p := range tp.Partitions {
			p.ISR, p.MinISR, p.Leader, p.Regressions = p.Replicas, min(p.MinISR, p.Replicas-1), max(p.Leader, 0), 0
			p.HWKnown, p.LEOKnown, p.Stalled, p.StallCause = true, true, false, poller.StallNone
			p.Reassigning, p.UnderReplicatedByReassignment, p.Lags = false, false, nil
			if p.Unhealthy() {
				t.Fatalf("the healed partition %s/%d is unhealthy: %+v", p.Topic, p.Partition, p)
			}
			healed.Topics[i].Partitions[j] = p
		}
	}
	src.set(&healed)
	if text := scrapeText(t, exposition.TableSource(m.Tables)); strings.Contains(text, "partition=") {
		t.Errorf("partition series left after every partition recovered:\n%s", text)
	}
}
