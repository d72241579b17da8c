// Package sparse implements the compressed sparse row (CSR) matrix that
// nmfstream uses for TF-IDF data, k-nearest-neighbour graphs and their
// Laplacians. Gonum has no sparse type; this one is small on purpose.
//
// # Shapes
//
// A CSR matrix with r rows and c columns stores, for row i, the column
// indices Ind[Indptr[i]:Indptr[i+1]] and the values Val[Indptr[i]:Indptr[i+1]].
// Within a row, column indices are strictly increasing.
//
// # Ownership and reuse
//
// NewCSR takes ownership of the slices it is given. Row returns views into
// the matrix's storage; copy what you keep past the next mutation.
//
// # Concurrency
//
// A CSR is safe for concurrent reads. It is not safe for concurrent mutation.
package sparse
