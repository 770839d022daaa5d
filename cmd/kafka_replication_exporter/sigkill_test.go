package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// TestSIGKILLRepeatsAtMostASecond bounds what a crash costs: a sidecar
// following a busy server.log is killed with SIGKILL and started again on
// its position file. What the restarted one applies again is what the
// killed one applied after its last save: at most positionSaveInterval of
// events (plus the poll interval the last ones waited), and nothing is lost.
func TestSIGKILLRepeatsAtMostASecond(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and writes a live log for seconds")
	}
	dir := t.TempDir()
	server := filepath.Join(dir, "server.log")
	positions := filepath.Join(dir, "positions.json")
	f, err := os.Create(server)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	// The writer: sigkillRate HW updates a second, in 10 ms bursts.
	var written atomic.Int64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		var buf bytes.Buffer
		for n := int64(0); ; {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			buf.Reset()
			ts := time.Now().UTC().Format("2006-01-02 15:04:05,000")
			for range sigkillRate / 100 {
				fmt.Fprintf(&buf, "[%s] DEBUG [Partition orders-%d broker=1] High watermark updated from (offset=%d, segment=[0:1]) to (offset=%d, segment=[0:2]) (kafka.cluster.Partition)\n",
					ts, n%8, n/8, n/8+1)
				n++
			}
			if _, err := f.Write(buf.Bytes()); err != nil {
				panic(err)
			}
			written.Add(sigkillRate / 100)
		}
	}()
	defer func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		<-done
	}()

	start := func() *exporterProcess {
		return startExporter(t, "--log.file="+server, "--log.from-beginning", "--log.timezone=UTC", "--log.position-file="+positions)
	}
	updates := func(p *exporterProcess) (int64, bool) {
		_, body := p.get("/metrics?name[]=kafka_replication_log_events_total")
		m := regexp.MustCompile(`kafka_replication_log_events_total\{type="hw_update"\} (\d+)`).FindStringSubmatch(body)
		if m == nil {
			return 0, false
		}
		v, _ := strconv.ParseInt(m[1], 10, 64)
		return v, true
	}

	killed := start()
	waitFor(t, "the first sidecar applying", 10*time.Second, func() bool { v, _ := updates(killed); return v > 0 })
	time.Sleep(3*time.Second + 300*time.Millisecond) // off the save ticker's beat
	applied, ok := updates(killed)
	killed.kill() // a moment after the scrape
	atKill := written.Load()
	if !ok {
		t.Fatal("no scrape before the kill")
	}
	saved := savedLines(t, server, positions)

	restarted := start()
	time.Sleep(time.Second) // still under load after the restart
	close(stop)
	<-done
	total := written.Load()
	var again int64
	waitFor(t, "the restarted sidecar at the end of the file", 20*time.Second, func() bool {
		again, _ = updates(restarted)
		return again >= total-saved
	})

	twice := applied + again - total // applied by both: killed after its last save, restarted from it
	if lost := -twice; lost > 0 {
		t.Fatalf("%d events lost: killed applied %d, restarted %d, written %d", lost, applied, again, total)
	}
	bound := int64(sigkillRate * 1.5) // positionSaveInterval, the poll interval, scheduling
	t.Logf("SIGKILL under %d events/s: killed sidecar applied %d (written by then %d, saved position after %d), restarted applied %d of %d written: %d applied twice (%.2f s of events), bound %d",
		sigkillRate, applied, atKill, saved, again, total, twice, float64(twice)/sigkillRate, bound)
	if twice > bound {
		t.Errorf("%d events applied twice after SIGKILL (%.2f s of the log), want at most %d (about %v of events)",
			twice, float64(twice)/sigkillRate, bound, positionSaveInterval)
	}
	if twice != applied-saved {
		t.Errorf("applied twice %d, but the saved position is %d events behind what the killed sidecar applied", twice, applied-saved)
	}
}

// sigkillRate is the writer's events a second: a busy broker at DEBUG.
const sigkillRate = 5000

// savedLines is how many lines of path lie before the position saved for it.
func savedLines(t *testing.T, path, positions string) int64 {
	t.Helper()
	data, err := os.ReadFile(positions)
	if err != nil {
		t.Fatal(err)
	}
	var saved struct {
		Positions []struct {
			Offset int64 `json:"offset"`
		} `json:"positions"`
	}
	if err := json.Unmarshal(data, &saved); err != nil || len(saved.Positions) != 1 {
		t.Fatalf("position file %s: %v", data, err)
	}
	content, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return int64(bytes.Count(content[:saved.Positions[0].Offset], []byte("\n")))
}
