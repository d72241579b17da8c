//go:build !amd64 || purego

package vec

func screen32(from int, dots []float32, sq []float64, base, thr float64, rthr []float64, dq float64) int {
	return screen32Generic(from, dots, sq, base, thr, rthr, dq)
}
