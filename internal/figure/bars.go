package figure

import (
	"fmt"
	"math"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Bars writes a bar chart to path, under title, with one bar per name of
// the given value, names along the X axis, labelled axes and a horizontal
// grid. NaN values draw no bar. If top is positive, the Y axis runs from
// 0 to top (1 for accuracies); otherwise it fits the values. It returns an
// error if names and values differ in length or no value is finite.
func Bars(path, title, xlabel, ylabel string, names []string, values []float64, top float64) error {
	if len(names) != len(values) {
		return fmt.Errorf("figure: %s: %d names for %d values", filepath.Base(path), len(names), len(values))
	}
	vs := make(plotter.Values, len(values))
	finite := false
	for i, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		vs[i], finite = v, true
	}
	if !finite {
		return fmt.Errorf("figure: %s: nothing to plot", filepath.Base(path))
	}
	p := newPlot(title, xlabel, ylabel)
	p.X.Tick.Label.Font.Size = vg.Points(9)
	width := vg.Points(max(4, min(28, 360/float64(len(vs)))))
	b, err := plotter.NewBarChart(vs, width)
	if err != nil {
		return err
	}
	b.Color = palette[0]
	b.LineStyle.Width = 0
	p.Add(b)
	p.NominalX(names...)
	if top > 0 {
		p.Y.Min, p.Y.Max = 0, top
	}
	p.Y.Tick.Marker = gTicks{}
	if len(names) > 12 { // long axes: every name would overlap
		p.X.Tick.Label.Rotation = math.Pi / 2
		p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = -1, -0.5
	}
	return save(path, p, nil)
}

var _ plot.Plotter = (*plotter.BarChart)(nil)
