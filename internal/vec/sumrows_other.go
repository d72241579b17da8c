//go:build !amd64 || purego

package vec

func sumRows(dst []float64, ldd, m int, w float64, s *Rows, r0, r1 int, v []float64, ldv int) {
	sumRowsGeneric(dst, ldd, m, w, s, r0, r1, v, ldv)
}

// Fast reports whether SumRows runs the AVX-512 kernels.
const Fast = false
