package figure

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// nonEmpty fails t unless path is a non-empty file.
func nonEmpty(t *testing.T, path string) {
	t.Helper()
	if st, err := os.Stat(path); err != nil || st.Size() == 0 {
		t.Errorf("%s missing or empty: %v", path, err)
	}
}

func TestLine(t *testing.T) {
	dir := t.TempDir()
	ss := []Series{
		{Name: "a", X: []float64{1, 2, 3}, Y: []float64{1, 0.5, 0.25}},
		{X: []float64{1, 2}, Y: []float64{math.NaN(), 0.3}, Dashed: true, Style: 1}, // unnamed: no legend entry
	}
	for _, log := range []bool{false, true} {
		p := filepath.Join(dir, "line.png")
		if err := Line(p, "t", "x", "y", ss, log, log); err != nil {
			t.Fatalf("log %t: %v", log, err)
		}
		nonEmpty(t, p)
	}
	// Nothing drawable (NaN, and non-positive values on a log axis) is an
	// error naming the file.
	err := Line(filepath.Join(dir, "none.png"), "t", "x", "y", []Series{{X: []float64{1, 2}, Y: []float64{0, -1}}}, false, true)
	if err == nil || !strings.Contains(err.Error(), "none.png") {
		t.Errorf("nothing to plot: error %v, want one naming none.png", err)
	}
}

func TestBars(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "bars.png")
	if err := Bars(p, "t", "class", "recall", []string{"a", "b", "c"}, []float64{1, math.NaN(), 0.5}, 1); err != nil {
		t.Fatal(err)
	}
	nonEmpty(t, p)
	if err := Bars(p, "t", "x", "y", []string{"a"}, []float64{1, 2}, 0); err == nil {
		t.Error("2 values for 1 name: no error")
	}
	if err := Bars(p, "t", "x", "y", []string{"a"}, []float64{math.NaN()}, 0); err == nil {
		t.Error("no finite value: no error")
	}
}

func TestBasis(t *testing.T) {
	p := filepath.Join(t.TempDir(), "basis.png")
	u := mat.NewDense(4, 3, []float64{1, 0, 0, 0, 1, 0, 0, 0, 1, 0.5, 0.5, 0.5}) // three 2×2 images
	if err := Basis(p, "u as 2x2 images", u, 2, 2); err != nil {
		t.Fatal(err)
	}
	nonEmpty(t, p)
}

// colourAt reports whether some pixel within 1 pixel of p has colour col.
func colourAt(c *canvas, p point, col color.RGBA) bool {
	for dy := -1; dy <= 1; dy++ {
		for dx := -1; dx <= 1; dx++ {
			if c.img.RGBAAt(int(p.x)+dx, int(p.y)+dy) == col {
				return true
			}
		}
	}
	return false
}

// count returns the pixels of colour col in the columns [x0, x1).
func count(c *canvas, x0, x1 int, col color.RGBA) int {
	n := 0
	for y := range figH {
		for x := x0; x < x1; x++ {
			if c.img.RGBAAt(x, y) == col {
				n++
			}
		}
	}
	return n
}

// dark returns the pixels darker than mid-grey (text, axes) in r.
func dark(c *canvas, r image.Rectangle) int {
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if px := c.img.RGBAAt(x, y); px.R < 100 && px.G < 100 && px.B < 100 {
				n++
			}
		}
	}
	return n
}

func TestLineDrawsPointsLegendAndLabels(t *testing.T) {
	ss := []Series{
		{Name: "a", X: []float64{1, 2, 4}, Y: []float64{0.1, 0.5, 0.9}, Style: 0},
		{X: []float64{1, 4}, Y: []float64{0.9, 0.1}, Style: 1}, // unnamed: no legend entry
	}
	c, f, err := drawLine("line.png", "title", "x", "y", ss, false, false)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range ss {
		for j := range s.X {
			if p := f.at(s.X[j], s.Y[j]); !colourAt(c, p, palette[s.Style]) {
				t.Errorf("series %d point (%g, %g): pixel %v is not the series colour", i, s.X[j], s.Y[j], p)
			}
		}
	}
	// The legend column holds the named curve's sample and nothing of the
	// unnamed one; the plot stops short of it.
	if f.right > figW-legendW {
		t.Errorf("plot reaches x = %g, into the legend column at %d", f.right, figW-legendW)
	}
	if n := count(c, figW-legendW, figW, palette[0]); n == 0 {
		t.Error("legend: no sample of the named curve")
	}
	if n := count(c, figW-legendW, figW, palette[1]); n != 0 {
		t.Errorf("legend: %d pixels of the unnamed curve's colour", n)
	}
	// Title, Y label and tick labels, X label: dark pixels where each goes.
	for name, r := range map[string]image.Rectangle{
		"title":             image.Rect(0, 0, figW-legendW, int(f.top)-tickSize),
		"Y label and ticks": image.Rect(0, int(f.top), int(f.left)-tickLen, int(f.bottom)),
		"X label and ticks": image.Rect(int(f.left), int(f.bottom)+tickLen, int(f.right), figH),
	} {
		if dark(c, r) == 0 {
			t.Errorf("%s: nothing written in %v", name, r)
		}
	}

	// Without a named series, no legend: the plot takes the whole width.
	_, f, err = drawLine("line.png", "title", "x", "y", ss[1:], false, false)
	if err != nil {
		t.Fatal(err)
	}
	if f.right <= figW-legendW {
		t.Errorf("no legend entry, yet the plot stops at x = %g", f.right)
	}
}

func TestLineLogAxes(t *testing.T) {
	ss := []Series{{Name: "a", X: []float64{1, 10, 100}, Y: []float64{1, 0.1, 0.01}}}
	c, f, err := drawLine("log.png", "t", "x", "y", ss, true, true)
	if err != nil {
		t.Fatal(err)
	}
	// On log axes the middle point is halfway along both.
	p0, p1, p2 := f.at(1, 1), f.at(10, 0.1), f.at(100, 0.01)
	if math.Abs(p1.x-(p0.x+p2.x)/2) > 0.5 || math.Abs(p1.y-(p0.y+p2.y)/2) > 0.5 {
		t.Errorf("log axes: points at %v %v %v, the middle one not halfway", p0, p1, p2)
	}
	if !colourAt(c, p1, palette[0]) {
		t.Errorf("point (10, 0.1) at %v not drawn", p1)
	}
	var labels []string
	for _, tk := range f.x.ticks {
		labels = append(labels, tk.label)
	}
	if got, want := strings.Join(labels, " "), "1 10 100"; got != want {
		t.Errorf("log X ticks %q, want the plotted values %q", got, want)
	}
}

func TestBarsDrawValues(t *testing.T) {
	values := []float64{1, math.NaN(), 0.5}
	c, f, err := drawBars("bars.png", "t", "class", "recall", []string{"a", "b", "c"}, values, 1)
	if err != nil {
		t.Fatal(err)
	}
	if f.y.lo != 0 || f.y.hi != 1 {
		t.Errorf("Y axis [%g, %g], want [0, 1] (top 1)", f.y.lo, f.y.hi)
	}
	for i, v := range values {
		inside := colourAt(c, f.at(float64(i), 0.25), palette[0])
		if want := !math.IsNaN(v); inside != want {
			t.Errorf("bar %d (value %g): drawn at a quarter height %t, want %t", i, v, inside, want)
		}
	}
	if colourAt(c, f.at(2, 0.75), palette[0]) {
		t.Error("bar of 0.5 reaches 0.75")
	}
}

func TestNiceTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   string
	}{
		{0, 1, "0 0.2 0.4 0.6 0.8 1"},
		{0.187, 0.962, "0.2 0.4 0.6 0.8"},
		{-3, 7, "-2 0 2 4 6"},
		{0, 250, "0 50 100 150 200 250"},
		{0.9, 1.3, "0.9 1 1.1 1.2 1.3"},
	} {
		var got []string
		for _, tk := range niceTicks(tc.lo, tc.hi) {
			got = append(got, tk.label)
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("niceTicks(%g, %g) = %q, want %q", tc.lo, tc.hi, g, tc.want)
		}
	}
}

func TestOneTwoFive(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   string
	}{
		{0.3, 1.2, "0.5 1"},
		{0.01, 100, "0.01 0.1 1 10 100"},
		{0.11, 0.19, "0.11 0.19"}, // no 1, 2, 5 × 10ⁿ inside: the ends
	} {
		var got []string
		for _, tk := range oneTwoFive(tc.lo, tc.hi) {
			got = append(got, tk.label)
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("oneTwoFive(%g, %g) = %q, want %q", tc.lo, tc.hi, g, tc.want)
		}
	}
}

func TestDashed(t *testing.T) {
	// A 10-pixel line in dashes of 3 on, 2 off: [0,3] [5,8] and the
	// start of the next, [10,10] has no length and is dropped.
	runs := dashed([]point{{0, 0}, {10, 0}}, []float64{3, 2})
	var got []string
	for _, r := range runs {
		got = append(got, fmt.Sprintf("%g-%g", r[0].x, r[len(r)-1].x))
	}
	if g := strings.Join(got, " "); g != "0-3 5-8" {
		t.Errorf("dashes %q, want %q", g, "0-3 5-8")
	}
}
