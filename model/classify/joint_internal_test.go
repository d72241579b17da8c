package classify

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/metrics"
	"github.com/nmfstream/nmfstream/pipeline"
)

// jointBlobs returns n rows of features in three Gaussian blobs (the
// classes, truth), codes in three blobs of another assignment (so that
// they mislead), and labels with the first two rows of each class known.
func jointBlobs(n int, seed uint64) (x, v *mat.Dense, y, truth []int) {
	rnd := rand.New(rand.NewPCG(seed, seed))
	x, v = mat.NewDense(n, 4, nil), mat.NewDense(n, 3, nil)
	y, truth = make([]int, n), make([]int, n)
	seen := make([]int, 3)
	for i := range n {
		c, d := i%3, rnd.IntN(3)
		truth[i], y[i] = c, -1
		if seen[c] < 2 {
			y[i] = c
			seen[c]++
		}
		for j := range 4 {
			m := 0.0
			if j == c {
				m = 3
			}
			x.Set(i, j, m+rnd.NormFloat64())
		}
		for j := range 3 {
			m := 0.0
			if j == d {
				m = 5
			}
			v.Set(i, j, math.Abs(m+0.3*rnd.NormFloat64()))
		}
	}
	return x, v, y, truth
}

// TestJointPairAverages checks the pair by construction: the default
// Joint predicts the arg max of the mean of two classifiers' outputs, the
// one JointOnly fits (joint self-training) and the one CodeWeight < 0
// fits (the features' self-training), and scores that mean; JointOnly
// and CodeWeight < 0 fit no pair.
func TestJointPairAverages(t *testing.T) {
	x, v, y, _ := jointBlobs(90, 1)
	var pair Joint
	only, feat := Joint{JointOnly: true}, Joint{CodeWeight: -1}
	for _, j := range []*Joint{&pair, &only, &feat} {
		if err := j.Fit(x, v, y); err != nil {
			t.Fatal(err)
		}
	}
	if !pair.pair || only.pair || feat.pair {
		t.Fatalf("pair fitted: default %v, JointOnly %v, CodeWeight −1 %v; want true, false, false", pair.pair, only.pair, feat.pair)
	}
	var a, b mat.Dense
	only.kr.DecisionTo(&a, x)
	feat.kr.DecisionTo(&b, x)
	got, score := pair.PredictScoresTo(nil, nil, x, v)
	differ := 0
	for i := range got {
		mean := make([]float64, 3)
		floats.AddScaled(mean, 0.5, a.RawRowView(i))
		floats.AddScaled(mean, 0.5, b.RawRowView(i))
		want := floats.MaxIdx(mean)
		if got[i] != want || math.Abs(score[i]-mean[want]) > 1e-9 {
			t.Fatalf("row %d: pair predicts %d (score %g), want %d (%g), the mean of the two classifiers", i, got[i], score[i], want, mean[want])
		}
		if floats.MaxIdx(a.RawRowView(i)) != floats.MaxIdx(b.RawRowView(i)) {
			differ++
		}
	}
	if differ == 0 {
		t.Fatal("the two classifiers agree on every row: the test cannot tell the mean from either")
	}
	if lp, lo := pair.Labels(), only.Labels(); !slices.Equal(lp, lo) {
		t.Errorf("Labels: the pair's are not the joint self-training's")
	}
}

// TestJointPairMisleadingCodes checks what the pair is for: where the
// codes group the rows by something other than their class, the joint
// self-training alone follows them, and the features' half of the pair
// pulls the prediction back toward the classes.
func TestJointPairMisleadingCodes(t *testing.T) {
	var accPair, accOnly float64
	const seeds = 5
	for seed := uint64(1); seed <= seeds; seed++ {
		x, v, y, truth := jointBlobs(150, seed)
		pair, only := Joint{CodeWeight: 3}, Joint{CodeWeight: 3, JointOnly: true}
		for _, j := range []*Joint{&pair, &only} {
			if err := j.Fit(x, v, y); err != nil {
				t.Fatal(err)
			}
		}
		accPair += metrics.Accuracy(pair.PredictTo(nil, x, v), truth) / seeds
		accOnly += metrics.Accuracy(only.PredictTo(nil, x, v), truth) / seeds
	}
	t.Logf("accuracy over %d seeds: pair %.3f, joint self-training only %.3f", seeds, accPair, accOnly)
	if accPair < accOnly+0.05 {
		t.Errorf("pair %.3f, joint only %.3f: the features' self-training should lift it by 0.05 or more", accPair, accOnly)
	}
}

// TestJointProgress checks Joint's Progress: one call per kernel fit,
// counting up to the total it announces, Rounds + 1 fits for each
// self-training (the pair two, JointOnly one), the calls one at a time
// when Split runs the pair's members at once (go test -race sees
// the callback's unguarded append otherwise); that the pair fitted
// concurrently predicts as it does fitted one member after the other;
// and that the self-training's LabelsOnly labels as the full fit does
// and leaves no classifier to predict with.
func TestJointProgress(t *testing.T) {
	x, v, y, _ := jointBlobs(60, 2)
	var sequential, concurrent []float64
	for _, tc := range []struct {
		j     Joint
		total int
	}{{Joint{}, 12}, {Joint{JointOnly: true}, 6}, {Joint{Rounds: 2}, 6}, {Joint{Split: pipeline.Split(2)}, 12}} {
		var calls []int
		tc.j.Progress = func(done, total int) {
			if total != tc.total {
				t.Errorf("JointOnly %v, Rounds %d: Progress total %d, want %d", tc.j.JointOnly, tc.j.Rounds, total, tc.total)
			}
			calls = append(calls, done)
		}
		if err := tc.j.Fit(x, v, y); err != nil {
			t.Fatal(err)
		}
		if len(calls) != tc.total || !slices.IsSorted(calls) || calls[len(calls)-1] != tc.total {
			t.Errorf("JointOnly %v, Rounds %d, Split %v: Progress called with %v, want 1 to %d", tc.j.JointOnly, tc.j.Rounds, tc.j.Split != nil, calls, tc.total)
		}
		if !tc.j.JointOnly && tc.j.Rounds == 0 {
			_, score := tc.j.PredictScoresTo(nil, nil, x, v)
			if tc.j.Split == nil {
				sequential = score
			} else {
				concurrent = score
			}
		}
	}
	if sequential == nil || !slices.Equal(sequential, concurrent) {
		t.Error("the pair fitted with Split scores otherwise than fitted one member after the other")
	}

	full, only := KernelSelfTraining{}, KernelSelfTraining{LabelsOnly: true}
	var fits []int
	only.Progress = func(done, total int) { fits = append(fits, done, total) }
	for _, s := range []*KernelSelfTraining{&full, &only} {
		if err := s.Fit(x, y); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(full.Labels(), only.Labels()) {
		t.Error("LabelsOnly labels the rows otherwise than the full fit")
	}
	if want := []int{1, 5, 2, 5, 3, 5, 4, 5, 5, 5}; !slices.Equal(fits, want) {
		t.Errorf("LabelsOnly's Progress (done, total pairs) %v, want %v", fits, want)
	}
	defer func() {
		if recover() == nil {
			t.Error("PredictTo after a LabelsOnly fit did not panic")
		}
	}()
	only.PredictTo(nil, x)
}
