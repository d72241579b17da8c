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

// TestFloorPriors checks floorPriors on cases worked by hand: on two
// classes of uniform share ½ a class estimated at 0.01 is raised to the
// floor 0.05·½ = 0.025 and the other takes the rest; on three labeled
// classes (floor 0.05/3) the raised class's excess comes out of the
// others in proportion, and a class without labels is left alone.
func TestFloorPriors(t *testing.T) {
	got := floorPriors([]float64{0.99, 0.01}, []float64{0.5, 0.5}, []float64{10, 10})
	if math.Abs(got[0]-0.975) > 1e-12 || math.Abs(got[1]-0.025) > 1e-12 {
		t.Errorf("two classes: floorPriors = %v, want [0.975 0.025]", got)
	}
	third := 1.0 / 3
	got = floorPriors([]float64{0.6, 0.39, 0.01, 1e-6}, []float64{third, third, third, 1e-6}, []float64{5, 5, 5, 0})
	f := 0.05 * third
	want := []float64{0.6 * (1 - f) / 0.99, 0.39 * (1 - f) / 0.99, f, 1e-6}
	for j := range want {
		if math.Abs(got[j]-want[j]) > 1e-12 {
			t.Fatalf("three classes: floorPriors = %v, want %v", got, want)
		}
	}
	if got := floorPriors([]float64{0.7, 0.3}, []float64{0.5, 0.5}, []float64{10, 10}); got[0] != 0.7 || got[1] != 0.3 {
		t.Errorf("above the floor: floorPriors = %v, want [0.7 0.3] unchanged", got)
	}
}

// TestMPEPriors checks mpePriors on probabilities worked by hand. Class
// 1's four labeled rows have cross-validated probabilities 0.99, 0.8, 0.7
// and 0.2 of their class; of ten unlabeled rows none is at 0.99 (k = 1
// would bound the class by 0), three are at 0.7 or more and all at 0.2
// or more, so its bounds over k = 3 and 4 are (3/10)/(3/4) = 0.4 and 1:
// 0.4. With class 0's four labels at 0.5 of
// theirs, seven unlabeled rows reach it: (7/10)/(3/4) and 7/10, 0.7. The
// bounds sum to 1.1, so they are scaled to 7/11 and 4/11. With class 0's
// labels at 0.7, five rows reach it: 0.5; the bounds sum to 0.9, and the
// largest, class 0's, takes the shortfall: 0.6 and class 1's own 0.4.
// Where no unlabeled row reaches either class's threshold the estimate is
// the uniform prior.
func TestMPEPriors(t *testing.T) {
	un := []float64{0.95, 0.85, 0.75, 0.5, 0.4, 0.3, 0.25, 0.25, 0.25, 0.25} // p(class 1)
	rows := func(v []float64) *mat.Dense {
		p := mat.NewDense(len(v), 2, nil)
		for i, v := range v {
			p.SetRow(i, []float64{1 - v, v})
		}
		return p
	}
	q := func(c0 float64) *mat.Dense {
		return mat.NewDense(8, 2, []float64{
			c0, 1 - c0, c0, 1 - c0, c0, 1 - c0, c0, 1 - c0,
			0.01, 0.99, 0.2, 0.8, 0.3, 0.7, 0.8, 0.2,
		})
	}
	truth := []int{0, 0, 0, 0, 1, 1, 1, 1}
	prior0, labeled := []float64{0.5, 0.5}, []float64{4, 4}
	for _, c := range []struct {
		c0   float64
		p    []float64
		want []float64
	}{
		{0.5, un, []float64{7.0 / 11, 4.0 / 11}},
		{0.7, un, []float64{0.6, 0.4}},
		{0.5, []float64{0.55}, prior0},
	} {
		got := mpePriors(rows(c.p), q(c.c0), truth, prior0, labeled)
		if math.Abs(got[0]-c.want[0]) > 1e-12 || math.Abs(got[1]-c.want[1]) > 1e-12 {
			t.Errorf("class 0's labels at %g, %d unlabeled rows: mpePriors = %v, want %v", c.c0, len(c.p), got, c.want)
		}
	}
}
