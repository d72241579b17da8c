package stages

import (
	"math/rand/v2"
	"testing"

	"github.com/nmfstream/nmfstream/internal/testenv"
	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/graph"
)

// TestSearchBasisMNIST is issue 26's check on the MNIST stream, at the
// stream command's defaults (window 10,000, rank 40, steps of 100): the
// first 15,000 training images, a tenth of them labeled on arrival (a seeded
// draw), predicted prequentially with the labels spread over the graph
// searched in the span of the search basis (model.DefaultSearchBasis)
// must score at least 0.5 point above the same stream searched on the
// pixels, whose figure it also floors. It needs the MNIST files
// (scripts/fetch-data.sh) and NMFSTREAM_LONG=1 (two streams, about a
// minute).
func TestSearchBasisMNIST(t *testing.T) {
	testenv.SkipUnlessLong(t, "two MNIST streams of 15,000 images")
	batches := mnistBatches(t, 15000, 100)
	rnd := rand.New(rand.NewPCG(26, 26))
	for _, b := range batches {
		for i := range b.Labeled {
			b.Labeled[i] = rnd.Float64() < 0.1
			if !b.Labeled[i] {
				b.Labels[i] = ""
			}
		}
	}
	run := func(searchBasis int) float64 {
		l := &Learner{Model: &model.Online{Rank: 40, Graph: graph.KNN{K: 5, Window: 10000}, SearchBasis: searchBasis, Src: rand.NewPCG(1, 1)}}
		for _, b := range batches {
			if _, err := l.Learn(cloneBatch(b)); err != nil {
				t.Fatal(err)
			}
		}
		return l.Counters().Accuracy()
	}
	raw, basis := run(0), run(model.DefaultSearchBasis)
	t.Logf("prequential accuracy over the labeled samples: pixels %.4f, search basis %.4f", raw, basis)
	if raw < 0.90 || basis < raw+0.005 {
		t.Fatalf("search basis %.4f against pixels %.4f: want at least +0.005 over a floor of 0.90", basis, raw)
	}
}
