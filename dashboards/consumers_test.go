package dashboards

import (
	"slices"
	"testing"
)

// TestConsumerImpactRow: the overview's consumer-impact row shows the split
// the exporter exists for, each panel on the metrics that carry it.
func TestConsumerImpactRow(t *testing.T) {
	d := loadDashboard(t, "dashboards/kafka-replication-overview.json")
	want := map[string][]string{
		"Consumer groups starved by replication": {"kafka_replication_consumer_group_starved_by_replication"},
		"Lag to HW vs records above HW": {
			"kafka_replication_consumer_group_lag_to_high_watermark", "kafka_replication_consumer_group_records_above_high_watermark",
		},
		"Consumer lag (seconds)":              {"kafka_replication_consumer_group_lag_seconds"},
		"Share groups starved by replication": {"kafka_replication_share_group_starved_by_replication"},
		"Share groups: lag to HW vs records above HW": {
			"kafka_replication_share_group_lag_to_high_watermark", "kafka_replication_share_group_records_above_high_watermark",
		},
		"Last stable offset gap (HW − LSO)": {"kafka_replication_partition_high_watermark", "kafka_replication_partition_last_stable_offset"},
	}
	inRow := false
	for _, p := range panelsOf(d) {
		title, _ := p["title"].(string)
		if p["type"] == "row" {
			inRow = title == "Consumer impact"
			continue
		}
		metrics, ok := want[title]
		if !ok {
			continue
		}
		if !inRow {
			t.Errorf("panel %q is not in the Consumer impact row", title)
		}
		var used []string
		targets, _ := p["targets"].([]any)
		for _, target := range targets {
			expr, _ := dig(target, "expr").(string)
			names, err := metricNames(grafanaMacros.Replace(expr))
			if err != nil {
				t.Fatalf("panel %q: %v", title, err)
			}
			used = append(used, names...)
		}
		for _, m := range metrics {
			if !slices.Contains(used, m) {
				t.Errorf("panel %q does not query %s (queries %v)", title, m, used)
			}
		}
		delete(want, title)
	}
	for title := range want {
		t.Errorf("overview has no panel %q", title)
	}
}
