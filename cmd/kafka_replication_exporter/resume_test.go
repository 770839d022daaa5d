//go:build unix

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A log replaced while the exporter was down by a copy of itself (a backup
// restore, a config-management tool, a log shipper: the same bytes under a
// new inode, or an older, shorter copy written over it) is the same log: the
// restarted exporter reads on after what it applied, and counts none of the
// events of before its stop again, nor their lines.
func TestRestartAfterTheLogWasReplacedByACopy(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	hw := func(i int) string {
		return fmt.Sprintf("[2026-11-30 10:00:%02d,%03d] DEBUG [Partition orders-0 broker=1] High watermark updated from (offset=%d, segment=[1:1]) to (offset=%d, segment=[1:2]) (kafka.cluster.Partition)\n",
			i/1000, i%1000, i, i+1)
	}
	for _, tc := range []struct {
		name    string
		keep    int // lines of the copy
		inPlace bool
		warn    string // what the restart's warning says
	}{
		{"identical copy under a new inode", 200, false, "replaced while we were down by a copy"},
		{"older shorter copy written in place", 150, true, "shorter than the saved position but starts with the same bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			logFile, positions := filepath.Join(dir, "server.log"), filepath.Join(dir, "positions.json")
			var data, copied []byte
			for i := range 200 {
				data = append(data, hw(i)...)
				if i < tc.keep {
					copied = data
				}
			}
			writeFile(t, logFile, data, 0o644)
			serve := []string{"--log.file=" + logFile, "--log.from-beginning", "--log.position-file=" + positions, "--log.poll-interval=20ms"}
			first := startExporter(t, serve...)
			records := func(n int) string {
				return fmt.Sprintf("kafka_replication_log_records_total{file=%q} %d\n", logFile, n)
			}
			waitFor(t, "the first run to apply the log", 20*time.Second, func() bool { return strings.Contains(first.metrics(), records(200)) })
			first.stop()

			if tc.inPlace {
				writeFile(t, logFile, copied, 0o644)
			} else {
				writeFile(t, logFile+".tmp", copied, 0o644)
				if err := os.Rename(logFile+".tmp", logFile); err != nil {
					t.Fatal(err)
				}
			}
			second := startExporter(t, serve...)
			waitFor(t, "the restart to read the log to its end", 20*time.Second, func() bool {
				return strings.Contains(second.metrics(), "kafka_replication_log_caught_up 1\n")
			})
			f, err := os.OpenFile(logFile, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			for i := 200; i < 205; i++ { // the broker writes on
				if _, err := f.WriteString(hw(i)); err != nil {
					t.Fatal(err)
				}
			}
			f.Close()
			var body string
			waitFor(t, "the new lines", 20*time.Second, func() bool {
				body = second.metrics()
				return strings.Contains(body, "kafka_replication_log_records_total{") && !strings.Contains(body, records(0))
			})
			time.Sleep(200 * time.Millisecond) // ten polls: what is read again would be counted by now
			body = second.metrics()
			second.stop()
			for _, want := range []string{
				records(5),
				fmt.Sprintf("kafka_replication_log_lines_total{file=%q} 5\n", logFile),
				`kafka_replication_log_events_total{type="hw_update"} 5` + "\n",
				fmt.Sprintf("kafka_replication_log_events_skipped_total{file=%q} 0\n", logFile),
			} {
				if !strings.Contains(body, want) {
					t.Errorf("want %s", strings.TrimSpace(want))
				}
			}
			logs := second.stderr.String()
			for _, l := range strings.Split(logs, "\n") {
				if strings.Count(l, " file=") > 1 {
					t.Errorf("file= twice in %s", l)
				}
			}
			if !strings.Contains(logs, tc.warn) {
				t.Errorf("want a warning saying %q", tc.warn)
			}
			if strings.Contains(logs, "from the beginning") {
				t.Errorf("the restart read the log from its beginning:\n%s", logs)
			}
			if t.Failed() {
				t.Logf("scrape:\n%s\nstderr:\n%s", grepLines(body, "log_records_total|log_lines_total|log_events_total{type=\"hw_update\"}|skipped"), logs)
			}
		})
	}
}
