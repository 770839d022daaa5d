package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/exposition"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logstate"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/tail"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/testutil"
)

// checkExposition parses text as Prometheus does (testutil.CheckExposition).
var checkExposition = testutil.CheckExposition

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
