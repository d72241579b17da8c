package model

// AutoMethod is the name of the method that Auto returns, for a command
// line's "--method auto".
const AutoMethod = "ssknmf"

// Auto returns the semi-supervised method that measured best under
// DESIGN.md §7's protocol, at its default hyperparameters and the given
// rank K: SSKNMF. It is the one rule for "--method auto"; change it only
// with a measurement, recorded here.
//
// The choice was made on validation splits of the digits pool (three
// splits of the seed-1 training pool, never its test split; see
// TestTuneLabelAware), K = 40, held-out samples coded by graph-aware
// projection, then classified by 1-NN against the training codes labeled
// by self-training in code space (mean validation accuracy):
//
//	SSKNMF 0.968, NGE 0.966, N2S2L 0.961, DGNMF 0.951
//
// On the test splits (seed 1, 10 labels per class; TestDigitsAccuracy and
// TestMNISTAccuracy), 1-NN against the labeled codes / self-labeled codes:
//
//	digits: SSKNMF 0.948 / 0.950, NGE 0.945 / 0.947, N2S2L 0.938 / 0.950,
//	        DGNMF 0.920 / 0.953, DPCA 0.925 / 0.955
//	MNIST, first 15,000 training images: SSKNMF 0.875 / 0.892
//	        (N2S2L with α = β = 100: 0.592)
//
// SSKNMF is also the label-aware method whose digits-tuned defaults carry
// over to MNIST.
//
// Classifying with JointClassifier instead raises every method. Its first
// version (the same self-labels, then a 5-NN vote on pixels and codes
// together; JointClassifier.Vote), validation mean / seed-1 test split
// (TestTuneLabelAware with NMFSTREAM_TUNE=auto, TestDigitsAccuracy):
//
//	SSKNMF 0.974 / 0.958, N2S2L 0.970 / 0.962, NGE 0.969 / 0.958,
//	DGNMF 0.957 / 0.962
//
// Its default now (kernel self-training on pixels and codes, then a
// Gaussian kernel classifier on pixels) on validation splits of the pools
// of seeds 1–5 (TestTuneAuto, NMFSTREAM_TUNE=auto2), 5-NN vote / kernel:
//
//	SSKNMF 0.953 / 0.964, N2S2L 0.960 / 0.963, NGE 0.959 / 0.963,
//	DGNMF 0.938 / 0.958, DPCA 0.950 / 0.960
//
// and on the test splits (TestDigitsAccuracy with NMFSTREAM_SEEDS=1),
// kernel, seed 1 / mean of seeds 1–5:
//
//	SSKNMF 0.963 / 0.971, N2S2L 0.965 / 0.969, NGE 0.965 / 0.971,
//	DGNMF 0.973 / 0.961, DPCA 0.972 / 0.973
//
// SSKNMF stays the choice (best on validation with either classifier).
//
// The figures above were measured with SSKNMF's signed graph in its
// Laplacian form. With the inter-class edges as inner products (see
// SSKNMF; the Laplacian form diverged with every sample labeled), the
// seed-1 test split gives 1-NN 0.945, self-labeled 0.957, 5-NN vote 0.958,
// kernel 0.962, and the kernel's mean over seeds 1–5 is still 0.971
// (TestDigitsAccuracy with NMFSTREAM_SEEDS=1); the validation figures were
// not re-measured. With every pool sample labeled, the joint classifier
// scores 0.995 and 1-NN on the codes 0.980 (TestAutoAllLabeled).
// The 0.970 is met by its mean over the five test splits, not on
// the seed-1 split. The kernel classifier with every pool label known
// scores 0.991 (mean of seeds 1–5): what is left is the 1.5–2% of pool
// samples that self-training labels wrongly.
func Auto(rank int) Method {
	return &SSKNMF{Common: Common{Rank: rank}}
}
