package classify_test

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/datasets"
	"github.com/nmfstream/nmfstream/model/classify"
	"github.com/nmfstream/nmfstream/model/metrics"
)

// loadDigits returns the embedded 1797 8×8 digits (pixels in 0..16) and
// their labels.
func loadDigits(tb testing.TB) (*mat.Dense, []int) {
	tb.Helper()
	return datasets.Digits()
}

// digitsSplit is docs/DESIGN.md §7's split of digits: seed 1, one third held
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
	xtr, _ = gather(x, y, s.Train)
	ytr, _ = s.PoolLabels(y)
	xte, yte = gather(x, y, s.Test)
	return xtr, ytr, xte, yte, s
}

// TestDigitsSeeds reports the same figures over five splits (seeds 1–5 of
// rand.NewPCG(seed, 1)), since one split moves accuracy by about ±0.01.
func TestDigitsSeeds(t *testing.T) {
	x, y := loadDigits(t)
	var sumNN, sumLP float64
	const seeds = 5
	for seed := uint64(1); seed <= seeds; seed++ {
		s, err := metrics.Split(y, 1.0/3, 10, rand.NewPCG(seed, 1))
		if err != nil {
			t.Fatal(err)
		}
		xtr, ytr := gather(x, y, s.Train)
		xte, yte := gather(x, y, s.Test)
		lab := map[int]bool{}
		for _, i := range s.Labeled {
			lab[i] = true
		}
		for k, i := range s.Train {
			if !lab[i] {
				ytr[k] = -1
			}
		}
		var nn classify.NearestNeighbor
		var lp classify.LabelPropagation
		if err := nn.Fit(xtr, ytr); err != nil {
			t.Fatal(err)
		}
		if err := lp.Fit(xtr, ytr); err != nil {
			t.Fatal(err)
		}
		a := metrics.Accuracy(nn.PredictTo(nil, xte), yte)
		b := metrics.Accuracy(lp.PredictTo(nil, xte), yte)
		t.Logf("seed %d: 1-NN %.4f, label spreading %.4f", seed, a, b)
		sumNN += a
		sumLP += b
	}
	mNN, mLP := sumNN/seeds, sumLP/seeds
	t.Logf("mean over %d seeds: 1-NN %.4f, label spreading %.4f", seeds, mNN, mLP)
	// Floors a little under the measured means (see the log).
	if mNN < 0.90 || mLP < 0.95 {
		t.Errorf("mean accuracy 1-NN %.4f (want ≥ 0.90), label spreading %.4f (want ≥ 0.95)", mNN, mLP)
	}
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
// figures of docs/DESIGN.md §7 (scikit-learn on a similar split: raw 1-NN 0.917,
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

	// Supervised baselines on the 100 labeled rows only.
	var li classify.Linear
	if err := li.Fit(xtr, ytr); err != nil {
		t.Fatal(err)
	}
	liacc := metrics.Accuracy(li.PredictTo(nil, xte), yte)
	var nc classify.NearestCentroid
	if err := nc.Fit(xtr, ytr); err != nil {
		t.Fatal(err)
	}
	ncacc := metrics.Accuracy(nc.PredictTo(nil, xte), yte)
	t.Logf("logistic regression %.4f (%d L-BFGS iterations), nearest centroid %.4f", liacc, li.Iterations(), ncacc)
	// Measured 0.8948 (MaxIter reached, as scikit-learn would warn) and 0.8781.
	if liacc < 0.87 || ncacc < 0.86 {
		t.Errorf("logistic regression %.4f (want ≥ 0.87), nearest centroid %.4f (want ≥ 0.86)", liacc, ncacc)
	}
}

// TestDigitsKMeans clusters all 1797 digits into 10 clusters.
func TestDigitsKMeans(t *testing.T) {
	x, y := loadDigits(t)
	km := classify.KMeans{K: 10}
	if err := km.Fit(x); err != nil {
		t.Fatal(err)
	}
	got := km.LabelsTo(nil)
	nmi, acc := metrics.NMI(got, y), metrics.ClusteringAccuracy(got, y)
	t.Logf("k-means on raw digits: NMI %.4f, clustering accuracy %.4f, inertia %.1f", nmi, acc, km.Inertia())
	// Measured NMI 0.7418 and clustering accuracy 0.7924 with the default seed.
	if nmi < 0.72 || acc < 0.76 {
		t.Errorf("NMI %.4f, clustering accuracy %.4f; want ≥ 0.72 and ≥ 0.76", nmi, acc)
	}
}
