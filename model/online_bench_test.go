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
// ("partial/refit", DESIGN.md §3 asks for ≤ 0.05) and the objective ratio
// of the partial update to the refit ("objective-ratio", ≤ 1.01).
func BenchmarkOnlinePartialVsRefit1198x64(b *testing.B) {
	train, _, _, _, _ := digitsSplit(b, 10)
	n, d := train.Dims()
	old := n - n/100
	var partial, refit time.Duration
	var ratio float64
	for range b.N {
		o := &Online{Rank: 20, Graph: graph.KNN{K: 5}, InitSize: old, InitIter: 1000}
		if _, err := o.PartialFit(DenseRows(mat.DenseCopyOf(train.Slice(0, old, 0, d)))); err != nil {
			b.Fatal(err)
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
