package metrics

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/exposition"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logstate"
)

// FuzzServePath feeds arbitrary log text through what serve runs — the
// follower, splitter, parser, store and the writer — and checks that the
// scrape is one Prometheus accepts: whatever a log line says, the target
// must not go down.
func FuzzServePath(f *testing.F) {
	for _, seed := range []string{
		line(hwUpd, "1", "orders-0", "0", "10"),
		line(hwUpd, "1", "ord\xff\xfeers-1", "0", "10"),
		line(hwUpd, "1", "ord\x00ers-1", "0", "10"),
		line(hwUpd, "1", strings.Repeat("t", 10_000)+"-1", "0", "10"),
		line(isrUpd, "2", "we\"ird\\to\npic-3", "1,2", "6"),
		line(leaderSt, "3", "orders-7", "4"),
		"[2026-11-30 10:00:01,000] ERROR [ReplicaManager broker=1] Error processing append operation on partition orders-0 (kafka.server.ReplicaManager)\norg.apache.kafka.common.errors.NotEnoughReplicasException: The size of the current ISR Set(1) is insufficient to satisfy the min.isr requirement of 2 for partition orders-0\n",
		"\x1b[31mnot a log line\x00\xff\n",
	} {
		f.Add(seed)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, text string) {
		path := filepath.Join(dir, "server.log")
		if err := os.WriteFile(path, []byte(text+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		s := logstate.NewStore(nil)
		file := logstate.NewLogFile(path, logstate.LogFileOptions{FromBeginning: true, Location: time.UTC, PollInterval: time.Nanosecond})
		stream := logstate.NewStream(s, []*logstate.LogFile{file}, time.Nanosecond)
		for stream.Step() { // reads the file and flushes the last record
		}
		for _, opts := range []LogMetricsOptions{{PartitionLabels: true, LeaderGauges: true}, {PartitionLabels: false}} {
			checkExposition(t, scrapeText(t, exposition.TableSource(NewLogMetrics(s, stream, opts).Tables)))
		}
	})
}
