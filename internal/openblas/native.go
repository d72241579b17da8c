//go:build !openblas

package openblas

// Enabled reports whether OpenBLAS replaced gonum's BLAS.
const Enabled = false

// SetThreads does nothing without OpenBLAS and returns 1.
func SetThreads(n int) int { return 1 }
