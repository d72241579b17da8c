package figure

import (
	"image/color"
	"math"
	"slices"
	"strconv"
)

// tick is a position on an axis and its label.
type tick struct {
	value float64
	label string
}

// axis maps data values in [lo, hi] onto a length, linearly or on a log
// scale (lo > 0), and carries its labelled ticks.
type axis struct {
	lo, hi float64
	log    bool
	ticks  []tick
}

// frac returns where v falls along the axis, 0 at lo and 1 at hi.
func (a axis) frac(v float64) float64 {
	if a.log {
		return math.Log(v/a.lo) / math.Log(a.hi/a.lo)
	}
	return (v - a.lo) / (a.hi - a.lo)
}

// span returns the range of vs (finite values only; positive ones only
// if log), widened when it is a single value so that the axis has a
// length, and whether vs had any such value.
func span(vs []float64, log bool) (lo, hi float64, ok bool) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) || (log && v <= 0) {
			continue
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	if lo > hi {
		return 0, 0, false
	}
	if lo == hi {
		switch {
		case log:
			lo, hi = lo/2, hi*2
		case lo == 0:
			lo, hi = -1, 1
		default:
			d := math.Abs(lo) / 10
			lo, hi = lo-d, hi+d
		}
	}
	return lo, hi, true
}

// pad widens [lo, hi] by share of its length on each side (of its length
// in decades on a log axis), so that points at the ends are not drawn on
// the axes.
func pad(lo, hi, share float64, log bool) (float64, float64) {
	if log {
		f := math.Pow(hi/lo, share)
		return lo / f, hi * f
	}
	d := (hi - lo) * share
	return lo - d, hi + d
}

// formatTick writes v in %g form with at most 6 significant digits
// ("250", "0.25", "1e-05").
func formatTick(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

// niceTicks labels [lo, hi] at the multiples of a step of 1, 2 or 5 × 10ⁿ
// no smaller than a sixth of the range (the usual "nice numbers": 2 to 7
// ticks, 4 to 6 on most ranges).
func niceTicks(lo, hi float64) []tick {
	if !(hi > lo) {
		return nil
	}
	raw := (hi - lo) / 6
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var ticks []tick
	for k := math.Ceil(lo/step - 1e-9); k*step <= hi+step*1e-9; k++ {
		v := k * step
		if math.Abs(v) < step*1e-9 {
			v = 0 // not -0 or 1e-17
		}
		ticks = append(ticks, tick{v, formatTick(v)})
	}
	return ticks
}

// valueTicks labels a log axis at the plotted values themselves (a few
// values spread over decades, which powers of ten alone would label too
// sparsely).
func valueTicks(ss []Series) []tick {
	var vs []float64
	for _, s := range ss {
		for _, x := range s.X {
			if x > 0 && !math.IsInf(x, 0) {
				vs = append(vs, x)
			}
		}
	}
	slices.Sort(vs)
	vs = slices.Compact(vs)
	ticks := make([]tick, len(vs))
	for i, v := range vs {
		ticks[i] = tick{v, strconv.FormatFloat(v, 'g', -1, 64)}
	}
	return ticks
}

// oneTwoFive labels a log axis at 1, 2, 5 × 10ⁿ within [lo, hi], so that
// a range narrower than a decade still gets labels; a range wider than
// two decades gets powers of ten only, and one with fewer than two of
// those its ends.
func oneTwoFive(lo, hi float64) []tick {
	var ticks []tick
	mantissas := []float64{1, 2, 5}
	if hi > 100*lo {
		mantissas = mantissas[:1]
	}
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for _, m := range mantissas {
			v := m * math.Pow(10, e)
			if v >= lo*(1-1e-9) && v <= hi*(1+1e-9) {
				ticks = append(ticks, tick{v, strconv.FormatFloat(v, 'g', -1, 64)})
			}
		}
	}
	if len(ticks) < 2 {
		ticks = append(ticks, tick{lo, strconv.FormatFloat(lo, 'g', 2, 64)}, tick{hi, strconv.FormatFloat(hi, 'g', 2, 64)})
	}
	return ticks
}

// Colours of the frame.
var (
	gridColor = color.RGBA{215, 215, 215, 255}
	axisColor = color.RGBA{0, 0, 0, 255}
)

// frame is the plotting rectangle of a figure, in pixels, and its axes.
type frame struct {
	left, top, right, bottom float64
	x, y                     axis
}

// at returns the pixel of the data point (x, y).
func (f frame) at(x, y float64) point {
	return point{f.left + f.x.frac(x)*(f.right-f.left), f.bottom - f.y.frac(y)*(f.bottom-f.top)}
}

// tickLen is the length of a tick mark in pixels.
const tickLen = 5

// layout places the plotting rectangle in the canvas columns [x0, x1),
// leaving room for the title, the axis labels and the tick labels, and
// draws them with the axes, their ticks and a grid (horizontal lines at
// y's ticks, and vertical ones at x's if xgrid). x's tick labels are
// written below their ticks, or, with upright false, turned to read
// upwards (long category names); a label that would overlap the previous
// one is left out.
func layout(c *canvas, x0, x1 int, title, xlabel, ylabel string, x, y axis, upright, xgrid bool) frame {
	const gap = 6
	th, lh, kh := c.textHeight(titleSize), c.textHeight(labelSize), c.textHeight(tickSize)
	yw := 0 // the widest Y tick label
	for _, t := range y.ticks {
		yw = max(yw, c.textWidth(tickSize, t.label))
	}
	xh := kh // the height of the X tick labels
	lastW := 0
	for _, t := range x.ticks {
		if w := c.textWidth(tickSize, t.label); !upright {
			xh = max(xh, w)
		} else if t == x.ticks[len(x.ticks)-1] {
			lastW = w
		}
	}
	f := frame{
		left:   float64(x0 + gap + lh + gap + yw + 3 + tickLen),
		top:    float64(gap + th + gap + kh/2),
		right:  float64(x1 - gap - max(gap, lastW/2)),
		bottom: float64(figH - gap - lh - gap - xh - 3 - tickLen),
		x:      x, y: y,
	}
	asc := func(size float64) int { return c.faces[size].Metrics().Ascent.Ceil() }

	c.text(titleSize, (x0+x1)/2, gap+asc(titleSize), alignCenter, title)
	c.text(labelSize, int(f.left+f.right)/2, figH-gap-lh+asc(labelSize), alignCenter, xlabel)
	c.textUp(labelSize, x0+gap, int(f.top+f.bottom)/2, alignCenter, ylabel)

	var grid, marks [][]point
	line := func(p, q point) []point { // the pixels from p to q, a horizontal or vertical line 1 pixel wide
		return []point{{p.x, p.y}, {q.x + 1, p.y}, {q.x + 1, q.y + 1}, {p.x, q.y + 1}}
	}
	nextX := math.Inf(-1) // the first column free of X tick labels
	for _, t := range x.ticks {
		px := math.Round(f.at(t.value, y.lo).x)
		if xgrid {
			grid = append(grid, line(point{px, f.top}, point{px, f.bottom}))
		}
		marks = append(marks, line(point{px, f.bottom}, point{px, f.bottom + tickLen}))
		w := c.textWidth(tickSize, t.label)
		if upright {
			if px-float64(w)/2 < nextX {
				continue
			}
			c.text(tickSize, int(px), int(f.bottom)+tickLen+3+asc(tickSize), alignCenter, t.label)
			nextX = px + float64(w)/2 + gap
		} else {
			if px-float64(kh)/2 < nextX {
				continue
			}
			c.textUp(tickSize, int(px)-kh/2, int(f.bottom)+tickLen+3, alignRight, t.label)
			nextX = px + float64(kh)/2 + 1
		}
	}
	for _, t := range y.ticks {
		py := math.Round(f.at(x.lo, t.value).y)
		grid = append(grid, line(point{f.left, py}, point{f.right, py}))
		marks = append(marks, line(point{f.left - tickLen, py}, point{f.left, py}))
		c.text(tickSize, int(f.left)-tickLen-3, int(py)+asc(tickSize)/2-1, alignRight, t.label)
	}
	c.fill(gridColor, grid...)
	marks = append(marks, line(point{f.left, f.bottom}, point{f.right, f.bottom}), line(point{f.left, f.top}, point{f.left, f.bottom}))
	c.fill(axisColor, marks...)
	return f
}
