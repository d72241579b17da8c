// Command paper reproduces the experiments of the papers nmfstream
// implements and compares every method with its peers: held-out accuracy
// against labels per class for every method and the peers (docs/DESIGN.md §7),
// sensitivity to K, α and β, occlusion robustness, basis sparsity and
// images, objective curves, a prequential stream, document classification
// and clustering on the Brown corpus, and speed against scikit-learn
// (through Python, peers.py), written as report.md, report.json and PNG
// figures by Run.
//
//	go run ./bench/paper --out DIR [--data DIR] [--quick] [--seed s] [--mnist N] [--python PATH] [--rerender]
//
// See README.md beside this file. It is not part of the nmfstream command:
// "nmfstream report" reports on a user's own data and model.
//
// # Shapes
//
// Data sets are held one sample per row (N×D, the transpose of the D×N
// X of docs/DESIGN.md §1); every method factorizes X ≈ UVᵀ with U D×K and V N×K.
// Test samples are coded on the fitted U (M×K) and classified by 1-NN
// against the codes of the labeled training samples.
//
// # Ownership and reuse
//
// Run owns everything it allocates and writes only under Config.Out (and
// a temporary directory for the scikit-learn peers, removed on return).
// The returned Report is the caller's.
//
// # Concurrency
//
// Run is sequential: experiments run one after another so that their
// timings do not disturb each other (gonum's BLAS and scikit-learn may use
// several threads within one). Several Runs may proceed concurrently with
// different Out directories.
//
// # References
//
// The experiments follow the seed papers (docs/DESIGN.md §2; their full
// references in go doc ./model and ./model/kernel): the sensitivity
// study of An's KNMF thesis (Fig. 2.4) and its 5-fold document
// classification with a linear classifier; NGE's Fig. 7 and N²S²L's
// Fig. 4 (accuracy vs occlusion patch size) and their basis images; the
// multiple-kernel paper's document clustering accuracy. Hoyer sparsity:
// P. O. Hoyer, "Non-negative matrix factorization with sparseness
// constraints", JMLR 5, 2004.
package main
