package stages

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/nmfstream/nmfstream/internal/testenv"
	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/graph"
)

// TestSearchBasisMNIST is issue 26's check on the MNIST stream, at the
// stream command's defaults (window 10,000, rank 40, steps of 100): the
// first 15,000 training images, a tenth of them labeled on arrival (a seeded
// draw), predicted prequentially with the labels spread over the graph
// searched in the span of the search basis (model.DefaultSearchBasis, the
// default SearchFit) must score at least 0.5 point above the same stream
// searched on the pixels, whose figure it also floors. Every sample after
// the first label is scored against its true class, as an outside scorer
// does (not only the labeled tenth the Learner's own counters score). It
// needs the MNIST files (scripts/fetch-data.sh) and NMFSTREAM_LONG=1 (two
// streams, about a minute).
func TestSearchBasisMNIST(t *testing.T) {
	testenv.SkipUnlessLong(t, "two MNIST streams of 15,000 images")
	batches := mnistBatches(t, 15000, 100)
	var truth []string
	var labeled []bool
	rnd := rand.New(rand.NewPCG(26, 26))
	for _, b := range batches {
		truth = append(truth, b.Labels...)
		for i := range b.Labeled {
			b.Labeled[i] = rnd.Float64() < 0.1
			if !b.Labeled[i] {
				b.Labels[i] = ""
			}
		}
		labeled = append(labeled, b.Labeled...)
	}
	// Scored after the first labeled sample, as bench/prequential scores.
	first := slices.Index(labeled, true) + 1
	run := func(searchBasis int) float64 {
		l := &Learner{Model: &model.Online{Rank: 40, Graph: graph.KNN{K: 5, Window: 10000}, SearchBasis: searchBasis, Src: rand.NewPCG(1, 1)}}
		var preds []string
		for _, b := range batches {
			st, err := l.Learn(cloneBatch(b))
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range st.Predictions {
				preds = append(preds, p.Label)
			}
		}
		if len(preds) != len(truth) {
			t.Fatalf("%d predictions for %d samples", len(preds), len(truth))
		}
		right := 0 // a missing prediction ("") is wrong
		for i := first; i < len(truth); i++ {
			if preds[i] == truth[i] {
				right++
			}
		}
		return float64(right) / float64(len(truth)-first)
	}
	raw, basis := run(0), run(model.DefaultSearchBasis)
	if raw < 0.90 || basis < raw+0.005 {
		t.Fatalf("every sample scored: search basis %.4f against pixels %.4f, want at least +0.005 over a floor of 0.90", basis, raw)
	}
}
