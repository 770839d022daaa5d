package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/genlog"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logstate"
)

// writeBroker writes a genlog.Broker timeline of n records into dir's
// server.log and state-change.log and returns their paths.
func writeBroker(t testing.TB, dir string, n int) []string {
	t.Helper()
	paths := []string{filepath.Join(dir, "server.log"), filepath.Join(dir, "state-change.log")}
	var ws []*bufio.Writer
	for _, p := range paths {
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		ws = append(ws, bufio.NewWriterSize(f, 1<<20))
	}
	for _, l := range genlog.Broker(genlog.BrokerOptions{Records: n, Seed: 42}) {
		_, _ = ws[l.File].WriteString(l.Text) // a bufio.Writer keeps its first error for the Flush below
	}
	for _, w := range ws {
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	return paths
}

// A backlog larger than anything that was ever queued (the old catch-up
// applied events past 200,000 before the earlier ones) is applied in time
// order: no HW violation, epoch regression or truncation below the HW that
// verify does not find, and the same state as verify's.
func TestCatchUpOfALargeBacklogAgreesWithVerify(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 300k-record backlog")
	}
	paths := writeBroker(t, t.TempDir(), 300_000)
	store := logstate.NewStore(nil)
	var files []*logstate.LogFile
	for _, p := range paths {
		files = append(files, logstate.NewLogFile(p, logstate.LogFileOptions{FromBeginning: true, Location: time.UTC, PollInterval: time.Nanosecond}))
	}
	stream := logstate.NewStream(store, files, time.Nanosecond)
	for stream.Step() {
	}
	want := fullReadState(t, paths)
	compareStates(t, store, want)
	parts, _ := snapshot(store)
	for k, p := range parts {
		if c := p.Counters; c[logstate.HWViolations]+c[logstate.EpochRegressions]+c[logstate.TruncationsBelowHW] != 0 {
			t.Errorf("%v: want no violation in a healthy broker's log, got %+v", k, c)
		}
	}
}

func TestDuplicateLogFileIsRefused(t *testing.T) {
	dir := t.TempDir()
	server := filepath.Join(dir, "server.log")
	writeFile(t, server, nil, 0o644)
	alias := filepath.Join(dir, "alias.log")
	if err := os.Symlink(server, alias); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"serve", "--log.file=" + server, "--log.file=" + server},
		{"serve", "--log.file=" + server, "--log.file=" + dir + "/./server.log"},
		{"serve", "--log.file=" + server, "--log.file=" + alias},
		{"serve", "--log.file=" + dir + "/missing.log", "--log.file=" + dir + "/missing.log"},
	} {
		code, _, errOut := runCLI(t, "", args...)
		if code != exitUsage || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || !strings.Contains(errOut, "--log.file") {
			t.Errorf("%v: want exit 2 and one line naming --log.file, got %d %q", args, code, errOut)
		}
	}
}

// The sidecar restarted over a large backlog (at first under a tight CPU
// limit, so that a fast machine cannot finish before it is watched): HTTP
// answers at once (/-/healthy 200, /-/ready 503 until caught up), the
// progress shows, the positions are saved while it catches up, SIGTERM is
// honored within 2s mid-way, and the next start resumes where the last one
// got to, with memory that does not depend on the backlog.
func TestCatchUpKeepsServingAndResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and writes a large backlog")
	}
	dir := t.TempDir()
	paths := writeBroker(t, dir, 20_000)
	appendBacklog(t, paths[0], 1<<30) // a TRACE backlog of 1 GiB: seconds to catch up
	positions := filepath.Join(dir, "positions.json")
	start := func() *exporterProcess {
		return startExporter(t, "--log.file="+paths[0], "--log.file="+paths[1], "--log.from-beginning", "--log.position-file="+positions)
	}
	savedOffset := func() int64 {
		data, err := os.ReadFile(positions)
		if err != nil {
			return 0
		}
		var saved struct {
			Positions []struct {
				Offset int64 `json:"offset"`
			} `json:"positions"`
		}
		if err := json.Unmarshal(data, &saved); err != nil {
			return 0
		}
		var n int64
		for _, p := range saved.Positions {
			n += p.Offset
		}
		return n
	}

	p := start()
	// At a tenth of a core the 1 GiB takes ten seconds or more even where
	// the catch-up runs at 1 GB/s (docs/benchmarks.md), well past the first
	// second's position save this test waits for.
	resume := p.throttle(0.1)
	waitFor(t, "/-/healthy", 10*time.Second, func() bool { code, _ := p.get("/-/healthy"); return code == 200 })
	if code, _ := p.get("/-/ready"); code != http.StatusServiceUnavailable {
		t.Errorf("want /-/ready 503 while catching up, got %d", code)
	}
	waitFor(t, "positions saved during catch-up", 20*time.Second, func() bool { return savedOffset() > 0 })
	body := p.metrics()
	if !strings.Contains(body, "kafka_replication_log_caught_up 0\n") || !strings.Contains(body, "kafka_replication_log_file_behind_bytes") {
		t.Errorf("want caught_up 0 and behind bytes while catching up, got\n%s", grepLines(body, "caught_up|behind"))
	}
	resume()
	sent := time.Now()
	if err := p.signal(syscall.SIGTERM, 10*time.Second); err != nil {
		t.Fatalf("want exit 0 after SIGTERM, got %v\n%s", err, p.stderr.String())
	}
	if d := time.Since(sent); d > 2*time.Second {
		t.Errorf("SIGTERM during catch-up took %v, want under 2s", d)
	}
	first := savedOffset()
	var size int64
	for _, p := range paths {
		size += fileSize(t, p)
	}
	if first <= 0 || first >= size {
		t.Fatalf("want a saved position inside the backlog, got %d of %d", first, size)
	}

	p = start()
	waitFor(t, "caught up after the restart", 120*time.Second, func() bool { code, _ := p.get("/-/ready"); return code == 200 })
	body = p.metrics()
	if !strings.Contains(body, "kafka_replication_log_caught_up 1\n") {
		t.Errorf("want caught_up 1, got\n%s", grepLines(body, "caught_up"))
	}
	if rss := peakRSS(t, p.cmd.Process.Pid); rss > 96<<20 {
		t.Errorf("peak RSS %d MB catching up %d MB, want at most 96 MB", rss>>20, size>>20)
	}
	// The last record is applied once the files were quiet for a poll
	// interval, and saved within a second.
	waitFor(t, "the positions at the end of the files", 10*time.Second, func() bool { return savedOffset() == size })
	p.stop()
	if got := savedOffset(); got != size {
		t.Errorf("want the positions at the end of the files (%d) after SIGTERM, got %d", size, got)
	}
}

// appendBacklog appends about size bytes of a busy broker's TRACE log to
// path: one genlog block, written again and again.
func appendBacklog(t *testing.T, path string, size int64) {
	t.Helper()
	var block bytes.Buffer
	if _, err := genlog.Write(&block, genlog.Options{Lines: 40_000, Partitions: 500, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for n := int64(0); n < size; n += int64(block.Len()) {
		if _, err := f.Write(block.Bytes()); err != nil {
			t.Fatal(err)
		}
	}
}

// peakRSS is the process's VmHWM in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

func grepLines(text, words string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		for _, w := range strings.Split(words, "|") {
			if strings.Contains(l, w) && !strings.HasPrefix(l, "#") {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}
