package stack

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// Prometheus reads its targets from a file SetTargets rewrites, so a sidecar
// restarted on a new port is scraped at its new address, under the same
// labels. A real Prometheus (the pinned build), skipped when not installed.
func TestPrometheusFollowsSetTargets(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Prometheus")
	}
	if _, err := Tool("prometheus"); err != nil {
		t.Skip(err)
	}
	exporter := func(v int) *httptest.Server {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprintf(w, "kafka_replication_up %d\n", v)
		}))
		t.Cleanup(s.Close)
		return s
	}
	before, after := exporter(1), exporter(2)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	prom, err := StartPrometheus(ctx, t.TempDir(), []Target{{Addr: before.Listener.Addr().String(), Instance: "kafka-1"}}, nil, "", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer prom.Close()
	wait := func(want float64) {
		t.Helper()
		var last []Sample
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
			if last, err = prom.Query(ctx, `kafka_replication_up{cluster="local",instance="kafka-1"}`); err == nil && len(last) == 1 && last[0].Value == want {
				return
			}
		}
		t.Fatalf("kafka_replication_up{instance=kafka-1} is not %v within 30s: %v (err %v)", want, last, err)
	}
	wait(1)
	if err := prom.SetTargets([]Target{{Addr: after.Listener.Addr().String(), Instance: "kafka-1"}}); err != nil {
		t.Fatal(err)
	}
	wait(2)
}

// StartPrometheusRelabeled applies its relabel_configs to the targets: a
// shard keeps the targets whose label hashes to its number. A real
// Prometheus, skipped when not installed.
func TestPrometheusRelabeledKeepsItsShard(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Prometheus")
	}
	if _, err := Tool("prometheus"); err != nil {
		t.Skip(err)
	}
	var targets []Target
	for _, instance := range []string{"kafka-1", "kafka-2"} {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprintln(w, "kafka_replication_up 1")
		}))
		t.Cleanup(s.Close)
		targets = append(targets, Target{Addr: s.Listener.Addr().String(), Instance: instance})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// hashmod 2 of "kafka-2" is 1, of "kafka-1" 0 (the last 8 bytes of their MD5).
	relabel := "- source_labels: [instance]\n  modulus: 2\n  target_label: __tmp_hash\n  action: hashmod\n" +
		"- source_labels: [__tmp_hash]\n  regex: \"1\"\n  action: keep\n"
	prom, err := StartPrometheusRelabeled(ctx, t.TempDir(), targets, nil, "", time.Second, relabel)
	if err != nil {
		t.Fatal(err)
	}
	defer prom.Close()
	var got []Sample
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		if got, err = prom.Query(ctx, `up`); err == nil && len(got) == 1 && got[0].Labels["instance"] == "kafka-2" {
			break
		}
	}
	if len(got) != 1 || got[0].Labels["instance"] != "kafka-2" {
		t.Fatalf("the shard scrapes %v (err %v), want kafka-2 alone", got, err)
	}
	// Another scrape interval: a target the shard dropped would show by now.
	time.Sleep(2 * time.Second)
	if got, err = prom.Query(ctx, `count(up)`); err != nil || len(got) != 1 || got[0].Value != 1 {
		t.Errorf("count(up) = %v (err %v), want 1", got, err)
	}
}
