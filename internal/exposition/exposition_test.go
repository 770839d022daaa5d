package exposition

import (
	"bytes"
	"math"
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
