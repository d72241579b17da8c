package metrics

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestPerClass(t *testing.T) {
	// truth: class 0 ×3, class 1 ×1, one unscored; class 2 never true.
	pred := []int{0, 0, 1, 1, 2}
	truth := []int{0, 0, 0, 1, -1}
	s := PerClass(pred, truth, 3)
	// recall 2/3 and 1: balanced 5/6; F1 of class 0 = 0.8 (p 1, r 2/3),
	// of class 1 = 2/3 (p 1/2, r 1). Exact up to rounding.
	const tol = 1e-12
	if math.Abs(s.BalancedAccuracy-5.0/6) > tol || math.Abs(s.MacroF1-(0.8+2.0/3)/2) > tol {
		t.Errorf("PerClass = %g, %g, want %g, %g", s.BalancedAccuracy, s.MacroF1, 5.0/6, (0.8+2.0/3)/2)
	}
	if s.Support[0] != 3 || s.Support[1] != 1 || s.Support[2] != 0 {
		t.Errorf("Support = %v, want [3 1 0]", s.Support)
	}
	if !math.IsNaN(s.Recall[2]) || s.Precision[2] != 0 {
		t.Errorf("class 2 (no samples): recall %g, precision %g, want NaN, 0", s.Recall[2], s.Precision[2])
	}
	if math.Abs(s.Precision[1]-0.5) > tol {
		t.Errorf("Precision[1] = %g, want 0.5", s.Precision[1])
	}
}

func TestPerClassMissing(t *testing.T) {
	// A sample without a prediction (−1) counts in its class's support
	// and lowers its recall, and in no class's precision.
	s := PerClass([]int{0, -1, 1}, []int{0, 0, 1}, 2)
	if s.Support[0] != 2 || s.Recall[0] != 0.5 || s.Precision[0] != 1 {
		t.Errorf("class 0: support %d, recall %g, precision %g, want 2, 0.5, 1", s.Support[0], s.Recall[0], s.Precision[0])
	}
	// The same counts as a confusion matrix with a missing column.
	o := PerClassOf([][]int64{{1, 0, 1}, {0, 1, 0}})
	if o.BalancedAccuracy != s.BalancedAccuracy || o.MacroF1 != s.MacroF1 {
		t.Errorf("PerClassOf = %g, %g, PerClass = %g, %g", o.BalancedAccuracy, o.MacroF1, s.BalancedAccuracy, s.MacroF1)
	}
	if e := PerClass(nil, nil, 2); !math.IsNaN(e.BalancedAccuracy) || !math.IsNaN(e.MacroF1) {
		t.Errorf("no samples: %g, %g, want NaN", e.BalancedAccuracy, e.MacroF1)
	}
}

func TestHoyer(t *testing.T) {
	// One column with a single non-zero entry (sparsity 1) and one
	// constant column (sparsity 0): the mean is 0.5.
	u := mat.NewDense(4, 2, []float64{1, 1, 0, 1, 0, 1, 0, 1})
	if got := Hoyer(u); math.Abs(got-0.5) > 1e-12 { // exact arithmetic up to rounding
		t.Errorf("Hoyer = %v, want 0.5", got)
	}
	if got := Hoyer(mat.NewDense(3, 1, nil)); !math.IsNaN(got) {
		t.Errorf("Hoyer of a zero basis = %v, want NaN", got)
	}
}
