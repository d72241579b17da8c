package classify

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestPoolPriors checks poolPriors against a case worked by hand: 80
// unlabeled rows estimated 90% / 10%, 10 labeled rows of each class, so
// the pool holds 72 + 10 of class 0 and 8 + 10 of class 1 among 100.
func TestPoolPriors(t *testing.T) {
	got := poolPriors([]float64{0.9, 0.1}, 80, []float64{10, 10})
	want := []float64{0.82, 0.18}
	for j := range want {
		if math.Abs(got[j]-want[j]) > 1e-12 {
			t.Fatalf("poolPriors = %v, want %v", got, want)
		}
	}
	// Without unlabeled rows the labeled counts are the priors; a class
	// with neither keeps the floor.
	got = poolPriors([]float64{0.5, 0.5, 1e-6}, 0, []float64{3, 1, 0})
	if got[0] != 0.75 || got[1] != 0.25 || got[2] != 1e-6 {
		t.Fatalf("poolPriors without unlabeled rows = %v, want [0.75 0.25 1e-06]", got)
	}
}

// TestTrustPriors checks the guard on the EM's estimate: a labeled class
// estimated below priorsCollapsed of its uniform share has collapsed; an
// unlabeled class (prior0 at the floor) does not count.
func TestTrustPriors(t *testing.T) {
	uniform2 := []float64{0.5, 0.5}
	both := []float64{10, 10}
	for _, c := range []struct {
		est  []float64
		want bool
	}{
		{[]float64{0.9, 0.1}, true},   // 0.1 is 0.2 of 1/2
		{[]float64{0.97, 0.03}, true}, // 0.06 of 1/2
		{[]float64{0.99, 0.01}, false},
		{[]float64{1, 1e-6}, false},
		{[]float64{0.5, 0.5}, true},
	} {
		if got := trustPriors(c.est, uniform2, both); got != c.want {
			t.Errorf("trustPriors(%v) = %v, want %v", c.est, got, c.want)
		}
	}
	// Class 2 has no label: its estimate at the floor is no collapse.
	if !trustPriors([]float64{0.6, 0.4, 1e-6}, []float64{0.5, 0.5, 1e-6}, []float64{5, 5, 0}) {
		t.Error("an unlabeled class at the floor made the estimate untrusted")
	}
	if trustPriors([]float64{0.5, 0.5}, uniform2, []float64{0, 0}) {
		t.Error("trustPriors without labels = true, want false")
	}
}

// TestEMPriorsFixedPoint checks emPriors on probabilities worked by hand:
// rows that are sure of their class (p = 1 or 0) give their share
// whatever the start, and rows that say nothing (p uniform) keep the
// training priors.
func TestEMPriorsFixedPoint(t *testing.T) {
	sure := mat.NewDense(4, 2, []float64{1, 0, 1, 0, 1, 0, 0, 1})
	got := emPriors(sure, []float64{0.5, 0.5}, 1000, 1e-12)
	if math.Abs(got[0]-0.75) > 1e-9 || math.Abs(got[1]-0.25) > 1e-9 {
		t.Errorf("emPriors of sure rows = %v, want [0.75 0.25]", got)
	}
	flat := mat.NewDense(3, 2, []float64{0.5, 0.5, 0.5, 0.5, 0.5, 0.5})
	got = emPriors(flat, []float64{0.5, 0.5}, 1000, 1e-12)
	if math.Abs(got[0]-0.5) > 1e-12 {
		t.Errorf("emPriors of flat rows = %v, want the training priors [0.5 0.5]", got)
	}
}
