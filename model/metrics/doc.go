// Package metrics implements the evaluation side of nmfstream: accuracy,
// confusion matrices, clustering accuracy under the best (Hungarian)
// relabeling, normalized mutual information, McNemar's exact test of two
// classifiers on the same samples, a string label encoder and the seeded
// train/test/labeled split of the evaluation protocol (docs/DESIGN.md §7).
//
// Labels are ints. A truth of −1 marks a sample whose label is unknown;
// every metric skips such samples. A prediction of −1 means "no label" and
// counts as wrong.
//
// # Shapes
//
// Prediction and truth slices have one entry per sample and must have the
// same length (the metrics panic otherwise). Assign takes an r×c cost
// matrix and returns r column indices. Split returns row indices into the
// label slice it was given.
//
// # Ownership and reuse
//
// Functions do not retain their arguments. Encode and Decode write into a
// caller's dst when it is non-nil. LabelEncoder.Classes returns the
// encoder's own slice, valid until the next Fit.
//
// # Concurrency
//
// The functions are safe for concurrent use. A LabelEncoder may be used by
// several goroutines for Encode and Decode once Fit has returned.
//
// # References
//
// H. W. Kuhn, "The Hungarian method for the assignment problem", Naval
// Research Logistics Quarterly 2, 1955; J. Munkres, "Algorithms for the
// assignment and transportation problems", J. SIAM 5(1), 1957.
//
// A. Strehl and J. Ghosh, "Cluster ensembles — a knowledge reuse framework
// for combining multiple partitions", JMLR 3, 2002 (NMI); N. X. Vinh, J.
// Epps and J. Bailey, "Information theoretic measures for clusterings
// comparison", JMLR 11, 2010 (the arithmetic normalization).
package metrics
