package classify

import (
	"math"

	"gonum.org/v1/gonum/floats"
)

// lbfgs minimizes a smooth function by limited-memory BFGS (Nocedal and
// Wright, Numerical Optimization, 2nd ed., Algorithm 7.4 and 7.5) with a
// backtracking Armijo line search. eval(x, grad) returns f(x) and stores
// ∇f(x) in grad. x holds the start and receives the result. It stops when
// max|∇f| ≤ tol, after maxIter iterations, or when the line search cannot
// decrease f, and returns the number of iterations done.
//
// A backtracking search does not enforce the curvature condition, so pairs
// with sᵀy ≤ 0 are skipped; for the convex objectives used here that keeps
// the inverse-Hessian approximation positive definite.
func lbfgs(eval func(x, grad []float64) float64, x []float64, maxIter int, tol float64) int {
	const (
		memory = 10   // stored (s, y) pairs, the usual choice
		c1     = 1e-4 // Armijo constant (Nocedal and Wright)
		shrink = 0.5
		maxLS  = 50 // halvings before giving up: 2⁻⁵⁰ is below float64 resolution
	)
	n := len(x)
	g := make([]float64, n)
	f := eval(x, g)
	ss := make([][]float64, 0, memory)
	ys := make([][]float64, 0, memory)
	rho := make([]float64, 0, memory)
	alpha := make([]float64, memory)
	dir := make([]float64, n)
	xn := make([]float64, n)
	gn := make([]float64, n)
	iter := 0
	for iter < maxIter && floats.Norm(g, math.Inf(1)) > tol {
		// Two-loop recursion: dir = −H g.
		copy(dir, g)
		for i := len(ss) - 1; i >= 0; i-- {
			alpha[i] = rho[i] * floats.Dot(ss[i], dir)
			floats.AddScaled(dir, -alpha[i], ys[i])
		}
		step := 1.0
		if k := len(ss) - 1; k >= 0 {
			floats.Scale(floats.Dot(ss[k], ys[k])/floats.Dot(ys[k], ys[k]), dir)
		} else {
			step = math.Min(1, 1/floats.Norm(g, 2)) // first step: unit length
		}
		for i := range ss {
			beta := rho[i] * floats.Dot(ys[i], dir)
			floats.AddScaled(dir, alpha[i]-beta, ss[i])
		}
		floats.Scale(-1, dir)
		slope := floats.Dot(g, dir)
		if !(slope < 0) { // not a descent direction: restart from −g
			ss, ys, rho = ss[:0], ys[:0], rho[:0]
			copy(dir, g)
			floats.Scale(-1, dir)
			slope = floats.Dot(g, dir)
			step = math.Min(1, 1/floats.Norm(g, 2))
		}
		var fn float64
		ok := false
		for range maxLS {
			floats.AddScaledTo(xn, x, step, dir)
			fn = eval(xn, gn)
			if fn <= f+c1*step*slope {
				ok = true
				break
			}
			step *= shrink
		}
		if !ok {
			break
		}
		iter++
		s := make([]float64, n)
		yv := make([]float64, n)
		floats.SubTo(s, xn, x)
		floats.SubTo(yv, gn, g)
		if sy := floats.Dot(s, yv); sy > 0 {
			if len(ss) == memory {
				ss, ys, rho = ss[1:], ys[1:], rho[1:]
			}
			ss = append(ss, s)
			ys = append(ys, yv)
			rho = append(rho, 1/sy)
		}
		copy(x, xn)
		copy(g, gn)
		f = fn
	}
	return iter
}
