package tail

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// readToEnd reads f with the budget until io.EOF and returns the lines.
func readToEnd(t *testing.T, f *Follower, budget int) []string {
	t.Helper()
	var got lines
	for {
		more, err := f.Read(got.deliver, budget)
		if errors.Is(err, io.EOF) {
			return got.take()
		}
		if err != nil {
			t.Fatal(err)
		}
		if !more {
			t.Fatal("a ToEnd read stopped before the end without an error")
		}
	}
}

// A ToEnd read delivers the Before files (plain and gzip, each last line
// flushed whether or not it ends in a newline), then the path, whatever the
// budget, naming each file as it starts, and ends with io.EOF.
func TestToEndReadsEveryFileOnce(t *testing.T) {
	dir := t.TempDir()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write([]byte("b1\nb2")); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"server.log.1": []byte("a1\na2\n"), "server.log.2.gz": gz.Bytes(), "server.log": []byte("c1\r\nc2")}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, budget := range []int{0, 1, 3} {
		var opened []string
		f := New(filepath.Join(dir, "server.log"), Options{
			LineTime: lineTime,
			ToEnd:    true,
			Before:   []string{filepath.Join(dir, "server.log.1"), filepath.Join(dir, "server.log.2.gz")},
			OnFile:   func(name string) { opened = append(opened, filepath.Base(name)) },
		})
		equal(t, "lines", readToEnd(t, f, budget), []string{"a1", "a2", "b1", "b2", "c1", "c2"})
		if strings.Join(opened, " ") != "server.log.1 server.log.2.gz server.log" {
			t.Errorf("budget %d: opened %v", budget, opened)
		}
		if _, err := f.Read(func([]byte) {}, budget); !errors.Is(err, io.EOF) {
			t.Errorf("budget %d: after the end, want io.EOF, got %v", budget, err)
		}
		f.Close()
	}
}

// A file cut shorter while a ToEnd read reads it is an error naming it:
// the report would be on a part of the file.
func TestToEndFileThatShrankIsAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.log")
	if err := os.WriteFile(path, bytes.Repeat([]byte(kafkaLine(1)), 10_000), 0o644); err != nil {
		t.Fatal(err)
	}
	f := New(path, Options{LineTime: lineTime, ToEnd: true})
	defer f.Close()
	if _, err := f.Read(func([]byte) {}, 4096); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 1000); err != nil {
		t.Fatal(err)
	}
	for {
		_, err := f.Read(func([]byte) {}, 4096)
		if err == nil {
			continue
		}
		if !strings.Contains(err.Error(), path+" shrank while it was read") {
			t.Fatalf("want an error naming %s, got %v", path, err)
		}
		return
	}
}

// A ToEnd read of a pipe waits for what is still to come instead of taking
// its silence for an end: read to its end, a file is everything it will hold.
func TestToEndPipeWaitsForItsData(t *testing.T) {
	r, w := io.Pipe()
	go func() {
		time.Sleep(50 * time.Millisecond)
		_, _ = w.Write([]byte("late\n")) // the reader's side sees any failure as a missing line
		w.Close()
	}()
	f := NewPipe("-", r, Options{LineTime: lineTime, ToEnd: true})
	defer f.Close()
	var got lines
	more, err := f.Read(got.deliver, 0)
	if err != nil || !more {
		t.Fatalf("first read: more=%v err=%v", more, err)
	}
	equal(t, "first read", got.take(), []string{"late"})
	equal(t, "to the end", readToEnd(t, f, 0), nil)
}
