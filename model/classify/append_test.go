package classify_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/classify"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// TestAppendCodes checks AppendCodes against rows worked by hand: each
// code scaled to length w after the row's own entries, a zero code left
// out, and its refusals.
func TestAppendCodes(t *testing.T) {
	// Rows: [0.6 0 0.8], [0 0 0], [0 1 0]; codes (3, 4), (0, 0), (0, 2).
	x := sparse.NewCSR(3, 3, []int{0, 2, 2, 3}, []int{0, 2, 1}, []float64{0.6, 0.8, 1})
	codes := mat.NewDense(3, 2, []float64{3, 4, 0, 0, 0, 2})
	z, err := classify.AppendCodes(x, codes, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	if r, c := z.Dims(); r != 3 || c != 5 {
		t.Fatalf("dims %d×%d, want 3×5", r, c)
	}
	want := [][]float64{{0.6, 0, 0.8, 0.3, 0.4}, {0, 0, 0, 0, 0}, {0, 1, 0, 0, 0.5}}
	for i, row := range want {
		for j, v := range row {
			if got := z.At(i, j); math.Abs(got-v) > 1e-15 {
				t.Errorf("(%d, %d) = %g, want %g", i, j, got, v)
			}
		}
	}
	if err := z.Validate(); err != nil {
		t.Errorf("the result is not a valid CSR: %v", err)
	}
	if ind, _ := z.Row(2); !slices.Equal(ind, []int{1, 4}) {
		t.Errorf("row 2 stores columns %v, want [1 4] (the code's zero left out)", ind)
	}
	if x.NNZ() != 3 || codes.At(0, 0) != 3 {
		t.Errorf("the inputs changed")
	}
	for _, c := range []struct {
		codes *mat.Dense
		w     float64
	}{
		{mat.NewDense(2, 2, nil), 1}, // 2 codes for 3 rows
		{codes, -1},                  // negative weight
		{codes, math.Inf(1)},         // infinite weight
		{mat.NewDense(3, 2, []float64{math.NaN(), 0, 0, 0, 0, 0}), 1}, // a non-finite code
	} {
		if _, err := classify.AppendCodes(x, c.codes, c.w); err == nil {
			t.Errorf("classify.AppendCodes(w = %g) accepted bad input", c.w)
		}
	}
}

// TestLapRLSGraphRows checks that GraphRows decides the graph alone: a fit
// on rows with features appended and GraphRows the original rows predicts
// as one whose graph is built from those rows, which differs from the
// graph of the appended rows; and that a GraphRows of another length is
// refused.
func TestLapRLSGraphRows(t *testing.T) {
	x, y0 := topicRows(60, 60, 2, 10, 0.8, rand.New(rand.NewPCG(1, 1)))
	y := hide(y0, 2, 3)
	n, _ := x.Dims()
	// A code that joins rows across the two topics: rows i and i+n/2 share it.
	codes := mat.NewDense(n, 8, nil)
	for i := range n {
		codes.Set(i, i%(n/2)%8, 1)
	}
	z, err := classify.AppendCodes(x, codes, 3)
	if err != nil {
		t.Fatal(err)
	}
	fit := func(rows, graph *sparse.CSR) *mat.Dense {
		lr := classify.LapRLS{GammaI: 1e5, K: 3, GraphRows: graph}
		if err := lr.Fit(rows, y); err != nil {
			t.Fatal(err)
		}
		return lr.DecisionTo(nil, z)
	}
	onX, onZ, own := fit(z, x), fit(z, z), fit(z, nil)
	if !mat.Equal(onZ, own) {
		t.Errorf("GraphRows = the rows themselves fits otherwise than no GraphRows")
	}
	if mat.EqualApprox(onX, own, 1e-9) {
		t.Errorf("GraphRows = the rows without the codes fits as the graph of the rows with them: the graph did not move")
	}
	short := sparse.NewCSR(n-1, 1, make([]int, n), nil, nil)
	if err := (&classify.LapRLS{GammaI: 1e5, K: 3, GraphRows: short}).Fit(z, y); err == nil {
		t.Errorf("a GraphRows of %d rows for %d was accepted", n-1, n)
	}
}
