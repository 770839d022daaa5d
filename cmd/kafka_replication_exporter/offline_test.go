package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// A file truncated while verify reads it (copytruncate on a live log) is an
// error naming the file, never a report on part of it.
func TestReadTruncatedWhileReadIsAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.log")
	line := "[2025-10-16 15:57:12,614] DEBUG [Partition t-0 broker=1] High watermark updated from (offset=1, segment=[1:1]) to (offset=2, segment=[1:2]) (kafka.cluster.Partition)\n"
	if err := os.WriteFile(path, []byte(strings.Repeat(line, 100000)), 0o644); err != nil {
		t.Fatal(err)
	}
	truncated := false
	_, err := readLogs([]string{path}, time.UTC, nil, false, func(*logparse.Event, []byte) {
		if !truncated {
			truncated = true
			if err := os.Truncate(path, 0); err != nil {
				t.Fatal(err)
			}
		}
	})
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "shrank") {
		t.Fatalf("want an error naming %s, got %v", path, err)
	}
}

// verify orders numbered files as the follower does: by mtime, then by the
// timestamp of their first line (gzip ones too), here log4j2's default
// numbering (.1 oldest) with every mtime equal, as after a copy.
func TestOrderInputsFromTheFiles(t *testing.T) {
	dir := t.TempDir()
	line := func(ts string) string {
		return "[2025-10-16 " + ts + ",614] INFO [Partition t-0 broker=1] x (kafka.cluster.Partition)\n"
	}
	files := map[string]string{"server.log.1": "09:00:00", "server.log.2.gz": "10:00:00", "server.log.3": "11:00:00", "server.log": "12:00:00"}
	same := time.Now().Add(-time.Hour)
	var paths []string
	for name, ts := range files {
		path := filepath.Join(dir, name)
		content := []byte(line(ts))
		if strings.HasSuffix(name, ".gz") {
			content = gzipped(t, content)
		}
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
		setMtime(t, path, same)
		paths = append(paths, path)
	}
	got := orderInputs(paths)
	want := []string{"server.log.1", "server.log.2.gz", "server.log.3", "server.log"}
	for i := range want {
		want[i] = filepath.Join(dir, want[i])
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("want %v, got %v", want, got)
	}
}

// Standard input is merged by time with the files like any log, also when
// its lines arrive after the files were read: an offline read waits for
// them rather than taking a quiet pipe for an ended one.
func TestReadMergesLateStdinByTime(t *testing.T) {
	hw := func(ts, from, to string) string {
		return "[2025-10-16 " + ts + ",614] DEBUG [Partition t-0 broker=1] High watermark updated from (offset=" + from + ", segment=[1:1]) to (offset=" + to + ", segment=[1:2]) (kafka.cluster.Partition)\n"
	}
	path := filepath.Join(t.TempDir(), "server.log")
	if err := os.WriteFile(path, []byte(hw("15:00:02", "2", "3")), 0o644); err != nil {
		t.Fatal(err)
	}
	r, w := io.Pipe()
	go func() {
		time.Sleep(100 * time.Millisecond)
		io.WriteString(w, hw("15:00:01", "1", "2"))
		w.Close()
	}()
	var got []string
	_, err := readLogs([]string{path, "-"}, time.UTC, r, false, func(ev *logparse.Event, _ []byte) {
		got = append(got, ev.File)
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, " ") != "- "+path {
		t.Errorf("want stdin's earlier event first, got the events of %v", got)
	}
}

// A gzip file cut short is an error naming the file, as verify has always
// worded it.
func TestReadCutGzipNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.log.1.gz")
	line := "[2025-10-16 15:57:12,614] DEBUG [Partition t-0 broker=1] High watermark updated from (offset=1, segment=[1:1]) to (offset=2, segment=[1:2]) (kafka.cluster.Partition)\n"
	gz := gzipped(t, []byte(strings.Repeat(line, 1000)))
	if err := os.WriteFile(path, gz[:len(gz)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := readLogs([]string{path}, time.UTC, nil, false, func(*logparse.Event, []byte) {})
	if err == nil || err.Error() != path+": unexpected EOF" {
		t.Fatalf("want %q, got %v", path+": unexpected EOF", err)
	}
}
