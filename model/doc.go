// Package model implements non-negative matrix factorization X ≈ UVᵀ as one
// multiplicative-update engine on which every algorithm of nmfstream is a
// short composition of terms: NMF, graph-regularized NMF (GNMF), the
// label-aware methods (DGNMF, SSKNMF, N²S²L, NGE), discriminant PCA as a
// linear baseline, and their online form (Online).
//
// # Shapes
//
// X is the D×N data matrix, one column per sample, entries ≥ 0; Data wraps
// a sample-per-row *mat.Dense (DenseRows) or *sparse.CSR (SparseRows). U is
// the D×K basis and V the N×K codes, one row per sample. A graph over the
// samples is a symmetric N×N weight matrix S with degrees D_S = diag(S·1)
// and Laplacian L = D_S − S; tr(VᵀLV) = ½ Σ_ij S_ij ‖v_i − v_j‖².
//
// # The engine
//
// Engine minimizes a Loss (Frobenius: ‖X − UVᵀ‖²; KL: the generalized
// Kullback–Leibler divergence D(X‖UVᵀ), chosen by Common.Loss) plus Terms (GraphTerm:
// Weight·tr(V_bᵀ L V_b) on a block b of V's columns; AnchorTerm for
// out-of-sample projection). Each gradient is split into a negative part
// and a positive part, and a factor W is updated as W ← W ⊙ neg / pos. A
// repelling graph (negative Weight, or negative entries of S) moves its
// parts to the other side of the fraction. Columns of U can be normalized
// after the fit or after every update (Normalization). Every loss and term
// gives half its gradient, so a term's weight means the same with either
// loss.
//
// # Ownership and reuse
//
// Methods own their fitted U and V: Basis and Codes return them, valid until
// the next Fit. Engine, Projector and Online keep their workspaces between
// calls; reuse them on hot paths. Methods that write into caller memory end
// in To and follow gonum: an empty destination is resized, a non-empty one
// must have the right shape or the method panics.
//
// # Concurrency
//
// Nothing in this package starts goroutines (gonum's BLAS may; so may a
// Split function that the caller gives Online, such as pipeline.Split, to
// run disjoint parts of one step's graph search at once). Methods,
// Engine, Projector and Online are not safe for concurrent mutation: one
// goroutine owns a model; give each projecting goroutine its own Projector.
//
// # Errors
//
// Data problems (negative, NaN or infinite entries, a rank out of range,
// labels that do not fit) are returned as errors naming the sample and
// feature. Misuse visible in the caller's code (a wrongly sized destination)
// panics.
//
// # References
//
// D. D. Lee and H. S. Seung, "Algorithms for non-negative matrix
// factorization", NIPS 2001.
//
// D. Cai, X. He, J. Han and T. S. Huang, "Graph Regularized Nonnegative
// Matrix Factorization for Data Representation", IEEE TPAMI 33(8), 2011.
//
// C. Boutsidis and E. Gallopoulos, "SVD based initialization: A head start
// for nonnegative matrix factorization", Pattern Recognition 41(4), 2008.
//
// B. Schölkopf, A. Smola and K.-R. Müller, "Nonlinear component analysis
// as a kernel eigenvalue problem", Neural Computation 10(5), 1998 (DPCA's
// Gram form).
//
// The label-aware methods cite their papers in their type documentation.
package model
