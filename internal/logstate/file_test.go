package logstate

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// traceMix writes n lines of a busy broker's TRACE/DEBUG log over the given
// number of partitions: per produce, the leader's ack progress, the
// followers' LEOs, a skipped and an applied HW update, as
// kafka.cluster.Partition logs them.
func traceMix(path string, n, partitions int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	const ts = "[2025-10-16 15:57:12,612] "
	for i := 0; i < n; {
		p := i % partitions
		off := int64(i/partitions) + 88
		prefix := fmt.Sprintf("%s%%s [Partition topic-%d-%d broker=1] ", ts, p/50, p%50)
		lvl := func(level string) string { return fmt.Sprintf(prefix, level) }
		for _, l := range []string{
			lvl("TRACE") + fmt.Sprintf("Progress awaiting ISR acks for offset %d: acked: Set(broker 1: %d), awaiting Set(broker 3: %d, broker 2: %d)", off+1, off+1, off, off),
			lvl("DEBUG") + fmt.Sprintf("Recorded replica 2 log end offset (LEO) position %d and log start offset 0.", off+1),
			lvl("TRACE") + fmt.Sprintf("Skipping update high watermark since new hw (offset=%d, segment=[16:76938]) is not larger than old value. All current LEOs are Set(replica 2: (offset=%d, segment=[16:76938]))", off, off),
			lvl("DEBUG") + fmt.Sprintf("Recorded replica 3 log end offset (LEO) position %d and log start offset 0.", off+1),
			lvl("DEBUG") + fmt.Sprintf("High watermark updated from (offset=%d, segment=[16:76938]) to (offset=%d, segment=[16:78032])", off, off+1),
		} {
			_, _ = w.WriteString(l + " (kafka.cluster.Partition)\n") // a bufio.Writer returns its first error from Flush, checked below
			i++
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// drain steps s until the files are read to their end and every event is
// applied (the files' poll interval must be tiny, so held records flush at once).
func drain(s *Stream) {
	for s.Step() {
	}
}

// BenchmarkLogFileLive measures the live path of the sidecar per line: follow
// (tail), split, parse, check and apply to the Store — what a busy broker's
// log costs, without scrapes. Input: a TRACE mix over 10,000 partitions.
func BenchmarkLogFileLive(b *testing.B) {
	const lines = 200_000
	src := filepath.Join(b.TempDir(), "server.log")
	if err := traceMix(src, lines, 10_000); err != nil {
		b.Fatal(err)
	}
	fi, _ := os.Stat(src)
	b.SetBytes(fi.Size())
	cpu := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		store := NewStore(nil)
		f := NewLogFile(src, LogFileOptions{FromBeginning: true, Location: time.UTC, PollInterval: time.Nanosecond})
		drain(NewStream(store, []*LogFile{f}, time.Nanosecond))
		if st := f.Stats(); st.Records != lines || st.Lines != lines || st.Malformed != 0 {
			b.Fatalf("want %d lines, none malformed, got %+v", lines, st)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/lines, "ns/line")
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N)/lines, "cpu-ns/line")
}

// cpuTime is the process's user+system CPU time: on a shared machine, wall
// time per line includes waiting for a core.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// The follower holds the store's lock across a few records, never longer:
// a scrape waits at most for batchRecords records, and a poll's end lets it in.
func TestStoreBatchBoundsTheLockHold(t *testing.T) {
	s := NewStore(nil)
	b := storeBatch{s: s}
	ev, ok := logparse.NewParser(time.UTC).Parse(logparse.Record{Line: 1, Lines: 1, First: []byte("[2025-10-16 15:57:12,614] DEBUG [Partition t-0 broker=1] High watermark updated from (offset=1, segment=[1:1]) to (offset=2, segment=[1:2]) (kafka.cluster.Partition)")})
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
