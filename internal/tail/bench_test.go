package tail

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkFollowerThroughput measures Poll over a pre-written file of
// 100,000 Kafka lines (~22 MB): read, split into lines, deliver.
//
//	go test -run '^$' -bench FollowerThroughput -benchtime 20x ./internal/tail/
func BenchmarkFollowerThroughput(b *testing.B) {
	const n = 100_000
	path := filepath.Join(b.TempDir(), "server.log")
	var data []byte
	for i := range n {
		data = appendKafkaLine(data, i)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	var got int
	for b.Loop() {
		f := New(path, Options{LineTime: lineTime, FromBeginning: true})
		got = 0
		if err := f.Poll(func([]byte) { got++ }); err != nil {
			b.Fatal(err)
		}
		f.Close()
		if got != n {
			b.Fatalf("%d lines, want %d", got, n)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}
