package model

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/graph"
)

// DefaultBatchMetric is the metric a batch fit's k-NN graphs start from
// (ChooseMetric's start in fit and eval): the cosine. On held-out splits of
// five image sets (10 labels a class) the cosine graphs' codes lifted
// eval's classifier on Fashion-MNIST and MNIST and the codes' 1-NN on PIE's
// faces, and cost the digits 0.06 point (standard error 0.05) over 20
// splits (BENCHMARKS.md, "The batch graphs' metric"). The stream starts
// from the Euclidean distance instead (Online.ChooseMetric): there a
// cosine graph cost the digits' stream and MNIST's label-aware lead.
const DefaultBatchMetric = graph.Cosine

// ChooseMetric returns the metric a batch fit's k-NN graphs should search
// x's samples by (Common.Metric): start, unless its labeled samples
// (labels[i] ≥ 0; −1 unlabeled), classified leave-one-out among
// themselves, show the other metric (the Euclidean distance or the
// cosine) better by Online's metric test (metricLosesOn at metricGuardZ,
// both by the nearest labeled neighbour and by the vote of k; k ≤ 0 means
// 5). With fewer than 100 labeled samples (spanGuardMinLabels) it returns
// start; on sparse rows it returns graph.Euclidean, judging nothing
// (documents' TF-IDF rows have unit length, and the two metrics order
// their neighbours alike). Above 500 labeled samples (metricGuardLabels)
// it compares 500 of them evenly spaced in row order. It panics if labels
// does not have one entry per sample.
func ChooseMetric(x Data, labels []int, k int, start graph.Metric) graph.Metric {
	r, ok := Rows(x).(*mat.Dense)
	if !ok || r == nil {
		return graph.Euclidean
	}
	n, d := r.Dims()
	if len(labels) != n {
		panic(fmt.Sprintf("model: ChooseMetric: %d labels for %d samples", len(labels), n))
	}
	var ids []int
	for i, c := range labels {
		if c >= 0 {
			ids = append(ids, i)
		}
	}
	if len(ids) < spanGuardMinLabels {
		return start
	}
	if m := metricGuardLabels; len(ids) > m {
		kept := make([]int, m)
		for p := range kept {
			kept[p] = ids[p*len(ids)/m]
		}
		ids = kept
	}
	sub := mat.NewDense(len(ids), d, nil)
	ls := make([]int, len(ids))
	for p, i := range ids {
		copy(sub.RawRowView(p), r.RawRowView(i))
		ls[p] = labels[i]
	}
	if k <= 0 {
		k = 5
	}
	cosine := start == graph.Cosine
	if !metricLosesOn(sub, ls, cosine, k) {
		return start
	}
	if cosine {
		return graph.Euclidean
	}
	return graph.Cosine
}
