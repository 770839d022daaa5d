package poller

import (
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
)

// BenchmarkAdminRefreshTiering10k is a refresh of 10 topics × 1000
// partitions, RF 3, all with remote.storage.enable=true, cluster scope,
// against a 3-broker kfake in the same process (its CPU included), with
// --collector.tiered-storage off and on: on adds remote.storage.enable to the
// DescribeConfigs and two ListOffsets per leader.
//
//	go test -run '^$' -bench 'RefreshTiering10k' -benchtime 20x -benchmem ./internal/poller/
func BenchmarkAdminRefreshTiering10k(b *testing.B) {
	c, err := kfake.NewCluster(kfake.NumBrokers(3))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	const topics, parts = 10, 1000
	for i := range topics {
		if err := c.CreateTopic(fmt.Sprintf("tiered-%02d", i), parts, map[string]string{"remote.storage.enable": "true"}); err != nil {
			b.Fatal(err)
		}
	}
	for _, mode := range []string{"off", "on"} {
		b.Run(mode, func(b *testing.B) {
			a, _ := newTestPoller(b, c.ListenAddrs(), -1, ScopeCluster, Options{}, func(c *Config) { c.Tiering.Enabled = mode == "on" })
			a.refresh(context.Background()) // dial, ApiVersions
			if n := exportedPartitions(a); n != topics*parts {
				b.Fatalf("want %d partitions exported, got %d", topics*parts, n)
			}
			benchRefreshes(b, a)
			if s := a.Snapshot(); mode == "on" && s.TieringUnknown[TieringKnown] != topics*parts {
				b.Fatalf("want every partition's tiering known, got %v", s.TieringUnknown)
			}
		})
	}
}
