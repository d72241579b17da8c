package gemm

import (
	"fmt"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
)

// abtWorkspace holds mulABT's packed operand and transposed result.
type abtWorkspace[T float] struct {
	p  packed[T]
	ct []T
}

// ABTWorkspace holds MulABT's packed operand and transposed result
// between calls.
type ABTWorkspace struct{ abtWorkspace[float64] }

// ABTWorkspace32 is ABTWorkspace for MulABT32.
type ABTWorkspace32 struct{ abtWorkspace[float32] }

// MulABT sets c = a·bᵀ, for a of m×D, b of n×D and c of m×n: the inner
// products between two sets of rows. It packs the smaller set and streams
// the larger through the kernels, so that a few rows against many cost
// little more than their products; either way each entry is the same sum,
// bit for bit.
func MulABT(c, a, b blas64.General, ws *ABTWorkspace) {
	mulABT("MulABT", of64(c), of64(a), of64(b), &ws.abtWorkspace)
}

// MulABT32 is MulABT in float32.
func MulABT32(c, a, b blas32.General, ws *ABTWorkspace32) {
	mulABT("MulABT32", of32(c), of32(a), of32(b), &ws.abtWorkspace)
}

func mulABT[T float](name string, c, a, b matrix[T], ws *abtWorkspace[T]) {
	if a.cols != b.cols || c.rows != a.rows || c.cols != b.rows {
		panic(fmt.Sprintf("gemm: %s: a is %d×%d, b %d×%d, c %d×%d", name, a.rows, a.cols, b.rows, b.cols, c.rows, c.cols))
	}
	if a.rows >= b.rows {
		ws.p.packT(b)
		mulPacked(name, c, a, &ws.p)
		return
	}
	ws.p.packT(a)
	ws.ct = alignedResize(ws.ct, b.rows*a.rows)
	mulPacked(name, matrix[T]{b.rows, a.rows, a.rows, ws.ct}, b, &ws.p)
	transposeInto(c.data, c.stride, ws.ct, b.rows, a.rows)
}

// transposeInto stores the transpose of src (r×c, packed) into dst, whose
// rows have the given stride.
func transposeInto[T float](dst []T, stride int, src []T, r, c int) {
	transposeTo(dst, stride, src, c, r, c)
}
