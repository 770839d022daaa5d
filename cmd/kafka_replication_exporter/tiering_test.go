package main

import (
	"os"
	"strings"
	"testing"
)

// tieringSeries are the golden scrape's lines that only --collector.tiered-storage writes.
func tieringSeries(line string) bool {
	return strings.Contains(line, "tiered") || strings.Contains(line, "tiering") || strings.Contains(line, "local_log_start_offset")
}

// TestTieringOffScrapeIsUnchanged: without --collector.tiered-storage the
// golden setup's scrape is the golden scrape without its tiering lines, byte
// for byte, though orders has remote.storage.enable=true.
func TestTieringOffScrapeIsUnchanged(t *testing.T) {
	got := filterExposition(t, strings.NewReader(scrapeGoldenSetup(t)))
	golden, err := os.ReadFile(e2eGolden)
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for _, line := range strings.SplitAfter(string(golden), "\n") {
		if !tieringSeries(line) {
			want.WriteString(line)
		}
	}
	if got != want.String() {
		t.Errorf("the scrape without --collector.tiered-storage differs from the golden one without its tiering lines:\n%s", lineDiff(want.String(), got))
	}
}
