package model

import (
	"errors"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/testenv"
	"github.com/nmfstream/nmfstream/model/classify"
	"github.com/nmfstream/nmfstream/model/metrics"
)

// jointToy is two classes in 2-D features with matching 1-D codes: samples
// 0–3 are class 0 near (1, 0), samples 4–7 class 1 near (0, 1); 0 and 4 are
// labeled.
func jointToy() (x, v *mat.Dense, y []int) {
	x = mat.NewDense(8, 2, []float64{
		1, 0, 0.9, 0.1, 1, 0.2, 0.8, 0,
		0, 1, 0.1, 0.9, 0.2, 1, 0, 0.8,
	})
	v = mat.NewDense(8, 2, []float64{
		1, 0, 1, 0.1, 0.9, 0, 1, 0,
		0, 1, 0.1, 1, 0, 0.9, 0, 1,
	})
	y = []int{0, -1, -1, -1, 1, -1, -1, -1}
	return x, v, y
}

func TestJointClassifier(t *testing.T) {
	x, v, y := jointToy()
	want := []int{0, 0, 0, 0, 1, 1, 1, 1}
	for _, vote := range []bool{false, true} {
		j := JointClassifier{K: 1, Rounds: 1, Share: 1, Vote: vote}
		if err := j.Fit(DenseRows(x), v, y); err != nil {
			t.Fatal(err)
		}
		for i, c := range j.Labels() {
			if c != want[i] {
				t.Errorf("Vote %v: self-label of sample %d = %d, want %d", vote, i, c, want[i])
			}
		}
		if got := j.PredictTo(nil, DenseRows(x), v); !slices.Equal(got, want) {
			t.Errorf("Vote %v: training samples predicted %v, want %v", vote, got, want)
		}
	}
	// The query's features are class 0's, its code class 1's: the code
	// weight decides (CodeWeight in the vote, FinalCodeWeight in the
	// kernel classifier, which by default sees the features only).
	qx := mat.NewDense(1, 2, []float64{1, 0.1})
	qv := mat.NewDense(1, 2, []float64{0, 1})
	for _, c := range []struct {
		j    JointClassifier
		want int
	}{
		{JointClassifier{Vote: true, K: 1, Rounds: 1, Share: 1, CodeWeight: 1e-3}, 0},
		{JointClassifier{Vote: true, K: 1, Rounds: 1, Share: 1, CodeWeight: 1e3}, 1},
		{JointClassifier{}, 0},
		{JointClassifier{FinalCodeWeight: 1e-3}, 0},
		{JointClassifier{FinalCodeWeight: 10}, 1},
	} {
		if err := c.j.Fit(DenseRows(x), v, y); err != nil {
			t.Fatal(err)
		}
		if got := c.j.PredictTo(nil, DenseRows(qx), qv)[0]; got != c.want {
			t.Errorf("Vote %v, CodeWeight %g, FinalCodeWeight %g: predicted %d, want %d", c.j.Vote, c.j.CodeWeight, c.j.FinalCodeWeight, got, c.want)
		}
	}
	// Each block is scaled by its mean row norm, so rescaling the features
	// (pixels in [0, 16] or [0, 1]) changes nothing.
	xs := mat.NewDense(8, 2, nil)
	xs.Scale(1000, x)
	qs := mat.NewDense(1, 2, nil)
	qs.Scale(1000, qx)
	for _, w := range []float64{0.5, 2} {
		a := JointClassifier{K: 3, CodeWeight: w, Vote: w > 1}
		b := JointClassifier{K: 3, CodeWeight: w, Vote: w > 1}
		if err := a.Fit(DenseRows(x), v, y); err != nil {
			t.Fatal(err)
		}
		if err := b.Fit(DenseRows(xs), v, y); err != nil {
			t.Fatal(err)
		}
		if pa, pb := a.PredictTo(nil, DenseRows(qx), qv)[0], b.PredictTo(nil, DenseRows(qs), qv)[0]; pa != pb {
			t.Errorf("CodeWeight %g: prediction %d on x, %d on 1000·x", w, pa, pb)
		}
	}
}

func TestJointClassifierBadInput(t *testing.T) {
	x, v, y := jointToy()
	var j JointClassifier
	if err := j.Fit(DenseRows(x), mat.NewDense(7, 2, nil), y); err == nil {
		t.Error("Fit accepted 7 codes for 8 samples")
	}
	if err := (&JointClassifier{CodeWeight: -1, Vote: true}).Fit(DenseRows(x), v, y); err == nil {
		t.Error("Fit accepted a negative CodeWeight with Vote")
	}
	// A negative CodeWeight without Vote leaves the codes out (the
	// ablation of eval --codes off): the fit and its predictions do not
	// depend on them.
	a, b := &JointClassifier{CodeWeight: -1}, &JointClassifier{CodeWeight: -1}
	if err := a.Fit(DenseRows(x), v, y); err != nil {
		t.Fatal(err)
	}
	w := mat.DenseCopyOf(v)
	w.Scale(-1, w)
	w.Apply(func(i, j int, x float64) float64 { return float64(i*j%3) - x }, w)
	if err := b.Fit(DenseRows(x), w, y); err != nil {
		t.Fatal(err)
	}
	if pa, pb := a.PredictTo(nil, DenseRows(x), v), b.PredictTo(nil, DenseRows(x), w); !slices.Equal(pa, pb) {
		t.Errorf("CodeWeight −1: predictions %v with the codes, %v with others", pa, pb)
	}
	if err := (&JointClassifier{FinalCodeWeight: -1}).Fit(DenseRows(x), v, y); err == nil {
		t.Error("Fit accepted a negative FinalCodeWeight")
	}
	none := make([]int, 8)
	for i := range none {
		none[i] = -1
	}
	if err := j.Fit(DenseRows(x), v, none); !errors.Is(err, classify.ErrNoLabels) {
		t.Errorf("Fit without labels: %v, want classify.ErrNoLabels", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("PredictTo after a failed Fit did not panic")
		}
	}()
	j.PredictTo(nil, DenseRows(x), v)
}

// TestDigitsJoint is the default run's accuracy floor for what users get:
// Auto(40) codes of docs/DESIGN.md §7's seed-1 digits split (graph-aware
// projection of the held-out third), classified by JointClassifier at its
// defaults (the pair). Measured 0.9666 (0.9616 with JointOnly, the rule
// before the pair; TestDigitsAccuracy has the other methods and the mean
// over seeds, 0.9723); about 3 s.
func TestDigitsJoint(t *testing.T) {
	task := newDigitsTask(10, 1, false)
	m, codes := task.autoCodes(t)
	var j JointClassifier
	if err := j.Fit(DenseRows(task.train), m.Codes(), task.trainY); err != nil {
		t.Fatal(err)
	}
	pool := 0
	for i, c := range j.Labels() {
		if c == task.trainTrue[i] {
			pool++
		}
	}
	acc := metrics.Accuracy(j.PredictTo(nil, DenseRows(task.test), codes), task.testY)
	t.Logf("held-out accuracy %.4f; %d of %d pool samples self-labeled right", acc, pool, len(task.trainTrue))
	// 0.005 (three held-out samples) under the measured figure; the
	// previous classifier (Vote) scored 0.9583, LabelSpreading 0.963.
	if acc < 0.961 {
		t.Errorf("held-out accuracy %.4f < 0.961", acc)
	}
}

// TestDigitsPixelsKernelPeer is the ablation behind JointClassifier's
// figures: the same kernel self-training and kernel classifier on the
// pixels alone, without codes (pixelsKernelPeer). Measured: 0.9683 on seed
// 1 and 0.9710 over the test splits of seeds 1–5 (SSKNMF codes with
// JointClassifier: 0.9666 and 0.9723; over seeds 1–20, 0.9735 against
// 0.9755, TestDigitsCodesGain), i.e. on the digits the kernel classifier,
// not the codes, carries the accuracy past 0.970. Run with
// NMFSTREAM_LONG=1 (about 10 s).
func TestDigitsPixelsKernelPeer(t *testing.T) {
	testenv.SkipUnlessLong(t, "kernel self-training on the pixels of five digits splits, about 10 s")
	var mean float64
	for seed := uint64(1); seed <= 5; seed++ {
		acc := newDigitsTask(10, seed, false).pixelsKernelPeer()
		mean += acc / 5
		t.Logf("seed %d: kernel self-training on pixels %.4f", seed, acc)
	}
	t.Logf("mean over seeds 1–5: %.4f", mean)
	// A sanity floor: the peer must stay a strong one (0.005 under).
	if mean < 0.966 {
		t.Errorf("pixels-only kernel peer %.4f, want ≥ 0.966", mean)
	}
}
