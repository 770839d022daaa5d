package main

import (
	"strings"
	"testing"
)

// The panels drawn exist in the shipped dashboard, and their expressions
// have no template variable left once substituted.
func TestPanelsInDashboard(t *testing.T) {
	exprs, err := panelExprs("../../../dashboards/kafka-replication-overview.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, title := range panels {
		qs := exprs[title]
		if len(qs) == 0 {
			t.Errorf("dashboard has no panel %q", title)
		}
		for _, q := range qs {
			if s := substitute(q, "10s"); strings.Contains(s, "$") {
				t.Errorf("%s: variable left in %q", title, s)
			}
		}
	}
}
