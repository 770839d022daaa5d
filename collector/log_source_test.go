package collector

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/logparse"
)

// BenchmarkLogFileLive measures the live path of the sidecar per line: follow
// (tail), split, parse, check and apply to the Store — what a busy broker's
// log costs, without scrapes. Input: a genlog.py TRACE mix over 10,000
// partitions (shared/bench, beside the repository).
func BenchmarkLogFileLive(b *testing.B) {
	script, _ := filepath.Abs("../../shared/bench/genlog.py")
	if _, err := os.Stat(script); err != nil {
		b.Skip("needs shared/bench/genlog.py")
	}
	dir := b.TempDir()
	src := filepath.Join(dir, "server.log")
	if out, err := exec.Command("python3", script, "--lines", "200000", "--partitions", "10000", "--seed", "3",
		"--out", src, "--manifest", filepath.Join(dir, "m.json")).CombinedOutput(); err != nil {
		b.Fatalf("genlog: %v %s", err, out)
	}
	fi, _ := os.Stat(src)
	b.SetBytes(fi.Size())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		store := NewStore(nil)
		f := NewLogFile(src, store, LogFileOptions{FromBeginning: true, Location: time.UTC})
		store.Tick(time.Now()) // as Run does before each poll
		if err := f.follower.Poll(f.line); err != nil {
			b.Fatal(err)
		}
		f.flush()
		f.publish()
		if f.Records() == 0 {
			b.Fatal("nothing read")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/200000, "ns/line")
}

// The follower holds the store's lock across a few records, never longer:
// a scrape waits at most for batchRecords records, and a poll's end lets it in.
func TestStoreBatchBoundsTheLockHold(t *testing.T) {
	s := NewStore(nil)
	b := storeBatch{s: s}
	ev, ok := logparse.NewParser(time.UTC).ParseLine([]byte("[2025-10-16 15:57:12,614] DEBUG [Partition t-0 broker=1] High watermark updated from (offset=1, segment=[1:1]) to (offset=2, segment=[1:2]) (kafka.cluster.Partition)"))
	if !ok {
		t.Fatal("test line did not parse")
	}
	b.apply(&ev)
	if s.mu.TryLock() {
		t.Fatal("want the lock held after an event")
	}
	for i := 0; i < batchRecords; i++ {
		b.record()
	}
	if !s.mu.TryLock() {
		t.Fatalf("want the lock released after %d records", batchRecords)
	}
	s.mu.Unlock()
	b.apply(&ev)
	b.release()
	if !s.mu.TryLock() {
		t.Fatal("want the lock released at the end of a poll")
	}
	s.mu.Unlock()
	if s.events[logparse.HWUpdate] != 2 {
		t.Errorf("want 2 events applied, got %d", s.events[logparse.HWUpdate])
	}
}
