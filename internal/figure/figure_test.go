package figure

import (
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
