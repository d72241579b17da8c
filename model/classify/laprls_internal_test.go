package classify

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestMacroAUC checks macroAUC on a case worked by hand and against the
// pair count it stands for on random scores with ties.
func TestMacroAUC(t *testing.T) {
	// Class 0's column orders rows 0, 1 (class 0) above rows 2, 3 but for
	// one pair (row 1 below row 3): 3 of 4 pairs. Class 1's column ties
	// row 2 with row 0 and puts row 3 on top: pairs (2,0) ½, (2,1) 1,
	// (3,0) 1, (3,1) 1, so 3.5 of 4.
	f := mat.NewDense(4, 2, []float64{
		0.9, 0.2,
		0.4, 0.1,
		0.3, 0.2,
		0.5, 0.8,
	})
	truth := []int{0, 0, 1, 1}
	if got, want := macroAUC(f, truth, 2), (0.75+0.875)/2; math.Abs(got-want) > 1e-12 {
		t.Errorf("macroAUC = %v, want %v", got, want)
	}
	// A class without rows, and one with every row, are left out.
	if got := macroAUC(f, []int{0, 0, 0, 0}, 3); got != 0 {
		t.Errorf("macroAUC with one class present = %v, want 0", got)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const m, c = 60, 3
	g := mat.NewDense(m, c, nil)
	y := make([]int, m)
	for i := range m {
		y[i] = rng.IntN(c)
		for j := range c {
			g.Set(i, j, float64(rng.IntN(5))) // many ties
		}
	}
	var want float64
	for k := range c {
		var pairs, right float64
		for i := range m {
			for j := range m {
				if y[i] != k || y[j] == k {
					continue
				}
				pairs++
				switch a, b := g.At(i, k), g.At(j, k); {
				case a > b:
					right++
				case a == b:
					right += 0.5
				}
			}
		}
		want += right / pairs / c
	}
	if got := macroAUC(g, y, c); math.Abs(got-want) > 1e-12 {
		t.Errorf("macroAUC = %v, the pair count %v", got, want)
	}
}

// TestBetterChoice checks the cross-validation's rule: balanced accuracy
// first, the AUC on a tie, the earlier choice when both tie.
func TestBetterChoice(t *testing.T) {
	for _, c := range []struct {
		sc, auc, bestSc, bestAUC float64
		want                     bool
	}{
		{0.9, 0.5, 0.8, 0.99, true},
		{0.8, 0.99, 0.9, 0.5, false},
		{0.8, 0.9, 0.8, 0.85, true},
		{0.8, 0.85, 0.8, 0.9, false},
		{0.8, 0.9, 0.8, 0.9, false},
		{0.5, 0.5, math.Inf(-1), math.Inf(-1), true},
	} {
		if got := better(c.sc, c.auc, c.bestSc, c.bestAUC); got != c.want {
			t.Errorf("better(%v, %v, %v, %v) = %v, want %v", c.sc, c.auc, c.bestSc, c.bestAUC, got, c.want)
		}
	}
}

// TestSharesTV checks sharesTV against cases worked by hand: shares
// (1/2, 1/2) against (1/4, 3/4) are 1/4 apart; a row without a prediction
// (−1) counts in no share; no rows, 0.
func TestSharesTV(t *testing.T) {
	for _, c := range []struct {
		a, b []int
		want float64
	}{
		{[]int{0, 0, 1, 1}, []int{0, 1, 1, 1}, 0.25},
		{[]int{0, 1, 2, 2}, []int{2, 1, 0, 2}, 0},
		{[]int{0, 0, 0, 0}, []int{1, 1, 2, 2}, 1},
		{[]int{0, -1}, []int{0, 1}, 0.25}, // shares (1/2, 0) and (1/2, 1/2)
		{nil, nil, 0},
	} {
		if got := sharesTV(c.a, c.b, 3); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("sharesTV(%v, %v) = %g, want %g", c.a, c.b, got, c.want)
		}
	}
}

// TestBalancedLabels checks the test of labels balanced by design: as
// many labeled rows in every class that has one; classes without a label
// do not count.
func TestBalancedLabels(t *testing.T) {
	for _, c := range []struct {
		y    []int
		want bool
	}{
		{[]int{0, 0, 1, 1, -1, -1}, true},
		{[]int{0, 0, 1, -1}, false},
		{[]int{0, 2, -1, 2, 0}, true}, // class 1 has no label
		{[]int{0, 1, 1, 1}, false},
		{[]int{-1, -1}, false},
		{[]int{1}, true},
	} {
		if got := balancedLabels(labelCountsOf(c.y, 3)); got != c.want {
			t.Errorf("balancedLabels(%v) = %v, want %v", c.y, got, c.want)
		}
	}
}

func labelCountsOf(y []int, classes int) []float64 {
	labeled, _ := labelCounts(y, classes)
	return labeled
}

// TestMassOffsets checks that the offsets massOffsets returns move the
// mean probabilities of random scores onto the target, that a class
// without labels keeps offset 0 and probability 0, and a case worked by
// hand: with one row the offsets are the target's log-ratios to the row's
// probabilities, up to a constant.
func TestMassOffsets(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	f := mat.NewDense(200, 4, nil)
	for i := range 200 {
		for j := range 4 {
			f.Set(i, j, rng.NormFloat64()+float64(j)*0.3)
		}
	}
	labeled := []float64{5, 5, 0, 5}
	target := []float64{0.6, 0.3, 0, 0.1}
	const temp = 0.7
	before := classMasses(f, temp, nil, labeled)
	if math.Abs(before[0]-target[0]) < 0.1 {
		t.Fatalf("the scores' masses %v are already near the target %v: the case checks nothing", before, target)
	}
	b := massOffsets(f, temp, target, labeled)
	if b[2] != 0 {
		t.Errorf("the unlabeled class's offset = %g, want 0", b[2])
	}
	got := classMasses(f, temp, b, labeled)
	for j := range target {
		if math.Abs(got[j]-target[j]) > 1e-5 {
			t.Fatalf("masses after the offsets %v, want %v (offsets %v)", got, target, b)
		}
	}
	one := mat.NewDense(1, 2, []float64{0, math.Log(3)}) // probabilities 1/4, 3/4 at t = 1
	b = massOffsets(one, 1, []float64{0.5, 0.5}, []float64{1, 1})
	if d := b[0] - b[1]; math.Abs(d-math.Log(3)) > 1e-5 {
		t.Errorf("one row: offsets %v differ by %g, want log 3 = %g", b, d, math.Log(3))
	}
}
