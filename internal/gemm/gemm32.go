package gemm

import "gonum.org/v1/gonum/blas/blas32"

// Packed32 is a D×K float32 matrix packed for MulPacked32: panels of at
// most 64 columns of 16-entry vectors.
type Packed32 struct{ packed[float32] }

// PackT stores bᵀ into p, for b of K×D: the product x·bᵀ of two sets of
// rows (inner products between rows) is then MulPacked32(c, x, p).
func (p *Packed32) PackT(b blas32.General) { p.packT(of32(b)) }

// MulPacked32 sets c = x·B in float32, for x of r×D and c of r×K. Each row
// of c depends only on the same row of x.
func MulPacked32(c, x blas32.General, b *Packed32) {
	mulPacked("MulPacked32", of32(c), of32(x), &b.packed)
}
