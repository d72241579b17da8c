package model

import (
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/testenv"
)

// accuracySpec is a method with its default hyperparameters and the anchor
// weight of graph-aware projection (the method's k-NN graph weight).
type accuracySpec struct {
	name   string
	m      Method
	anchor float64
}

func accuracySpecs() []accuracySpec {
	c := Common{Rank: 40}
	return []accuracySpec{
		{"dgnmf", &DGNMF{Common: c}, 1},
		{"ssknmf", &SSKNMF{Common: c}, 10},
		{"n2s2l", &N2S2L{Common: c}, 100},
		{"nge", &NGE{Common: c}, 100},
	}
}

// dpcaAccuracy fits DPCA on the task and scores the held-out codes.
func (t digitsTask) dpcaAccuracy(m *DPCA) (float64, error) {
	if err := m.Fit(DenseRows(t.train), t.trainY); err != nil {
		return 0, err
	}
	var z mat.Dense
	if err := m.TransformTo(&z, DenseRows(t.test)); err != nil {
		return 0, err
	}
	return t.nnAccuracy(m.Codes(), &z), nil
}

// TestDPCADigits is the fast accuracy check: DPCA is closed form.
func TestDPCADigits(t *testing.T) {
	task := newDigitsTask(10, 1, false)
	acc, err := task.dpcaAccuracy(&DPCA{Rank: 40})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("DPCA K=40 held-out 1-NN accuracy %.4f (seed 1, L = 10)", acc)
	// Raw-pixel 1-NN scores 0.917 on this protocol (docs/DESIGN.md §7); DPCA
	// must stay at least at 0.90.
	if acc < 0.90 {
		t.Errorf("DPCA accuracy %.4f < 0.90", acc)
	}
}

// digitsCodes fits s's method on the task and codes the held-out samples
// (graph-aware projection; DPCA: its linear map).
func (t digitsTask) digitsCodes(s accuracySpec) (*mat.Dense, error) {
	if err := s.m.Fit(DenseRows(t.train), t.trainY); err != nil {
		return nil, err
	}
	if d, ok := s.m.(*DPCA); ok {
		codes := new(mat.Dense)
		return codes, d.TransformTo(codes, DenseRows(t.test))
	}
	return t.codes(s.m, ProjectGraph, s.anchor)
}

// TestDigitsAccuracy is docs/DESIGN.md §7's protocol on the test split with the
// default hyperparameters (chosen on validation splits of the pool, see
// BENCHMARKS.md, "Tuning"): one third held out, 10 labels
// per class, seed 1; graph-aware projection of held-out samples (DPCA: its
// linear map). Each method is scored by four classifiers on the codes: 1-NN
// against the 100 labeled training codes; 1-NN against the training codes
// labeled by self-training in code space (selfLabel, 5 rounds, share 0.8);
// JointClassifier with Vote (the same self-labels, then a 5-NN vote on
// pixels and codes together); and JointClassifier at its defaults (kernel
// self-training on pixels and codes, then a kernel classifier on pixels).
// TestDigitsAccuracySeeds checks the means over the test splits of seeds
// 1–5. Run with NMFSTREAM_LONG=1 (25 s to a minute and a half).
//
// Measured (seed 1; peers on the same split: raw 1-NN 0.917, scikit-learn
// NMF + 1-NN 0.868, LabelSpreading 0.963):
//
//	         1-NN    self-labeled 1-NN   joint 5-NN vote   joint kernel   (mean of seeds 1–5: vote, kernel)
//	dgnmf    0.9199  0.9533              0.9616            0.9766         0.9573  0.9683
//	ssknmf   0.9449  0.9566              0.9583            0.9666         0.9613  0.9723
//	n2s2l    0.9382  0.9499              0.9616            0.9699         0.9629  0.9713
//	nge      0.9449  0.9466              0.9583            0.9699         0.9623  0.9720
//	dpca     0.9249  0.9549              0.9533            0.9716         0.9639  0.9723
//
// (The joint kernel column is the pair's, the default since session 35:
// BENCHMARKS.md, "The joint classifier's pair".) The target of
// 0.970 is met by the mean over seeds of Auto's method (SSKNMF, chosen on
// validation splits) and of N²S²L, NGE and DPCA, and on seed 1 by DGNMF
// and DPCA, but not on seed 1 by SSKNMF (0.9666); the floors below hold
// each figure, not the target.
func TestDigitsAccuracy(t *testing.T) {
	testenv.SkipUnlessLong(t, "five methods × four classifiers on the digits, up to a minute and a half")
	task := newDigitsTask(10, 1, false)
	specs := append(accuracySpecs(), accuracySpec{"dpca", &DPCA{Rank: 40}, 0})
	for _, s := range specs {
		t0 := time.Now()
		codes, err := task.digitsCodes(s)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		nn := task.nnAccuracy(s.m.Codes(), codes)
		self := task.selfLabelAccuracy(s.m.Codes(), codes)
		vote := task.voteAccuracy(s.m.Codes(), codes)
		joint := task.jointAccuracy(s.m.Codes(), codes)
		t.Logf("%-7s held-out accuracy: 1-NN %.4f, self-labeled 1-NN %.4f, joint 5-NN vote %.4f, joint kernel %.4f (%v)",
			s.name, nn, self, vote, joint, time.Since(t0).Round(time.Millisecond))
		f := digitsFloors[s.name]
		for i, a := range []float64{nn, self, vote, joint} {
			if a < f[i] {
				t.Errorf("%s: accuracy %.4f of classifier %d < %.3f", s.name, a, i, f[i])
			}
		}
	}
}

// TestDigitsAccuracySeeds is TestDigitsAccuracy's two joint classifiers as
// means over the test splits of seeds 1–5, against floors 0.003 (about two
// held-out samples per split) under the measured means given in
// TestDigitsAccuracy's table. Run with NMFSTREAM_LONG=1 (about 2 minutes).
func TestDigitsAccuracySeeds(t *testing.T) {
	testenv.SkipUnlessLong(t, "five methods on five digits splits, about 2 minutes")
	floors := map[string][2]float64{ // {joint 5-NN vote, joint kernel}
		"dgnmf":  {0.954, 0.965},
		"ssknmf": {0.958, 0.969},
		"n2s2l":  {0.959, 0.968},
		"nge":    {0.959, 0.969},
		"dpca":   {0.960, 0.969},
	}
	specs := append(accuracySpecs(), accuracySpec{"dpca", &DPCA{Rank: 40}, 0})
	for _, s := range specs {
		var vote, joint float64
		for seed := uint64(1); seed <= 5; seed++ {
			task := newDigitsTask(10, seed, false)
			codes, err := task.digitsCodes(s)
			if err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			vote += task.voteAccuracy(s.m.Codes(), codes) / 5
			joint += task.jointAccuracy(s.m.Codes(), codes) / 5
		}
		t.Logf("%-7s mean held-out accuracy over seeds 1–5: joint 5-NN vote %.4f, joint kernel %.4f", s.name, vote, joint)
		if f := floors[s.name]; vote < f[0] || joint < f[1] {
			t.Errorf("%s: mean accuracy %.4f (vote), %.4f (kernel); want at least %.3f, %.3f", s.name, vote, joint, f[0], f[1])
		}
	}
}

// digitsFloors are TestDigitsAccuracy's floors per method, {1-NN,
// self-labeled 1-NN, joint 5-NN vote, joint kernel}: 0.005 (three held-out
// samples) under the measured figures, so that a change in the BLAS's
// rounding passes and a real loss does not. All are above the 0.90 every
// method must reach.
var digitsFloors = map[string][4]float64{
	"dgnmf":  {0.915, 0.948, 0.956, 0.971},
	"ssknmf": {0.943, 0.945, 0.953, 0.961},
	"n2s2l":  {0.933, 0.945, 0.956, 0.964},
	"nge":    {0.940, 0.941, 0.953, 0.964},
	"dpca":   {0.920, 0.950, 0.948, 0.966},
}
