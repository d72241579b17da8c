package model

import (
	"os"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"
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
	// Raw-pixel 1-NN scores 0.917 on this protocol (DESIGN.md §7); DPCA
	// must stay at least at 0.90.
	if acc < 0.90 {
		t.Errorf("DPCA accuracy %.4f < 0.90", acc)
	}
}

// TestDigitsAccuracy is DESIGN.md §7's protocol on the test split with the
// default hyperparameters (chosen on a validation split of the pool, see
// TestTuneLabelAware): one third held out, 10 labels per class, seed 1;
// graph-aware projection of held-out samples; 1-NN against the labeled
// training codes. Run with NMFSTREAM_LONG=1 (about a minute).
func TestDigitsAccuracy(t *testing.T) {
	if os.Getenv("NMFSTREAM_LONG") == "" {
		t.Skip("set NMFSTREAM_LONG=1")
	}
	task := newDigitsTask(10, 1, false)
	best := 0.0
	for _, s := range accuracySpecs() {
		t0 := time.Now()
		acc, err := task.score(s.m, ProjectGraph, s.anchor)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		t.Logf("%-7s held-out accuracy %.4f (%v)", s.name, acc, time.Since(t0).Round(time.Millisecond))
		if acc < 0.90 {
			t.Errorf("%s: accuracy %.4f < 0.90", s.name, acc)
		}
		best = max(best, acc)
	}
	if best < 0.97 {
		t.Errorf("best accuracy %.4f < 0.970", best)
	}
}
