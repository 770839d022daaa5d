package logparse

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/*.events.json from the parser's output")

// parseFile runs a log through the Splitter and Parser exactly as the
// `events` command does and returns one JSON object per event line.
func parseFile(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, p := NewSplitter(), NewParser(time.UTC)
	var evs []Event
	emit := func(r *Record) {
		if ev, ok := p.Parse(*r); ok {
			evs = append(evs, ev.Clone())
		}
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		if r := s.Push(sc.Bytes()); r != nil {
			emit(r)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for r := s.Flush(); r != nil; r = s.Flush() {
		emit(r)
	}
	// Records of interleaved compose sources complete out of line order.
	slices.SortStableFunc(evs, func(a, b Event) int { return a.Line - b.Line })
	var out []byte
	for i := range evs {
		out = AppendJSON(out, &evs[i])
		out = append(out, '\n')
	}
	return out
}

// TestGolden is the parser's spec: every testdata/<case>.log must yield
// exactly testdata/<case>.events.json. New real-broker excerpts dropped in
// testdata are picked up automatically; run with -update to create their
// golden file, then review it line by line.
func TestGolden(t *testing.T) {
	logs, err := filepath.Glob("testdata/*.log")
	if err != nil || len(logs) == 0 {
		t.Fatalf("want testdata/*.log cases, got %v (%v)", logs, err)
	}
	for _, path := range logs {
		name := strings.TrimSuffix(filepath.Base(path), ".log")
		t.Run(name, func(t *testing.T) {
			got := parseFile(t, path)
			for i, l := range bytes.Split(bytes.TrimSuffix(got, []byte("\n")), []byte("\n")) {
				if len(l) > 0 && !json.Valid(l) {
					t.Fatalf("event %d is not valid JSON: %s", i+1, l)
				}
			}
			golden := strings.TrimSuffix(path, ".log") + ".events.json"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestGolden -update to create it)", err)
			}
			if !bytes.Equal(want, got) {
				wl, gl := bytes.Split(want, []byte("\n")), bytes.Split(got, []byte("\n"))
				for i := 0; i < len(wl) || i < len(gl); i++ {
					var w, g []byte
					if i < len(wl) {
						w = wl[i]
					}
					if i < len(gl) {
						g = gl[i]
					}
					if !bytes.Equal(w, g) {
						t.Fatalf("%s event %d:\nwant %s\ngot  %s", golden, i+1, w, g)
					}
				}
			}
		})
	}
}
