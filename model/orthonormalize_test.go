package model

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// leftLookingMGS is orthonormalize as it was written first: left-looking
// modified Gram–Schmidt, twice, one inner product at a time. The
// right-looking form must give its bits.
func leftLookingMGS(a *mat.Dense) *mat.Dense {
	_, c := a.Dims()
	q := mat.DenseCopyOf(a)
	cols := make([][]float64, c)
	for j := range cols {
		cols[j] = mat.Col(nil, j, q)
	}
	for pass := 0; pass < 2; pass++ {
		for j := range cols {
			for i := 0; i < j; i++ {
				var dot float64
				for t, x := range cols[i] {
					dot += x * cols[j][t]
				}
				for t, x := range cols[i] {
					cols[j][t] -= dot * x
				}
			}
			if nrm := norm2(cols[j]); nrm > 0 {
				for t := range cols[j] {
					cols[j][t] /= nrm
				}
			}
		}
	}
	for j := range cols {
		q.SetCol(j, cols[j])
	}
	return q
}

// TestOrthonormalizeSameBits checks that orthonormalize (right-looking,
// four inner products at once) equals the left-looking form bit for bit,
// for column counts on and off a multiple of four, with a repeated column
// (which vanishes) and a zero one, and that its columns are orthonormal.
func TestOrthonormalizeSameBits(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 1))
	for _, dims := range [][2]int{{2000, 50}, {784, 13}, {60, 4}, {30, 3}} {
		r, c := dims[0], dims[1]
		a := mat.NewDense(r, c, nil)
		for i := range a.RawMatrix().Data {
			a.RawMatrix().Data[i] = rnd.NormFloat64()
		}
		if c > 2 {
			a.SetCol(c-1, mat.Col(nil, 0, a)) // depends on column 0: vanishes
			a.SetCol(1, make([]float64, r))   // zero
		}
		got, want := orthonormalize(a), leftLookingMGS(a)
		if !mat.Equal(got, want) {
			t.Errorf("%d×%d: right-looking Gram–Schmidt differs from left-looking", r, c)
		}
		var g mat.Dense
		g.Mul(got.T(), got)
		for i := range c {
			for j := range c {
				want := 0.0
				if i == j && (c <= 2 || (i != 1 && i != c-1)) {
					want = 1
				}
				// 1e-12: twice-applied Gram–Schmidt is orthogonal to
				// working precision on these well-conditioned columns;
				// a vanished column leaves rounding noise, normalized.
				if d := g.At(i, j) - want; (d > 1e-12 || d < -1e-12) && !(c > 2 && (i == c-1 || j == c-1)) {
					t.Errorf("%d×%d: QᵀQ[%d,%d] = %v, want %v", r, c, i, j, g.At(i, j), want)
				}
			}
		}
	}
}
