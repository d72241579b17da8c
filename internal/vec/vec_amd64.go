//go:build amd64 && !purego

package vec

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// hasAVX2 is whether the assembly kernels may run.
var hasAVX2 = cpu.X86.HasAVX2

//go:noescape
func axpyAVX2(a float64, x, y []float64)

//go:noescape
func axpy4AVX2(y []float64, a *[4]float64, x0, x1, x2, x3 *float64)

func axpy(a float64, x, y []float64) {
	if hasAVX2 {
		axpyAVX2(a, x, y)
		return
	}
	axpyGeneric(a, x, y)
}

// axpy4 takes the x rows by their first entry: the caller has checked
// that each holds len(y) entries.
func axpy4(y []float64, a *[4]float64, x0, x1, x2, x3 *float64) {
	if hasAVX2 {
		axpy4AVX2(y, a, x0, x1, x2, x3)
		return
	}
	n := len(y)
	axpy4Generic(y, a, unsafe.Slice(x0, n), unsafe.Slice(x1, n), unsafe.Slice(x2, n), unsafe.Slice(x3, n))
}

//go:noescape
func prefetchAVX2(x *float64, n int)

// Prefetch asks the processor to bring x into cache (PREFETCHT0 on each
// of its cache lines): a hint, which never faults and changes no result.
func Prefetch(x []float64) {
	if len(x) > 0 && hasAVX2 {
		prefetchAVX2(&x[0], len(x))
	}
}

//go:noescape
func mulDivAVX2(w, num, den []float64, eps float64)

func mulDiv(w, num, den []float64, eps float64) {
	if hasAVX2 {
		mulDivAVX2(w, num, den, eps)
		return
	}
	mulDivGeneric(w, num, den, eps)
}

//go:noescape
func mulDivDiagAVX2(w, num, den, ps, qs []float64, t int, eps float64)

func mulDivDiag(w, num, den, ps, qs []float64, t int, eps float64) {
	if hasAVX2 {
		mulDivDiagAVX2(w, num, den, ps, qs, t, eps)
		return
	}
	mulDivDiagGeneric(w, num, den, ps, qs, t, eps)
}

//go:noescape
func dot32AVX2(x, y *float32, n int) float32

func dot32(x, y []float32) float32 {
	if hasAVX2 {
		return dot32AVX2(&x[0], &y[0], len(x))
	}
	return dot32Generic(x, y)
}
