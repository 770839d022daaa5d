package metrics

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/exposition"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logstate"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/tail"
)

// checkExposition parses text as Prometheus does and checks what the
// parser lets through: HELP and TYPE once per family, every label value
// valid UTF-8. It returns the number of samples per family.
func checkExposition(t *testing.T, text string) map[string]int {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("the exposition does not parse: %v\n%s", err, text)
	}
	help, typ := map[string]int{}, map[string]int{}
	for _, l := range strings.Split(text, "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[0] == "#" {
			map[string]map[string]int{"HELP": help, "TYPE": typ}[f[1]][f[2]]++
		}
	}
	samples := map[string]int{}
	for name, mf := range families {
		if help[name] != 1 || typ[name] != 1 {
			t.Errorf("%s: want one HELP and one TYPE line, got %d and %d", name, help[name], typ[name])
		}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if !utf8.ValidString(lp.GetValue()) {
					t.Errorf("%s: label %s=%q is not valid UTF-8", name, lp.GetName(), lp.GetValue())
				}
			}
		}
		samples[name] = len(mf.GetMetric())
	}
	return samples
}

// The log half's whole scrape, a file whose path is not valid UTF-8
// included, parses, and the file's series are all there.
func TestLogMetricsOutputParses(t *testing.T) {
	s := logState(t, 40)
	files := []*logstate.LogFile{
		logstate.NewLogFile(t.TempDir()+"/server\xff.log", logstate.LogFileOptions{Location: time.UTC}),
		logstate.NewLogFile(t.TempDir()+"/state-change.log", logstate.LogFileOptions{Location: time.UTC}),
	}
	stream := logstate.NewStream(s, files, 0)
	for _, opts := range []LogMetricsOptions{{PartitionLabels: true, LeaderGauges: true}, {PartitionLabels: false}} {
		text := scrapeText(t, exposition.TableSource(NewLogMetrics(s, stream, opts).Tables))
		samples := checkExposition(t, text)
		for _, f := range Families() {
			want := len(files)
			if len(f.Labels) == 2 && f.Labels[1] == "reason" {
				want *= len(tail.Reasons) // every reason, 0 or 1
			}
			if len(f.Labels) > 0 && f.Labels[0] == "file" && f != fileLastReadFamily && samples[f.Name] != want {
				t.Errorf("%s: want %d series, got %d", f.Name, want, samples[f.Name])
			}
		}
		if !strings.Contains(text, "/server\uFFFD.log\"") {
			t.Error("want the non-UTF-8 path with U+FFFD in place of the invalid byte")
		}
	}
}
