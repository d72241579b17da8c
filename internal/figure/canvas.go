package figure

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"os"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
	"golang.org/x/image/vector"
)

// Figure geometry: 7×4 in at 100 dpi, the legend in a column at the right
// so that it never hides a curve. Lengths are in pixels; pt converts
// typographic points at that resolution.
const (
	figDPI  = 100
	figW    = 7 * figDPI
	figH    = 4 * figDPI
	legendW = 230 // 2.3 in
)

// pt returns the length of p points in pixels at figDPI.
func pt(p float64) float64 { return p * figDPI / 72 }

// Text sizes in points.
const (
	titleSize = 13
	labelSize = 12
	tickSize  = 10
)

// goRegular is the parsed Go Regular font, which covers Latin, Greek and
// Cyrillic (α, β, ×, ᵀ in titles).
var goRegular = sync.OnceValues(func() (*opentype.Font, error) { return opentype.Parse(goregular.TTF) })

// canvas is a white figW×figH RGBA image with the drawing operations of
// the figures: filled and stroked paths (anti-aliased, by
// golang.org/x/image/vector) and text, upright or reading upwards.
type canvas struct {
	img   *image.RGBA
	z     vector.Rasterizer
	faces map[float64]font.Face
}

func newCanvas() (*canvas, error) {
	f, err := goRegular()
	if err != nil {
		return nil, fmt.Errorf("figure: font: %w", err)
	}
	c := &canvas{img: image.NewRGBA(image.Rect(0, 0, figW, figH)), faces: map[float64]font.Face{}}
	// White background: the PNG is read on light and dark pages alike.
	draw.Draw(c.img, c.img.Bounds(), image.White, image.Point{}, draw.Src)
	for _, size := range []float64{titleSize, labelSize, tickSize} {
		face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: size, DPI: figDPI, Hinting: font.HintingFull})
		if err != nil {
			return nil, fmt.Errorf("figure: font: %w", err)
		}
		c.faces[size] = face
	}
	return c, nil
}

// save writes the canvas to path as a PNG.
func (c *canvas) save(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, c.img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// point is a position in pixels, Y growing downwards.
type point struct{ x, y float64 }

// fill paints the union of the polygons in col. Each polygon is traced in
// the same orientation, so that overlapping ones add up to full coverage
// instead of cancelling out (the rasterizer sums signed areas).
func (c *canvas) fill(col color.Color, polys ...[]point) {
	c.z.Reset(figW, figH)
	for _, poly := range polys {
		if len(poly) < 3 {
			continue
		}
		var area float64
		for i, p := range poly {
			q := poly[(i+1)%len(poly)]
			area += p.x*q.y - q.x*p.y
		}
		at := func(i int) point { return poly[i] }
		if area < 0 {
			at = func(i int) point { return poly[len(poly)-1-i] }
		}
		c.z.MoveTo(float32(at(0).x), float32(at(0).y))
		for i := 1; i < len(poly); i++ {
			c.z.LineTo(float32(at(i).x), float32(at(i).y))
		}
		c.z.ClosePath()
	}
	c.z.Draw(c.img, c.img.Bounds(), image.NewUniform(col), image.Point{})
}

// disc returns a polygon approximating the disc of radius r around p.
func disc(p point, r float64) []point {
	const n = 20
	poly := make([]point, n)
	for i := range poly {
		a := 2 * math.Pi * float64(i) / n
		poly[i] = point{p.x + r*math.Cos(a), p.y + r*math.Sin(a)}
	}
	return poly
}

// stroke draws the polyline pts, width pixels wide with round joins, in
// col. dashes, if not empty, alternates the lengths drawn and skipped.
func (c *canvas) stroke(col color.Color, width float64, dashes []float64, pts ...point) {
	var polys [][]point
	for _, run := range dashed(pts, dashes) {
		for i := 1; i < len(run); i++ {
			p, q := run[i-1], run[i]
			dx, dy := q.x-p.x, q.y-p.y
			l := math.Hypot(dx, dy)
			if l == 0 {
				continue
			}
			nx, ny := -dy/l*width/2, dx/l*width/2
			polys = append(polys, []point{{p.x + nx, p.y + ny}, {q.x + nx, q.y + ny}, {q.x - nx, q.y - ny}, {p.x - nx, p.y - ny}})
			if i > 1 {
				polys = append(polys, disc(p, width/2))
			}
		}
	}
	c.fill(col, polys...)
}

// dashed cuts the polyline pts into the runs that dashes draws: lengths
// drawn and skipped in turn, the pattern repeating. Without dashes it is
// the one run pts.
func dashed(pts []point, dashes []float64) [][]point {
	if len(dashes) == 0 {
		return [][]point{pts}
	}
	var runs [][]point
	k, left, on := 0, dashes[0], true
	run := []point{pts[0]}
	for i := 1; i < len(pts); i++ {
		p, q := pts[i-1], pts[i]
		l := math.Hypot(q.x-p.x, q.y-p.y)
		for l > left {
			t := left / l
			p = point{p.x + t*(q.x-p.x), p.y + t*(q.y-p.y)}
			l -= left
			if on {
				runs = append(runs, append(run, p))
			}
			run = []point{p}
			on = !on
			k = (k + 1) % len(dashes)
			left = dashes[k]
		}
		left -= l
		run = append(run, q)
	}
	if on && len(run) > 1 {
		runs = append(runs, run)
	}
	return runs
}

// Text alignment: the anchor of a string is at its left, centre or right.
const (
	alignLeft = iota
	alignCenter
	alignRight
)

// textWidth returns the width of s in pixels at size points.
func (c *canvas) textWidth(size float64, s string) int {
	return font.MeasureString(c.faces[size], s).Ceil()
}

// textHeight returns the height of a line at size points.
func (c *canvas) textHeight(size float64) int {
	m := c.faces[size].Metrics()
	return (m.Ascent + m.Descent).Ceil()
}

// text writes s at size points with its baseline at y, anchored at x as
// align says.
func (c *canvas) text(size float64, x, y int, align int, s string) {
	switch align {
	case alignCenter:
		x -= c.textWidth(size, s) / 2
	case alignRight:
		x -= c.textWidth(size, s)
	}
	d := font.Drawer{Dst: c.img, Src: image.Black, Face: c.faces[size], Dot: fixed.P(x, y)}
	d.DrawString(s)
}

// textUp writes s at size points reading upwards (turned 90°
// anticlockwise), its left edge at x and its vertical extent anchored at y
// as align says (alignLeft: s starts at y and goes up; alignCenter:
// centred on y; alignRight: s ends at y).
func (c *canvas) textUp(size float64, x, y int, align int, s string) {
	face := c.faces[size]
	w, h := c.textWidth(size, s), c.textHeight(size)
	if w == 0 {
		return
	}
	flat := image.NewAlpha(image.Rect(0, 0, w, h))
	d := font.Drawer{Dst: flat, Src: image.Opaque, Face: face, Dot: fixed.P(0, face.Metrics().Ascent.Ceil())}
	d.DrawString(s)
	up := image.NewAlpha(image.Rect(0, 0, h, w))
	for fy := range h {
		for fx := range w {
			up.Pix[(w-1-fx)*up.Stride+fy] = flat.Pix[fy*flat.Stride+fx]
		}
	}
	top := y - w // alignLeft: the string's start at y
	switch align {
	case alignCenter:
		top = y - w/2
	case alignRight:
		top = y
	}
	r := image.Rect(x, top, x+h, top+w)
	draw.DrawMask(c.img, r, image.Black, image.Point{}, up, image.Point{}, draw.Over)
}
