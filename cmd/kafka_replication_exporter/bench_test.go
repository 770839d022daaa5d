package main

import (
	"os"
	"testing"
	"time"
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
