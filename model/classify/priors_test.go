package classify_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/nmfstream/nmfstream/model/classify"
	"github.com/nmfstream/nmfstream/model/metrics"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// skewedRows returns n rows of two overlapping classes, class 1 a share of
// them: a row of class c puts weight on 8 of 28 features, drawn from the
// first 20 (class 0) or the last 20 (class 1), so the two share 12.
func skewedRows(rng *rand.Rand, n int, share float64) (*sparse.CSR, []int) {
	x := sparse.Zeros(0, 28)
	y := make([]int, n)
	for i := range n {
		c := 0
		if rng.Float64() < share {
			c = 1
		}
		y[i] = c
		seen := map[int]bool{}
		var ind []int
		var val []float64
		for len(ind) < 8 {
			j := 8*c + rng.IntN(20)
			if !seen[j] {
				seen[j] = true
				ind = append(ind, j)
			}
		}
		for i := 1; i < len(ind); i++ { // sorted columns
			for k := i; k > 0 && ind[k] < ind[k-1]; k-- {
				ind[k], ind[k-1] = ind[k-1], ind[k]
			}
		}
		for range ind {
			val = append(val, 0.5+rng.Float64())
		}
		x.AppendRow(ind, val)
	}
	return x, y
}

// TestLapRLSPriorsSkewed checks that with Priors LapRLS estimates the share
// of a 7% class in the training pool (10 labels per class, balanced by
// design) to within 0.03, uses it, and that prediction under that prior
// makes fewer errors on held-out rows of the same skew than the uniform
// prior the class weighting implies.
func TestLapRLSPriorsSkewed(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	x, truth := skewedRows(rng, 2000, 0.07)
	y := hide(truth, 2, 10)
	var rare int
	for _, c := range truth {
		rare += c
	}
	xte, yte := skewedRows(rng, 3000, 0.07)
	plain := classify.LapRLS{GammaI: -1}
	if err := plain.Fit(x, y); err != nil {
		t.Fatal(err)
	}
	lr := classify.LapRLS{GammaI: -1, Priors: true}
	if err := lr.Fit(x, y); err != nil {
		t.Fatal(err)
	}
	want := float64(rare) / float64(len(truth))
	got := lr.EstimatedPriors()
	if len(got) != 2 || math.Abs(got[1]-want) > 0.03 || !lr.PriorsUsed() {
		t.Fatalf("estimated priors %v (used %v), want class 1 at %.3f ± 0.03, used", got, lr.PriorsUsed(), want)
	}
	a0 := metrics.Accuracy(plain.PredictTo(nil, xte), yte)
	a1 := metrics.Accuracy(lr.PredictTo(nil, xte), yte)
	t.Logf("T = %.3g, priors %.3f (true %.3f); held-out accuracy uniform %.4f, estimated %.4f", lr.Temperature(), got, want, a0, a1)
	if a1 <= a0 {
		t.Errorf("held-out accuracy with the estimated priors %.4f, want above the uniform prior's %.4f", a1, a0)
	}
	if plain.EstimatedPriors() != nil || plain.Temperature() != 1 || plain.PriorsUsed() {
		t.Errorf("without Priors: priors %v, T %g, used %v; want nil, 1 and false", plain.EstimatedPriors(), plain.Temperature(), plain.PriorsUsed())
	}
}

// TestLapRLSPriorsUnlabeledClass checks that a class without labels (here
// 1, between the labeled 0 and 2) gets no prior mass from the EM and is
// never predicted: its probability columns, which the softmax fills, are
// not evidence of a class nobody labeled.
func TestLapRLSPriorsUnlabeledClass(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	x, truth := skewedRows(rng, 1000, 0.3)
	y := make([]int, len(truth))
	var have [2]int
	for i, c := range truth {
		y[i] = -1
		if have[c] < 10 {
			y[i] = 2 * c
			have[c]++
		}
	}
	lr := classify.LapRLS{GammaI: -1, Priors: true}
	if err := lr.Fit(x, y); err != nil {
		t.Fatal(err)
	}
	if pi := lr.EstimatedPriors(); len(pi) != 3 || pi[1] > 1e-6 {
		t.Fatalf("estimated priors %v, want three with class 1 at the floor 1e-6", pi)
	}
	xte, _ := skewedRows(rng, 1000, 0.3)
	for i, c := range lr.PredictTo(nil, xte) {
		if c == 1 {
			t.Fatalf("held-out row %d predicted class 1, which has no label (priors %v)", i, lr.EstimatedPriors())
		}
	}
}

// TestLapRLSPriorsMixedRest checks the estimate where the common class is
// made of many kinds: one topic of 20 (topicRows, 30% of a row's words
// from its topic, so that topics overlap as texts do) is a 5% class
// against the other 19 together, 10 labels each, the common class's
// labels from 10 of its 19 topics. The EM (PriorsEM) counts the middling
// probabilities of the rows of the 9 unlabeled topics toward the rare
// class; mixture proportion estimation, which counts only the rows as
// sure of it as its own labels, must come closer to the rare class's
// share of the pool, within 0.03, and predict held-out rows of the same
// skew more accurately (measured: 0.071 against the EM's 0.152 for
// 0.050, accuracy 0.966 against 0.934).
func TestLapRLSPriorsMixedRest(t *testing.T) {
	rows := func(seed uint64, n int) (*sparse.CSR, []int) {
		x, topic := topicRows(n, 600, 20, 20, 0.3, rand.New(rand.NewPCG(seed, 9)))
		y := make([]int, n)
		for i, k := range topic {
			if k == 0 {
				y[i] = 1
			}
		}
		return x, y
	}
	x, truth := rows(1, 6000)
	y := hide(truth, 2, 10)
	var rare float64
	for _, c := range truth {
		rare += float64(c)
	}
	want := rare / float64(len(truth))
	fit := func(em bool) *classify.LapRLS {
		lr := &classify.LapRLS{GammaI: -1, Priors: true, PriorsEM: em}
		if err := lr.Fit(x, y); err != nil {
			t.Fatal(err)
		}
		return lr
	}
	mpe, em := fit(false), fit(true)
	xte, yte := rows(2, 6000)
	am, ae := metrics.Accuracy(mpe.PredictTo(nil, xte), yte), metrics.Accuracy(em.PredictTo(nil, xte), yte)
	t.Logf("rare share %.3f: mpe %.3f (held-out accuracy %.4f), em %.3f (%.4f)", want, mpe.EstimatedPriors()[1], am, em.EstimatedPriors()[1], ae)
	dm, de := math.Abs(mpe.EstimatedPriors()[1]-want), math.Abs(em.EstimatedPriors()[1]-want)
	if dm > 0.03 || dm >= de {
		t.Errorf("rare class's prior: mpe %.3f, em %.3f, want mpe within 0.03 of %.3f and closer than em", mpe.EstimatedPriors()[1], em.EstimatedPriors()[1], want)
	}
	if am <= ae {
		t.Errorf("held-out accuracy: mpe %.4f, em %.4f; want mpe's above", am, ae)
	}
	// Labels not balanced by design (one more of the rare class) carry
	// the priors themselves: the EM estimates them either way.
	for i, c := range truth {
		if c == 1 && y[i] < 0 {
			y[i] = 1
			break
		}
	}
	if a, b := fit(false), fit(true); !slices.Equal(a.EstimatedPriors(), b.EstimatedPriors()) {
		t.Errorf("labels not balanced: priors %v, want the EM's %v", a.EstimatedPriors(), b.EstimatedPriors())
	}
}
