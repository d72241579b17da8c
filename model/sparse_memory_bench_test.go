package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// zipfDocs returns n documents over a vocabulary of d terms, each with
// about nnz distinct terms drawn from a Zipf law (s = 1.1), as l2-normalized
// TF-IDF-like rows: the shape of a corpus, not its content.
func zipfDocs(n, d, nnz int) *sparse.CSR {
	rng := rand.New(rand.NewPCG(7, 7))
	z := rand.NewZipf(rng, 1.1, 1, uint64(d-1))
	m := sparse.Zeros(0, d)
	set := map[int]bool{}
	var ind []int
	var val []float64
	for range n {
		clear(set)
		for range nnz {
			set[int(z.Uint64())] = true
		}
		ind = ind[:0]
		for j := range set {
			ind = append(ind, j)
		}
		slices.Sort(ind)
		val = val[:0]
		s := 0.0
		for _, j := range ind {
			v := (1 + rng.Float64()) * math.Log(float64(j+2)) // rarer terms weigh more, as IDF makes them
			val = append(val, v)
			s += v * v
		}
		for i := range val {
			val[i] /= math.Sqrt(s)
		}
		m.AppendRow(ind, val)
	}
	return m
}

// BenchmarkGNMFSparseMemory fits GNMF (cosine k-NN graph, k = 10, K = 20, 3
// iterations) on 10⁵ documents over a 10⁵-term vocabulary (about 50 terms
// each) and reports the largest heap in use, sampled every 10 ms, in MiB
// ("peak-MiB") and as a multiple of the sparse input's size ("peak/input"),
// beside what one dense n×D matrix would take ("dense-nxD-MiB", 76,294 MiB):
// the fit holds the sparse rows, the graph, V (n×K) and U (D×K), never a
// dense n×D or D×D matrix. The 10⁴-document case runs in seconds; the 10⁵
// one takes minutes and is skipped with -short.
func BenchmarkGNMFSparseMemory(b *testing.B) {
	const d, nnz = 100000, 50
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprintf("%dx%d", n, d), func(b *testing.B) {
			if n > 10000 && testing.Short() {
				b.Skip("long")
			}
			x := zipfDocs(n, d, nnz)
			input := float64(len(x.Val)*8 + len(x.Ind)*8 + len(x.Indptr)*8)
			for b.Loop() {
				var err error
				peak := peakHeap(func() {
					g := &GNMF{Common: Common{Rank: 20, MaxIter: 3}, Graph: graph.KNN{K: 10, Metric: graph.Cosine}}
					err = g.Fit(SparseRows(x), nil)
				})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
				b.ReportMetric(float64(peak)/input, "peak/input")
				b.ReportMetric(float64(n)*float64(d)*8/(1<<20), "dense-nxD-MiB")
			}
		})
	}
}
