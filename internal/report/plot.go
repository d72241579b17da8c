package report

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

// series is one curve.
type series struct {
	name string
	x, y []float64
	// peer draws the curve dashed (a baseline, not an nmfstream method).
	peer bool
}

// palette gives every method and peer one colour and glyph across all
// figures (dark, distinguishable colours, from Tableau 10 and ColorBrewer).
var palette = []color.RGBA{
	{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255},
	{148, 103, 189, 255}, {140, 86, 75, 255}, {227, 119, 194, 255}, {23, 190, 207, 255},
	{188, 189, 34, 255}, {60, 60, 60, 255}, {127, 127, 127, 255}, {0, 0, 128, 255}, {128, 0, 0, 255},
}

var styleOrder = append(append([]string{}, allMethods...), peerRaw, peerLabelProp, peerSkNMF, peerSkNMFRaw, peerSkSpread, streamCumulative, streamRecent)

// Names of the stream curves.
const (
	streamCumulative = "cumulative"
	streamRecent     = "last 500 records"
)

func styleIndex(name string) int {
	for i, n := range styleOrder {
		if n == name {
			return i
		}
	}
	return len(styleOrder)
}

var glyphs = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{},
	draw.PlusGlyph{}, draw.RingGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{},
}

// linePlot writes a line plot with one curve per series to path.
func linePlot(path, title, xlabel, ylabel string, ss []series, logX, logY bool) error {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.X.Label.TextStyle.Font.Size = vg.Points(12)
	p.Y.Label.TextStyle.Font.Size = vg.Points(12)
	p.X.Tick.Label.Font.Size = vg.Points(10)
	p.Y.Tick.Label.Font.Size = vg.Points(10)
	if logX {
		p.X.Scale = plot.LogScale{}
	}
	if logY {
		p.Y.Scale = plot.LogScale{}
	}
	p.Add(plotter.NewGrid())
	leg := plot.NewLegend()
	leg.Top, leg.Left = true, true
	leg.TextStyle.Font.Size = vg.Points(10)
	leg.ThumbnailWidth = vg.Points(24)
	leg.Padding = vg.Points(3)
	any := false
	for _, s := range ss {
		var pts plotter.XYs
		for i := range s.x {
			x, y := s.x[i], s.y[i]
			if math.IsNaN(x) || math.IsNaN(y) || math.IsInf(y, 0) || (logX && x <= 0) || (logY && y <= 0) {
				continue
			}
			pts = append(pts, plotter.XY{X: x, Y: y})
		}
		if len(pts) == 0 {
			continue
		}
		any = true
		k := styleIndex(s.name)
		c := palette[k%len(palette)]
		line, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		line.Color = c
		line.Width = vg.Points(1.6)
		if s.peer {
			line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		p.Add(line)
		var thumbs []plot.Thumbnailer = []plot.Thumbnailer{line}
		if len(pts) <= 30 {
			sc, err := plotter.NewScatter(pts)
			if err != nil {
				return err
			}
			sc.Color = c
			sc.Shape = glyphs[k%len(glyphs)]
			sc.Radius = vg.Points(3)
			p.Add(sc)
			thumbs = append(thumbs, sc)
		}
		if s.name != "" { // an unnamed series gets no empty legend entry
			leg.Add(s.name, thumbs...)
		}
	}
	if !any {
		return fmt.Errorf("report: %s: nothing to plot", filepath.Base(path))
	}
	if logX {
		p.X.Tick.Marker = valueTicks(ss)
	}
	if logY {
		p.Y.Tick.Marker = plot.TickerFunc(oneTwoFive)
	} else {
		p.Y.Tick.Marker = gTicks{}
	}
	if !logX {
		p.X.Tick.Marker = gTicks{}
	}
	c := vgimg.NewWith(vgimg.UseWH(figW, figH), vgimg.UseDPI(figDPI))
	dc := draw.New(c)
	// White background: the PNG is read on light and dark pages alike.
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	p.Draw(draw.Crop(dc, 0, -legendW, 0, 0))
	leg.Draw(draw.Crop(dc, figW-legendW+vg.Points(6), 0, 0, -vg.Points(30)))
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

// pointSeries groups points by method into curves ordered by Value.
func pointSeries(points []Point, dataset, param string) []series {
	by := map[string]*series{}
	var order []string
	for _, p := range points {
		if p.Dataset != dataset || p.Param != param {
			continue
		}
		s := by[p.Method]
		if s == nil {
			s = &series{name: p.Method, peer: styleIndex(p.Method) >= len(allMethods)}
			by[p.Method] = s
			order = append(order, p.Method)
		}
		s.x = append(s.x, p.Value)
		s.y = append(s.y, float64(p.Accuracy))
	}
	sort.SliceStable(order, func(i, j int) bool { return styleIndex(order[i]) < styleIndex(order[j]) })
	out := make([]series, 0, len(order))
	for _, n := range order {
		out = append(out, *by[n])
	}
	return out
}

// plots draws every figure of the report from the measurements.
func (r *runner) plots() error {
	figs, notes := drawPlots(r.cfg.Out, r.rep)
	r.rep.Figures = append(r.rep.Figures, figs...)
	r.rep.Notes = append(r.rep.Notes, notes...)
	return nil
}

// drawPlots draws the line plots of rep into out and returns them, with a
// note for each figure that could not be drawn. It reads nothing but rep,
// so Rerender can redraw a finished report.
func drawPlots(out string, rep *Report) (written []Figure, notes []string) {
	sets := []string{"digits"}
	if rep.Meta.MNIST {
		sets = append(sets, "mnist")
	}
	type fig struct {
		file, title, xlabel, ylabel string
		ss                          []series
		logX, logY                  bool
	}
	var figs []fig
	for _, name := range sets {
		figs = append(figs, fig{
			file:   "accuracy-vs-labels-" + name + ".png",
			title:  fmt.Sprintf("%s: held-out accuracy vs labels (K = %d)", name, rep.Meta.Rank),
			xlabel: "labeled samples per class (L)", ylabel: "held-out accuracy",
			ss: pointSeries(rep.Labels, name, paramLabels), logX: true,
		})
		figs = append(figs, fig{
			file:   "occlusion-" + name + ".png",
			title:  fmt.Sprintf("%s: accuracy vs occlusion (L = %d)", name, rep.Meta.Labels),
			xlabel: "side of the square patch (pixels)", ylabel: "held-out accuracy",
			ss: pointSeries(rep.Occlusion, name, paramPatch),
		})
		var obj []series
		for _, c := range rep.Objective {
			if c.Dataset != name || len(c.Objective) == 0 {
				continue
			}
			s := series{name: c.Method}
			f0 := float64(c.Objective[0])
			for i, v := range c.Objective {
				s.x = append(s.x, float64(i+1))
				s.y = append(s.y, float64(v)/f0)
			}
			obj = append(obj, s)
		}
		figs = append(figs, fig{
			file:   "objective-" + name + ".png",
			title:  fmt.Sprintf("%s: objective per iteration (L = %d)", name, rep.Meta.Labels),
			xlabel: "iteration", ylabel: "objective / objective at iteration 1",
			ss: obj, logY: true,
		})
		for _, st := range rep.Stream {
			if st.Dataset != name || len(st.At) == 0 {
				continue
			}
			cum, rec := series{name: streamCumulative}, series{name: streamRecent}
			for i := range st.At {
				cum.x = append(cum.x, float64(st.At[i]))
				cum.y = append(cum.y, float64(st.Running[i]))
				rec.x = append(rec.x, float64(st.At[i]))
				rec.y = append(rec.y, float64(st.Recent[i]))
			}
			figs = append(figs, fig{
				file:   "stream-" + name + ".png",
				title:  fmt.Sprintf("%s stream, model.Online: %.0f%% labels, %d records late", name, 100*st.LabelFrac, st.LabelLag),
				xlabel: "records seen", ylabel: "prequential accuracy",
				ss: []series{cum, rec},
			})
		}
	}
	for _, sw := range []struct {
		param, label string
		log          bool
	}{{paramRank, "rank K", false}, {paramAlpha, "α (graph weight)", true}, {paramBeta, "β (smoothness weight)", true}} {
		figs = append(figs, fig{
			file:   "sensitivity-" + sw.param + ".png",
			title:  fmt.Sprintf("digits: accuracy vs %s (L = %d)", sw.label, rep.Meta.Labels),
			xlabel: sw.label, ylabel: "held-out accuracy",
			ss: pointSeries(rep.Sensitivity, "digits", sw.param), logX: sw.log,
		})
	}
	for _, f := range figs {
		if len(f.ss) == 0 {
			continue
		}
		if err := linePlot(filepath.Join(out, f.file), f.title, f.xlabel, f.ylabel, f.ss, f.logX, f.logY); err != nil {
			notes = append(notes, fmt.Sprintf("figure %s not drawn: %v", f.file, err))
			continue
		}
		written = append(written, Figure{File: f.file, Title: f.title})
	}
	return written, notes
}

// valueTicks labels a log axis at the swept values themselves (a few
// values spread over decades, which LogTicks would label only at powers
// of ten).
func valueTicks(ss []series) plot.Ticker {
	seen := map[float64]bool{}
	var ticks []plot.Tick
	for _, s := range ss {
		for _, x := range s.x {
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
