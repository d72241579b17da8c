package classify_test

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/classify"
)

func benchData(n, d, c int) (*mat.Dense, []int) {
	rnd := rand.New(rand.NewPCG(1, 1))
	x := mat.NewDense(n, d, nil)
	y := make([]int, n)
	for i := range n {
		y[i] = rnd.IntN(c)
		for j := range d {
			x.Set(i, j, rnd.Float64())
		}
		x.Set(i, y[i]%d, x.At(i, y[i]%d)+1) // a class signal
	}
	return x, y
}

// BenchmarkNearestNeighbor5000x50 predicts 5000 rows against 5000 labeled
// rows of 50 features (25M distances per op).
func BenchmarkNearestNeighbor5000x50(b *testing.B) {
	x, y := benchData(5000, 50, 10)
	q, _ := benchData(5000, 50, 10)
	var nn classify.NearestNeighbor
	if err := nn.Fit(x, y); err != nil {
		b.Fatal(err)
	}
	dst := make([]int, 5000)
	b.ReportAllocs()
	for b.Loop() {
		nn.PredictTo(dst, q)
	}
}

// BenchmarkLabelPropagation2000x64 fits label spreading on 2000 rows of 64
// features with 10 labels per class (kNN graph plus iterations).
func BenchmarkLabelPropagation2000x64(b *testing.B) {
	x, y := benchData(2000, 64, 10)
	for i := 100; i < len(y); i++ {
		y[i] = -1
	}
	var lp classify.LabelPropagation
	b.ReportAllocs()
	for b.Loop() {
		if err := lp.Fit(x, y); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLinear1000x50 fits 10-class logistic regression on 1000 rows.
func BenchmarkLinear1000x50(b *testing.B) {
	x, y := benchData(1000, 50, 10)
	var li classify.Linear
	b.ReportAllocs()
	for b.Loop() {
		if err := li.Fit(x, y); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkKMeans5000x50 clusters 5000 rows into 10 clusters, 10 restarts.
func BenchmarkKMeans5000x50(b *testing.B) {
	x, _ := benchData(5000, 50, 10)
	km := classify.KMeans{K: 10}
	b.ReportAllocs()
	for b.Loop() {
		if err := km.Fit(x); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDigitsLabelPropagation fits label spreading on the digits
// training split (1198 rows, 100 labeled) and predicts the 599 test rows.
func BenchmarkDigitsLabelPropagation(b *testing.B) {
	xtr, ytr, xte, _, _ := digitsSplit(b)
	var lp classify.LabelPropagation
	b.ReportAllocs()
	for b.Loop() {
		if err := lp.Fit(xtr, ytr); err != nil {
			b.Fatal(err)
		}
		lp.PredictTo(nil, xte)
	}
}
