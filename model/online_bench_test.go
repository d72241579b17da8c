package model

import (
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/graph"
)

// BenchmarkOnlinePartialVsRefit1198x64 fits the digits pool less 1% to
// convergence, adds the last 1% (12 samples) with one partial update, then
// refits the whole window from there (batch engine, warm-started, to the
// default tolerance or 1000 iterations). It reports both times, their ratio
// ("partial/refit", docs/DESIGN.md §3 asks for ≤ 0.05) and the objective ratio
// of the partial update to the refit ("objective-ratio", ≤ 1.01).
func BenchmarkOnlinePartialVsRefit1198x64(b *testing.B) {
	benchPartialVsRefit(b, &Online{Rank: 20, Graph: graph.KNN{K: 5}})
}

// BenchmarkOnlinePartialVsRefitSSKNMF1198x64 is the same for SSKNMF, the
// label-aware method that "--method auto" picks, with the pool's 10
// labels per class set before the first fit, and α = 0.1: at the default
// α = 1 its objective keeps falling for hundreds of iterations on the
// digits (see TestOnlineMethodsVersusBatch), so a refit has no optimum to
// compare with.
func BenchmarkOnlinePartialVsRefitSSKNMF1198x64(b *testing.B) {
	benchPartialVsRefit(b, &Online{Rank: 20, Method: methodSSKNMF, Alpha: 0.1, Graph: graph.KNN{K: 5}})
}

// benchPartialVsRefit runs the benchmark on copies of the configuration
// cfg (labels from digitsSplit's 10 per class, set on the graph before the
// first fit).
func benchPartialVsRefit(b *testing.B, cfg *Online) {
	train, _, y, _, _ := digitsSplit(b, 10)
	n, d := train.Dims()
	old := n - n/100
	var partial, refit time.Duration
	var ratio float64
	b.ReportAllocs()
	for range b.N {
		o := *cfg
		o.InitSize, o.InitIter = old, 1000
		// All but one sample of the first part, their labels, then the
		// last one, which runs the first fit with those labels.
		for _, part := range [][2]int{{0, old - 1}, {old - 1, old}} {
			ids, err := o.PartialFit(DenseRows(mat.DenseCopyOf(train.Slice(part[0], part[1], 0, d))))
			if err != nil {
				b.Fatal(err)
			}
			for p, id := range ids {
				if c := y[part[0]+p]; c >= 0 {
					if err := o.SetLabel(id, c); err != nil {
						b.Fatal(err)
					}
				}
			}
		}
		if !o.Started() {
			b.Fatal("no first fit")
		}
		x := DenseRows(mat.DenseCopyOf(train.Slice(old, n, 0, d)))
		start := time.Now()
		if _, err := o.PartialFit(x); err != nil {
			b.Fatal(err)
		}
		partial += time.Since(start)
		f := o.Objective()
		start = time.Now()
		res, err := o.Refit(1000)
		if err != nil {
			b.Fatal(err)
		}
		refit += time.Since(start)
		ratio = f / res.Objective
	}
	b.ReportMetric(partial.Seconds()/float64(b.N), "partial-s")
	b.ReportMetric(refit.Seconds()/float64(b.N), "refit-s")
	b.ReportMetric(partial.Seconds()/refit.Seconds(), "partial/refit")
	b.ReportMetric(ratio, "objective-ratio")
}
