package model

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/vec"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// mMatrix is the N×N matrix M = diag(k) + G with G = Σ_t w_t L_t a weighted
// sum of graph Laplacians (w_t > 0, S_t ≥ 0), stored as its diagonal and
// the non-negative off-diagonal part O = Σ_t w_t S_t, so that
// M = diag(k + deg) − O with deg = O·1.
//
// With k > 0 it is an M-matrix (Yang et al., "Non-negative graph
// embedding", CVPR 2008, Theorem 1): its off-diagonal entries −O_ij are
// ≤ 0 and it is strictly diagonally dominant, since each diagonal entry
// k_i + deg_i exceeds Σ_j O_ij = deg_i. Hence M is symmetric positive
// definite and M⁻¹ ≥ 0 entrywise, so M x = b with b ≥ 0 has a non-negative
// solution. NGE solves it with preconditioned conjugate gradients, never
// forming M⁻¹.
type mMatrix struct {
	off  *sparse.CSR // O, N×N, symmetric, ≥ 0, zero diagonal
	deg  []float64   // O·1
	diag []float64   // k + deg, set per solve

	r, z, p, q []float64 // CG workspace
}

// newMMatrix returns the off-diagonal structure Σ_t w_t S_t of the graph
// terms (positive weights only) restricted to the pairs i ≠ j.
func newMMatrix(n int, terms []*GraphTerm) *mMatrix {
	b := sparse.NewBuilder(n, n)
	for _, t := range terms {
		if t.Weight <= 0 || t.S == nil {
			continue
		}
		for i := 0; i < n; i++ {
			ind, val := t.S.Row(i)
			for p, j := range ind {
				if j != i && val[p] != 0 {
					b.Add(i, j, t.Weight*val[p])
				}
			}
		}
	}
	m := &mMatrix{off: b.CSR(), deg: make([]float64, n), diag: make([]float64, n)}
	for i := range m.deg {
		_, val := m.off.Row(i)
		for _, x := range val {
			m.deg[i] += x
		}
	}
	return m
}

// setK sets M's diagonal to k + deg.
func (m *mMatrix) setK(k []float64) {
	for i, x := range k {
		m.diag[i] = x + m.deg[i]
	}
}

// mulVec stores M·x into y.
func (m *mMatrix) mulVec(y, x []float64) {
	for i := range y {
		s := m.diag[i] * x[i]
		ind, val := m.off.Row(i)
		for p, j := range ind {
			s -= val[p] * x[j]
		}
		y[i] = s
	}
}

// Dense returns M as a dense matrix (for tests and small problems).
func (m *mMatrix) Dense() *mat.Dense {
	n := len(m.diag)
	d := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		d.Set(i, i, m.diag[i])
		ind, val := m.off.Row(i)
		for p, j := range ind {
			d.Set(i, j, d.At(i, j)-val[p])
		}
	}
	return d
}

// solveCG solves M x = b by conjugate gradients with the Jacobi
// preconditioner diag(M)⁻¹, starting from x (a warm start), until
// ‖r‖ ≤ tol·‖b‖ or maxIter iterations. It returns the iterations run.
//
// Each CG iterate lowers ½xᵀMx − bᵀx, the quadratic that NGE's auxiliary
// function reduces to for one row of H, so an early stop still decreases
// the objective. The exact solution is non-negative (M is an M-matrix and
// b ≥ 0); entries of an inexact iterate below zero are set to zero.
func (m *mMatrix) solveCG(x, b []float64, tol float64, maxIter int) int {
	n := len(b)
	m.r = resize(m.r, n)
	m.z = resize(m.z, n)
	m.p = resize(m.p, n)
	m.q = resize(m.q, n)
	r, z, p, q := m.r, m.z, m.p, m.q
	m.mulVec(r, x)
	var bn float64
	for i := range r {
		r[i] = b[i] - r[i]
		bn += b[i] * b[i]
	}
	stop := tol * tol * bn
	var rz float64
	for i := range r {
		z[i] = r[i] / m.diag[i]
		p[i] = z[i]
		rz += r[i] * z[i]
	}
	it := 0
	for ; it < maxIter; it++ {
		if vec.Dot(r, r) <= stop {
			break
		}
		m.mulVec(q, p)
		pq := vec.Dot(p, q)
		if pq <= 0 || math.IsNaN(pq) {
			break
		}
		a := rz / pq
		var rzNew float64
		for i := range x {
			x[i] += a * p[i]
			r[i] -= a * q[i]
			z[i] = r[i] / m.diag[i]
			rzNew += r[i] * z[i]
		}
		beta := rzNew / rz
		rz = rzNew
		for i := range p {
			p[i] = z[i] + beta*p[i]
		}
	}
	for i, v := range x {
		if v < 0 {
			x[i] = 0
		}
	}
	return it
}
