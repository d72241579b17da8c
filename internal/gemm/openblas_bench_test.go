//go:build openblas

package gemm

// Built with -tags openblas (and CGO_LDFLAGS=-lopenblas), the benchmarks'
// blas64 lines run on OpenBLAS.
import _ "github.com/nmfstream/nmfstream/internal/openblas"
