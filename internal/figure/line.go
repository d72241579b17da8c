package figure

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Figure geometry: 7×4 in at 100 dpi, the legend in a column at the right
// so that it never hides a curve.
const (
	figW    = 7 * vg.Inch
	figH    = 4 * vg.Inch
	figDPI  = 100
	legendW = 2.3 * vg.Inch
)

// Series is one curve of a line plot.
type Series struct {
	// Name labels the curve in the legend; an empty Name gets no entry.
	Name string
	// X and Y are the points, of equal length.
	X, Y []float64
	// Dashed draws the curve dashed (a baseline, not a measured method).
	Dashed bool
	// Style picks the colour and glyph, so that one name keeps its look
	// across figures; it is taken modulo the palette.
	Style int
}

// palette gives every style one colour (dark, distinguishable colours,
// from Tableau 10 and ColorBrewer).
var palette = []color.RGBA{
	{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255},
	{148, 103, 189, 255}, {140, 86, 75, 255}, {227, 119, 194, 255}, {23, 190, 207, 255},
	{188, 189, 34, 255}, {60, 60, 60, 255}, {127, 127, 127, 255}, {0, 0, 128, 255}, {128, 0, 0, 255},
}

var glyphs = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{},
	draw.PlusGlyph{}, draw.RingGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{},
}

// Line writes a line plot of ss to path, under title, with labelled axes
// and a grid. Curves of at most 30 points also mark their points. A log
// X axis is labelled at the plotted X values, a log Y axis at 1, 2, 5 ×
// 10ⁿ. It returns an error if no series has a point to draw.
func Line(path, title, xlabel, ylabel string, ss []Series, logX, logY bool) error {
	p := newPlot(title, xlabel, ylabel)
	if logX {
		p.X.Scale = plot.LogScale{}
	}
	if logY {
		p.Y.Scale = plot.LogScale{}
	}
	leg := newLegend()
	drawn, named := false, false
	for _, s := range ss {
		var pts plotter.XYs
		for i := range s.X {
			x, y := s.X[i], s.Y[i]
			if math.IsNaN(x) || math.IsNaN(y) || math.IsInf(y, 0) || (logX && x <= 0) || (logY && y <= 0) {
				continue
			}
			pts = append(pts, plotter.XY{X: x, Y: y})
		}
		if len(pts) == 0 {
			continue
		}
		drawn = true
		c := palette[s.Style%len(palette)]
		line, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		line.Color = c
		line.Width = vg.Points(1.6)
		if s.Dashed {
			line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		p.Add(line)
		thumbs := []plot.Thumbnailer{line}
		if len(pts) <= 30 {
			sc, err := plotter.NewScatter(pts)
			if err != nil {
				return err
			}
			sc.Color = c
			sc.Shape = glyphs[s.Style%len(glyphs)]
			sc.Radius = vg.Points(3)
			p.Add(sc)
			thumbs = append(thumbs, sc)
		}
		if s.Name != "" {
			leg.Add(s.Name, thumbs...)
			named = true
		}
	}
	if !drawn {
		return fmt.Errorf("figure: %s: nothing to plot", filepath.Base(path))
	}
	switch {
	case logX:
		p.X.Tick.Marker = valueTicks(ss)
	default:
		p.X.Tick.Marker = gTicks{}
	}
	if logY {
		p.Y.Tick.Marker = plot.TickerFunc(oneTwoFive)
	} else {
		p.Y.Tick.Marker = gTicks{}
	}
	if !named { // no legend entry: the plot takes the whole width
		return save(path, p, nil)
	}
	return save(path, p, &leg)
}

// newPlot returns a plot with a title, labelled axes and a grid.
func newPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.X.Label.TextStyle.Font.Size = vg.Points(12)
	p.Y.Label.TextStyle.Font.Size = vg.Points(12)
	p.X.Tick.Label.Font.Size = vg.Points(10)
	p.Y.Tick.Label.Font.Size = vg.Points(10)
	p.Add(plotter.NewGrid())
	return p
}

func newLegend() plot.Legend {
	leg := plot.NewLegend()
	leg.Top, leg.Left = true, true
	leg.TextStyle.Font.Size = vg.Points(10)
	leg.ThumbnailWidth = vg.Points(24)
	leg.Padding = vg.Points(3)
	return leg
}

// save draws p (and leg, if it is non-nil, in a column at the right) on a
// white figW×figH canvas and writes it to path as a PNG.
func save(path string, p *plot.Plot, leg *plot.Legend) error {
	c := vgimg.NewWith(vgimg.UseWH(figW, figH), vgimg.UseDPI(figDPI))
	dc := draw.New(c)
	// White background: the PNG is read on light and dark pages alike.
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	if leg != nil {
		p.Draw(draw.Crop(dc, 0, -legendW, 0, 0))
		leg.Draw(draw.Crop(dc, figW-legendW+vg.Points(6), 0, 0, -vg.Points(30)))
	} else {
		p.Draw(dc)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// valueTicks labels a log axis at the plotted values themselves (a few
// values spread over decades, which LogTicks would label only at powers
// of ten).
func valueTicks(ss []Series) plot.Ticker {
	seen := map[float64]bool{}
	var ticks []plot.Tick
	for _, s := range ss {
		for _, x := range s.X {
			if x > 0 && !seen[x] {
				seen[x] = true
				ticks = append(ticks, plot.Tick{Value: x, Label: strconv.FormatFloat(x, 'g', -1, 64)})
			}
		}
	}
	sort.Slice(ticks, func(i, j int) bool { return ticks[i].Value < ticks[j].Value })
	return plot.ConstantTicks(ticks)
}

// oneTwoFive labels a log axis at 1, 2, 5 × 10ⁿ within [lo, hi], so that
// a range narrower than a decade still gets labels.
func oneTwoFive(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	mantissas := []float64{1, 2, 5}
	if hi > 100*lo {
		mantissas = mantissas[:1] // wide ranges: powers of ten only
	}
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for _, m := range mantissas {
			v := m * math.Pow(10, e)
			if v >= lo*(1-1e-9) && v <= hi*(1+1e-9) {
				ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
			}
		}
	}
	if len(ticks) < 2 { // fewer than two labels: label the ends
		ticks = append(ticks, plot.Tick{Value: lo, Label: strconv.FormatFloat(lo, 'g', 2, 64)}, plot.Tick{Value: hi, Label: strconv.FormatFloat(hi, 'g', 2, 64)})
	}
	return ticks
}

// gTicks is plot.DefaultTicks with labels in %g form ("250", not "250.00").
type gTicks struct{}

func (gTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = strconv.FormatFloat(ticks[i].Value, 'g', 6, 64)
		}
	}
	return ticks
}
