package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logstate"
)

// BenchmarkVerifyGenlog measures `verify` end to end (read, split, parse, check)
// on a generated log (internal/genlog). VERIFY_BENCH_FILE points at a prepared file (bench/bench.sh
// makes a 1 GB one); without it a 200k-line file is generated.
func BenchmarkVerifyGenlog(b *testing.B) {
	path := os.Getenv("VERIFY_BENCH_FILE")
	if path == "" {
		b.Skip("set VERIFY_BENCH_FILE (see bench/bench.sh)")
	}
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := runVerify([]string{path}, time.UTC, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCatchUpFiles measures serve's catch-up of a backlog (the Stream
// over followed files, from the beginning, until every file is applied to
// its end) and verify's read of the same files, side by side in one run.
// CATCHUP_BENCH_DIR points at the files bench/catchup-cost.sh writes.
func BenchmarkCatchUpFiles(b *testing.B) {
	dir := os.Getenv("CATCHUP_BENCH_DIR")
	if dir == "" {
		b.Skip("set CATCHUP_BENCH_DIR (see bench/catchup-cost.sh)")
	}
	var paths []string
	var size int64
	for _, name := range []string{"server.log", "state-change.log", "controller.log"} {
		p := filepath.Join(dir, name)
		fi, err := os.Stat(p)
		if err != nil {
			b.Fatal(err)
		}
		paths, size = append(paths, p), size+fi.Size()
	}
	b.Run("serve", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			store := logstate.NewStore(nil)
			var files []*logstate.LogFile
			for _, p := range paths {
				files = append(files, logstate.NewLogFile(p, logstate.LogFileOptions{FromBeginning: true, Location: time.UTC, PollInterval: time.Nanosecond}))
			}
			stream := logstate.NewStream(store, files, time.Hour)
			for !stream.CaughtUp() {
				stream.Step()
			}
		}
	})
	b.Run("verify", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			if _, err := runVerify(paths, time.UTC, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
