// Package arch holds the architecture rules of nmfstream (ARCHITECTURE.md,
// "What each package may import" and "Goroutines and I/O") as tables, and
// checks them in its tests:
//
//   - Layers: a package may import only packages of lower layers of this
//     module, and only the commands under bench/ may start other programs
//     (os/exec).
//   - Default.Goroutines: only the named packages start goroutines.
//   - Default.IO: only the named packages do file, network or process I/O.
//   - Default.DecoderFree: cmd/ builds no record decoder (they belong in
//     sources), except the debts listed in Default.DecoderAllowed.
//
// ScanDir finds what a package's non-test files do (go/parser, no type
// checking: see Kind for what counts); Rules.Violations judges it.
package arch

// Layers maps each package of the module, by its path from the module
// root, to its layer: a package may import the module's packages of lower
// layers only, so packages of one layer never import each other. A path
// ending in "/" stands for every package under it. A package missing
// from the table fails the test: place it when you add it.
var Layers = map[string]int{
	// 0: leaves. Kernels, embedded data, sparse matrices, scores, drawing.
	"internal/gemm":      0,
	"internal/vec":       0,
	"internal/openblas":  0,
	"internal/cputime":   0,
	"internal/mem":       0, // large buffers mapped in at once
	"internal/splittest": 0,
	"internal/figure":    0,
	"internal/arch":      0, // this table
	"datasets":           0,
	"internal/testenv":   1, // test helpers: datasets and gonum only
	"model/sparse":       0,
	"model/metrics":      0,

	// 1: the graphs, and the record batch that sources fill and stages read.
	"model/graph": 1,
	"record":      1,

	// 2: the factorization core, and the classifiers beside it (neither
	// imports the other).
	"model":          2,
	"model/classify": 2,

	// 3–4: the kernel methods (built on the engine), then the method table
	// that names every method.
	"model/kernel":  3,
	"model/methods": 4,

	// 5: the per-batch stages, and beside them the readers and writers;
	// the stages never import the readers or writers, nor they the stages.
	"stages":  5,
	"sources": 5,
	"sinks":   5,
	"wal":     5, // a write-ahead log, beside sources and sinks

	// 6: the streaming runtime.
	"pipeline": 6,

	// 7: what drives a pipeline or renders results.
	"distributed":             7,
	"distributed/natsembed":   7, // an embedded NATS server, for tests and the worker
	"internal/report":         7,
	"bench/internal/benchrun": 7, // what the measuring commands under bench/ share

	// 8: programs. None imports another.
	"cmd/nmfstream":    8,
	"examples/":        8,
	"bench/":           8,
	"distributed/cmd/": 8,
}
