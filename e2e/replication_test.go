package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/harness"
)

// TestReplication runs the scenarios that keep a cluster consistent on one
// shared cluster per Kafka version (matrix_test.go says which run where): each
// leaves every broker running and uses its own topic, and verify must pass on
// all logs afterwards.
//
// Wall time 65 s (4.4.0), 26 s (4.1.1, under_min_isr only), 40 s (3.9.1).
func TestReplication(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Kafka cluster; skipped with -short")
	}
	scenarios := []struct {
		name     string
		run      func(context.Context, *testing.T, *harness.Cluster)
		versions []string
	}{
		{"baseline", testBaseline, logVersions},
		{"isr_shrink_expand", testISRShrinkExpand, logVersions},
		{"under_min_isr", testUnderMinISR, everyVersion},
		{"leader_failover", testLeaderFailover, logVersions},
		{"slow_follower", testSlowFollower, logVersions},
	}
	var all [][]string
	for _, s := range scenarios {
		all = append(all, s.versions)
	}
	for _, version := range versionsOf(all...) {
		t.Run(version, func(t *testing.T) {
			c := harness.StartT(t, harness.Options{
				Version:          version,
				BrokerConfig:     harness.LeaderShrinksFirst,
				ControllerConfig: harness.LeaderShrinksFirst,
			})
			for _, s := range scenarios {
				if !slices.Contains(s.versions, version) {
					continue
				}
				t.Run(s.name, func(t *testing.T) {
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
					defer cancel()
					restoreAll(ctx, t, c)
					s.run(ctx, t, c)
				})
			}
		})
	}
}

// restoreAll restarts any node a failed scenario left down or paused, so the
// next scenario starts from a healthy cluster.
func restoreAll(ctx context.Context, t *testing.T, c *harness.Cluster) {
	t.Helper()
	for _, n := range c.Nodes() {
		if !n.Running() {
			if err := c.StartNode(ctx, n.ID); err != nil {
				t.Fatalf("restore node %d: %v", n.ID, err)
			}
			continue
		}
		if n.Paused() {
			must(t, c.ResumeNode(n.ID))
		}
	}
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
}

// serverLogs returns a node's server.log files in order (rolled first).
func serverLogs(t *testing.T, c *harness.Cluster, id int32) []string {
	t.Helper()
	files, err := c.Node(id).LogFiles("server.log")
	if err != nil || len(files) == 0 {
		t.Fatalf("node %d: no server.log: %v", id, err)
	}
	return files
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
