package gemm

import (
	"fmt"

	"gonum.org/v1/gonum/blas/blas32"
)

// Packed32 is a D×K float32 matrix packed for MulPacked32: in column
// panels of at most 64, each row of a panel padded to a whole number of
// 16-entry vectors.
type Packed32 struct {
	d, k int
	data []float32
	off  []int
}

// PackT stores bᵀ into p, for b of K×D: the product x·bᵀ of two sets of
// rows (inner products between rows) is then MulPacked32(c, x, p).
func (p *Packed32) PackT(b blas32.General) {
	p.d, p.k = b.Cols, b.Rows
	packT(&p.data, &p.off, b.Data, b.Stride, b.Rows, b.Cols)
}

// MulPacked32 sets c = x·B in float32, for x of r×D and c of r×K. Each row
// of c depends only on the same row of x.
func MulPacked32(c, x blas32.General, b *Packed32) {
	if x.Cols != b.d || c.Rows != x.Rows || c.Cols != b.k {
		panic(fmt.Sprintf("gemm: MulPacked32: x is %d×%d, B %d×%d, c %d×%d", x.Rows, x.Cols, b.d, b.k, c.Rows, c.Cols))
	}
	if x.Rows == 0 || b.k == 0 {
		return
	}
	checkRows(c.Rows, c.Cols, c.Stride, c.Data, "c")
	checkRows(x.Rows, x.Cols, x.Stride, x.Data, "x")
	mulPacked(c.Data, c.Stride, x.Data, x.Stride, x.Rows, b.d, b.k, b.data, b.off, mulRows32x6, mulRows32x1)
}
