//go:build openblas

package stages

// Built with -tags openblas (and CGO_LDFLAGS=-lopenblas), the benchmarks
// and tests of this package run on OpenBLAS instead of gonum's native BLAS.
import _ "github.com/nmfstream/nmfstream/internal/openblas"
