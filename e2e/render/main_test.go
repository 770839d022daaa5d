package main

import (
	"encoding/json"
	"fmt"
	"image/png"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const overview = "../../dashboards/kafka-replication-overview.json"

// The panels drawn exist in the shipped dashboard, and their expressions
// have no template variable left once substituted.
func TestPanelsInDashboard(t *testing.T) {
	exprs, err := panelExprs(overview)
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

// The whole path the alert loop takes: the overview's panels queried from a
// Prometheus (canned here: the alert loop's scenario, two nodes stopped at
// 80 s and restarted at 150 s) and drawn as one PNG of four panels.
func TestRenderCannedScenario(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	lost, restored, end := start.Add(80*time.Second), start.Add(150*time.Second), start.Add(170*time.Second)
	prom := cannedPrometheus(t, lost, restored)

	q := query{promURL: prom.URL, dashboard: overview, start: start, end: end, step: 2 * time.Second,
		rateInterval: "10s", marks: []mark{{lost, "2 nodes stopped"}, {restored, "restarted"}}}
	charts, err := q.charts(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	wantLegends := map[string][]string{
		"Partitions under / at min ISR":  {"under min isr busy", "under min isr quiet", "at min isr busy", "at min isr quiet"},
		"Uncommitted backlog (LEO − HW)": {"busy", "quiet"},
		"High watermark stalled":         {"busy", "quiet"},
		"Admin API up":                   {"kafka-1", "kafka-2", "kafka-3"},
	}
	for _, c := range charts {
		var got []string
		for _, s := range c.series {
			got = append(got, s.label)
		}
		if fmt.Sprint(got) != fmt.Sprint(wantLegends[c.title]) {
			t.Errorf("%s: series %q, want %q", c.title, got, wantLegends[c.title])
		}
	}

	out := filepath.Join(t.TempDir(), "dashboard.png")
	if dir := os.Getenv("RENDER_TEST_OUT"); dir != "" {
		out = filepath.Join(dir, "dashboard.png") // to look at the picture
	}
	if err := writePNG(out, charts); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, out, 1280, 720)
}

// NaN and infinite samples are skipped, and a series of one sample draws
// nothing rather than failing.
func TestWritePNGNonFinite(t *testing.T) {
	start := time.Unix(1000, 0)
	ts := []time.Time{start, start.Add(time.Second), start.Add(2 * time.Second), start.Add(3 * time.Second)}
	c := chart{title: "t", start: start, end: start.Add(3 * time.Second), series: []line{
		{label: "x", times: ts, values: []float64{1, math.NaN(), math.Inf(1), 2}},
		{label: "y", times: ts[:1], values: []float64{math.Inf(-1)}},
	}}
	out := filepath.Join(t.TempDir(), "p.png")
	if err := writePNG(out, []chart{c}); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, out, 1280, 360)
}

func checkPNG(t *testing.T, path string, w, h int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s does not decode: %v", path, err)
	}
	if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
		t.Errorf("%s is %dx%d, want %dx%d", path, b.Dx(), b.Dy(), w, h)
	}
}

// cannedPrometheus answers /api/v1/query_range for the four panels' metrics
// with the shapes the alert loop's scenario gives, NaN and gaps included.
func cannedPrometheus(t *testing.T, lost, restored time.Time) *httptest.Server {
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.URL.Path != "/api/v1/query_range" {
			http.NotFound(w, r)
			return
		}
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		expr := r.Form.Get("query")
		if strings.Contains(expr, "$") {
			t.Errorf("query sent with a template variable: %s", expr)
		}
		from, _ := strconv.ParseFloat(r.Form.Get("start"), 64)
		to, _ := strconv.ParseFloat(r.Form.Get("end"), 64)
		step, _ := strconv.ParseFloat(r.Form.Get("step"), 64)
		if step <= 0 {
			http.Error(w, "bad step "+r.Form.Get("step"), http.StatusBadRequest)
			return
		}
		down := func(at time.Time, delay time.Duration) bool {
			return !at.Before(lost.Add(delay)) && at.Before(restored)
		}
		type series struct {
			Metric map[string]string `json:"metric"`
			Values [][2]any          `json:"values"`
		}
		var result []series
		add := func(labels map[string]string, value func(at time.Time) float64) {
			s := series{Metric: labels}
			for ts := from; ts <= to; ts += step {
				if v := value(time.Unix(int64(ts), 0)); !math.IsInf(v, -1) { // -Inf: no sample
					s.Values = append(s.Values, [2]any{ts, strconv.FormatFloat(v, 'f', -1, 64)})
				}
			}
			result = append(result, s)
		}
		bool01 := func(b bool) float64 {
			if b {
				return 1
			}
			return 0
		}
		switch {
		case strings.Contains(expr, "under_min_isr"):
			for _, topic := range []string{"busy", "quiet"} {
				add(map[string]string{"topic": topic}, func(at time.Time) float64 { return bool01(down(at, 4*time.Second)) })
			}
		case strings.Contains(expr, "at_min_isr"):
			add(map[string]string{"topic": "busy"}, func(time.Time) float64 { return 0 })
			add(map[string]string{"topic": "quiet"}, func(at time.Time) float64 {
				return bool01(!at.Before(restored) && at.Before(restored.Add(4*time.Second)))
			})
		case strings.Contains(expr, "log_end_offset"):
			add(map[string]string{"topic": "busy"}, func(at time.Time) float64 {
				if down(at, 0) {
					return at.Sub(lost).Seconds()
				}
				return 0
			})
			add(map[string]string{"topic": "quiet"}, func(at time.Time) float64 {
				if at.Unix()%40 == 0 {
					return math.NaN()
				}
				return 0
			})
		case strings.Contains(expr, "high_watermark_stalled"):
			add(map[string]string{"topic": "busy"}, func(at time.Time) float64 { return bool01(down(at, 40*time.Second)) })
			add(map[string]string{"topic": "quiet"}, func(time.Time) float64 { return 0 })
		case strings.Contains(expr, "kafka_replication_up"):
			for i := 1; i <= 3; i++ {
				add(map[string]string{"instance": fmt.Sprintf("kafka-%d", i)}, func(at time.Time) float64 {
					switch {
					case i == 1:
						return 1
					case i == 3 && down(at, 10*time.Second) && at.Before(lost.Add(30*time.Second)):
						return math.Inf(-1) // the scrape target vanished for a while
					}
					return bool01(!down(at, 2*time.Second))
				})
			}
		default:
			t.Errorf("unexpected query %s", expr)
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"status": "success",
			"data": map[string]any{"resultType": "matrix", "result": result}})
	}))
	t.Cleanup(srv.Close)
	return srv
}
