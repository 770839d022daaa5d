package logstate

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/tail"
)

// hwLine is a high watermark update of orders-0 at 10:00:00 plus ms
// milliseconds, from offset ms to ms+1.
func hwLine(ms int) string {
	return fmt.Sprintf("[2026-11-30 10:00:00,%03d] DEBUG [Partition orders-0 broker=1] High watermark updated from (offset=%d, segment=[1:1]) to (offset=%d, segment=[1:2]) (kafka.cluster.Partition)", ms, ms, ms+1)
}

// follow reads the files from their saved positions (or the beginning) to
// their end into a new store, as a restarted exporter does.
func follow(t *testing.T, files []*LogFile) *Store {
	t.Helper()
	s := NewStore(nil)
	drain(NewStream(s, files, time.Nanosecond))
	return s
}

// A restart that cannot resume at its saved position (the file's beginning
// changed: it reads the file from the start) must not count again what was
// applied before the stop: the events stamped at or before the last one
// applied are skipped, and counted as skipped, and the lines and records
// of what is skipped are not counted as read.
func TestRestartThatStartsOverSkipsWhatWasApplied(t *testing.T) {
	for _, inPlace := range []bool{true, false} {
		t.Run(fmt.Sprintf("in place %v", inPlace), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "server.log")
			var old []string
			for i := range 10 {
				old = append(old, hwLine(i))
			}
			appendLines(t, path, old...)
			f := NewLogFile(path, LogFileOptions{FromBeginning: true, Location: time.UTC, PollInterval: time.Nanosecond})
			follow(t, []*LogFile{f})
			saved, ok := f.Position()
			if !ok || f.Stats().Records != 10 {
				t.Fatalf("want 10 records applied and a position, got %+v", f.Stats())
			}
			// The file now there starts with a line the saved head does not
			// know, then holds the old lines again and two new ones.
			replaced := append([]string{"[2026-11-30 09:59:59,000] INFO starting (kafka.Kafka)"}, old...)
			replaced = append(replaced, hwLine(10), hwLine(11))
			data := []byte(strings.Join(replaced, "\n") + "\n")
			if inPlace {
				if err := os.WriteFile(path, data, 0o644); err != nil {
					t.Fatal(err)
				}
			} else {
				if err := os.WriteFile(path+".new", data, 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(path+".new", path); err != nil {
					t.Fatal(err)
				}
			}
			f = NewLogFile(path, LogFileOptions{Start: &saved, Location: time.UTC, PollInterval: time.Nanosecond})
			s := follow(t, []*LogFile{f})
			var snap Snapshot
			s.Snapshot(&snap)
			st := f.Stats()
			if snap.Events[logparse.HWUpdate] != 2 || st.Records != 2 || st.Lines != 2 || st.SkippedEvents != 10 {
				t.Fatalf("want only the 2 new events applied and counted, 10 skipped, got %d events, %d records, %d lines, %d skipped",
					snap.Events[logparse.HWUpdate], st.Records, st.Lines, st.SkippedEvents)
			}
			if p, _ := f.Position(); p.LastEvent != time.Date(2026, 11, 30, 10, 0, 0, 11e6, time.UTC).UnixNano() {
				t.Errorf("want the position to remember the last event applied, 10:00:00.011, got %v", time.Unix(0, p.LastEvent).UTC())
			}
		})
	}
}

// Without a saved event time (a position file written before it was kept),
// nothing is skipped: the restart reads what it reads, as it did.
func TestRestartWithoutASavedEventTimeSkipsNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.log")
	appendLines(t, path, hwLine(0), hwLine(1))
	saved := tail.Position{Path: path, Offset: 5, HeadLen: 5, HeadHash: 1} // matches no file
	f := NewLogFile(path, LogFileOptions{Start: &saved, Location: time.UTC, PollInterval: time.Nanosecond})
	follow(t, []*LogFile{f})
	if st := f.Stats(); st.Records != 2 || st.SkippedEvents != 0 || st.ResumeMisses != 1 {
		t.Fatalf("want both records read, none skipped, one resume miss, got %+v", st)
	}
}

// A resume at the saved position skips nothing, even events stamped before
// the last one applied: lines of several threads reach the file a little
// out of time order, and what follows the saved position is new.
func TestExactResumeSkipsNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.log")
	appendLines(t, path, hwLine(5))
	f := NewLogFile(path, LogFileOptions{FromBeginning: true, Location: time.UTC, PollInterval: time.Nanosecond})
	follow(t, []*LogFile{f})
	saved, _ := f.Position()
	appendLines(t, path, hwLine(4), hwLine(6)) // 4 is stamped before the event applied last
	f = NewLogFile(path, LogFileOptions{Start: &saved, Location: time.UTC, PollInterval: time.Nanosecond})
	follow(t, []*LogFile{f})
	if st := f.Stats(); st.Records != 2 || st.SkippedEvents != 0 {
		t.Fatalf("want both new records applied, none skipped, got %+v", st)
	}
}
