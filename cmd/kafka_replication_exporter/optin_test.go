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

// shareGroupSeries are the golden scrape's lines that only --collector.share-groups writes.
func shareGroupSeries(line string) bool { return strings.Contains(line, "share_group") }

// TestOptInOffScrapeIsUnchanged: without an opt-in read the golden setup's
// scrape is the golden scrape without that read's lines, byte for byte,
// though the cluster has what it reads (orders has
// remote.storage.enable=true; the share group shipping exists).
func TestOptInOffScrapeIsUnchanged(t *testing.T) {
	for _, c := range []struct {
		off  string
		kept []string // the other opt-in flags of the golden scrape
		its  func(line string) bool
	}{
		{"--collector.tiered-storage", []string{"--collector.share-groups"}, tieringSeries},
		{"--collector.share-groups", []string{"--collector.tiered-storage"}, shareGroupSeries},
	} {
		t.Run(c.off, func(t *testing.T) {
			got := filterExposition(t, strings.NewReader(scrapeGoldenSetup(t, c.kept...)))
			golden, err := os.ReadFile(e2eGolden)
			if err != nil {
				t.Fatal(err)
			}
			var want strings.Builder
			for _, line := range strings.SplitAfter(string(golden), "\n") {
				if !c.its(line) {
					want.WriteString(line)
				}
			}
			if got != want.String() {
				t.Errorf("the scrape without %s differs from the golden one without its lines:\n%s", c.off, lineDiff(want.String(), got))
			}
		})
	}
}
