package kernel_test

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/datasets"
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
// graph. It needs the corpus of /work/shared/data/fetch-data.sh:
//
//	NMFSTREAM_BROWN=/tmp/nmfdata/brown go test ./model/kernel -run TestBrownClustering -v
func TestBrownClustering(t *testing.T) {
	dir := os.Getenv("NMFSTREAM_BROWN")
	if dir == "" {
		t.Skip("set NMFSTREAM_BROWN to the Brown corpus directory")
	}
	docs, genres, err := datasets.Brown(dir)
	if err != nil {
		t.Fatal(err)
	}
	var enc metrics.LabelEncoder
	enc.Fit(genres)
	y, err := enc.Encode(nil, genres)
	if err != nil {
		t.Fatal(err)
	}
	tf := &stages.TFIDF{StopWords: stages.EnglishStopWords(), MinDF: stages.DocFreq{Count: 3}, MaxDF: stages.DocFreq{Fraction: 0.5}, SublinearTF: true}
	x, err := tf.FitTransform(docs)
	if err != nil {
		t.Fatal(err)
	}
	n, dim := x.Dims()
	classes := len(enc.Classes())
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
		if acc := cluster(name, unitRows(tc.m.Codes()), start); tc.improved && acc <= base {
			t.Errorf("%s: clustering accuracy %.4f, not above k-means on TF-IDF (%.4f)", tc.name, acc, base)
		}
	}
}

// unitRows returns a copy of v with unit-norm rows (zero rows stay zero).
func unitRows(v *mat.Dense) *mat.Dense {
	out := mat.DenseCopyOf(v)
	r, _ := out.Dims()
	for i := range r {
		row := out.RawRowView(i)
		var s float64
		for _, e := range row {
			s += e * e
		}
		if s > 0 {
			s = 1 / math.Sqrt(s)
			for j := range row {
				row[j] *= s
			}
		}
	}
	return out
}
