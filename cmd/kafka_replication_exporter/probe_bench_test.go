package main

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
)

// benchKafka is an in-process kfake of topics × partitions, RF 3.
func benchKafka(b *testing.B, topics, partitions int) string {
	b.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(3))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	for i := range topics {
		if err := c.CreateTopic(fmt.Sprintf("topic-%03d", i), int32(partitions), map[string]string{"min.insync.replicas": "2"}); err != nil {
			b.Fatal(err)
		}
	}
	return c.ListenAddrs()[0]
}

// BenchmarkProbeVsMetrics10k: a probe of a 10k-partition target against a
// /metrics scrape of a dedicated --scope=cluster exporter of the same
// cluster, in process, between two refreshes.
func BenchmarkProbeVsMetrics10k(b *testing.B) {
	addr := benchKafka(b, 10, 1000)
	cfg := filepath.Join(b.TempDir(), "probe.yml")
	writeProbeConfig(b, cfg, map[string]string{"big": addr})
	_, _, probe := startProbeSidecar(b, cfg)
	probeWhenUp(b, probe, "big")
	sc, s := startSidecar(b, "--kafka.server="+addr, "--scope=cluster", "--web.disable-exporter-metrics", "--kafka.refresh-interval=1h")
	waitFor(b, "the dedicated exporter's first refresh", 60e9, sc.ready)
	dedicated := sc.handler(s)
	for _, bc := range []struct {
		name, url string
		h         http.Handler
	}{
		{"metrics", "/metrics", dedicated},
		{"probe", "/probe?target=big", probe},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			var n int
			for b.Loop() {
				code, body := get(bc.h, bc.url)
				if code != http.StatusOK {
					b.Fatal(code, body)
				}
				n = len(body)
			}
			b.ReportMetric(float64(n), "body-B")
		})
	}
}

// BenchmarkProbeIdleTargetMemory: the heap one started target holds once
// it has refreshed (its poller, connections and snapshot), from N targets
// naming the same in-process cluster, after a GC.
func BenchmarkProbeIdleTargetMemory(b *testing.B) {
	for _, bc := range []struct {
		name                      string
		topics, partitions, count int
	}{
		{"9-partitions", 3, 3, 20},
		{"10k-partitions", 10, 1000, 4},
	} {
		b.Run(bc.name, func(b *testing.B) {
			addr := benchKafka(b, bc.topics, bc.partitions)
			targets := map[string]string{}
			for i := range bc.count {
				targets[fmt.Sprintf("t%02d", i)] = addr
			}
			cfg := filepath.Join(b.TempDir(), "probe.yml")
			writeProbeConfig(b, cfg, targets)
			_, _, h := startProbeSidecar(b, cfg, fmt.Sprintf("--probe.max-targets=%d", bc.count))
			before := heapInUse()
			for b.Loop() {
				for name := range targets {
					probeWhenUp(b, h, name)
				}
			}
			perTarget := (float64(heapInUse()) - float64(before)) / float64(bc.count)
			b.ReportMetric(perTarget, "heap-B/target")
			_, body := get(h, "/probe?target=t00")
			b.ReportMetric(float64(strings.Count(body, "\n")), "lines/probe")
		})
	}
}
