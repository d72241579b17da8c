package kernel_test

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/datasets"
	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/classify"
	"github.com/nmfstream/nmfstream/model/kernel"
	"github.com/nmfstream/nmfstream/model/metrics"
)

// loadDigits returns the embedded 1797 8×8 digits (pixels in 0..16) and
// their labels.
func loadDigits(tb testing.TB) (*mat.Dense, []int) {
	tb.Helper()
	return datasets.Digits()
}

type split struct {
	xtr  *mat.Dense
	ytr  []int // −1 on unlabeled training samples
	xte  *mat.Dense
	yte  []int
	ytrT []int // true training labels
}

func gather(x *mat.Dense, y []int, rows []int) (*mat.Dense, []int) {
	_, d := x.Dims()
	out := mat.NewDense(len(rows), d, nil)
	lab := make([]int, len(rows))
	for k, i := range rows {
		out.SetRow(k, x.RawRowView(i))
		lab[k] = y[i]
	}
	return out, lab
}

func makeSplit(tb testing.TB, x *mat.Dense, y []int, src rand.Source) split {
	tb.Helper()
	s, err := metrics.Split(y, 1.0/3, 10, src)
	if err != nil {
		tb.Fatal(err)
	}
	var sp split
	sp.xtr, sp.ytrT = gather(x, y, s.Train)
	sp.ytr, _ = s.PoolLabels(y)
	sp.xte, sp.yte = gather(x, y, s.Test)
	return sp
}

// digitsTest is docs/DESIGN.md §7's split: seed 1, one third held out, 10
// labels per class.
func digitsTest(tb testing.TB) split {
	x, y := loadDigits(tb)
	return makeSplit(tb, x, y, rand.NewPCG(1, 1))
}

type fitProjector interface {
	model.Method
	kernel.Projector
}

// heldOut fits m on the training samples, projects the held-out ones and
// returns the 1-NN accuracy of their codes against the labeled training
// codes.
func heldOut(tb testing.TB, m fitProjector, s split) float64 {
	tb.Helper()
	acc, _ := heldOut2(tb, m, s)
	return acc
}

// heldOut2 is heldOut that also returns the accuracy of the CLI's
// classifier, classify.SelfTraining over all training codes (labeled and
// unlabeled). Fit gets the partial labels (−1 = unlabeled); only
// CostAlignment reads them.
func heldOut2(tb testing.TB, m fitProjector, s split) (nn1, self float64) {
	tb.Helper()
	if err := m.Fit(model.DenseRows(s.xtr), s.ytr); err != nil {
		tb.Fatal(err)
	}
	var codes mat.Dense
	if err := m.ProjectTo(&codes, model.DenseRows(s.xte)); err != nil {
		tb.Fatal(err)
	}
	var nn classify.NearestNeighbor
	if err := nn.Fit(m.Codes(), s.ytr); err != nil {
		tb.Fatal(err)
	}
	pred := nn.PredictTo(nil, &codes)
	nn1 = metrics.Accuracy(pred, s.yte)
	var st classify.SelfTraining
	if err := st.Fit(m.Codes(), s.ytr); err != nil {
		tb.Fatal(err)
	}
	pred = st.PredictTo(pred, &codes)
	return nn1, metrics.Accuracy(pred, s.yte)
}

func fmtTau(tau []float64) string {
	var b []byte
	for i, v := range tau {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendFloat(b, v, 'f', 2, 64)
	}
	return "[" + string(b) + "]"
}
