// Package kernel implements non-negative matrix factorization in kernel
// feature spaces: flexible-kernel NMF (Zhang and Liu 2009) and NMF_K,
// NMF_MultiK and AdapGrNMF_MultiK (Wang and AbdulJabbar 2012), as
// compositions on model.Engine.
//
// The kernels (Gaussian, Polynomial, Cosine, Linear) depend on samples only
// through inner products and norms, so a kernel matrix is one blocked matrix
// product of the data, dense or sparse (MatrixTo, CrossTo). Once K is built,
// an iteration costs O(N²K) whatever the input dimension D.
//
// Flexible runs the Lee–Seung updates on the clipped square root K^{½}
// (model.Frobenius as the loss). MultiK runs KernelLoss, the loss
// tr(K(I − FVᵀ)(I − FVᵀ)ᵀ) with the basis Φ(X)F never formed, plus a
// model.GraphTerm on a graph rebuilt in kernel space (Graph), and updates the
// kernel weights τ on the simplex (TauStepTo).
//
// The paper's τ step minimizes each kernel's reconstruction error, which
// favours nearly constant kernels (on digits, the Gaussian with σ = 100 × the
// largest distance). MultiK keeps that step as its default and offers
// documented alternatives: a scale-free cost (CostRelative), a cost from the
// labeled samples (CostAlignment), a filter on near-constant kernels
// (MinVariance), and a pool at the data's scale (ScalePool).
//
// Exact kernel matrices are N×N: Fit refuses N above MaxExact (default
// 20000, ErrTooLarge) unless a Nystrom approximation is configured, which
// keeps N×m features instead.
//
// # Shapes
//
// Samples are rows, as in model.DenseRows and model.SparseRows. For N
// training samples and rank K: K is N×N; the cross-kernel K_te between the
// training samples and M new ones is N×M (one column per new sample, as in
// the papers); F, A and B are N×K (B is m×K with m Nyström landmarks); the
// codes V = Hᵀ = Wᵀ are N×K, and ProjectTo writes M×K.
//
// # Ownership and reuse
//
// Fit keeps a reference to the training data (projection needs it for the
// cross-kernel); do not modify it while the model is in use. Basis, B and
// Codes return matrices owned by the method, valid until the next Fit.
// State returns the method's own matrices; NewProjector keeps references to
// a State's matrices, and MarshalSnapshot copies them into a model.Snapshot
// (StateFromSnapshot keeps references to the snapshot's).
// MatrixTo and CrossTo follow gonum: an empty dst is resized, a non-empty one
// must fit. KernelLoss does not copy K or Phi.
//
// # Concurrency
//
// Kernels are values and safe for concurrent use. Flexible, MultiK and
// KernelLoss are not: one goroutine owns each. Matrix products use gonum's
// parallel gemm.
//
// # References
//
// D. Zhang and W. Liu, "An Efficient Nonnegative Matrix Factorization
// Approach in Flexible Kernel Space", IJCAI 2009.
//
// J.-Y. Wang and M. AbdulJabbar, "Adaptive Graph via Multiple Kernel Learning
// for Nonnegative Matrix Factorization", SPPRA 2012.
//
// D. D. Lee and H. S. Seung, "Algorithms for non-negative matrix
// factorization", NIPS 2001.
//
// D. Cai, X. He, J. Han and T. S. Huang, "Graph Regularized Nonnegative
// Matrix Factorization for Data Representation", IEEE TPAMI 33(8), 2011.
//
// C. K. I. Williams and M. Seeger, "Using the Nyström Method to Speed Up
// Kernel Machines", NIPS 2001.
//
// C. Cortes, M. Mohri and A. Rostamizadeh, "Algorithms for Learning Kernels
// Based on Centered Alignment", JMLR 13, 2012.
//
// D. Arthur and S. Vassilvitskii, "k-means++: The Advantages of Careful
// Seeding", SODA 2007.
package kernel
