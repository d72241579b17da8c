package classify

import (
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/optimize"
)

// lbfgs minimizes a smooth function from x by gonum's limited-memory BFGS
// (optimize.LBFGS, 10 stored pairs; Nocedal and Wright, Numerical
// Optimization, 2nd ed., Algorithm 7.4 and 7.5) with the More–Thuente line
// search (strong Wolfe conditions). eval(x, grad) returns f(x) and stores
// ∇f(x) in grad. x holds the start and receives the last accepted point.
// It stops when max|∇f| ≤ tol, after maxIter iterations, or when the line
// search fails (no progress in float64), and returns the number of
// iterations done.
//
// The method is driven step by step through optimize.LinesearchMethod
// rather than optimize.Minimize, which runs it on goroutines: this package
// starts none.
func lbfgs(eval func(x, grad []float64) float64, x []float64, maxIter int, tol float64) int {
	loc := &optimize.Location{X: append([]float64(nil), x...), Gradient: make([]float64, len(x))}
	loc.F = eval(loc.X, loc.Gradient)
	if maxIter <= 0 || floats.Norm(loc.Gradient, math.Inf(1)) <= tol {
		return 0
	}
	m := &optimize.LinesearchMethod{
		NextDirectioner: &optimize.LBFGS{Store: 10},
		Linesearcher:    &optimize.MoreThuente{},
	}
	iter := 0
	op, err := m.Init(loc)
	for err == nil {
		switch op {
		case optimize.MajorIteration:
			iter++
			copy(x, loc.X)
			if iter >= maxIter || floats.Norm(loc.Gradient, math.Inf(1)) <= tol {
				return iter
			}
		case optimize.FuncEvaluation, optimize.GradEvaluation, optimize.FuncEvaluation | optimize.GradEvaluation:
			loc.F = eval(loc.X, loc.Gradient) // both, whichever was asked
		default:
			return iter
		}
		op, err = m.Iterate(loc)
	}
	return iter
}
