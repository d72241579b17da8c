// Package stages implements the typed, synchronous per-batch steps of an
// nmfstream pipeline, such as turning documents into TF-IDF rows (TFIDF).
//
// # Shapes
//
// Stages work on batches of samples stored one sample per row: a batch of n
// samples with D features is n×D (the transpose of the D×N data matrix X of
// the factorization X ≈ U Vᵀ). TFIDF.Transform returns an n×Dim
// *sparse.CSR whose columns are vocabulary terms or hashed features.
//
// # Ownership and reuse
//
// Results are newly allocated and belong to the caller unless a method's doc
// says otherwise. Inputs are not retained.
//
// # Concurrency
//
// Stages are not safe for concurrent mutation: one goroutine fits or updates
// a stage. Read-only methods (such as TFIDF.Transform) may run concurrently
// with each other between mutations, so featurization can run in parallel.
//
// # References
//
// TF-IDF follows scikit-learn's TfidfVectorizer, HashingVectorizer and
// TfidfTransformer (scikit-learn 1.2, https://scikit-learn.org), including
// its English stop word list. Stemming uses the Snowball English (Porter2)
// stemmer, https://snowballstem.org/algorithms/english/stemmer.html.
// Hashing uses MurmurHash3 x86_32 (Austin Appleby, public domain).
package stages
