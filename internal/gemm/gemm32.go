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
	k, d := b.Rows, b.Cols
	p.d, p.k = d, k
	layoutPanels(&p.data, &p.off, d, k)
	for q := range panels[float32](k) {
		w, nv, k0 := panelOf[float32](q, k)
		vw := 16 * nv
		dst := p.data[p.off[q] : p.off[q]+d*vw]
		if w < vw {
			clear(dst)
		}
		for j := range w {
			row := b.Data[(k0+j)*b.Stride : (k0+j)*b.Stride+d]
			for t, v := range row {
				dst[t*vw+j] = v
			}
		}
	}
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
