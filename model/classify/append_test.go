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

// TestLapRLSPair checks PairPredictScoresTo: CalibratedTo ranks the
// classes as PredictTo does where the estimated priors shift the scores
// (so the pair of a fit with itself predicts as the fit alone); the pair
// of a fit with priors and one without answers the arg max of the sum of
// their calibrated scores, which here differs from both fits' answers on
// some rows; and two fits of different classes or row counts are
// refused.
func TestLapRLSPair(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	x, truth := skewedRows(rng, 1000, 0.07)
	y := hide(truth, 2, 10)
	xte, _ := skewedRows(rng, 1500, 0.07)
	shifted := classify.LapRLS{GammaI: -1, Priors: true}
	plain := classify.LapRLS{GammaI: -1, GammaA: 0.1}
	for _, lr := range []*classify.LapRLS{&shifted, &plain} {
		if err := lr.Fit(x, y); err != nil {
			t.Fatal(err)
		}
	}
	if !shifted.PriorsUsed() {
		t.Fatalf("the priors' estimate %v was not used: the fixture no longer shifts the scores", shifted.EstimatedPriors())
	}
	same, _, err := classify.PairPredictScoresTo(nil, nil, &shifted, xte, &shifted, xte)
	if err != nil {
		t.Fatal(err)
	}
	if want := shifted.PredictTo(nil, xte); !slices.Equal(same, want) {
		t.Errorf("the pair of a fit with itself differs from the fit on %d rows: CalibratedTo ranks otherwise than PredictTo", countDiff(same, want))
	}

	pair, score, err := classify.PairPredictScoresTo(nil, nil, &shifted, xte, &plain, xte)
	if err != nil {
		t.Fatal(err)
	}
	cs, cp := shifted.CalibratedTo(nil, xte), plain.CalibratedTo(nil, xte)
	ds, dp := shifted.DecisionTo(nil, xte), plain.DecisionTo(nil, xte)
	for i, c := range pair {
		want := 0
		if cs.At(i, 1)+cp.At(i, 1) > cs.At(i, 0)+cp.At(i, 0) {
			want = 1
		}
		if c != want {
			t.Fatalf("row %d: pair %d, want %d (calibrated sums %g, %g)", i, c, want, cs.At(i, 0)+cp.At(i, 0), cs.At(i, 1)+cp.At(i, 1))
		}
		if s := (ds.At(i, c) + dp.At(i, c)) / 2; math.Abs(score[i]-s) > 1e-15 {
			t.Fatalf("row %d: score %g, want the mean of the fits' scores of class %d, %g", i, score[i], c, s)
		}
	}
	ps, pp := shifted.PredictTo(nil, xte), plain.PredictTo(nil, xte)
	if countDiff(pair, ps) == 0 || countDiff(pair, pp) == 0 {
		t.Errorf("the pair answers as one of its fits (%d and %d rows differ): the fixture tells nothing of the mean", countDiff(pair, ps), countDiff(pair, pp))
	}

	if _, _, err := classify.PairPredictScoresTo(nil, nil, &shifted, xte, &plain, x); err == nil {
		t.Errorf("rows of %d and %d records were accepted", 1500, 1000)
	}
	three := classify.LapRLS{GammaI: -1}
	y3 := slices.Clone(y)
	for i := range 10 {
		y3[len(y3)-1-i] = 2
	}
	if err := three.Fit(x, y3); err != nil {
		t.Fatal(err)
	}
	if _, _, err := classify.PairPredictScoresTo(nil, nil, &shifted, xte, &three, xte); err == nil {
		t.Errorf("fits of 2 and 3 classes were accepted")
	}
}

// countDiff counts the positions where a and b differ.
func countDiff(a, b []int) int {
	n := 0
	for i := range a {
		if a[i] != b[i] {
			n++
		}
	}
	return n
}
