//go:build openblas

package openblas

import (
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/netlib/blas/netlib"
)

// Enabled reports whether OpenBLAS replaced gonum's BLAS.
const Enabled = true

func init() {
	blas64.Use(netlib.Implementation{})
	blas32.Use(netlib.Implementation{})
}
