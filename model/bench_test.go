package model

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/openblas"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/model/sparse"
	"github.com/nmfstream/nmfstream/pipeline"
)

// uniformRows returns n×d entries drawn from U[0, 1) with a fixed seed.
func uniformRows(n, d int) *mat.Dense {
	rnd := rand.New(rand.NewPCG(1, 1))
	x := mat.NewDense(n, d, nil)
	for i := range x.RawMatrix().Data {
		x.RawMatrix().Data[i] = rnd.Float64()
	}
	return x
}

// randomGraph returns a symmetric 0-1 graph with k random neighbours per
// node: the cost of a graph term depends only on its number of entries,
// so this stands in for a k-NN graph without the cost of building one.
func randomGraph(n, k int) *sparse.CSR {
	rnd := rand.New(rand.NewPCG(2, 2))
	b := sparse.NewBuilder(n, n)
	for i := 0; i < n; i++ {
		for p := 0; p < k; p++ {
			j := rnd.IntN(n)
			if j != i {
				b.Add(i, j, 1)
				b.Add(j, i, 1)
			}
		}
	}
	s := b.CSR()
	for p := range s.Val {
		s.Val[p] = 1 // duplicates were summed
	}
	return s
}

// benchIters is the number of iterations per benchmark op: like
// scikit-learn's 'mu' solver, which checks its objective every 10
// iterations, the engine computes the objective once per run here.
const benchIters = 10

// BenchmarkGNMFIter20000x784 times GNMF iterations (U and V updates) at
// N = 20000, D = 784, K = 50, k = 10, and reports seconds per iteration
// ("s/iter"). scikit-learn 1.2 takes 0.10–0.14 s per 'mu' NMF iteration on
// the same shape here (scripts/bench-vs-sklearn.sh measures both).
func BenchmarkGNMFIter20000x784(b *testing.B) {
	benchIter(b, []Term{&GraphTerm{Weight: 100, S: randomGraph(20000, 10)}})
}

// BenchmarkNMFIter20000x784 is the same without the graph term.
func BenchmarkNMFIter20000x784(b *testing.B) { benchIter(b, nil) }

// BenchmarkGNMFIterSplit20000x784 is BenchmarkGNMFIter20000x784 with
// Engine.Split over GOMAXPROCS goroutines (pipeline.Share), OpenBLAS (with
// -tags openblas) running each part's products on one thread.
func BenchmarkGNMFIterSplit20000x784(b *testing.B) {
	defer openblas.SetThreads(openblas.SetThreads(1))
	benchIterSplit(b, []Term{&GraphTerm{Weight: 100, S: randomGraph(20000, 10)}}, pipeline.Share(runtime.GOMAXPROCS(0)))
}

// BenchmarkGNMFIterSplitStatic20000x784 is the same with pipeline.Split:
// one part per goroutine.
func BenchmarkGNMFIterSplitStatic20000x784(b *testing.B) {
	defer openblas.SetThreads(openblas.SetThreads(1))
	benchIterSplit(b, []Term{&GraphTerm{Weight: 100, S: randomGraph(20000, 10)}}, pipeline.Split(runtime.GOMAXPROCS(0)))
}

func benchIter(b *testing.B, terms []Term) { benchIterSplit(b, terms, nil) }

func benchIterSplit(b *testing.B, terms []Term, split func(int, func(int, int))) {
	const n, d, k = 20000, 784, 50
	x := DenseRows(uniformRows(n, d))
	u, v, err := Initialize(x, k, InitRandom, nil)
	if err != nil {
		b.Fatal(err)
	}
	e := Engine{Loss: NewFrobenius(x), Terms: terms, MaxIter: benchIters, Tol: -1, Split: split}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := e.Run(u, v); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N*benchIters), "s/iter")
}

// BenchmarkGNMFFitMemory fits GNMF (exact k-NN graph, k = 10, K = 50, 5
// iterations) and reports memory as multiples of the input's size: "live/input"
// is the largest heap in use right after a garbage collection at the end of
// an iteration (what the fit keeps), "peak/input" the largest heap in use
// sampled every 10 ms over the whole fit, garbage not yet collected included
// (what a process needs with GOGC=100). The goal is at most 3: no N×N
// allocation. Sizes: 20000×784; the 60000×784 case runs unless -short and
// takes minutes (use -tags openblas).
func BenchmarkGNMFFitMemory(b *testing.B) {
	for _, n := range []int{20000, 60000} {
		b.Run(fmt.Sprintf("%dx784", n), func(b *testing.B) {
			if n > 20000 && testing.Short() {
				b.Skip("long")
			}
			xr := uniformRows(n, 784)
			input := float64(n * 784 * 8)
			for b.Loop() {
				var live atomic.Uint64
				var err error
				peak := peakHeap(func() {
					g := &GNMF{Common: Common{Rank: 50, MaxIter: 5, Callback: func(Stats) bool {
						runtime.GC()
						var m runtime.MemStats
						runtime.ReadMemStats(&m)
						live.Store(max(live.Load(), m.HeapInuse))
						return true
					}}, Graph: graph.KNN{K: 10}}
					err = g.Fit(DenseRows(xr), nil)
				})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(live.Load())/input, "live/input")
				b.ReportMetric(float64(peak)/input, "peak/input")
			}
		})
	}
}

// peakHeap runs f after a garbage collection and returns the largest heap
// in use (runtime.MemStats.HeapInuse, bytes) sampled every 10 ms while it
// ran, garbage not yet collected included.
func peakHeap(f func()) uint64 {
	runtime.GC()
	var peak atomic.Uint64
	done, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	f()
	close(done)
	<-sampled
	return peak.Load()
}

// BenchmarkGraphTermVGrad20000x50 times the graph term's gradient, the
// part of a GNMF iteration outside BLAS: S·V for a random 10-NN-sized graph
// on N = 20000 codes of K = 50.
func BenchmarkGraphTermVGrad20000x50(b *testing.B) {
	t := &GraphTerm{Weight: 100, S: randomGraph(20000, 10)}
	v := uniformRows(20000, 50)
	neg, pos := mat.NewDense(20000, 50, nil), mat.NewDense(20000, 50, nil)
	b.ReportAllocs()
	for b.Loop() {
		t.AddVGrad(neg, pos, v)
	}
}

// BenchmarkGraphTermVGradRows100of20000x50 is the online learner's case:
// the gradient of 100 rows of V.
func BenchmarkGraphTermVGradRows100of20000x50(b *testing.B) {
	t := &GraphTerm{Weight: 100, S: randomGraph(20000, 10)}
	v := uniformRows(20000, 50)
	neg, pos := mat.NewDense(20000, 50, nil), mat.NewDense(20000, 50, nil)
	rows := make([]int, 100)
	for i := range rows {
		rows[i] = 19900 + i
	}
	b.ReportAllocs()
	for b.Loop() {
		t.AddVGradRows(neg, pos, v, rows)
	}
}

// BenchmarkGraphTermValue20000x50 times the graph term's value
// Weight·tr(VᵀLV), computed once per Engine run.
func BenchmarkGraphTermValue20000x50(b *testing.B) {
	t := &GraphTerm{Weight: 100, S: randomGraph(20000, 10)}
	v := uniformRows(20000, 50)
	b.ReportAllocs()
	for b.Loop() {
		t.Value(v)
	}
}

// BenchmarkGraphTermGrad20000x50 is the graph term's share of a GNMF
// iteration: α(S·V) and α(D·V) for a random 10-NN graph (about 20 entries
// per row once symmetric) and V of 20,000×50, through S's tiles.
func BenchmarkGraphTermGrad20000x50(b *testing.B) { benchGraphGrad(b, false) }

// BenchmarkGraphTermGradRows20000x50 is the same with every row listed,
// which takes the row-by-row CSR loop (the online sweeps' path): the
// tiles' gain is the ratio of the two.
func BenchmarkGraphTermGradRows20000x50(b *testing.B) { benchGraphGrad(b, true) }

func benchGraphGrad(b *testing.B, listRows bool) {
	const n, k = 20000, 50
	v := uniformRows(n, k)
	t := &GraphTerm{Weight: 100, S: randomGraph(n, 10)}
	neg, pos := mat.NewDense(n, k, nil), mat.NewDense(n, k, nil)
	var rows []int
	if listRows {
		rows = make([]int, n)
		for i := range rows {
			rows[i] = i
		}
	}
	t.AddVGradRows(neg, pos, v, rows)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		t.AddVGradRows(neg, pos, v, rows)
	}
}
