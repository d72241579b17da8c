package graph

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/sparse"
	"github.com/nmfstream/nmfstream/pipeline"
)

func uniform(n, d int) *mat.Dense {
	rng := rand.New(rand.NewPCG(1, 1))
	x := mat.NewDense(n, d, nil)
	raw := x.RawMatrix().Data
	for i := range raw {
		raw[i] = rng.Float64()
	}
	return x
}

// tfidfLike returns n rows over d columns with nnz non-zeros each, column
// popularity skewed (Zipf-like) as in text.
func tfidfLike(n, d, nnz int) *sparse.CSR {
	rng := rand.New(rand.NewPCG(1, 1))
	z := rand.NewZipf(rng, 1.1, 10, uint64(d-1))
	m := sparse.Zeros(0, d)
	for i := 0; i < n; i++ {
		seen := map[int]bool{}
		for len(seen) < nnz {
			seen[int(z.Uint64())] = true
		}
		row := mat.NewVecDense(d, nil)
		for j := range seen {
			row.SetVec(j, 1+rng.Float64())
		}
		var ind []int
		var val []float64
		for j := 0; j < d; j++ {
			if v := row.AtVec(j); v != 0 {
				ind = append(ind, j)
				val = append(val, v)
			}
		}
		m.AppendRow(ind, val)
	}
	return m
}

// BenchmarkKNN20000x784 is the batch build of the shape of scikit-learn's
// kneighbors_graph(X, 10) reference (MNIST-sized).
func BenchmarkKNN20000x784(b *testing.B) {
	x := uniform(20000, 784)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := (KNN{K: 10}).Dense(x); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkKNN5000x784(b *testing.B) {
	x := uniform(5000, 784)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := (KNN{K: 10}).Dense(x); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkKNNSparse20000x20000 is a cosine graph on TF-IDF-like rows
// (60 non-zeros each over 20000 terms).
func BenchmarkKNNSparse20000x20000(b *testing.B) {
	x := tfidfLike(20000, 20000, 60)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := (KNN{K: 10, Metric: Cosine}).Sparse(x); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInsert1Window5000x784 inserts one point into a full sliding
// window of 5000 nodes: the oldest is evicted (its holders re-searched) and
// the newcomer searched, per op.
func BenchmarkInsert1Window5000x784(b *testing.B) { benchInsert(b, 10, 5000, 784, 1) }

// BenchmarkInsert100Window5000x784 inserts a batch of 100 points into a
// full sliding window of 5000 nodes (100 evictions and their repairs, then
// the 100 searches), per op.
func BenchmarkInsert100Window5000x784(b *testing.B) { benchInsert(b, 10, 5000, 784, 100) }

// BenchmarkInsert200Window20000x64 inserts batches of 200 points into a
// full sliding window of 20,000 nodes in 64 dimensions with K = 5, as a
// stream searching a 64-dimensional random projection does (Online with
// SearchDim 64), per op.
func BenchmarkInsert200Window20000x64(b *testing.B) { benchInsert(b, 5, 20000, 64, 200) }

// benchInsert inserts batches of batch uniform points of dimension d into
// a k-NN graph (K = k) whose sliding window of w nodes is full, cycling
// over max(1000, 20·batch) fresh points, one batch per op.
func benchInsert(b *testing.B, k, w, d, batch int) {
	fresh := max(1000, 20*batch)
	x := uniform(w+fresh, d)
	g, err := KNN{K: k, Window: w}.Dense(x.Slice(0, w, 0, d))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		r := w + (i*batch)%fresh
		if _, err := g.InsertDense(x.Slice(r, r+batch, 0, d)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkKNNSplit20000x784 is BenchmarkKNN20000x784 through DenseSplit
// over GOMAXPROCS goroutines (pipeline.Split).
func BenchmarkKNNSplit20000x784(b *testing.B) {
	x := uniform(20000, 784)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := (KNN{K: 10}).DenseSplit(x, pipeline.Split(runtime.GOMAXPROCS(0))); err != nil {
			b.Fatal(err)
		}
	}
}
