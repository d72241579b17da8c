package kernel_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/testenv"
	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/classify"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/model/kernel"
	"github.com/nmfstream/nmfstream/model/metrics"
	"github.com/nmfstream/nmfstream/stages"
)

// TestBrownClustering is the paper's clustering experiment (§4.1) on the
// Brown corpus (500 documents, 15 genres): TF-IDF, codes of rank 15 with
// unit-norm rows, k-means with one cluster per genre (10 k-means++
// restarts, seed rand.NewPCG(1, 31)), clustering accuracy against the
// genres; peers are k-means on the TF-IDF rows and GNMF with a cosine kNN
// graph. The improved variants must beat k-means on the TF-IDF rows. It
// needs NMFSTREAM_LONG=1 and the corpus (scripts/fetch-data.sh):
//
//	NMFSTREAM_LONG=1 go test ./model/kernel -run TestBrownClustering -v
func TestBrownClustering(t *testing.T) {
	testenv.SkipUnlessLong(t, "eight kernel fits of the Brown corpus")
	docs, y, classes := testenv.Brown(t)
	tf := &stages.TFIDF{StopWords: stages.EnglishStopWords(), MinDF: stages.DocFreq{Count: 3}, MaxDF: stages.DocFreq{Fraction: 0.5}, SublinearTF: true}
	x, err := tf.FitTransform(docs)
	if err != nil {
		t.Fatal(err)
	}
	n, dim := x.Dims()
	t.Logf("%d documents, %d genres, %d terms", n, classes, dim)
	cluster := func(name string, feat *mat.Dense, start time.Time) float64 {
		km := classify.KMeans{K: classes, Src: rand.NewPCG(1, 31)}
		if err := km.Fit(feat); err != nil {
			t.Fatal(err)
		}
		pred := km.LabelsTo(nil)
		acc := metrics.ClusteringAccuracy(pred, y)
		t.Logf("%-44s accuracy %.4f NMI %.4f (%v)", name, acc, metrics.NMI(pred, y), time.Since(start).Round(time.Millisecond))
		return acc
	}
	base := cluster("k-means on TF-IDF", x.ToDense(), time.Now())
	c := model.Common{Rank: classes, Src: rand.NewPCG(1, 1)}
	xs := model.SparseRows(x)
	// Measured (seed above): k-means on TF-IDF 0.322, the paper's
	// NMF_MultiK LP 0.286 (τ on the near-constant σ = 100ρ Gaussian), the
	// ScalePool + CostRelative variants 0.366–0.380. The improved variants
	// (improved: true) must beat k-means on TF-IDF.
	for _, tc := range []struct {
		name     string
		m        model.Method
		improved bool
	}{
		{"GNMF (cosine kNN graph)", &model.GNMF{Common: c, Graph: graph.KNN{Metric: graph.Cosine}}, false},
		{"Flexible cosine", &kernel.Flexible{Common: c, Kernel: kernel.Cosine{}}, false},
		{"NMF_K cosine", &kernel.MultiK{Common: c, Kernels: []kernel.Kernel{kernel.Cosine{}}}, false},
		{"NMF_MultiK LP (paper)", &kernel.MultiK{Common: c}, false},
		{"NMF_MultiK ScalePool relative entropy", &kernel.MultiK{Common: c, Kernels: kernel.ScalePool(), Cost: kernel.CostRelative, Step: kernel.TauEntropy}, true},
		{"AdapGrNMF_MultiK LP (paper)", &kernel.MultiK{Common: c, Alpha: 1}, false},
		{"AdapGrNMF_MultiK entropy", &kernel.MultiK{Common: c, Alpha: 1, Step: kernel.TauEntropy}, false},
		{"AdapGrNMF_MultiK ScalePool relative entropy", &kernel.MultiK{Common: c, Alpha: 1, Kernels: kernel.ScalePool(), Cost: kernel.CostRelative, Step: kernel.TauEntropy}, true},
	} {
		start := time.Now()
		if err := tc.m.Fit(xs, nil); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		name := tc.name
		if mk, ok := tc.m.(*kernel.MultiK); ok && len(mk.Tau()) > 1 {
			name += " τ=" + fmtTau(mk.Tau())
		}
		if acc := cluster(name, testenv.UnitRows(tc.m.Codes()), start); tc.improved && acc <= base {
			t.Errorf("%s: clustering accuracy %.4f, not above k-means on TF-IDF (%.4f)", tc.name, acc, base)
		}
	}
}
