package metrics

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/exposition"
)

// WriteText over the exporter's own sources: errors, keep and concurrency.

type failingWriter struct{ n int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.n++; f.n > 1 {
		return 0, errors.New("connection reset")
	}
	return len(p), nil
}

func TestWriteTextReportsWriteErrors(t *testing.T) {
	src := exposition.TableSource(NewLogMetrics(logState(t, 600), nil, LogMetricsOptions{PartitionLabels: true}).Tables)
	before := scrapeText(t, src)
	if err := exposition.WriteText(&failingWriter{}, nil, nil, src); err == nil || !strings.Contains(err.Error(), "reset") {
		t.Errorf("want the write error, got %v", err)
	}
	// The writer goes back to the pool clean: the next scrape is whole.
	if after := scrapeText(t, src); after != before {
		t.Errorf("want the same scrape after a failed one, got\n%s\nthen\n%s", before, after)
	}
}

func TestWriteTextKeep(t *testing.T) {
	src := exposition.TableSource(NewLogMetrics(logState(t, 3), nil, LogMetricsOptions{PartitionLabels: true}).Tables)
	var b bytes.Buffer
	keep := func(name string) bool { return name == "kafka_replication_partition_isr_shrinks_total" }
	if err := exposition.WriteText(&b, nil, keep, src); err != nil {
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
	logm := exposition.TableSource(NewLogMetrics(s, nil, LogMetricsOptions{PartitionLabels: true}).Tables)
	src := newSnapshotSource(adminSnapshot())
	a := exposition.TableSource(NewAdminMetrics(src, AllPartitionSeries).Tables)
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
				if err = exposition.WriteText(&b, nil, nil, logm, a); err != nil {
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
