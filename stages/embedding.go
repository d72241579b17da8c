package stages

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/classify"
)

// maxEmbeddingCodes bounds the labeled codes Embedding scores: the most
// recent ones, so that its O(n²·K) stays below a second at K = 40.
const maxEmbeddingCodes = 5000

// Embedding scores the codes of the window's labeled samples (at most the
// 5,000 most recent) against their labels, for users who take the codes
// downstream: their leave-one-out 1-NN accuracy and the NMI of a k-means
// clustering (classify.EmbeddingLOO). It is NaNs before the model's first
// fit or with fewer than two labeled samples. It costs O(n²·K) for n
// labeled samples; call it for a report, not per batch.
func (l *Learner) Embedding() classify.Embedding {
	none := classify.Embedding{NN1: math.NaN(), NMI: math.NaN()}
	if l.Model == nil || !l.Model.Started() {
		return none
	}
	var lab []int
	for n, nd := range l.nodes {
		if nd.live && nd.class >= 0 {
			lab = append(lab, n)
		}
	}
	if len(lab) < 2 {
		return none
	}
	slices.SortFunc(lab, func(a, b int) int { return l.nodes[b].seq - l.nodes[a].seq })
	lab = lab[:min(len(lab), maxEmbeddingCodes)]
	v := l.classCodes(l.Model.Codes())
	_, k := v.Dims()
	x := mat.NewDense(len(lab), k, nil)
	y := make([]int, len(lab))
	for r, n := range lab {
		copy(x.RawRowView(r), v.RawRowView(n))
		y[r] = l.nodes[n].class
	}
	return classify.EmbeddingLOO(x, y)
}
