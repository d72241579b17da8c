package figure

import (
	"fmt"
	"math"
	"path/filepath"
)

// Bars writes a bar chart to path, under title, with one bar per name of
// the given value, names along the X axis, labelled axes and a horizontal
// grid. NaN values draw no bar. If top is positive, the Y axis runs from
// 0 to top (1 for accuracies); otherwise it fits the values. It returns an
// error if names and values differ in length or no value is finite.
func Bars(path, title, xlabel, ylabel string, names []string, values []float64, top float64) error {
	c, _, err := drawBars(filepath.Base(path), title, xlabel, ylabel, names, values, top)
	if err != nil {
		return err
	}
	return c.save(path)
}

// drawBars draws what Bars writes, naming the figure file in its errors.
func drawBars(file, title, xlabel, ylabel string, names []string, values []float64, top float64) (*canvas, frame, error) {
	if len(names) != len(values) {
		return nil, frame{}, fmt.Errorf("figure: %s: %d names for %d values", file, len(names), len(values))
	}
	lo, hi, _ := span(append([]float64{0}, values...), false)
	if _, _, finite := span(values, false); !finite {
		return nil, frame{}, fmt.Errorf("figure: %s: nothing to plot", file)
	}
	if top > 0 {
		lo, hi = 0, top
	} else {
		hi += 0.04 * (hi - lo) // room above the tallest bar
	}
	c, err := newCanvas()
	if err != nil {
		return nil, frame{}, err
	}
	n := len(values)
	x := axis{lo: -0.5, hi: float64(n) - 0.5}
	for i, name := range names {
		x.ticks = append(x.ticks, tick{float64(i), name})
	}
	y := axis{lo: lo, hi: hi, ticks: niceTicks(lo, hi)}
	upright := n <= 12 // long axes: every name would overlap, so they read upwards
	f := layout(c, 0, figW, title, xlabel, ylabel, x, y, upright, false)

	width := min(pt(28), max(pt(4), pt(360/float64(n))), 0.9*(f.right-f.left)/float64(n))
	var bars [][]point
	for i, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		v = min(max(v, lo), hi)
		base, end := f.at(float64(i), max(lo, 0)), f.at(float64(i), v)
		bars = append(bars, []point{{base.x - width/2, base.y}, {base.x + width/2, base.y}, {end.x + width/2, end.y}, {end.x - width/2, end.y}})
	}
	c.fill(palette[0], bars...)
	return c, f, nil
}
