// Package record defines the batch of input records that flows from a
// source to the stages of an nmfstream pipeline: Batch, with its late labels
// and rejects, and Error, the reason a record was rejected.
//
// It is the one type that both the readers (package sources) and the
// stages (package stages) speak, so that neither imports the other: a
// source fills a Batch, a stage reads it.
//
// # Shapes
//
// A Batch stores samples one per row: Batch.Dense and Batch.Sparse are n×D,
// the transpose of the D×N data matrix X of the factorization X ≈ U Vᵀ.
// Batch.Text holds n documents for a TF-IDF stage. Per-sample metadata
// (IDs, Labels, Labeled, Offsets) has length n. Late labels and rejects are
// listed beside the samples, so every input record appears exactly once.
//
// # Ownership
//
// Whoever fills a Batch says how long it stays valid; the sources reuse
// its memory from one call to Next to the next. Clone makes a deep copy.
package record
