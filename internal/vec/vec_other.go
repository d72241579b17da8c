//go:build !amd64 || purego

package vec

import "unsafe"

func axpy(a float64, x, y []float64) { axpyGeneric(a, x, y) }

func axpy4(y []float64, a *[4]float64, x0, x1, x2, x3 *float64) {
	n := len(y)
	axpy4Generic(y, a, unsafe.Slice(x0, n), unsafe.Slice(x1, n), unsafe.Slice(x2, n), unsafe.Slice(x3, n))
}

// Prefetch asks the processor to bring x into cache; here it does nothing.
func Prefetch(x []float64) {}

func mulDiv(w, num, den []float64, eps float64) { mulDivGeneric(w, num, den, eps) }

func dot32(x, y []float32) float32 { return dot32Generic(x, y) }

func mulDivDiag(w, num, den, ps, qs []float64, t int, eps float64) {
	mulDivDiagGeneric(w, num, den, ps, qs, t, eps)
}
