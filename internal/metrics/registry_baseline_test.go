package metrics

import (
	"bytes"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/exposition"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logstate"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/poller"
)

// The client_golang path the table writer was chosen against (docs/design.md,
// "Rendering"): the same tables as const metrics in a prometheus.Registry,
// gathered and encoded by expfmt as promhttp would. Kept as a test oracle
// and as the baseline of the benchmarks, so that the decision can be
// measured again:
//
//	go test -run '^$' -bench 'AdminScrape100k|LogMetrics10kPartitions' -benchtime 5x -benchmem ./internal/metrics/
//
// (AdminScrape100k/registry and LogMetrics10kPartitionsRegistry are the
// registry path.)

// registryCollector exposes the tables of src through client_golang: one
// const metric per sample.
type registryCollector struct{ src exposition.TableSource }

// Describe describes nothing: the collector is unchecked, as its families
// depend on the state.
func (registryCollector) Describe(chan<- *prometheus.Desc) {}

func (c registryCollector) Collect(ch chan<- prometheus.Metric) {
	tables, release := c.src()
	if release != nil {
		defer release()
	}
	for _, t := range tables {
		if t.Prepare != nil {
			t.Prepare(t)
		}
		n := len(t.Columns[0].Family.Labels)
		values := make([]string, t.Rows*n)
		if n > 0 {
			for row := range t.Rows {
				t.Labels(row, values[row*n:(row+1)*n])
			}
		}
		for _, col := range t.Columns {
			f := col.Family
			if f.Derived {
				continue
			}
			desc := prometheus.NewDesc(f.Name, f.Help, f.Labels, nil)
			typ := prometheus.GaugeValue
			if f.Type == exposition.Counter {
				typ = prometheus.CounterValue
			}
			for row := range t.Rows {
				if v, ok := col.Value(row); ok && !(v == 0 && f.Sparse) {
					m, err := prometheus.NewConstMetric(desc, typ, v, values[row*n:(row+1)*n]...)
					if err != nil {
						m = prometheus.NewInvalidMetric(desc, err)
					}
					ch <- m
				}
			}
		}
	}
}

// registryText renders srcs through a registry, Gather and expfmt.
func registryText(w io.Writer, srcs ...exposition.TableSource) error {
	r := prometheus.NewRegistry()
	for _, src := range srcs {
		if err := r.Register(registryCollector{src}); err != nil {
			return err
		}
	}
	mfs, err := r.Gather()
	if err != nil {
		return err
	}
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return err
		}
	}
	return nil
}

// TestWriterMatchesRegistry: the writer's text is byte for byte what the
// registry path writes for the same tables, series order included.
func TestWriterMatchesRegistry(t *testing.T) {
	for name, src := range map[string]exposition.TableSource{
		"admin":        adminSource(newSnapshotSource(adminSnapshot()), true),
		"admin-rollup": adminSource(newSnapshotSource(adminSnapshot()), false),
		// Ids past idLabels' 4096, ranked the slow way.
		"admin-large-ids": adminSource(newSnapshotSource(&poller.Snapshot{Topics: []poller.Topic{
			{Name: "a", Partitions: []poller.Partition{
				{Topic: "a", Partition: 9, Lags: []poller.ReplicaLag{{Replica: 10_001, Lag: 1}, {Replica: 9, Lag: 2}}},
				{Topic: "a", Partition: 100_000, Lags: []poller.ReplicaLag{{Replica: 2, Lag: 3}}},
			}},
			{Name: "b", Partitions: []poller.Partition{
				{Topic: "b", Partition: 10, Lags: []poller.ReplicaLag{{Replica: 10_001, Lag: 4}}},
				{Topic: "b", Partition: 100_000, Lags: []poller.ReplicaLag{{Replica: 9, Lag: 5}, {Replica: 10_001, Lag: 6}}},
			}},
		}}), true),
		"log": exposition.TableSource(NewLogMetrics(logState(t, 40), nil, LogMetricsOptions{
			PartitionLabels: true, LeaderGauges: true,
		}).Tables),
		"log-rollup": exposition.TableSource(NewLogMetrics(logState(t, 40), nil, LogMetricsOptions{}).Tables),
	} {
		var want bytes.Buffer
		if err := registryText(&want, src); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := scrapeText(t, src); got != want.String() {
			t.Errorf("%s: the writer and the registry differ:\n%s", name, lineDiff(want.String(), got))
		}
	}
}

// BenchmarkLogMetrics10kPartitionsRegistry is BenchmarkLogMetrics10kPartitions
// through the registry.
func BenchmarkLogMetrics10kPartitionsRegistry(b *testing.B) {
	s := logstate.NewStore(nil)
	p := logparse.NewParser(time.UTC)
	for i := 0; i < 10000; i++ {
		l := line(isrUpd, "1", "topic"+strconv.Itoa(i/50)+"-"+strconv.Itoa(i%50), "1,2,3", "5")
		ev, _ := p.Parse(logparse.Record{First: []byte(l), Line: 1, Lines: 1})
		s.Apply(&ev)
	}
	src := exposition.TableSource(NewLogMetrics(s, nil, LogMetricsOptions{PartitionLabels: true, LeaderGauges: true}).Tables)
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		if err := registryText(io.Discard, src); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
}

// lineDiff is the first line where have and want differ.
func lineDiff(want, have string) string {
	w, h := bytes.Split([]byte(want), []byte("\n")), bytes.Split([]byte(have), []byte("\n"))
	for i := range min(len(w), len(h)) {
		if !bytes.Equal(w[i], h[i]) {
			return "line " + itoa(i+1) + ":\n  registry: " + string(w[i]) + "\n  writer:   " + string(h[i])
		}
	}
	return "lengths differ: registry " + itoa(len(w)) + " lines, writer " + itoa(len(h))
}

func itoa(i int) string { return idLabel(int32(i)) }
