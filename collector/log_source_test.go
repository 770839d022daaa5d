package collector

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkLogFileLive measures the live path of the sidecar per line: follow
// (tail), split, parse, check and apply to the Store — what a busy broker's
// log costs, without scrapes. Input: a genlog.py TRACE mix over 10,000
// partitions (shared/bench, beside the repository).
func BenchmarkLogFileLive(b *testing.B) {
	script, _ := filepath.Abs("../../shared/bench/genlog.py")
	if _, err := os.Stat(script); err != nil {
		b.Skip("needs shared/bench/genlog.py")
	}
	dir := b.TempDir()
	src := filepath.Join(dir, "server.log")
	if out, err := exec.Command("python3", script, "--lines", "200000", "--partitions", "10000", "--seed", "3",
		"--out", src, "--manifest", filepath.Join(dir, "m.json")).CombinedOutput(); err != nil {
		b.Fatalf("genlog: %v %s", err, out)
	}
	fi, _ := os.Stat(src)
	b.SetBytes(fi.Size())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		store := NewStore(nil)
		f := NewLogFile(src, store, LogFileOptions{FromBeginning: true, Location: time.UTC})
		store.Tick(time.Now()) // as Run does before each poll
		if err := f.follower.Poll(f.line); err != nil {
			b.Fatal(err)
		}
		f.flush()
		if f.Records() == 0 {
			b.Fatal("nothing read")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/200000, "ns/line")
}
