package figure

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
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

// Marks of the points, by style modulo their number: filled circle,
// square, triangle, cross, plus, ring, filled square, filled triangle.
const nGlyphs = 8

// Line strokes: widths in pixels, and the dash pattern of a dashed curve.
var (
	lineWidth = pt(1.6)
	dashes    = []float64{pt(5), pt(3)}
	glyphR    = pt(3)
)

// maxMarked is the number of points up to which a curve marks its points.
const maxMarked = 30

// curve is the drawable points of a series.
type curve struct {
	s      Series
	xs, ys []float64
}

// Line writes a line plot of ss to path, under title, with labelled axes
// and a grid. Curves of at most 30 points also mark their points. A log
// X axis is labelled at the plotted X values, a log Y axis at 1, 2, 5 ×
// 10ⁿ. It returns an error if no series has a point to draw.
func Line(path, title, xlabel, ylabel string, ss []Series, logX, logY bool) error {
	c, _, err := drawLine(filepath.Base(path), title, xlabel, ylabel, ss, logX, logY)
	if err != nil {
		return err
	}
	return c.save(path)
}

// drawLine draws what Line writes, naming the figure file in its errors.
func drawLine(file, title, xlabel, ylabel string, ss []Series, logX, logY bool) (*canvas, frame, error) {
	var curves []curve
	var allX, allY []float64
	named := false
	for _, s := range ss {
		cv := curve{s: s}
		for i := range s.X {
			x, y := s.X[i], s.Y[i]
			if math.IsNaN(x) || math.IsInf(x, 0) || math.IsNaN(y) || math.IsInf(y, 0) || (logX && x <= 0) || (logY && y <= 0) {
				continue
			}
			cv.xs, cv.ys = append(cv.xs, x), append(cv.ys, y)
		}
		if len(cv.xs) == 0 {
			continue
		}
		curves = append(curves, cv)
		allX, allY = append(allX, cv.xs...), append(allY, cv.ys...)
		named = named || s.Name != ""
	}
	if len(curves) == 0 {
		return nil, frame{}, fmt.Errorf("figure: %s: nothing to plot", file)
	}
	c, err := newCanvas()
	if err != nil {
		return nil, frame{}, err
	}
	xlo, xhi, _ := span(allX, logX)
	ylo, yhi, _ := span(allY, logY)
	x := axis{log: logX}
	x.lo, x.hi = pad(xlo, xhi, 0.02, logX)
	y := axis{log: logY}
	y.lo, y.hi = pad(ylo, yhi, 0.04, logY)
	if logX {
		x.ticks = valueTicks(ss)
	} else {
		x.ticks = niceTicks(x.lo, x.hi)
	}
	if logY {
		y.ticks = oneTwoFive(y.lo, y.hi)
	} else {
		y.ticks = niceTicks(y.lo, y.hi)
	}
	right := figW
	if named { // a legend column at the right; without it the plot takes the whole width
		right = figW - legendW
	}
	f := layout(c, 0, right, title, xlabel, ylabel, x, y, true, true)

	for _, cv := range curves {
		col := palette[cv.s.Style%len(palette)]
		pts := make([]point, len(cv.xs))
		for i := range pts {
			pts[i] = f.at(cv.xs[i], cv.ys[i])
		}
		var dash []float64
		if cv.s.Dashed {
			dash = dashes
		}
		c.stroke(col, lineWidth, dash, pts...)
		if len(pts) <= maxMarked {
			for _, p := range pts {
				glyph(c, cv.s.Style, col, p)
			}
		}
	}
	if named {
		var es []entry
		for _, cv := range curves {
			if cv.s.Name != "" {
				es = append(es, entry{cv.s.Name, cv.s.Style, cv.s.Dashed, len(cv.xs) <= maxMarked})
			}
		}
		legend(c, figW-legendW+int(pt(6)), int(pt(30)), es)
	}
	return c, f, nil
}

// entry is one line of a legend.
type entry struct {
	name   string
	style  int
	dashed bool
	marked bool
}

// legend writes one line per entry from (x, y) down: a sample of the
// curve, its mark, and its name.
func legend(c *canvas, x, y int, es []entry) {
	thumb := pt(24)
	rowH := c.textHeight(tickSize) + int(pt(3))
	asc := c.faces[tickSize].Metrics().Ascent.Ceil()
	for i, e := range es {
		top := y + i*rowH
		mid := float64(top) + float64(rowH)/2
		col := palette[e.style%len(palette)]
		var dash []float64
		if e.dashed {
			dash = dashes
		}
		c.stroke(col, lineWidth, dash, point{float64(x), mid}, point{float64(x) + thumb, mid})
		if e.marked {
			glyph(c, e.style, col, point{float64(x) + thumb/2, mid})
		}
		c.text(tickSize, x+int(thumb)+int(pt(4)), int(mid)+asc/2-1, alignLeft, e.name)
	}
}

// glyph marks the point p with the mark of style in col.
func glyph(c *canvas, style int, col color.Color, p point) {
	r := glyphR
	outline := pt(1)
	square := []point{{p.x - r, p.y - r}, {p.x + r, p.y - r}, {p.x + r, p.y + r}, {p.x - r, p.y + r}}
	h := r * math.Sqrt(3) / 2
	triangle := []point{{p.x, p.y - r}, {p.x + h, p.y + r/2}, {p.x - h, p.y + r/2}}
	closed := func(poly []point) []point { return append(append([]point(nil), poly...), poly[0], poly[1]) }
	switch style % nGlyphs {
	case 0:
		c.fill(col, disc(p, r))
	case 1:
		c.stroke(col, outline, nil, closed(square)...)
	case 2:
		c.stroke(col, outline, nil, closed(triangle)...)
	case 3:
		d := r / math.Sqrt2
		c.stroke(col, outline, nil, point{p.x - d, p.y - d}, point{p.x + d, p.y + d})
		c.stroke(col, outline, nil, point{p.x - d, p.y + d}, point{p.x + d, p.y - d})
	case 4:
		c.stroke(col, outline, nil, point{p.x - r, p.y}, point{p.x + r, p.y})
		c.stroke(col, outline, nil, point{p.x, p.y - r}, point{p.x, p.y + r})
	case 5:
		c.stroke(col, outline, nil, closed(disc(p, r))...)
	case 6:
		c.fill(col, square)
	case 7:
		c.fill(col, triangle)
	}
}
