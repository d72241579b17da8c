package kernel_test

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/testenv"
	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/classify"
	"github.com/nmfstream/nmfstream/model/kernel"
	"github.com/nmfstream/nmfstream/model/metrics"
)

// TestNystromLarge fits the kernel methods on N = 21564 samples, beyond
// what the exact path allows here (MaxExact is set to 20000, the default):
// the digits training pool and 17 jittered copies of it (±1 grey level of
// uniform noise, clipped to [0, 16]). The held-out digits are then
// projected and classified by 1-NN against the 100 labeled originals.
// About 7 minutes on a loaded 2-core machine:
//
//	NMFSTREAM_LONG=1 go test ./model/kernel -run TestNystromLarge -v -timeout 30m
func TestNystromLarge(t *testing.T) {
	testenv.SkipUnlessLong(t, "two kernel fits of 21,564 samples, about 7 minutes")
	s := digitsTest(t)
	n0, d := s.xtr.Dims()
	const copies = 18
	x := mat.NewDense(n0*copies, d, nil)
	y := make([]int, n0*copies)
	r := rand.New(rand.NewPCG(1, 1))
	for c := 0; c < copies; c++ {
		for i := 0; i < n0; i++ {
			row := x.RawRowView(c*n0 + i)
			copy(row, s.xtr.RawRowView(i))
			y[c*n0+i] = -1
			if c == 0 {
				y[i] = s.ytr[i] // the labeled originals
				continue
			}
			for j := range row {
				row[j] = min(16, max(0, row[j]+2*r.Float64()-1))
			}
		}
	}
	xd := model.DenseRows(x)
	ny := &kernel.Nystrom{Landmarks: 400}
	exact := &kernel.Flexible{Common: model.Common{Rank: 40}}
	if err := exact.Fit(xd, nil); !errors.Is(err, kernel.ErrTooLarge) {
		t.Fatalf("exact path at N = %d: %v, want ErrTooLarge", n0*copies, err)
	}
	for _, tc := range []digitsConfig{
		{name: "Flexible Gaussian + Nyström", m: &kernel.Flexible{Common: model.Common{Rank: 40, MaxIter: 100}, Nystrom: ny}},
		{name: "NMF_K Gaussian + Nyström", m: &kernel.MultiK{Common: model.Common{Rank: 40, MaxIter: 100}, Kernels: []kernel.Kernel{kernel.Gaussian{Scale: 1, Rule: kernel.MeanDistance}}, Nystrom: ny}},
	} {
		start := time.Now()
		if err := tc.m.Fit(xd, nil); err != nil {
			t.Fatal(err)
		}
		fit := time.Since(start)
		var codes mat.Dense
		if err := tc.m.ProjectTo(&codes, model.DenseRows(s.xte)); err != nil {
			t.Fatal(err)
		}
		var nn classify.NearestNeighbor
		if err := nn.Fit(tc.m.Codes(), y); err != nil {
			t.Fatal(err)
		}
		acc := metrics.Accuracy(nn.PredictTo(nil, &codes), s.yte)
		t.Logf("%-30s N=%d m=400: fit %v, held-out 1-NN accuracy %.4f", tc.name, n0*copies, fit.Round(time.Second), acc)
		if acc < 0.868 {
			t.Errorf("%s: accuracy %.4f below scikit-learn NMF's 0.868", tc.name, acc)
		}
	}
}
