package classify

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// softmaxProblem returns the objective of Linear (C = 1) on n random rows
// of d features in c classes, each class lifting one feature, and the
// length of its parameter vector.
func softmaxProblem(n, d, c int) (*softmaxObjective, int) {
	rnd := rand.New(rand.NewPCG(1, 1))
	x := mat.NewDense(n, d, nil)
	y := make([]int, n)
	for i := range n {
		y[i] = rnd.IntN(c)
		for j := range d {
			x.Set(i, j, rnd.Float64())
		}
		x.Set(i, y[i]%d, x.At(i, y[i]%d)+1)
	}
	return &softmaxObjective{x: x, y: y, p: c, d: d, reg: 1 / float64(n)}, c*d + c
}

// TestLBFGSQuadratic checks that lbfgs finds the minimum of a convex
// quadratic ½xᵀAx − bᵀx (A diagonal, condition number 100) to the
// gradient tolerance within 100 iterations, and leaves x there.
func TestLBFGSQuadratic(t *testing.T) {
	const n = 50
	a := make([]float64, n)
	b := make([]float64, n)
	for i := range a {
		a[i] = 1 + 99*float64(i)/(n-1)
		b[i] = float64(i%7) - 3
	}
	eval := func(x, g []float64) float64 {
		var f float64
		for i := range x {
			g[i] = a[i]*x[i] - b[i]
			f += 0.5*a[i]*x[i]*x[i] - b[i]*x[i]
		}
		return f
	}
	x := make([]float64, n)
	const tol = 1e-6
	it := lbfgs(eval, x, 200, tol)
	if it == 0 || it > 100 {
		t.Errorf("%d iterations, want between 1 and 100", it)
	}
	g := make([]float64, n)
	eval(x, g)
	if e := floats.Norm(g, math.Inf(1)); e > tol {
		t.Errorf("max |gradient| = %g at the result, want ≤ %g", e, tol)
	}
	for i := range x {
		if math.Abs(x[i]-b[i]/a[i]) > tol/a[i] { // |x − x*| = |g|/a_i on a diagonal quadratic
			t.Errorf("x[%d] = %g, want %g", i, x[i], b[i]/a[i])
		}
	}
	// maxIter bounds the iterations; zero iterations leave x alone.
	x0 := make([]float64, n)
	if it := lbfgs(eval, x0, 0, tol); it != 0 || floats.Norm(x0, 1) != 0 {
		t.Errorf("maxIter 0: %d iterations, x moved to %v", it, x0)
	}
}

// BenchmarkLBFGS1000x50 minimizes the objective of Linear on 1000 rows of
// 50 features in 10 classes (510 parameters) to Linear's default
// tolerance, and reports the iterations and the final objective.
func BenchmarkLBFGS1000x50(b *testing.B) {
	obj, dim := softmaxProblem(1000, 50, 10)
	x := make([]float64, dim)
	g := make([]float64, dim)
	var it int
	b.ReportAllocs()
	for b.Loop() {
		clear(x)
		it = lbfgs(obj.eval, x, 100, 1e-4)
	}
	b.ReportMetric(float64(it), "iters")
	b.ReportMetric(obj.eval(x, g), "objective")
}
