package model

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/sparse"
)

// TestMulSparseDenseSameBits checks that SparseRows' X·U product
// (mulSparseDense, on vec.Axpy) gives sparse.CSR.MulDenseTo's result bit
// for bit, on rows of 0 to 60 entries and widths around the kernels'
// vector lengths, and that it panics on a shape mismatch.
func TestMulSparseDenseSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, k := range []int{1, 3, 4, 7, 8, 40, 41} {
		const r, c = 50, 300
		x := sparse.Zeros(0, c)
		for i := range r {
			var ind []int
			var val []float64
			for j := range c {
				if rng.IntN(i%6+1) == 0 && rng.IntN(10) == 0 {
					ind, val = append(ind, j), append(val, rng.ExpFloat64())
				}
			}
			x.AppendRow(ind, val)
		}
		b := mat.NewDense(c, k, nil)
		for i := range c {
			for j := range k {
				b.Set(i, j, rng.NormFloat64())
			}
		}
		var want, got mat.Dense
		x.MulDenseTo(&want, b)
		mulSparseDense(&got, x, b)
		if !mat.Equal(&want, &got) {
			t.Errorf("K = %d: the product differs from sparse.CSR.MulDenseTo's", k)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("no panic on a shape mismatch")
		}
	}()
	mulSparseDense(mat.NewDense(2, 2, nil), sparse.Zeros(2, 3), mat.NewDense(3, 3, nil))
}
