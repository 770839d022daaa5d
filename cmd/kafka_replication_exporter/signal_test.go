//go:build unix

package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// SIGHUP, which a supervisor or a closed terminal sends, stops the exporter
// as SIGTERM does: positions saved, exit 0. Its default action would kill the
// process without saving, and the lines read since the last save would be
// counted again after the restart. A real process, because the default
// action is the bug.
func TestSIGHUPSavesPositionsAndExits(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	logFile := writePartitionsLog(t, 100)
	size := fileSize(t, logFile)
	positions := filepath.Join(dir, "positions.json")
	p := startExporter(t, "--log.file="+logFile, "--log.from-beginning", "--log.position-file="+positions, "--log.poll-interval=20ms")

	// Every record applied: the last one too, flushed once the file was quiet.
	want := "kafka_replication_log_records_total{file=\"" + logFile + "\"} 100\n"
	waitFor(t, "the exporter to read the whole log", 20*time.Second, func() bool { return strings.Contains(p.metrics(), want) })
	// Whatever the periodic save wrote: what is there after the signal must
	// come from the shutdown.
	if err := os.Remove(positions); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	if err := p.signal(syscall.SIGHUP, 15*time.Second); err != nil {
		t.Fatalf("want exit 0 after SIGHUP, got %v\n%s", err, p.stderr.String())
	}

	data, err := os.ReadFile(positions)
	if err != nil {
		t.Fatalf("want the positions saved at SIGHUP: %v\n%s", err, p.stderr.String())
	}
	var saved struct {
		Positions []struct {
			Path   string `json:"path"`
			Offset int64  `json:"offset"`
		} `json:"positions"`
	}
	if err := json.Unmarshal(data, &saved); err != nil {
		t.Fatal(err)
	}
	if len(saved.Positions) != 1 || saved.Positions[0].Path != logFile || saved.Positions[0].Offset != size {
		t.Errorf("want %s saved at offset %d, got %s", logFile, size, data)
	}
	if !strings.Contains(p.stderr.String(), "hangup") {
		t.Errorf("want the shutdown log line to name the signal, got\n%s", p.stderr.String())
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
