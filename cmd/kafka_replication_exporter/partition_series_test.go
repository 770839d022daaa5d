package main

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
)

// TestUnhealthyPartitionSeriesScrape: the golden scrape's sidecar with
// --collector.partition-series=unhealthy. Only the fake cluster's unhealthy
// partitions have series of their own (orders/0, stalled; payments/1, being
// reassigned), the log half's counters are per topic, and the scrape lints.
func TestUnhealthyPartitionSeriesScrape(t *testing.T) {
	body := scrapeGoldenSetup(t, "--collector.partition-series=unhealthy")
	unhealthy := map[string]bool{`partition="0",topic="orders"`: true, `partition="1",topic="payments"`: true}
	perTopic, own := 0, 0
	for line := range strings.Lines(body) {
		if strings.HasPrefix(line, "#") {
			continue
		}
		name, labels, _ := strings.Cut(line, "{")
		labels, _, _ = strings.Cut(labels, "}")
		if !strings.Contains(labels, "partition=") {
			if strings.HasPrefix(name, "kafka_replication_partition_") {
				perTopic++
			}
			continue
		}
		// The partition and topic labels, without a group or replica between.
		_, key, _ := strings.Cut(labels, "partition=")
		partition, rest, _ := strings.Cut(key, ",")
		_, topic, _ := strings.Cut(rest, "topic=")
		key = "partition=" + partition + ",topic=" + topic
		own++
		if !unhealthy[key] {
			t.Errorf("a healthy partition has a series of its own: %s", strings.TrimSpace(line))
		}
		if strings.HasSuffix(name, "_total") {
			t.Errorf("a log counter per partition under the unhealthy mode: %s", strings.TrimSpace(line))
		}
	}
	if own == 0 {
		t.Error("no series of the unhealthy partitions")
	}
	if perTopic == 0 {
		t.Error("no per-topic series for the healthy partitions")
	}
	problems, err := promlint.New(strings.NewReader(body)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
}
