package report

import (
	"fmt"
	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// hoyer returns the mean Hoyer sparsity of U's columns (D×K),
// (√D − ‖u‖₁/‖u‖₂)/(√D − 1), taking absolute values (DPCA's basis may be
// negative). Zero columns are skipped. P. O. Hoyer, "Non-negative matrix
// factorization with sparseness constraints", JMLR 5, 2004.
func hoyer(u *mat.Dense) float64 {
	d, k := u.Dims()
	sq := math.Sqrt(float64(d))
	var sum float64
	var n int
	for j := range k {
		var l1, l2 float64
		for i := range d {
			v := math.Abs(u.At(i, j))
			l1 += v
			l2 += v * v
		}
		if l2 == 0 {
			continue
		}
		sum += (sq - l1/math.Sqrt(l2)) / (sq - 1)
		n++
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

// runBases measures the sparsity of every fitted basis in pixel space and
// draws the bases of grid.imageMethods as image grids (the papers' basis
// figures: NGE Fig. 4, N²S²L Fig. 1–2).
func (r *runner) runBases() error {
	for _, d := range r.datasets() {
		for _, name := range r.methodsFor(d) {
			f := r.fits[d.name][name]
			if f == nil {
				continue
			}
			if kernelMethods[name] {
				continue // their basis Φ(X)A lives in the kernel feature space, not in pixels
			}
			u := f.res.m.Basis()
			row := SparsityRow{Dataset: d.name, Method: name, Hoyer: Num(hoyer(u))}
			for _, m := range r.g.imageMethods {
				if m != name {
					continue
				}
				file := fmt.Sprintf("bases-%s-%s.png", d.name, name)
				title := fmt.Sprintf("%s on %s: the K = %d columns of U, each scaled to its largest weight (dark = large)", name, d.name, r.g.rank)
				if err := writeBasisGrid(filepath.Join(r.cfg.Out, file), title, u, d.width, d.height); err != nil {
					return err
				}
				row.Image = file
				r.figure(file, fmt.Sprintf("Basis images of %s on %s (K = %d, L = %d; dark = large weight)", name, d.name, r.g.rank, r.g.labels))
			}
			r.rep.Sparsity = append(r.rep.Sparsity, row)
		}
	}
	r.note("Sparsity is not given for the kernel methods: their basis vectors Φ(X)A live in the kernel feature space, not in pixel space.")
	return nil
}

// tileScale returns the upscaling of a w-pixel-wide image so that a tile
// is about 56 pixels wide (7× for the 8×8 digits, 2× for 28×28 MNIST).
func tileScale(w int) int { return max(1, (56+w/2)/w) }

// writeBasisGrid draws the columns of u (D×K, D = w·h) as a grid of
// images, 10 per row, each scaled to its own maximum absolute value,
// dark ink on white, numbered from 1, under title.
func writeBasisGrid(path, title string, u *mat.Dense, w, h int) error {
	_, k := u.Dims()
	tiles := make([][]float64, k)
	for j := range k {
		col := mat.Col(nil, j, u)
		var m float64
		for _, v := range col {
			m = max(m, math.Abs(v))
		}
		for i := range col {
			if m > 0 {
				col[i] = math.Abs(col[i]) / m
			}
		}
		tiles[j] = col
	}
	labels := make([]string, k)
	for j := range labels {
		labels[j] = fmt.Sprintf("u%d", j+1)
	}
	return writeTiles(path, title, tiles, labels, nil, w, h, 10)
}

// writeExamples draws the first perRow test images of each matrix in
// rows, one matrix per row of the picture, scaled by the global maximum,
// under title, each row named by rowNames.
func writeExamples(dir, file, title string, rowNames []string, rows []*mat.Dense, w, h, perRow int) error {
	var tiles [][]float64
	var m float64
	for _, x := range rows {
		m = max(m, mat.Max(x))
	}
	for _, x := range rows {
		n, _ := x.Dims()
		for i := range min(n, perRow) {
			t := append([]float64(nil), x.RawRowView(i)...)
			for j := range t {
				t[j] /= m
			}
			tiles = append(tiles, t)
		}
	}
	return writeTiles(filepath.Join(dir, file), title, tiles, nil, rowNames, w, h, perRow)
}

// writeTiles writes w×h tiles with values in [0, 1] (1 = dark) as a PNG
// grid with perRow tiles per row, under a title line. labels, if non-nil,
// names each tile (under it); rowNames, if non-nil, each row (at its left).
func writeTiles(path, title string, tiles [][]float64, labels, rowNames []string, w, h, perRow int) error {
	s := tileScale(w)
	const gap = 4
	face := basicfont.Face7x13
	lineH := face.Metrics().Height.Ceil() + 2
	top := lineH + gap // the title
	below := 0         // under each tile: its label
	if labels != nil {
		below = lineH
	}
	left := 0 // the row names
	for _, n := range rowNames {
		left = max(left, font.MeasureString(face, n).Ceil()+2*gap)
	}
	rows := (len(tiles) + perRow - 1) / perRow
	cellW, cellH := w*s+gap, h*s+gap+below
	width := max(left+perRow*cellW+gap, font.MeasureString(face, title).Ceil()+2*gap)
	img := image.NewGray(image.Rect(0, 0, width, top+rows*cellH+gap))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	text := func(x, y int, str string) {
		d := font.Drawer{Dst: img, Src: image.NewUniform(color.Gray{Y: 0}), Face: face, Dot: fixed.P(x, y)}
		d.DrawString(str)
	}
	text(gap, lineH-2, title)
	for r, n := range rowNames {
		if r < rows {
			text(gap, top+r*cellH+gap+h*s/2+lineH/3, n)
		}
	}
	for t, tile := range tiles {
		x0 := left + gap + (t%perRow)*cellW
		y0 := top + gap + (t/perRow)*cellH
		// A grey frame around each tile.
		for x := x0 - 1; x <= x0+w*s; x++ {
			img.SetGray(x, y0-1, color.Gray{Y: 170})
			img.SetGray(x, y0+h*s, color.Gray{Y: 170})
		}
		for y := y0 - 1; y <= y0+h*s; y++ {
			img.SetGray(x0-1, y, color.Gray{Y: 170})
			img.SetGray(x0+w*s, y, color.Gray{Y: 170})
		}
		for p, v := range tile {
			g := uint8(255 * (1 - math.Min(1, math.Max(0, v))))
			px, py := x0+(p%w)*s, y0+(p/w)*s
			for dy := range s {
				for dx := range s {
					img.SetGray(px+dx, py+dy, color.Gray{Y: g})
				}
			}
		}
		if labels != nil {
			text(x0, y0+h*s+lineH-1, labels[t])
		}
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

// figure records a written PNG.
func (r *runner) figure(file, title string) {
	r.rep.Figures = append(r.rep.Figures, Figure{File: file, Title: title})
}

// intsString formats v as "0, 1, 2".
func intsString(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}
