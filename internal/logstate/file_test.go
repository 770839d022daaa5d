package logstate

import (
	"bufio"
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
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

// A file whose lines are in a layout the parser does not know yields no
// event, which alone looks like a quiet broker: the file's count of
// records recognized as Kafka's tells them apart. A quiet broker's lines of
// other loggers still count; a syslog-wrapped broker log does not.
func TestLogFileCountsRecognizedRecords(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines []string
		want  uint64
	}{
		{"quiet broker, default layout", []string{
			"[2026-11-30 13:50:35,118] INFO [GroupCoordinator id=1 topic=__consumer_offsets partition=12] Generated 0 tombstone records while cleaning up group metadata in 0 milliseconds. (org.apache.kafka.coordinator.group.GroupCoordinatorShard)",
			"[2026-11-30 13:51:35,118] INFO [RaftManager id=1] Completed transition to Unattached(epoch=5, voters=[1, 2, 3]) (org.apache.kafka.raft.QuorumState)",
			"[2026-11-30 13:52:35,118] INFO Kafka version: 4.1.1 (org.apache.kafka.common.utils.AppInfoParser)",
		}, 3},
		{"syslog-wrapped", []string{
			"Nov 30 13:50:33 broker-1 kafka[4242]: INFO [Partition orders-0 broker=1] ISR updated to 1,2  and version updated to 4",
			"Nov 30 13:50:34 broker-1 kafka[4242]: INFO [RaftManager id=1] Completed transition",
			"Nov 30 13:50:35 broker-1 kafka[4242]: INFO [GroupCoordinator id=1] Generated 0 tombstone records",
		}, 0},
		{"GC log", []string{
			"[2026-11-30T13:50:33.555+0000][info][gc] GC(12) Pause Young (Normal) (G1 Evacuation Pause) 120M->30M(512M) 3.123ms",
			"[2026-11-30T13:50:34.555+0000][info][gc] GC(13) Pause Young (Normal) (G1 Evacuation Pause) 121M->31M(512M) 3.001ms",
		}, 0},
		{"thread layout", []string{
			"[2026-11-30 13:50:35,118] INFO  [group-coordinator-event-processor-0] [GroupCoordinator id=1 topic=__consumer_offsets partition=12] Generated 0 tombstone records (org.apache.kafka.coordinator.group.GroupCoordinatorShard)",
			"[2026-11-30 13:50:36,118] INFO  [kafka-scheduler-1] [Partition orders-0 broker=1] ISR updated to 1,2  and version updated to 4 (kafka.cluster.Partition)",
		}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := filepath.Join(t.TempDir(), "server.log")
			var text string
			for _, l := range tc.lines {
				text += l + "\n"
			}
			if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			f := NewLogFile(src, LogFileOptions{FromBeginning: true, Location: time.UTC, PollInterval: time.Nanosecond})
			drain(NewStream(NewStore(nil), []*LogFile{f}, time.Nanosecond))
			if st := f.Stats(); st.Lines != uint64(len(tc.lines)) || st.Recognized != tc.want {
				t.Errorf("want %d lines, %d recognized, got %d lines, %d recognized", len(tc.lines), tc.want, st.Lines, st.Recognized)
			}
		})
	}
}

// An unknown layout is a state: one WARN when a file has read
// unknownLayoutLines lines without a Kafka record, one INFO when it reads one
// again, nothing in between.
func TestLogFileWarnsOnceOfAnUnknownLayout(t *testing.T) {
	var text strings.Builder
	for i := 0; i < 2*unknownLayoutLines; i++ {
		fmt.Fprintf(&text, "Nov 30 13:50:%02d broker-1 kafka[4242]: INFO [Partition orders-0 broker=1] ISR updated to 1,2  and version updated to %d\n", i%60, i)
	}
	text.WriteString("[2026-11-30 13:51:00,000] INFO [Partition orders-0 broker=1] ISR updated to 1,2  and version updated to 999 (kafka.cluster.Partition)\n")
	text.WriteString("[2026-11-30 13:51:01,000] INFO [Partition orders-0 broker=1] ISR updated to 1,2  and version updated to 1000 (kafka.cluster.Partition)\n")
	src := filepath.Join(t.TempDir(), "server.log")
	if err := os.WriteFile(src, []byte(text.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	f := NewLogFile(src, LogFileOptions{
		FromBeginning: true, Location: time.UTC, PollInterval: time.Nanosecond,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	drain(NewStream(NewStore(nil), []*LogFile{f}, time.Nanosecond))
	out := logs.String()
	if w, i := strings.Count(out, "level=WARN msg=\"no line read is a Kafka log record"), strings.Count(out, "level=INFO msg=\"Kafka log records recognized again\""); w != 1 || i != 1 {
		t.Errorf("want one WARN and one INFO, got %d and %d:\n%s", w, i, out)
	}
}
