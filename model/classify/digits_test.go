package classify_test

import (
	"compress/gzip"
	"encoding/csv"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/classify"
	"github.com/nmfstream/nmfstream/model/metrics"
)

const digitsPath = "../../internal/datasets/digits.csv.gz"

// loadDigits reads the 1797 8×8 digits: 64 pixel values in 0..16, then the
// label, per line.
func loadDigits(tb testing.TB) (*mat.Dense, []int) {
	tb.Helper()
	f, err := os.Open(digitsPath)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	recs, err := csv.NewReader(zr).ReadAll()
	if err != nil {
		tb.Fatal(err)
	}
	const d = 64
	x := mat.NewDense(len(recs), d, nil)
	y := make([]int, len(recs))
	for i, rec := range recs {
		if len(rec) != d+1 {
			tb.Fatalf("line %d: %d fields, want %d", i+1, len(rec), d+1)
		}
		for j := range d {
			v, err := strconv.ParseFloat(rec[j], 64)
			if err != nil {
				tb.Fatalf("line %d: %v", i+1, err)
			}
			x.Set(i, j, v)
		}
		if y[i], err = strconv.Atoi(rec[d]); err != nil {
			tb.Fatalf("line %d: %v", i+1, err)
		}
	}
	return x, y
}

// digitsSplit is DESIGN.md §7's split of digits: seed 1, one third held
// out, 10 labels per class. It returns the training rows with −1 on the
// unlabeled ones, the test rows and their labels.
func digitsSplit(tb testing.TB) (xtr *mat.Dense, ytr []int, xte *mat.Dense, yte []int, s metrics.SplitIndices) {
	tb.Helper()
	x, y := loadDigits(tb)
	if r, _ := x.Dims(); r != 1797 {
		tb.Fatalf("digits: %d rows, want 1797", r)
	}
	s, err := metrics.Split(y, 1.0/3, 10, rand.NewPCG(1, 1))
	if err != nil {
		tb.Fatal(err)
	}
	labeled := map[int]bool{}
	for _, i := range s.Labeled {
		labeled[i] = true
	}
	xtr, ytr = gather(x, y, s.Train)
	for k, i := range s.Train {
		if !labeled[i] {
			ytr[k] = -1
		}
	}
	xte, yte = gather(x, y, s.Test)
	return xtr, ytr, xte, yte, s
}

func gather(x *mat.Dense, y []int, rows []int) (*mat.Dense, []int) {
	_, d := x.Dims()
	out := mat.NewDense(len(rows), d, nil)
	lab := make([]int, len(rows))
	for k, i := range rows {
		out.SetRow(k, x.RawRowView(i))
		lab[k] = y[i]
	}
	return out, lab
}

// TestDigits checks held-out accuracy on real data against the peer
// figures of DESIGN.md §7 (scikit-learn on a similar split: raw 1-NN 0.917,
// LabelSpreading 0.963). The floors sit a little under what this code
// measures on this split, so a regression fails the test.
func TestDigits(t *testing.T) {
	xtr, ytr, xte, yte, s := digitsSplit(t)
	t.Logf("split: %d train (%d labeled), %d test", len(s.Train), len(s.Labeled), len(s.Test))

	var nn classify.NearestNeighbor
	if err := nn.Fit(xtr, ytr); err != nil {
		t.Fatal(err)
	}
	acc := metrics.Accuracy(nn.PredictTo(nil, xte), yte)
	t.Logf("raw-pixel 1-NN held-out accuracy: %.4f", acc)
	// Measured 0.9149 on this split (seed 1).
	if acc < 0.90 {
		t.Errorf("1-NN accuracy %.4f, want ≥ 0.90", acc)
	}

	var lp classify.LabelPropagation
	if err := lp.Fit(xtr, ytr); err != nil {
		t.Fatal(err)
	}
	lacc := metrics.Accuracy(lp.PredictTo(nil, xte), yte)
	t.Logf("label spreading held-out accuracy: %.4f (%d iterations)", lacc, lp.Iterations())
	// Measured 0.9482 on this split (seed 1); seeds 2–5 give 0.958–0.963.
	if lacc < 0.94 {
		t.Errorf("label spreading accuracy %.4f, want ≥ 0.94", lacc)
	}
}
