package stages

import (
	"math"
	"slices"
)

// The harmonic function's solvers (spreader): conjugate gradients for the
// whole window once per batch (solve), and the exact move of F by one new
// label (push) within it. Both read the batch's normalized rows s.nw, whose
// weights w must be symmetric: the samples' k-NN graph, the code graph and
// the graph under the learned metric are (an edge is kept whichever end
// found it, weighted by a symmetric similarity; TestSpreadGraphSymmetric).
const (
	// spreadTol is solve's stopping point: each class's residual, in the
	// norm the preconditioner gives (Σ_i d_i·ρ_ic², ρ the Gauss–Seidel
	// residual), at most spreadTol times the labels' pull on the
	// unlabeled nodes (the right-hand side) in the same norm. 10⁻² and
	// 10⁻³ score within 0.1 point of each other on the digits and MNIST
	// streams (BENCHMARKS.md, "The spreading solved").
	spreadTol = 1e-2
	// spreadMaxIter bounds solve's iterations per batch, each costing one
	// pass over the window's edges for every class.
	spreadMaxIter = 200
	// pushTol is push's threshold: a node whose residual in the new
	// label's harmonic function h (values in [0, 1]) is below it is not
	// relaxed, so h is off by at most about pushTol times the expected
	// steps of a random walk from a node to a label (about 0.01 on a graph
	// with a twentieth of its nodes labeled, TestSweepLocalLabels; more
	// while labels are few). 10⁻³ and 10⁻⁵ predict alike on the digits;
	// 10⁻⁵ costs MNIST's stream six times its time.
	pushTol = 1e-3
	// pushMaxRelax bounds push's relaxations per label, as a multiple of
	// the window's nodes (sweepLocal): on the digits and MNIST streams a
	// label takes about 1,500 at pushTol, far below it.
	pushMaxRelax = 64
	// pushMaxLabels is the most labels learned between two predictions
	// that sweepLocal moves in one by one; more (a service sent a
	// thousand labels at once) are solved for together, at the cost of
	// one solve rather than up to pushMaxRelax·window relaxations each.
	// The streams' batches learn about 10 labels between predictions.
	pushMaxLabels = 32
)

// cgWork is solve's workspace.
type cgWork struct {
	unl           []int     // the unlabeled nodes of positive degree
	pos           []int32   // by slot: index in unl, or −1
	rho, p, q     []float64 // len(unl)×C: residual D⁻¹r, direction, (I − P_UU)·p
	rz, bb, pq, z []float64 // by class
	alpha         []float64 // by class: α, then β
	done          []bool    // by class
}

// solve solves the harmonic function F on nodes: every unlabeled node's
// scores the average of its neighbours' under the batch's weights, the
// labeled nodes clamped to their class (class(i) ≥ 0), to a relative
// residual tol, by at most maxIter iterations of conjugate gradients on
// L_UU·F_U = W_UL·Y_L (L = D − W over the unlabeled nodes U) preconditioned
// by the degrees, warm-started from F; the C classes are C independent
// systems sharing the products, each to a residual tol times its
// right-hand side's (a class without one: the classes' mean one).
// Unlabeled nodes of degree 0 get zero scores. It returns the iterations
// run, and costs about (edges + nodes)·C per iteration, and reads and
// writes s.f and its workspace only.
func (s *spreader) solve(nodes []int, class func(int) int, tol float64, maxIter int) (iters int) {
	nw, ws, nc := &s.nw, &s.cg, s.c
	n := len(nw.ptr) - 1
	if nc == 0 || n <= 0 {
		return 0
	}
	ws.pos = slices.Grow(ws.pos[:0], n)[:n]
	for i := range ws.pos {
		ws.pos[i] = -1
	}
	ws.unl = ws.unl[:0]
	for _, i := range nodes {
		if i >= n || class(i) >= 0 || nw.deg[i] == 0 {
			// The class's score 1, or no neighbours (a slot past w's
			// rows is an empty row): zero scores, as sweep gives.
			s.clampRow(i, class)
			continue
		}
		ws.pos[i] = int32(len(ws.unl))
		ws.unl = append(ws.unl, i)
	}
	m := len(ws.unl)
	if m == 0 {
		return 0
	}
	grow := func(b []float64, k int) []float64 { return slices.Grow(b[:0], k)[:k] }
	ws.rho, ws.p, ws.q = grow(ws.rho, m*nc), grow(ws.p, m*nc), grow(ws.q, m*nc)
	ws.rz, ws.bb, ws.pq, ws.z = grow(ws.rz, nc), grow(ws.bb, nc), grow(ws.pq, nc), grow(ws.z, nc)
	ws.alpha = grow(ws.alpha, nc)
	ws.done = slices.Grow(ws.done[:0], nc)[:nc]
	clear(ws.rz)
	clear(ws.bb)
	clear(ws.done)
	// ρ = P·F − F on U (F clamped on the labeled nodes), b's share
	// P_UL·Y_L, and their squared norms Σ d_i·(·)².
	for k, i := range ws.unl {
		rho := ws.rho[k*nc : (k+1)*nc]
		b := ws.z // workspace: this node's P_UL·Y_L
		clear(b)
		for c, x := range s.row(i) {
			rho[c] = -x
		}
		lo, hi := nw.ptr[i], nw.ptr[i+1]
		for e, j := range nw.ind[lo:hi] {
			a := nw.a[lo+e]
			for c, x := range s.row(int(j)) {
				rho[c] += a * x
			}
			if cj := class(int(j)); cj >= 0 {
				b[cj] += a
			}
		}
		d := nw.deg[i]
		for c := range nc {
			ws.rz[c] += d * rho[c] * rho[c]
			ws.bb[c] += d * b[c] * b[c]
		}
	}
	// Each class's residual is measured against its own right-hand side;
	// a class no label of the window pulls (bb = 0: its scores are stale
	// ones, which the solve takes to zero) against the classes' mean one,
	// not to a residual of zero.
	ref := 0.0
	for _, b := range ws.bb {
		ref += b / float64(nc)
	}
	if ref == 0 {
		for _, i := range ws.unl {
			clear(s.row(i)) // no label has an unlabeled neighbour: F_U = 0
		}
		return 0
	}
	copy(ws.p, ws.rho)
	for ; iters < maxIter; iters++ {
		active := false
		for c := range nc {
			b := ws.bb[c]
			if b == 0 {
				b = ref
			}
			ws.done[c] = ws.done[c] || ws.rz[c] <= tol*tol*b
			active = active || !ws.done[c]
		}
		if !active {
			return iters
		}
		// q = (I − P_UU)·p, and p·L_UU·p = Σ d_i·p_i·q_i.
		clear(ws.pq)
		for k, i := range ws.unl {
			q, pk := ws.q[k*nc:(k+1)*nc], ws.p[k*nc:(k+1)*nc]
			copy(q, pk)
			lo, hi := nw.ptr[i], nw.ptr[i+1]
			for e, j := range nw.ind[lo:hi] {
				r := ws.pos[j]
				if r < 0 {
					continue
				}
				a := nw.a[lo+e]
				pj := ws.p[int(r)*nc : int(r+1)*nc]
				for c := range q {
					q[c] -= a * pj[c]
				}
			}
			d := nw.deg[i]
			for c := range nc {
				ws.pq[c] += d * pk[c] * q[c]
			}
		}
		// Step the open classes: F += α·p, ρ −= α·q (α = 0 for the
		// others), then p = ρ + β·p.
		for c := range nc {
			ws.alpha[c] = 0
			if ws.done[c] || !(ws.pq[c] > 0) {
				ws.done[c] = true
				continue
			}
			ws.alpha[c] = ws.rz[c] / ws.pq[c]
		}
		clear(ws.z)
		for k, i := range ws.unl {
			fi, pk := s.f[i*nc:(i+1)*nc], ws.p[k*nc:(k+1)*nc]
			rho, q := ws.rho[k*nc:(k+1)*nc], ws.q[k*nc:(k+1)*nc]
			d := nw.deg[i]
			for c, a := range ws.alpha {
				fi[c] += a * pk[c]
				r := rho[c] - a*q[c]
				rho[c] = r
				ws.z[c] += d * r * r
			}
		}
		for c := range nc {
			ws.alpha[c] = 0 // now β
			if !ws.done[c] {
				ws.alpha[c] = ws.z[c] / ws.rz[c]
				ws.rz[c] = ws.z[c]
			}
		}
		for k := range ws.unl {
			pk, rho := ws.p[k*nc:(k+1)*nc], ws.rho[k*nc:(k+1)*nc]
			for c, b := range ws.alpha {
				pk[c] = rho[c] + b*pk[c]
			}
		}
	}
	return iters
}

// pushWork is push's workspace, by slot.
type pushWork struct {
	h, r    []float64 // the harmonic function and its residual
	queued  []bool
	queue   []int
	touched []int
	delta   []float64 // by class
}

// push moves F by node j's label, learned since F was solved: F gains
// (e_c − F_j)·h, h the harmonic function that is 1 at j and 0 at the other
// labeled nodes (the probability that a random walk on the graph from a
// node reaches j before any other labeled node). F then is the harmonic
// function of the labels with j's among them, as far as it was that of
// the labels before and h is exact (see pushTol). h is found by relaxing,
// one node at a time, the nodes whose residual is above tol (Gauss–Seidel
// on the residual, "push"), at most maxRelax of them, so its cost follows
// the region the label reaches: a few nodes where labels are dense, the
// whole component of j when its class has no other label near. A j that
// is not labeled now changes nothing.
func (s *spreader) push(j int, class func(int) int, tol float64, maxRelax int) {
	nw, ps := &s.nw, &s.ps
	n := len(nw.ptr) - 1
	c := class(j)
	if c < 0 || j >= n {
		return
	}
	if len(ps.h) < n {
		ps.h = append(ps.h, make([]float64, n-len(ps.h))...)
		ps.r = append(ps.r, make([]float64, n-len(ps.r))...)
		ps.queued = append(ps.queued, make([]bool, n-len(ps.queued))...)
	}
	ps.delta = slices.Grow(ps.delta[:0], s.c)[:s.c]
	fj := s.row(j)
	for k, x := range fj {
		ps.delta[k] = -x
	}
	ps.delta[c]++
	ps.queue, ps.touched = ps.queue[:0], ps.touched[:0]
	// relax adds v to h at x and passes P_zx·v to the residual of each
	// unlabeled neighbour z (the weights are symmetric: z is x's
	// neighbour where x is z's, and w_zx = w_xz).
	relax := func(x int, v float64) {
		if ps.h[x] == 0 && ps.r[x] == 0 {
			ps.touched = append(ps.touched, x)
		}
		ps.h[x] += v
		lo, hi := nw.ptr[x], nw.ptr[x+1]
		vd := v * nw.deg[x] // P_zx·v = (w_xz/d_x)·d_x/d_z·v
		for e, y := range nw.ind[lo:hi] {
			z := int(y)
			if z == j || class(z) >= 0 {
				continue
			}
			if ps.h[z] == 0 && ps.r[z] == 0 {
				ps.touched = append(ps.touched, z)
			}
			ps.r[z] += nw.a[lo+e] * vd / nw.deg[z]
			if !ps.queued[z] && math.Abs(ps.r[z]) > tol {
				ps.queued[z] = true
				ps.queue = append(ps.queue, z)
			}
		}
	}
	relax(j, 1)
	budget := maxRelax
	for head := 0; head < len(ps.queue) && budget > 0; head++ {
		x := ps.queue[head]
		ps.queued[x] = false
		v := ps.r[x]
		ps.r[x] = 0
		relax(x, v)
		budget--
	}
	for _, x := range ps.queue {
		ps.queued[x] = false // left by the budget
	}
	for _, x := range ps.touched {
		if h := ps.h[x]; h != 0 {
			fx := s.row(x)
			for k, d := range ps.delta {
				fx[k] += d * h
			}
		}
		ps.h[x], ps.r[x] = 0, 0
	}
	clear(fj)
	fj[c] = 1
}
