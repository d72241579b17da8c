package gemm

import (
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// packPool holds packed operands for MulTo, which may run on several
// goroutines at once.
var packPool = sync.Pool{New: func() any { return new(Packed) }}

// MulTo sets dst = a·b, for a of n×d and b of d×k: through the kernels
// (MulPacked) where they serve (Serves64) and b is dense, else BLAS. dst
// must not share storage with a or b; it is resized to n×k unless it has
// that shape.
func MulTo(dst, a *mat.Dense, b mat.Matrix, inParts bool) {
	n, _ := a.Dims()
	_, k := b.Dims()
	bd, ok := b.(*mat.Dense)
	if !ok || !Serves64(inParts) {
		if r, c := dst.Dims(); !dst.IsEmpty() && (r != n || c != k) {
			dst.Reset()
		}
		dst.Mul(a, b)
		return
	}
	resize(dst, n, k)
	p := packPool.Get().(*Packed)
	p.Pack(bd.RawMatrix())
	MulPacked(dst.RawMatrix(), a.RawMatrix(), p)
	packPool.Put(p)
}

// MulTransTo sets dst = aᵀb, for a of n×p and b of n×q: through the
// kernels (MulXTA, with workspace ws) where they serve (Serves64), else
// BLAS. dst is resized to p×q unless it has that shape.
func MulTransTo(dst, a, b *mat.Dense, ws *Workspace, inParts bool) {
	_, p := a.Dims()
	_, q := b.Dims()
	if !Serves64(inParts) {
		if r, c := dst.Dims(); !dst.IsEmpty() && (r != p || c != q) {
			dst.Reset()
		}
		dst.Mul(a.T(), b)
		return
	}
	resize(dst, p, q)
	MulXTA(dst.RawMatrix(), a.RawMatrix(), b.RawMatrix(), ws)
}

// ABT sets c = a·bᵀ: through the kernels (MulABT, with workspace ws) where
// they serve (Serves64), else blas64.Gemm. c must be a.Rows×b.Rows.
func ABT(c, a, b blas64.General, ws *ABTWorkspace, inParts bool) {
	if Serves64(inParts) {
		MulABT(c, a, b, ws)
		return
	}
	blas64.Gemm(blas.NoTrans, blas.Trans, 1, a, b, 0, c)
}

// ABT32 is ABT in float32 (MulABT32, Serves32, blas32.Gemm).
func ABT32(c, a, b blas32.General, ws *ABTWorkspace32, inParts bool) {
	if Serves32(inParts) {
		MulABT32(c, a, b, ws)
		return
	}
	blas32.Gemm(blas.NoTrans, blas.Trans, 1, a, b, 0, c)
}

// resize makes dst r×c, reusing its storage when it has that shape.
func resize(dst *mat.Dense, r, c int) {
	if dr, dc := dst.Dims(); !dst.IsEmpty() && (dr != r || dc != c) {
		dst.Reset()
	}
	if dst.IsEmpty() {
		dst.ReuseAs(r, c)
	}
}
