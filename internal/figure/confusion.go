package figure

import (
	"fmt"
	"image/color"
	"path/filepath"
	"strconv"
)

// Confusion writes a confusion matrix to path as a PNG: one row per true
// class and one column per predicted class, in the order of names, each
// cell holding its count and shaded by its share of the row (the recall
// of the row's class on the diagonal, its confusions elsewhere), from
// white (none) to blue (all), under title. counts[i][j] is the number of
// records of class i predicted as j; every row has len(names) entries.
// Names longer than 14 runes are cut. It returns an error if counts is
// not square in len(names), holds a negative count or has no record, or
// if there are more than 30 classes (the cells would be unreadable at the
// figure's size).
func Confusion(path, title string, names []string, counts [][]int) error {
	file := filepath.Base(path)
	n := len(names)
	if n == 0 || n > 30 || len(counts) != n {
		return fmt.Errorf("figure: %s: %d rows of counts for %d classes (want 1 to 30)", file, len(counts), n)
	}
	total := 0
	for i, row := range counts {
		if len(row) != n {
			return fmt.Errorf("figure: %s: row %d has %d counts, want %d", file, i, len(row), n)
		}
		for _, v := range row {
			if v < 0 {
				return fmt.Errorf("figure: %s: negative count %d in row %d", file, v, i)
			}
			total += v
		}
	}
	if total == 0 {
		return fmt.Errorf("figure: %s: nothing to plot (no record)", file)
	}
	c, err := newCanvas()
	if err != nil {
		return err
	}
	drawConfusion(c, title, shortNames(names, 14), counts)
	return c.save(path)
}

// shortNames returns names cut to at most max runes, an ellipsis marking
// a cut.
func shortNames(names []string, max int) []string {
	out := make([]string, len(names))
	for i, s := range names {
		r := []rune(s)
		if len(r) > max {
			s = string(r[:max-1]) + "…"
		}
		out[i] = s
	}
	return out
}

// drawConfusion draws the matrix: the title on top, the predicted classes'
// names reading upwards above the columns, the true classes' names at the
// left of the rows, and the axis titles.
func drawConfusion(c *canvas, title string, names []string, counts [][]int) {
	n := len(names)
	nameW := 0
	for _, s := range names {
		nameW = max(nameW, c.textWidth(tickSize, s))
	}
	titleH := c.textHeight(titleSize) + 8
	labelH := c.textHeight(labelSize) + 6
	top := titleH + labelH + nameW + 6   // the column names read upwards above the cells
	left := labelH + nameW + 8           // the row names at the left
	size := min(figH-top-8, figW-left-8) // the matrix is square
	cell := float64(size) / float64(n)
	c.text(titleSize, figW/2, titleH-6, alignCenter, title)
	mx := left + size/2
	c.text(labelSize, mx, titleH+labelH-4, alignCenter, "predicted class")
	c.textUp(labelSize, 2, top+size/2, alignCenter, "true class")
	for i, row := range counts {
		sum := 0
		for _, v := range row {
			sum += v
		}
		y0 := float64(top) + float64(i)*cell
		c.text(tickSize, left-4, int(y0+cell/2)+c.textHeight(tickSize)/3, alignRight, names[i])
		for j, v := range row {
			x0 := float64(left) + float64(j)*cell
			share := 0.0
			if sum > 0 {
				share = float64(v) / float64(sum)
			}
			c.fill(shade(share), []point{{x0, y0}, {x0 + cell, y0}, {x0 + cell, y0 + cell}, {x0, y0 + cell}})
			if v > 0 && cell >= 14 {
				size := float64(tickSize)
				s := strconv.Itoa(v)
				if c.textWidth(size, s) > int(cell)-2 {
					continue // no room: the shade alone tells
				}
				c.text(size, int(x0+cell/2), int(y0+cell/2)+c.textHeight(size)/3, alignCenter, s)
			}
		}
	}
	for j, s := range names {
		x := float64(left) + (float64(j)+0.5)*cell - float64(c.textHeight(tickSize))/2
		c.textUp(tickSize, int(x), top-4, alignLeft, s)
	}
	grid := color.RGBA{200, 200, 200, 255}
	for k := 0; k <= n; k++ {
		v := float64(k) * cell
		c.stroke(grid, 1, nil, point{float64(left) + v, float64(top)}, point{float64(left) + v, float64(top + size)})
		c.stroke(grid, 1, nil, point{float64(left), float64(top) + v}, point{float64(left + size), float64(top) + v})
	}
}

// shade is the colour of a cell holding share of its row: white for 0, a
// mid blue (on which black counts still read) for 1.
func shade(share float64) color.RGBA {
	to := color.RGBA{90, 160, 215, 255}
	mix := func(a uint8) uint8 { return uint8(255 - share*(255-float64(a)) + 0.5) }
	return color.RGBA{mix(to.R), mix(to.G), mix(to.B), 255}
}
