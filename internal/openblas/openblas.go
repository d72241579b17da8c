//go:build openblas

package openblas

// void openblas_set_num_threads(int);
// int openblas_get_num_threads(void);
import "C"

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

// SetThreads sets the number of threads OpenBLAS runs a call on and
// returns the previous number. A program that splits its products itself
// (model.Engine.Split) sets one, so that OpenBLAS's idle threads do not spin
// on the cores its own goroutines use.
func SetThreads(n int) int {
	old := int(C.openblas_get_num_threads())
	C.openblas_set_num_threads(C.int(n))
	return old
}
