// Package graph implements the exact k-nearest-neighbour graphs of
// nmfstream, batch and incremental, and the label-aware graphs built from
// them: the k-NN graph S of GNMF, the intra- and inter-class graphs of
// KNMF, SSKNMF's signed graph W¹, the intrinsic and penalty graphs of MFA
// (NGE, N²S²L), graphs from must-link / cannot-link pairs, and Laplacians.
//
// # Search
//
// The search is exact and never forms an N×N matrix. Query blocks of rows
// (KNN.BlockSize, 512 by default) meet reference blocks through one BLAS
// dgemm per block pair (aᵀb, from which ‖a‖² + ‖b‖² − 2aᵀb), or for sparse
// rows through an inverted index of the reference block; a bounded max-heap
// per query keeps the k best. A self-graph computes only the blocks on and
// above the diagonal and feeds both sides' heaps, which halves the flops.
//
// BLAS results depend on blocking and on the BLAS in use, so every final
// neighbour is decided by a canonical key, the squared distance Σ(aₗ − bₗ)²
// or, for Cosine, −sgn(c)c² = −aᵀb|aᵀb|/(‖a‖²‖b‖²) (one final division, so
// equal cosines of integer-valued rows tie exactly), computed in a fixed order for the few candidates whose fast distance is
// within a proven rounding margin of the k-th (Higham's γₙ bound). The
// lists are therefore identical however they were reached: a batch build,
// insertions one at a time, or re-search after removals. Ties are broken
// by the smaller id. A node is never its own neighbour.
//
// # Incremental use
//
// InsertDense / InsertSparse add points, Remove deletes them, and a
// KNN.Window turns the graph into a sliding window over a stream. Each
// returns a Change naming the nodes whose weight-matrix rows may have
// changed, so that a caller updates only those codes. SetLabel records a
// label that may arrive after its sample. See Graph for how node ids stay
// stable.
//
// # Cost
//
// A batch build of N rows of dimension D costs N²D flops (half of the
// N×N×D product) in BLAS, plus O(N²) comparisons. Inserting b rows into a
// graph of N nodes costs b·N·D. Each list keeps KNN.Slack further exact
// neighbours (K by default with a Window), so removing a node re-searches
// only the lists it leaves with fewer than K entries, which is rare; without
// slack it re-searches every node that had it as a neighbour (about k of
// them), k·N·D. Dense Euclidean products run in float32 in a batch build
// and, once 256 nodes show the data suit it, for insertions, with the
// margin widened to float32's bound: twice the speed, the same lists.
// An insertion's Euclidean search of a dense window of 2,048 rows or more
// is bounded (bound.go): b·N·m for a lower bound on each pair from the
// window's m ≤ 64 principal directions, plus D for each pair the bound
// cannot rule out (about 5% on MNIST), the same lists again; it keeps m
// float32 coordinates per node and the bounds of up to 4M pairs (32 MiB).
// Memory is the stored rows (plus a float32 copy in that mode) and
// O(N·(k + slack)). Import internal/openblas under the build tag openblas to run
// the dgemm on OpenBLAS; results do not change, as explained above.
//
// # Shapes
//
// Data rows are samples: a dense x is N×D (Xᵀ in docs/DESIGN.md §1 notation), a
// sparse x is an N×D *sparse.CSR. Every matrix a Graph builds (S, W_w, W_b,
// W¹, MFA graphs) is Slots()×Slots(), symmetric, indexed by node id.
// Laplacian returns L = D − S with D = diag(S·1).
//
// # Ownership and reuse
//
// A Graph copies the rows it is given. Matrices and slices it returns are
// new and owned by the caller. Neighbour search reuses workspace kept on
// the Graph.
//
// # Concurrency
//
// A Graph is not safe for concurrent use, not even for reads that build
// matrices (they share workspace). The BLAS may use several goroutines
// inside a dgemm call, and the function given to SetSplit may run the
// parts of an insertion's search on several; the package starts none
// itself.
//
// # References
//
// Cai, He, Han, Huang, "Graph Regularized Nonnegative Matrix Factorization
// for Data Representation", IEEE TPAMI 33(8), 2011 (k-NN graph, weightings,
// S = max(W, Wᵀ)).
// The knmf thesis §2.2–2.3 (intra-/inter-class k-NN graphs, SSKNMF's W¹).
// Yan et al., "Graph Embedding and Extensions", IEEE TPAMI 29(1), 2007, as
// used by Yang et al.'s non-negative graph embedding (NGE) and N²S²L (MFA
// intrinsic and penalty graphs).
// The DPCA paper §3.2 (must-link / cannot-link pairs).
// Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., §3.1
// (the rounding margin).
package graph
