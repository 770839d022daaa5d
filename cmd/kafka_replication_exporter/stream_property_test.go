package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/genlog"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logstate"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/tail"
)

// There is one reader (serve follows with it, verify reads to the end with
// it): what it applies from a broker's files while they are written (bursts,
// lines cut in two, pauses) and read in few or many steps between writes
// equals what one read of the finished files to their end applies. With
// restarts from the position file in between, no event is lost or applied
// twice, and no invariant is violated that the full read finds intact: a
// restart forgets the state, never invents a violation.
func TestFollowingAgreesWithOneFullRead(t *testing.T) {
	for seed := range uint64(16) {
		restarts := seed%2 == 1
		t.Run(fmt.Sprintf("seed=%d/restarts=%v", seed, restarts), func(t *testing.T) {
			lines := genlog.Broker(genlog.BrokerOptions{Records: 4000, Seed: seed, FutureStamp: !restarts})
			dir := t.TempDir()
			paths := []string{filepath.Join(dir, "server.log"), filepath.Join(dir, "state-change.log")}
			served := serveWhileWriting(t, rand.New(rand.NewPCG(seed, 7)), paths, lines, restarts)
			want := fullReadState(t, paths)
			if restarts {
				compareAcrossRestarts(t, served, want)
				return
			}
			compareStates(t, served[0], want)
		})
	}
}

// serveWhileWriting writes lines into paths from one goroutine, in bursts
// with short pauses and some lines cut in two, while a stream follows them
// live from another (polling every millisecond), restarting it from its
// saved positions every few milliseconds when asked; it returns one state
// per run of the stream. The schedule is the machine's: every run is another.
func serveWhileWriting(t *testing.T, rng *rand.Rand, paths []string, lines []genlog.BrokerLine, restarts bool) []*logstate.Store {
	files := make([]*os.File, len(paths))
	for i, p := range paths {
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		files[i] = f
	}
	pauses := make([]time.Duration, 0, len(lines))
	cuts := make([]bool, 0, len(lines))
	for range lines {
		pause := time.Duration(0)
		if rng.IntN(20) == 0 {
			pause = time.Duration(rng.IntN(2000)) * time.Microsecond
		}
		pauses = append(pauses, pause)
		cuts = append(cuts, rng.IntN(10) == 0)
	}
	written := make(chan error, 1)
	go func() {
		for i, l := range lines {
			text := l.Text
			if cuts[i] {
				// Only within the first line: a logger writes one record at once.
				half := strings.IndexByte(text, '\n') / 2
				if _, err := files[l.File].WriteString(text[:half]); err != nil {
					written <- err
					return
				}
				time.Sleep(50 * time.Microsecond)
				text = text[half:]
			}
			if _, err := files[l.File].WriteString(text); err != nil {
				written <- err
				return
			}
			time.Sleep(pauses[i])
		}
		written <- nil
	}()

	var runs []*logstate.Store
	saved := map[string]tail.Position{}
	run := func(d time.Duration, done <-chan error) (error, bool) {
		store := logstate.NewStore(nil)
		var lfs []*logstate.LogFile
		for _, p := range paths {
			// A held record is flushed after 100ms of quiet: a write the
			// reader saw only in part (it crossed a page) completes sooner,
			// even on a loaded machine under the race detector.
			opts := logstate.LogFileOptions{FromBeginning: true, Location: time.UTC, PollInterval: 100 * time.Millisecond}
			if pos, ok := saved[p]; ok {
				opts.Start = &pos
			}
			lfs = append(lfs, logstate.NewLogFile(p, opts))
		}
		stream := logstate.NewStream(store, lfs, time.Millisecond)
		runs = append(runs, store)
		ctx, cancel := context.WithTimeout(context.Background(), d)
		stopped := make(chan struct{})
		go func() { stream.Run(ctx); close(stopped) }()
		var err error
		finished := false
		select {
		case err = <-done:
			finished = true
		case <-ctx.Done():
		}
		cancel()
		<-stopped
		if finished {
			// Everything is written: step until the held records were
			// quiet long enough to be flushed and nothing is left.
			for quietSince := time.Now(); time.Since(quietSince) < 300*time.Millisecond; time.Sleep(time.Millisecond) {
				if stream.Step() {
					quietSince = time.Now()
				}
			}
		}
		for _, f := range stream.Files() {
			if pos, ok := f.Position(); ok {
				saved[f.Path] = pos
			}
		}
		return err, finished
	}
	for {
		d := time.Hour
		if restarts {
			d = time.Duration(2+rng.IntN(20)) * time.Millisecond
		}
		err, finished := run(d, written)
		if err != nil {
			t.Fatal(err)
		}
		if finished {
			return runs
		}
	}
}

// fullReadState is what verify's read of the files to their end applies to a Store.
func fullReadState(t *testing.T, paths []string) *logstate.Store {
	store := logstate.NewStore(nil)
	_, err := readLogs(paths, time.UTC, nil, false, func(ev *logparse.Event, _ []byte) {
		store.Apply(ev)
	})
	if err != nil {
		t.Fatal(err)
	}
	return store
}

func snapshot(s *logstate.Store) (map[logparse.PartitionKey]logstate.Partition, [256]uint64) {
	var snap logstate.Snapshot
	s.Snapshot(&snap)
	m := map[logparse.PartitionKey]logstate.Partition{}
	for _, p := range snap.Partitions {
		m[p.PartitionKey] = p
	}
	return m, snap.Events
}

func compareStates(t *testing.T, got, want *logstate.Store) {
	t.Helper()
	gotParts, gotEvents := snapshot(got)
	wantParts, wantEvents := snapshot(want)
	if gotEvents != wantEvents {
		t.Errorf("events by type: serve %v, verify %v", gotEvents[:len(logparse.Types())+1], wantEvents[:len(logparse.Types())+1])
	}
	if len(gotParts) != len(wantParts) {
		t.Errorf("serve has %d partitions, verify %d", len(gotParts), len(wantParts))
	}
	for k, w := range wantParts {
		if g := gotParts[k]; g != w {
			t.Errorf("%v:\n serve  %+v\n verify %+v", k, g, w)
		}
	}
	var gotSnap, wantSnap logstate.Snapshot
	got.Snapshot(&gotSnap)
	want.Snapshot(&wantSnap)
	if !slices.Equal(gotSnap.LogDirs, wantSnap.LogDirs) {
		t.Errorf("log directories: serve %v, verify %v", gotSnap.LogDirs, wantSnap.LogDirs)
	}
}

// compareAcrossRestarts: every event applied once over all runs; counters
// that only count lines add up exactly; those the checker decides against
// earlier lines never exceed verify's, and none is a violation verify does
// not find.
func compareAcrossRestarts(t *testing.T, runs []*logstate.Store, want *logstate.Store) {
	t.Helper()
	var events [256]uint64
	sums := map[logparse.PartitionKey]logstate.Counters{}
	for _, run := range runs {
		parts, ev := snapshot(run)
		for i, n := range ev {
			events[i] += n
		}
		for k, p := range parts {
			c := sums[k]
			for i, n := range p.Counters {
				c[i] += n
			}
			sums[k] = c
		}
	}
	wantParts, wantEvents := snapshot(want)
	if events != wantEvents {
		t.Errorf("events by type over %d runs: serve %v, verify %v", len(runs), events[:len(logparse.Types())+1], wantEvents[:len(logparse.Types())+1])
	}
	exact := []logstate.Counter{logstate.HWUpdates, logstate.NotEnoughReplicas, logstate.Truncations, logstate.LeaderTransitions, logstate.FollowerTransitions}
	atMost := []logstate.Counter{logstate.HWViolations, logstate.EpochRegressions, logstate.ISRShrinks, logstate.ISRExpands, logstate.TruncationsBelowHW}
	for k, w := range wantParts {
		g := sums[k]
		for _, c := range exact {
			if g[c] != w.Counters[c] {
				t.Errorf("%v counter %d: serve %d over %d runs, verify %d", k, c, g[c], len(runs), w.Counters[c])
			}
		}
		for _, c := range atMost {
			if g[c] > w.Counters[c] {
				t.Errorf("%v counter %d: serve %d over %d runs, more than verify's %d", k, c, g[c], len(runs), w.Counters[c])
			}
		}
	}
}
