package main

import (
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// chart is one dashboard panel over a time range.
type chart struct {
	title      string
	start, end time.Time
	series     []line
	marks      []mark
}

type line struct {
	label  string
	times  []time.Time
	values []float64
}

const (
	panelW, panelH = 640, 330
	margin         = 48 // left and bottom, for the axis labels
	pad            = 12
)

var (
	background = color.RGBA{0x18, 0x1b, 0x1f, 0xff} // Grafana's dark theme
	panelBG    = color.RGBA{0x22, 0x25, 0x2b, 0xff}
	grid       = color.RGBA{0x3a, 0x3e, 0x45, 0xff}
	text       = color.RGBA{0xd8, 0xd9, 0xda, 0xff}
	markColor  = color.RGBA{0xff, 0x78, 0x0a, 0xff}
	palette    = []color.RGBA{
		{0x73, 0xbf, 0x69, 0xff}, {0xf2, 0xcc, 0x0c, 0xff}, {0x8a, 0xb8, 0xff, 0xff},
		{0xf2, 0x49, 0x5c, 0xff}, {0xb8, 0x77, 0xd9, 0xff}, {0x5f, 0xd3, 0xd3, 0xff},
	}
)

// writePNG lays the charts out two per row.
func writePNG(path string, charts []chart) error {
	rows := (len(charts) + 1) / 2
	img := image.NewRGBA(image.Rect(0, 0, 2*panelW, rows*panelH))
	draw.Draw(img, img.Bounds(), &image.Uniform{background}, image.Point{}, draw.Src)
	for i, c := range charts {
		r := image.Rect((i%2)*panelW, (i/2)*panelH, (i%2+1)*panelW, (i/2+1)*panelH).Inset(4)
		c.draw(img, r)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (c chart) draw(img *image.RGBA, r image.Rectangle) {
	draw.Draw(img, r, &image.Uniform{panelBG}, image.Point{}, draw.Src)
	label(img, r.Min.X+pad, r.Min.Y+pad+10, c.title, text)
	plot := image.Rect(r.Min.X+margin, r.Min.Y+pad+22, r.Max.X-pad, r.Max.Y-margin)

	lo, hi := 0.0, 1.0
	for _, s := range c.series {
		for _, v := range s.values {
			if finite(v) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	hi += (hi - lo) * 0.1
	x := func(t time.Time) int {
		f := float64(t.Sub(c.start)) / float64(c.end.Sub(c.start))
		return plot.Min.X + int(f*float64(plot.Dx()))
	}
	y := func(v float64) int {
		return plot.Max.Y - int(math.Min(1, math.Max(0, (v-lo)/(hi-lo)))*float64(plot.Dy()))
	}

	for i := 0; i <= 4; i++ { // horizontal grid with values
		v := lo + (hi-lo)*float64(i)/4
		hline(img, plot.Min.X, plot.Max.X, y(v), grid)
		label(img, r.Min.X+4, y(v)+4, strconv.FormatFloat(v, 'g', 3, 64), text)
	}
	span := c.end.Sub(c.start)
	for i := 0; i <= 4; i++ { // time axis
		t := c.start.Add(span * time.Duration(i) / 4)
		vline(img, x(t), plot.Min.Y, plot.Max.Y, grid, 1)
		label(img, min(x(t)-28, r.Max.X-60), plot.Max.Y+16, t.Format("15:04:05"), text)
	}
	for _, m := range c.marks {
		if m.at.Before(c.start) || m.at.After(c.end) {
			continue
		}
		vline(img, x(m.at), plot.Min.Y, plot.Max.Y, markColor, 4)
		label(img, min(x(m.at)+3, r.Max.X-7*len(m.label)-4), plot.Min.Y+12, m.label, markColor)
	}
	for i, s := range c.series {
		col := palette[i%len(palette)]
		for j := 1; j < len(s.times); j++ {
			// A gap in the samples (series absent) is not drawn across, nor
			// is NaN (a division by zero in PromQL).
			if s.times[j].Sub(s.times[j-1]) > span/50 || !finite(s.values[j-1]) || !finite(s.values[j]) {
				continue
			}
			segment(img, x(s.times[j-1]), y(s.values[j-1]), x(s.times[j]), y(s.values[j]), col)
		}
		label(img, plot.Min.X+8+(i%3)*190, r.Max.Y-8-(i/3)*14, "— "+s.label, col)
	}
}

// label writes s in the 7×13 bitmap font, which has ASCII only: the
// dashboard's typographic minus and dash become '-'.
func label(img *image.RGBA, x, y int, s string, col color.Color) {
	s = strings.NewReplacer("−", "-", "—", "-", "–", "-").Replace(s)
	if maxX := img.Bounds().Max.X - 7*len(s) - 2; x > maxX {
		x = maxX
	}
	d := font.Drawer{Dst: img, Src: image.NewUniform(col), Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
	d.DrawString(s)
}

func hline(img *image.RGBA, x0, x1, y int, col color.Color) {
	for x := x0; x <= x1; x++ {
		img.Set(x, y, col)
	}
}

// vline draws a vertical line, dashed every dash pixels (1 = solid).
func vline(img *image.RGBA, x, y0, y1 int, col color.Color, dash int) {
	for y := y0; y <= y1; y++ {
		if dash == 1 || (y/dash)%2 == 0 {
			img.Set(x, y, col)
		}
	}
}

// segment draws a 2-pixel line with Bresenham's algorithm.
func segment(img *image.RGBA, x0, y0, x1, y1 int, col color.Color) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := sign(x1-x0), sign(y1-y0)
	err := dx + dy
	for {
		img.Set(x0, y0, col)
		img.Set(x0, y0+1, col)
		if x0 == x1 && y0 == y1 {
			return
		}
		e2 := 2 * err // both steps test the error from before either
		if e2 >= dy {
			err += dy
			x0 += sx
		}
		if e2 <= dx {
			err += dx
			y0 += sy
		}
	}
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func sign(v int) int {
	switch {
	case v < 0:
		return -1
	case v > 0:
		return 1
	}
	return 0
}
