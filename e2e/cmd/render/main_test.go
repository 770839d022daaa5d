package main

import (
	"image"
	"image/color"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// Lines of every slope end at their end point (a Bresenham step computed
// from the updated error once made some never get there).
func TestSegmentEnds(t *testing.T) {
	img := image.NewRGBA(image.Rect(-50, -50, 50, 50))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for x1 := -40; x1 <= 40; x1 += 7 {
			for y1 := -40; y1 <= 40; y1 += 5 {
				segment(img, 0, 0, x1, y1, color.White)
				if img.RGBAAt(x1, y1) != (color.RGBA{0xff, 0xff, 0xff, 0xff}) {
					t.Errorf("segment to (%d,%d) did not reach it", x1, y1)
				}
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("segment did not return within 10s")
	}
}

// NaN and infinite samples are skipped, and do not hang the drawing.
func TestWritePNGNonFinite(t *testing.T) {
	start := time.Unix(1000, 0)
	ts := []time.Time{start, start.Add(time.Second), start.Add(2 * time.Second), start.Add(3 * time.Second)}
	c := chart{title: "t", start: start, end: start.Add(3 * time.Second), series: []line{
		{label: "x", times: ts, values: []float64{1, math.NaN(), math.Inf(1), 2}},
	}}
	if err := writePNG(filepath.Join(t.TempDir(), "p.png"), []chart{c}); err != nil {
		t.Fatal(err)
	}
}
