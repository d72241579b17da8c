package model

import (
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/sparse"
)

// TestNormOutliers checks NormOutliers on cases worked by hand: the typical
// norm is the geometric mean of the other nonzero norms (and the window's,
// given as a sum of ln-norms), only norms above ratio times it are
// outliers, and a zero norm or a norm with nothing to compare with never is.
func TestNormOutliers(t *testing.T) {
	for _, c := range []struct {
		name    string
		norms   []float64
		logSum  float64
		n       int
		out     []int
		typical []float64
	}{
		// 1e9 against 1, 4 and 16: (1·4·16)^(1/3) = 4, and 1e9 > 10⁶·4.
		// 16 against 1, 4 and 1e9: 1587, and 1 against the others 4000.
		{"batch", []float64{1, 4, 0, 16, 1e9}, 0, 0, []int{4}, []float64{4}},
		{"window", []float64{1e7}, 3 * math.Ln2, 3, []int{0}, []float64{2}},
		{"within", []float64{1e6}, 3 * math.Ln2, 3, nil, nil},
		{"alone", []float64{1e30}, 0, 0, nil, nil},
		{"zeros", []float64{0, 0, 5}, 0, 0, nil, nil},
	} {
		out, typ := NormOutliers(c.norms, 1e6, c.logSum, c.n)
		if !slices.Equal(out, c.out) || len(typ) != len(c.typical) {
			t.Errorf("%s: outliers %v (typical %v), want %v (%v)", c.name, out, typ, c.out, c.typical)
			continue
		}
		for i := range typ {
			if math.Abs(typ[i]-c.typical[i]) > 1e-12*c.typical[i] {
				t.Errorf("%s: typical norm %g, want %g", c.name, typ[i], c.typical[i])
			}
		}
	}
}

// TestRowNorms checks RowNorms on dense and sparse rows against norms
// worked by hand (3-4-5 and 5-12-13 triangles, a zero row).
func TestRowNorms(t *testing.T) {
	want := []float64{5, 0, 13}
	d := mat.NewDense(3, 3, []float64{3, 0, 4, 0, 0, 0, 0, 5, 12})
	s := sparse.Zeros(0, 3)
	s.AppendRow([]int{0, 2}, []float64{3, 4})
	s.AppendRow(nil, nil)
	s.AppendRow([]int{1, 2}, []float64{5, 12})
	for _, x := range []Data{DenseRows(d), SparseRows(s)} {
		if got := RowNorms(x); !slices.Equal(got, want) {
			t.Errorf("RowNorms(%T) = %v, want %v", Rows(x), got, want)
		}
	}
}
