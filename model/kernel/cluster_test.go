package kernel_test

import (
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/classify"
	"github.com/nmfstream/nmfstream/model/kernel"
	"github.com/nmfstream/nmfstream/model/metrics"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// clusterAccuracy runs k-means (c clusters) on the codes and scores them
// against y with the best cluster-to-class matching.
func clusterAccuracy(t *testing.T, codes mat.Matrix, y []int, c int) float64 {
	t.Helper()
	km := classify.KMeans{K: c}
	if err := km.Fit(codes); err != nil {
		t.Fatal(err)
	}
	return metrics.ClusteringAccuracy(km.LabelsTo(nil), y)
}

// TestClustering is the papers' clustering use: k-means on the codes of
// well-separated groups recovers them.
func TestClustering(t *testing.T) {
	x, y := clusters(90, 10, 3, 7)
	xd := model.DenseRows(x)
	for name, m := range map[string]model.Method{
		"flexible":         &kernel.Flexible{Common: model.Common{Rank: 3}, Kernel: kernel.Gaussian{Scale: 0.5}},
		"NMF_K":            &kernel.MultiK{Common: model.Common{Rank: 3}, Kernels: []kernel.Kernel{kernel.Gaussian{Scale: 0.2}}},
		"AdapGrNMF_MultiK": &kernel.MultiK{Common: model.Common{Rank: 3, MaxIter: 100}, Alpha: 1, Step: kernel.TauEntropy, Outer: 4},
	} {
		if err := m.Fit(xd, nil); err != nil {
			t.Fatal(err)
		}
		// 0.95: the groups are 10σ apart; a broken factorization scores
		// near 1/3.
		if acc := clusterAccuracy(t, m.Codes(), y, 3); acc < 0.95 {
			t.Errorf("%s: clustering accuracy %.3f, want ≥ 0.95", name, acc)
		}
	}
}

// TestSparseMatchesDense checks that sparse rows give the codes of the
// same dense rows.
func TestSparseMatchesDense(t *testing.T) {
	x, _ := clusters(40, 12, 2, 8)
	for _, mk := range []func() fitProjector{
		func() fitProjector {
			return &kernel.Flexible{Common: model.Common{Rank: 2}, Kernel: kernel.Gaussian{Scale: 0.5}}
		},
		func() fitProjector {
			return &kernel.MultiK{Common: model.Common{Rank: 2, MaxIter: 50}, Alpha: 1, Outer: 2}
		},
	} {
		a, b := mk(), mk()
		if err := a.Fit(model.DenseRows(x), nil); err != nil {
			t.Fatal(err)
		}
		if err := b.Fit(model.SparseRows(sparse.FromDense(x)), nil); err != nil {
			t.Fatal(err)
		}
		// 1e-6 relative: the kernel matrices differ by rounding only
		// (different summation order), which the updates do not amplify
		// much over a few hundred iterations.
		if d := relDiff(b.Codes(), a.Codes()); d > 1e-6 {
			t.Errorf("%T: sparse codes differ from dense by %.3g", a, d)
		}
	}
}
