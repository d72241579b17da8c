// Package classify implements the classifiers and the clustering that
// nmfstream runs on NMF codes (or on raw features, as baselines): k-nearest
// neighbours, nearest centroid, label spreading over a kNN graph,
// multinomial logistic regression, Gaussian kernel least squares
// (KernelRidge), self-training with 1-NN or the kernel classifier,
// Laplacian-regularized least squares on sparse rows (LapRLS, the
// semi-supervised classifier for documents), and k-means.
//
// Labels are ints in [0, C); −1 marks an unlabeled sample. The supervised
// classifiers (NearestNeighbor, NearestCentroid, Linear) skip unlabeled rows
// in Fit; LabelPropagation uses them, which is its point. C is one more than
// the largest label seen by Fit. Every Fit returns ErrNoLabels when no row is
// labeled, and an error for other data problems (a non-finite entry, K
// larger than the data allows, a label below −1).
//
// Prediction methods come in two forms: PredictTo returns labels, and
// PredictScoresTo also returns one score per row, whose meaning each type
// documents (vote share, class probability, label share, or distance). A
// row containing NaN or ±Inf is predicted −1 rather than stopping the batch.
//
// Neighbour searches are exact and blocked: squared Euclidean distances are
// ‖a‖² + ‖b‖² − 2a·b with a·b taken from one matrix product per tile of 256
// query rows × 1024 reference rows, and cosine distances are 1 − a·b on rows
// scaled to unit length. The graph of LabelPropagation is built here too, so
// that the package depends on nothing but gonum and model/sparse.
//
// # Shapes
//
// Samples are rows: Fit takes x as n×D with len(y) = n, prediction takes
// m×D and writes m labels (and m scores). NearestNeighbor.NeighborsTo writes
// m×K indices and distances, row-major. LabelPropagation's label
// distributions are n×C, KMeans' centres K×D, NearestCentroid's centroids
// C×D.
//
// # Ownership and reuse
//
// Fit copies what it keeps (the labeled rows for NearestNeighbor, all rows
// for LabelPropagation); the caller may reuse x and y afterwards. Methods
// ending in To write into the caller's dst: a nil slice or empty matrix is
// allocated, a non-nil one must have the right size or the method panics,
// as in gonum. Scratch space is kept on the receiver and reused across
// calls.
//
// # Concurrency
//
// No type in this package is safe for concurrent use, prediction included,
// because prediction reuses scratch space on the receiver. Use one value per
// goroutine or serialize calls. The package starts no goroutines (gonum's
// matrix product may use its own internally).
//
// # References
//
// D. Zhou, O. Bousquet, T. N. Lal, J. Weston and B. Schölkopf, "Learning
// with local and global consistency", NIPS 16, 2004 (LabelPropagation).
//
// D. Arthur and S. Vassilvitskii, "k-means++: the advantages of careful
// seeding", SODA 2007 (KMeans seeding); S. P. Lloyd, "Least squares
// quantization in PCM", IEEE Trans. Inf. Theory 28(2), 1982.
//
// J. Nocedal and S. J. Wright, Numerical Optimization, 2nd ed., Springer,
// 2006, Algorithms 7.4–7.5 (the L-BFGS of Linear).
//
// R. Rifkin and A. Klautau, "In defense of one-vs-all classification",
// JMLR 5, 2004 (KernelRidge: regularized least-squares classification);
// C. E. Rasmussen and C. K. I. Williams, Gaussian Processes for Machine
// Learning, MIT Press, 2006, §8.3.1 (its subset-of-regressors
// approximation).
//
// M. Belkin, P. Niyogi and V. Sindhwani, "Manifold regularization: a
// geometric framework for learning from labeled and unlabeled examples",
// JMLR 7, 2006, §4.2 (LapRLS, here linear and in its primal form);
// J. R. Shewchuk, "An introduction to the conjugate gradient method
// without the agonizing pain", 1994 (its solver).
//
// M. Saerens, P. Latinne and C. Decaestecker, "Adjusting the outputs of a
// classifier to new a priori probabilities: a simple procedure", Neural
// Computation 14(1), 2002 (LapRLS.Priors' EM); G. Blanchard, G. Lee and
// C. Scott, "Semi-supervised novelty detection", JMLR 11, 2010, and C.
// Scott, "A rate of convergence for mixture proportion estimation, with
// application to learning from noisy labels", AISTATS 2015 (its mixture
// proportion estimate of two classes); J. Platt, "Probabilistic
// outputs for support vector machines", 1999 (its smoothed targets);
// H. B. Mann and D. R. Whitney, 1947 (the rank-sum AUC that breaks
// LapRLS.Choices' ties); X. Zhu, Z. Ghahramani and J. Lafferty,
// "Semi-supervised learning using Gaussian fields and harmonic
// functions", ICML 2003, §4 (class mass normalization, LapRLS.Masses).
//
// T. Cover and P. Hart, "Nearest neighbor pattern classification", IEEE
// Trans. Inf. Theory 13(1), 1967.
package classify
