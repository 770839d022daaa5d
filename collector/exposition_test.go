package collector

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"
)

// labelPairs returns name/value pairs; callers pass them sorted by name.
func labelPairs(nameValues ...string) []*dto.LabelPair {
	out := make([]*dto.LabelPair, 0, len(nameValues)/2)
	for i := 0; i+1 < len(nameValues); i += 2 {
		out = append(out, &dto.LabelPair{Name: &nameValues[i], Value: &nameValues[i+1]})
	}
	return out
}

// The value formats and escaping of the writer itself, against expfmt's.
func TestTextWriterMatchesExpfmt(t *testing.T) {
	values := []float64{
		0, math.Copysign(0, -1), 1, -1, 2, -2, 999_999, -999_999, 1e6, -1e6, 1_234_567, 1 << 53,
		math.MaxInt64, math.MinInt64, math.MaxUint64, 0.5, -0.25, 1.7e9 + 0.123, 1e-7, math.NaN(), math.Inf(1), math.Inf(-1),
	}
	for _, v := range values {
		mf := &dto.MetricFamily{
			Name: proto.String("x"), Help: proto.String("a \\ back\nslash \"quoted\" …"), Type: dto.MetricType_GAUGE.Enum(),
			Metric: []*dto.Metric{{
				Label: labelPairs("a", "q\"uo\\te\nd", "b", "plain"),
				Gauge: &dto.Gauge{Value: proto.Float64(v)},
			}},
		}
		var want bytes.Buffer
		if _, err := expfmt.MetricFamilyToText(&want, mf); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		w := &textWriter{out: &got}
		f := newTextFamily("x", mf.GetHelp(), false)
		var lbl labelBlocks
		lbl.addPairs([]string{"a", "b"}, []string{"q\"uo\\te\nd", "plain"})
		w.begin(f)
		w.sampleFloat(f, lbl.get(0), v)
		w.end()
		w.flush()
		if s := got.String(); s != want.String() {
			t.Errorf("%v: want %q, got %q", v, want.String(), s)
		}
	}

	// A family without samples leaves nothing, not even its header.
	var b bytes.Buffer
	w := &textWriter{out: &b}
	w.begin(newTextFamily("x", "help", true))
	w.end()
	w.flush()
	if b.Len() != 0 {
		t.Errorf("want nothing for an empty family, got %q", b.String())
	}
}

type failingWriter struct{ n int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.n++; f.n > 1 {
		return 0, errors.New("connection reset")
	}
	return len(p), nil
}

func TestWriteTextReportsWriteErrors(t *testing.T) {
	src := TableSource(NewLogMetrics(logState(t, 600), nil, LogMetricsOptions{PartitionLabels: true}).Tables)
	before := scrapeText(t, src)
	if err := WriteText(&failingWriter{}, nil, nil, src); err == nil || !strings.Contains(err.Error(), "reset") {
		t.Errorf("want the write error, got %v", err)
	}
	// The writer goes back to the pool clean: the next scrape is whole.
	if after := scrapeText(t, src); after != before {
		t.Errorf("want the same scrape after a failed one, got\n%s\nthen\n%s", before, after)
	}
}

func TestWriteTextKeep(t *testing.T) {
	src := TableSource(NewLogMetrics(logState(t, 3), nil, LogMetricsOptions{PartitionLabels: true}).Tables)
	var b bytes.Buffer
	keep := func(name string) bool { return name == "kafka_replication_partition_isr_shrinks_total" }
	if err := WriteText(&b, nil, keep, src); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if !strings.Contains(l, "kafka_replication_partition_isr_shrinks_total") {
			t.Fatalf("want only the kept family, got %q", l)
		}
	}
	if !strings.Contains(b.String(), "# TYPE kafka_replication_partition_isr_shrinks_total counter") {
		t.Error("want the kept family")
	}
}

// Concurrent scrapes while events arrive and the admin snapshot is replaced:
// each scrape has its own pooled buffers (run with -race).
func TestWriteTextConcurrent(t *testing.T) {
	s := logState(t, 50)
	logm := TableSource(NewLogMetrics(s, nil, LogMetricsOptions{PartitionLabels: true}).Tables)
	src := newSnapshotSource(adminSnapshot())
	a := TableSource(NewAdminMetrics(src, AllPartitionSeries).Tables)
	snap := src.Snapshot()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			applyLines(t, s, line(isrUpd, "1", "orders-"+fmt.Sprint(i%20), "1,2,3", fmt.Sprint(i+10)))
			src.set(snap)
		}
	}()
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			var err error
			for range 20 {
				var b bytes.Buffer
				if err = WriteText(&b, nil, nil, logm, a); err != nil {
					break
				}
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	<-done
}
