package main

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
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

// The picture is laid out in points (vg.Length) and rasterised at 96 dpi,
// so a panel of 480×270 points is 640×360 pixels.
const (
	dpi                          = 96
	panelW, panelH     vg.Length = 480, 270
	legendRows                   = 2 // legend entries per column, under each plot
	legendColumns                = 3
	legendH            vg.Length = legendRows * 14
	panelGap, panelPad vg.Length = 3, 8
)

// Grafana's dark theme, so the picture looks like the dashboard it stands for.
var (
	background = color.RGBA{0x18, 0x1b, 0x1f, 0xff}
	panelBG    = color.RGBA{0x22, 0x25, 0x2b, 0xff}
	gridColor  = color.RGBA{0x3a, 0x3e, 0x45, 0xff}
	textColor  = color.RGBA{0xd8, 0xd9, 0xda, 0xff}
	markColor  = color.RGBA{0xff, 0x78, 0x0a, 0xff}
	palette    = []color.RGBA{
		{0x73, 0xbf, 0x69, 0xff}, {0xf2, 0xcc, 0x0c, 0xff}, {0x8a, 0xb8, 0xff, 0xff},
		{0xf2, 0x49, 0x5c, 0xff}, {0xb8, 0x77, 0xd9, 0xff}, {0x5f, 0xd3, 0xd3, 0xff},
	}
)

// writePNG lays the charts out two per row and writes them as one PNG.
func writePNG(path string, charts []chart) error {
	plot.DefaultFont = font.Font{Typeface: "Liberation", Variant: "Sans"} // Grafana's text is sans-serif
	rows := (len(charts) + 1) / 2
	img := vgimg.NewWith(vgimg.UseWH(2*panelW, vg.Length(rows)*panelH), vgimg.UseDPI(dpi))
	dc := draw.New(img)
	dc.SetColor(background)
	dc.Fill(dc.Rectangle.Path())
	tiles := draw.Tiles{Rows: rows, Cols: 2, PadX: panelGap, PadY: panelGap,
		PadTop: panelGap, PadBottom: panelGap, PadLeft: panelGap, PadRight: panelGap}
	for i, c := range charts {
		if err := c.draw(tiles.At(dc, i%2, i/2)); err != nil {
			return fmt.Errorf("panel %q: %w", c.title, err)
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// draw fills one tile: the plot, and its legend in a strip underneath, as
// Grafana puts it.
func (c chart) draw(tile draw.Canvas) error {
	tile.SetColor(panelBG)
	tile.Fill(tile.Rectangle.Path())
	inner := draw.Crop(tile, panelPad, -panelPad, panelPad, -panelPad)

	p := newPlot(c.title)
	p.X.Min, p.X.Max = unixSeconds(c.start), unixSeconds(c.end)
	lo, hi := 0.0, 1.0 // a flat zero line still gets a readable axis
	for _, s := range c.series {
		for _, v := range s.values {
			if finite(v) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	p.Y.Min, p.Y.Max = lo, hi+(hi-lo)*0.1

	var entries []legendEntry
	for i, s := range c.series {
		style := draw.LineStyle{Color: palette[i%len(palette)], Width: vg.Points(1.5)}
		for _, run := range runs(s, c.end.Sub(c.start)/50) {
			l, err := plotter.NewLine(run)
			if err != nil {
				return fmt.Errorf("%s: %w", s.label, err)
			}
			l.LineStyle = style
			p.Add(l)
		}
		entries = append(entries, legendEntry{s.label, style})
	}
	p.Add(marks{c.marks})

	p.Draw(draw.Crop(inner, 0, 0, legendH, 0))
	drawLegend(draw.Crop(inner, 0, 0, 0, legendH-(inner.Max.Y-inner.Min.Y)), entries)
	return nil
}

// newPlot is a plot with the dashboard's colours, a grid, and a time axis.
func newPlot(title string) *plot.Plot {
	p := plot.New()
	p.BackgroundColor = panelBG
	p.Title.Text = title
	p.Title.TextStyle.Color = textColor
	p.Title.TextStyle.Font.Size = vg.Points(11)
	p.Title.Padding = vg.Points(6)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Color = gridColor
		a.Tick.Color = gridColor
		a.Tick.Label.Color = textColor
		a.Tick.Label.Font.Size = vg.Points(9)
	}
	p.X.Tick.Marker = plot.TimeTicks{Format: "15:04:05"}
	grid := plotter.NewGrid()
	grid.Vertical.Color, grid.Horizontal.Color = gridColor, gridColor
	grid.Vertical.Dashes, grid.Horizontal.Dashes = nil, nil
	p.Add(grid)
	return p
}

// runs splits a series where it has no samples (the series was absent) or
// a NaN or infinite sample (a division by zero in PromQL): a line is not
// drawn across either.
func runs(s line, maxGap time.Duration) []plotter.XYs {
	var out []plotter.XYs
	var cur plotter.XYs
	flush := func() {
		if len(cur) > 1 {
			out = append(out, cur)
		}
		cur = nil
	}
	for i, t := range s.times {
		if !finite(s.values[i]) {
			flush()
			continue
		}
		if i > 0 && t.Sub(s.times[i-1]) > maxGap {
			flush()
		}
		cur = append(cur, plotter.XY{X: unixSeconds(t), Y: s.values[i]})
	}
	flush()
	return out
}

// marks draws the scenario's events as dashed vertical lines with their
// label at the top.
type marks struct{ marks []mark }

func (m marks) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	style := draw.LineStyle{Color: markColor, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(3), vg.Points(3)}}
	text := draw.TextStyle{Color: markColor, Font: font.From(plot.DefaultFont, vg.Points(9)), Handler: p.TextHandler,
		YAlign: draw.YTop}
	for _, mk := range m.marks {
		at := unixSeconds(mk.at)
		if at < p.X.Min || at > p.X.Max {
			continue
		}
		x := trX(at)
		c.StrokeLine2(style, x, c.Min.Y, x, c.Max.Y)
		c.FillText(text, vg.Point{X: x + vg.Points(3), Y: c.Max.Y}, mk.label)
	}
}

type legendEntry struct {
	label string
	style draw.LineStyle
}

// drawLegend lays the entries out in columns of legendRows, left to right;
// more entries than fit in legendColumns make the columns narrower rather
// than spill into the next panel.
func drawLegend(c draw.Canvas, entries []legendEntry) {
	columns := max(legendColumns, (len(entries)+legendRows-1)/legendRows)
	colW := (c.Max.X - c.Min.X) / vg.Length(columns)
	for col := 0; col*legendRows < len(entries); col++ {
		l := plot.NewLegend()
		l.Top, l.Left = true, true
		l.TextStyle.Color = textColor
		l.TextStyle.Font.Size = vg.Points(9)
		l.ThumbnailWidth = vg.Points(12)
		l.Padding = vg.Points(3)
		for _, e := range entries[col*legendRows : min(len(entries), (col+1)*legendRows)] {
			l.Add(e.label, thumbnail(e.style))
		}
		l.Draw(draw.Crop(c, vg.Length(col)*colW, 0, 0, 0))
	}
}

// thumbnail is a legend's sample of a line style.
type thumbnail draw.LineStyle

func (t thumbnail) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(draw.LineStyle(t), c.Min.X, y, c.Max.X, y)
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
