package model

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestGramUpperSameBits checks that gramUpper gives gonum's SymOuterK(1,
// Uᵀ) bit for bit on the upper triangle, for U of rows on and off a
// multiple of four and of gramBlock, with exact zeros (which the BLAS
// skips) and entries spread over many magnitudes, and that it reuses a
// Gram of another size.
func TestGramUpperSameBits(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 5))
	var g mat.SymDense
	for _, dims := range [][2]int{{7326, 40}, {784, 40}, {130, 7}, {3, 5}, {1, 1}} {
		d, k := dims[0], dims[1]
		u := mat.NewDense(d, k, nil)
		for i := range u.RawMatrix().Data {
			if rnd.Float64() < 0.3 {
				continue // an exact zero
			}
			u.RawMatrix().Data[i] = rnd.ExpFloat64() * float64(int64(1)<<rnd.IntN(40)) / (1 << 20)
		}
		var want mat.SymDense
		want.SymOuterK(1, u.T())
		gramUpper(&g, u)
		if g.SymmetricDim() != k {
			t.Fatalf("%v: Gram of size %d", dims, g.SymmetricDim())
		}
		for i := range k {
			for j := i; j < k; j++ {
				if a, b := g.At(i, j), want.At(i, j); a != b {
					t.Fatalf("%v: entry (%d, %d) is %v, SymOuterK's %v", dims, i, j, a, b)
				}
			}
		}
	}
}
