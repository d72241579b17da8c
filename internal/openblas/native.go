//go:build !openblas

package openblas

// Enabled reports whether OpenBLAS replaced gonum's BLAS.
const Enabled = false
