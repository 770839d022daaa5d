//go:build unix

package tail

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err) // only with a bad argument
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRotationManySiblings measures one rename rotation seen by a
// follower whose file has n numbered rolled siblings (log4j2's default
// numbering, .1 oldest), written one after another as a roller would, so
// their mtimes chain within a second and their first lines decide: the
// worst case, every sibling's first bytes are read at the first rotation
// (first-s, first-cpu-s). ns/op and cpu-s/op are the later rotations;
// CPU time is the process's, which a loaded machine inflates less than the
// wall time.
//
//	go test -run '^$' -bench RotationManySiblings -benchtime 3x ./internal/tail/
func BenchmarkRotationManySiblings(b *testing.B) {
	for _, n := range []int{10_000, 50_000, 100_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			if testing.Short() && n > 10_000 {
				b.Skip("-short")
			}
			dir := b.TempDir()
			path := filepath.Join(dir, "server.log")
			for i := 1; i <= n; i++ {
				if err := os.WriteFile(fmt.Sprintf("%s.%d", path, i), appendKafkaLine(nil, i), 0o644); err != nil {
					b.Fatal(err)
				}
			}
			if err := os.WriteFile(path, appendKafkaLine(nil, n+1), 0o644); err != nil {
				b.Fatal(err)
			}
			f := New(path, Options{LineTime: lineTime, FromBeginning: true})
			defer f.Close()
			if err := f.Poll(func([]byte) {}); err != nil {
				b.Fatal(err)
			}
			next := n + 1
			rotate := func() (wall, cpu time.Duration) {
				b.StopTimer()
				if err := os.Rename(path, fmt.Sprintf("%s.%d", path, next)); err != nil {
					b.Fatal(err)
				}
				next++
				if err := os.WriteFile(path, appendKafkaLine(nil, next), 0o644); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				lines := 0
				c, w := cpuTime(), time.Now()
				if err := f.Poll(func([]byte) { lines++ }); err != nil {
					b.Fatal(err)
				}
				wall, cpu = time.Since(w), cpuTime()-c
				if lines != 1 {
					b.Fatalf("read %d lines after the rotation, want 1", lines)
				}
				return wall, cpu
			}
			// The first rotation reads every sibling's first bytes; the
			// later ones only those of files they have not seen.
			coldWall, coldCPU := rotate()
			var cpu time.Duration
			b.ResetTimer()
			for b.Loop() {
				_, c := rotate()
				cpu += c
			}
			b.ReportMetric(coldWall.Seconds(), "first-s")
			b.ReportMetric(coldCPU.Seconds(), "first-cpu-s")
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}
