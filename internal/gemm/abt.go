package gemm

import (
	"fmt"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
)

// ABTWorkspace holds MulABT's packed operand and transposed result
// between calls.
type ABTWorkspace struct {
	p  Packed
	ct []float64
}

// ABTWorkspace32 is ABTWorkspace for MulABT32.
type ABTWorkspace32 struct {
	p  Packed32
	ct []float32
}

// MulABT sets c = a·bᵀ, for a of m×D, b of n×D and c of m×n: the inner
// products between two sets of rows. It packs the smaller set and streams
// the larger through the kernels, so that a few rows against many cost
// little more than their products; either way each entry is the same sum,
// bit for bit.
func MulABT(c, a, b blas64.General, ws *ABTWorkspace) {
	if a.Cols != b.Cols || c.Rows != a.Rows || c.Cols != b.Rows {
		panic(fmt.Sprintf("gemm: MulABT: a is %d×%d, b %d×%d, c %d×%d", a.Rows, a.Cols, b.Rows, b.Cols, c.Rows, c.Cols))
	}
	if a.Rows >= b.Rows {
		ws.p.PackT(b)
		MulPacked(c, a, &ws.p)
		return
	}
	ws.p.PackT(a)
	ws.ct = alignedResize(ws.ct, b.Rows*a.Rows)
	ct := blas64.General{Rows: b.Rows, Cols: a.Rows, Stride: a.Rows, Data: ws.ct}
	MulPacked(ct, b, &ws.p)
	transposeInto(c.Data, c.Stride, ws.ct, b.Rows, a.Rows)
}

// MulABT32 is MulABT in float32.
func MulABT32(c, a, b blas32.General, ws *ABTWorkspace32) {
	if a.Cols != b.Cols || c.Rows != a.Rows || c.Cols != b.Rows {
		panic(fmt.Sprintf("gemm: MulABT32: a is %d×%d, b %d×%d, c %d×%d", a.Rows, a.Cols, b.Rows, b.Cols, c.Rows, c.Cols))
	}
	if a.Rows >= b.Rows {
		ws.p.PackT(b)
		MulPacked32(c, a, &ws.p)
		return
	}
	ws.p.PackT(a)
	ws.ct = alignedResize(ws.ct, b.Rows*a.Rows)
	ct := blas32.General{Rows: b.Rows, Cols: a.Rows, Stride: a.Rows, Data: ws.ct}
	MulPacked32(ct, b, &ws.p)
	transposeInto(c.Data, c.Stride, ws.ct, b.Rows, a.Rows)
}

// transposeInto stores the transpose of src (r×c, packed) into dst, whose
// rows have the given stride. It goes tile by tile, 16×16: a tile's 16
// destination rows take one cache line each, which stays in L1 even when
// the stride is a multiple of 4 KiB and the lines share a cache set.
func transposeInto[T float](dst []T, stride int, src []T, r, c int) {
	const tile = 16
	for i0 := 0; i0 < r; i0 += tile {
		i1 := min(i0+tile, r)
		for j0 := 0; j0 < c; j0 += tile {
			j1 := min(j0+tile, c)
			for i := i0; i < i1; i++ {
				for j, v := range src[i*c+j0 : i*c+j1] {
					dst[(j0+j)*stride+i] = v
				}
			}
		}
	}
}
