package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// A mapped file yields exactly the lines and cuts the bufio reader does,
// including lines just under, at and over maxLineBytes and a last line
// without a newline.
func TestMappedLinesMatchBufferedLines(t *testing.T) {
	long := func(n int) string { return strings.Repeat("x", n) }
	for name, content := range map[string]string{
		"plain":                  "a\nbb\n\nccc\n",
		"no final newline":       "a\nbb",
		"crlf":                   "a\r\nb\r\n",
		"just under the bound":   long(maxLineBytes-1) + "\nz\n",
		"at the bound":           long(maxLineBytes) + "\nz\n",
		"over the bound":         long(maxLineBytes+5) + "\nz\n",
		"over, no final newline": "a\n" + long(2*maxLineBytes+3),
		"at, no final newline":   "a\n" + long(maxLineBytes),
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "server.log")
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			mapped, c, ok := openMapped(path)
			if !ok {
				t.Fatal("want the file mapped")
			}
			defer c.Close()
			want, wantCut := readAll(t, newLineReader(strings.NewReader(content)))
			got, gotCut := readAll(t, mapped)
			if len(got) != len(want) || gotCut != wantCut {
				t.Fatalf("want %d lines (%d cut), got %d (%d cut)", len(want), wantCut, len(got), gotCut)
			}
			for i := range want {
				if !bytes.Equal(got[i], want[i]) {
					t.Fatalf("line %d: want %d bytes %.20q, got %d bytes %.20q", i+1, len(want[i]), want[i], len(got[i]), got[i])
				}
			}
		})
	}
}

func readAll(t *testing.T, lr *lineReader) ([][]byte, int64) {
	t.Helper()
	var lines [][]byte
	for {
		l, err := lr.next()
		if errors.Is(err, io.EOF) {
			return lines, lr.cut
		}
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, bytes.Clone(l))
	}
}

// gzip files and stdin are not mapped.
func TestOpenMappedDeclinesGzipAndStdin(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.log.gz")
	writeFile(t, path, []byte{0x1f, 0x8b, 8, 0}, 0o644)
	if _, _, ok := openMapped(path); ok {
		t.Error("a gzip file was mapped")
	}
	if _, _, ok := openMapped("-"); ok {
		t.Error("stdin was mapped")
	}
}

// A file truncated while verify reads it (copytruncate on a live log) is an
// error naming the file, never a crash: the mapping faults on access.
func TestScanTruncatedWhileMappedIsAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.log")
	line := "[2025-10-16 15:57:12,614] DEBUG [Partition t-0 broker=1] High watermark updated from (offset=1, segment=[1:1]) to (offset=2, segment=[1:2]) (kafka.cluster.Partition)\n"
	if err := os.WriteFile(path, []byte(strings.Repeat(line, 100000)), 0o644); err != nil {
		t.Fatal(err)
	}
	truncated := false
	_, err := scanFiles([]string{path}, time.UTC, nil, func(string, *logparse.Record, *logparse.Event) {
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
