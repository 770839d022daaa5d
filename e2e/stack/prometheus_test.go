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
