package main

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func scrape(t *testing.T, h http.Handler, target, acceptEncoding string) (body string, hdr http.Header) {
	t.Helper()
	req := httptest.NewRequest("GET", target, nil)
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("want 200, got %d: %s", rec.Code, rec.Body)
	}
	var r io.Reader = rec.Body
	if rec.Header().Get("Content-Encoding") == "gzip" {
		gz, err := gzip.NewReader(rec.Body)
		if err != nil {
			t.Fatal(err)
		}
		r = gz
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b), rec.Header()
}

// The sidecar's handler serves the same body compressed or not, in the text
// format 0.0.4, and name[] selects whole families.
func TestMetricsHandler(t *testing.T) {
	addr := fakeCluster(t)
	for _, labels := range []string{"--collector.partition-labels", "--no-collector.partition-labels"} {
		t.Run(labels, func(t *testing.T) {
			sc, s := startFixtureSidecar(t, addr, labels)
			h := sc.handler(s)
			want, _ := scrape(t, h, "/metrics", "")
			if !strings.Contains(want, "kafka_replication_partition_replicas{") || !strings.Contains(want, "kafka_replication_partition_isr_shrinks_total{") {
				t.Fatalf("want admin and log partition series in the scrape:\n%s", want)
			}
			for _, enc := range []string{"gzip", "identity", "gzip;q=0.5, identity;q=0.8"} {
				got, hdr := scrape(t, h, "/metrics", enc)
				if got != want {
					t.Errorf("Accept-Encoding %q: body differs from the uncompressed one:\n%s", enc, lineDiff(want, got))
				}
				if ct := hdr.Get("Content-Type"); ct != "text/plain; version=0.0.4; charset=utf-8" {
					t.Errorf("want the text format 0.0.4, got Content-Type %q", ct)
				}
				if ce, wantCE := hdr.Get("Content-Encoding"), map[bool]string{true: "gzip"}[enc == "gzip"]; ce != wantCE {
					t.Errorf("Accept-Encoding %q: want Content-Encoding %q, got %q", enc, wantCE, ce)
				}
			}

			selected := map[string]bool{"kafka_replication_up": true, "kafka_replication_partition_leader": true, "kafka_replication_log_events_total": true}
			got, _ := scrape(t, h, "/metrics?name[]=kafka_replication_up&name[]=kafka_replication_partition_leader&name[]=kafka_replication_log_events_total", "gzip")
			var wantSel strings.Builder
			for _, line := range strings.SplitAfter(want, "\n") {
				name := line
				if strings.HasPrefix(line, "# ") {
					name = strings.Fields(line)[2]
				} else if i := strings.IndexAny(line, "{ "); i > 0 {
					name = line[:i]
				}
				if selected[name] {
					wantSel.WriteString(line)
				}
			}
			if got != wantSel.String() || !strings.Contains(got, "# TYPE kafka_replication_up gauge") {
				t.Errorf("name[] selection differs from those families of the full scrape:\n%s", lineDiff(wantSel.String(), got))
			}
		})
	}
}
