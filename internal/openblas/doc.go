// Package openblas switches gonum's BLAS (blas64 and blas32) to OpenBLAS (through cgo and
// gonum.org/v1/netlib) when the program is built with the tag openblas:
//
//	apt-get install -y libopenblas-dev
//	CGO_LDFLAGS="-lopenblas" go build -tags openblas ./...
//
// Import it for its side effect, from a main package or a test:
//
//	import _ "github.com/nmfstream/nmfstream/internal/openblas"
//
// Without the tag the package is empty and gonum's pure-Go BLAS stays in
// use, so the import is always safe. The netlib package declares no linker
// flags of its own, hence CGO_LDFLAGS; Debian's libopenblas provides the
// cblas_* symbols that netlib calls.
//
// # Concurrency
//
// The switch happens once, in init, before main runs. OpenBLAS starts its
// own threads; OPENBLAS_NUM_THREADS bounds them.
package openblas
