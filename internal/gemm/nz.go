package gemm

import (
	"fmt"
	"math"
)

//go:generate go run gen_nz.go

// The products of rows with many zero entries (MNIST's pixels: a fifth of
// each row is nonzero) through their nonzeros. Each entry RowNZ computes
// is the chain of fused multiply-adds that the dense kernels (MulPacked,
// MulXTA) compute for it, with the terms whose entry of x is zero left
// out. Such a term, fma(±0, b, s) = s + (±0·b), changes no bit of a
// finite partial sum s other than −0, which a chain from +0 reaches only
// when a product underflows to −0: so with b finite and no underflow,
// RowNZ gives the dense kernels' bits.

// nzVectors is the widest kernel, in 4-entry vectors (nz_amd64.s).
const nzVectors = 12

// Nonzeros appends the positions and values of x's nonzero entries to idx
// and val, ascending, and returns them.
func Nonzeros(idx []int32, val []float64, x []float64) ([]int32, []float64) {
	for t, v := range x {
		if v != 0 {
			idx, val = append(idx, int32(t)), append(val, v)
		}
	}
	return idx, val
}

// RowNZ sets c[0:k] = Σ_q val[q]·b[idx[q]·ldb : idx[q]·ldb+k], each entry
// summed over q in increasing order by fused multiply-adds from +0. With
// idx and val a row of x's nonzeros (Nonzeros), it is that row of
// MulPacked's x·B; with them a column of x's nonzeros (rows ascending), it
// is that row of MulXTA's xᵀ·b (see above). It panics if val is shorter
// than idx or an index lies outside b's rows.
func RowNZ(c, val []float64, idx []int32, b []float64, ldb, k int) {
	if len(val) < len(idx) {
		panic(fmt.Sprintf("gemm: RowNZ: %d values for %d indices", len(val), len(idx)))
	}
	c = c[:k]
	// The indices whose rows of b hold k entries: [0, lim). The kernels
	// check each index against it as they read it.
	lim := 0
	if k <= len(b) {
		lim = (len(b)-k)/max(ldb, 1) + 1
	}
	j := 0
	for hasAVX2 && len(idx) > 0 && j+4 <= k {
		nv := min(nzVectors, (k-j)/4)
		if q := rowNZAVX2[nv-1](len(idx), &idx[0], &val[0], &b[j], ldb, &c[j], lim); q < len(idx) {
			panic(fmt.Sprintf("gemm: RowNZ: index %d outside b (%d entries, stride %d, %d columns)", idx[q], len(b), ldb, k))
		}
		j += 4 * nv
	}
	for ; j < k; j++ {
		s := 0.0
		for q, t := range idx {
			if t < 0 || int(t) >= lim {
				panic(fmt.Sprintf("gemm: RowNZ: index %d outside b (%d entries, stride %d, %d columns)", t, len(b), ldb, k))
			}
			s = math.FMA(val[q], b[int(t)*ldb+j], s)
		}
		c[j] = s
	}
}
