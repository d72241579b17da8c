package figure

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
	"gonum.org/v1/gonum/mat"
)

// tileScale returns the upscaling of a w-pixel-wide image so that a tile
// is about 56 pixels wide (7× for the 8×8 digits, 2× for 28×28 MNIST).
func tileScale(w int) int { return max(1, (56+w/2)/w) }

// Basis draws the columns of u (D×K, D = w·h) as a grid of
// images, 10 per row, each scaled to its own maximum absolute value,
// dark ink on white, numbered from 1, under title.
func Basis(path, title string, u *mat.Dense, w, h int) error {
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
	return Tiles(path, title, tiles, labels, nil, w, h, 10)
}

// Examples draws the first perRow test images of each matrix in
// rows, one matrix per row of the picture, scaled by the global maximum,
// under title, each row named by rowNames.
func Examples(dir, file, title string, rowNames []string, rows []*mat.Dense, w, h, perRow int) error {
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
	return Tiles(filepath.Join(dir, file), title, tiles, nil, rowNames, w, h, perRow)
}

// Tiles writes w×h tiles with values in [0, 1] (1 = dark) as a PNG
// grid with perRow tiles per row, under a title line (ASCII: the
// bitmap font has no other glyphs). labels, if non-nil,
// names each tile (under it); rowNames, if non-nil, each row (at its left).
func Tiles(path, title string, tiles [][]float64, labels, rowNames []string, w, h, perRow int) error {
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
