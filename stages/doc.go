// Package stages implements the typed, synchronous per-batch steps of an
// nmfstream pipeline: turning documents into TF-IDF rows (TFIDF), turning
// a source's batches into model rows (Featurize), and online,
// prequential learning (Learner: predict each arriving sample from its
// code, then learn the sample and the labels that arrived, late or not).
//
// A stream is a chain of stages, one file each (docs/DESIGN.md §3):
//
//	decode        package sources: records into a record.Batch
//	featurize     features.go: NewFeatures checks and copies each sample
//	              (no state: in parallel, order kept); featurize.go:
//	              Featurize.RowsOf fixes the stream's dimension and runs
//	              TF-IDF over text, in stream order
//	identify      identify.go: Window.Identify sorts new samples from
//	              duplicates (ids in the window) and collects late labels
//	insert, step  factor.go: the Factorizer inserts the new samples into
//	              the k-NN graph and takes the online factorization step;
//	              *model.Online in process, or a remote backend
//	predict       predict.go: each new sample's label from the labels
//	              known now (Predictor; PredictGraph's experts in spread.go
//	              and linear.go)
//	label, score  label.go: the batch's labels in input order, interleaved
//	              with predict, and each prediction scored once, when its
//	              label is learned (Scorer, Counters, Scores)
//	sinks         package sinks
//
// The window's nodes (id, class, age), which identify, predict and label
// read, have one owner, Window (window.go). Learner holds the state of the
// in-order stages and runs them on a batch (Learner.LearnFeatures);
// Learner.Learn is NewFeatures and LearnFeatures in one call. Package
// pipeline runs the chain (see the package example); cmd/nmfstream's
// stream and serve commands are two drivers of it, with checkpoints
// (Learner.State, Learner.Restore) and HTTP.
//
// # Shapes
//
// Stages work on batches of samples stored one sample per row: a batch of n
// samples with D features is n×D (the transpose of the D×N data matrix X of
// the factorization X ≈ U Vᵀ). TFIDF.Transform returns an n×Dim
// *sparse.CSR whose columns are vocabulary terms or hashed features.
// A Prediction's Code is one row of V (K values).
//
// # Ownership and reuse
//
// Results are newly allocated and belong to the caller unless a method's doc
// says otherwise. Inputs are not retained: NewFeatures copies the rows it keeps
// and Learner.LearnFeatures copies them into the model, so the caller may
// reuse a record.Batch once NewFeatures (or Learner.Learn) returns.
//
// # Concurrency
//
// Stages are not safe for concurrent mutation: one goroutine fits or updates
// a stage. Read-only methods (such as TFIDF.Transform) may run concurrently
// with each other between mutations, so featurization can run in parallel.
// NewFeatures may be called from any number of goroutines at once. A Learner
// and its model.Online have a single owner, which calls LearnFeatures,
// Learn, Label and State; other goroutines talk to that owner (in a
// pipeline, the learn stage of parallelism 1). Text is vectorized by the
// owner, not by NewFeatures: its document frequencies follow the stream, and a
// checkpoint (State) must hold the vectorizer as of the last batch learned.
// The package starts no goroutines.
//
// # References
//
// TF-IDF follows scikit-learn's TfidfVectorizer, HashingVectorizer and
// TfidfTransformer (scikit-learn 1.2, https://scikit-learn.org), including
// its English stop word list. Stemming uses the Snowball English (Porter2)
// stemmer, https://snowballstem.org/algorithms/english/stemmer.html.
// Hashing uses MurmurHash3 x86_32 (Austin Appleby, public domain).
//
// Prequential evaluation (predict, then learn; score when the label is
// known): A. P. Dawid, "Present position and potential developments: some
// personal views: statistical theory: the prequential approach", JRSS A
// 147(2), 1984; J. Gama, R. Sebastião, P. P. Rodrigues, "On evaluating
// stream learning algorithms", Machine Learning 90(3), 2013. Unlike River's
// evaluate.progressive_val_score, which leaves empty predictions out, a
// scored sample without a prediction counts as wrong (Counters). Label propagation: Zhou et al., NIPS
// 16, 2004 (see model/classify).
package stages
