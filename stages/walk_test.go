package stages

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/classify"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/pipeline"
)

// TestWalkerNearest checks the graph walk against a brute-force search on
// points whose codes are the points themselves, so that the graph links
// code-space neighbours: with ef at least the number of nodes the walk
// reaches every node of the (connected) graph and must return the exact
// nearest labeled nodes, under either metric; with a small ef it must still find most of them
// (measured: all 400 queries exact at ef 64, 355 at ef 16).
func TestWalkerNearest(t *testing.T) {
	const n, kk = 400, 3
	rng := rand.New(rand.NewPCG(7, 7))
	x := mat.NewDense(n, 2, nil)
	for i := range x.RawMatrix().Data {
		x.RawMatrix().Data[i] = rng.Float64()
	}
	g, err := graph.KNN{K: 6}.Dense(x)
	if err != nil {
		t.Fatal(err)
	}
	class := func(i int) int {
		if i%5 == 0 {
			return i % 3
		}
		return -1
	}
	brute := func(q int, metric classify.Metric) []int {
		var best []distItem
		w := &walker{metric: metric}
		if metric == classify.Cosine {
			w.qnorm = floats.Norm(x.RawRowView(q), 2)
		}
		for i := range n {
			if i == q || class(i) < 0 {
				continue
			}
			d := w.dist(x.RawRowView(q), x.RawRowView(i))
			best = append(best, distItem{d, i})
			for a := len(best) - 1; a > 0 && (best[a].d < best[a-1].d || best[a].d == best[a-1].d && best[a].id < best[a-1].id); a-- {
				best[a], best[a-1] = best[a-1], best[a]
			}
			if len(best) > kk {
				best = best[:kk]
			}
		}
		ids := make([]int, len(best))
		for a, b := range best {
			ids[a] = b.id
		}
		return ids
	}
	for _, tc := range []struct {
		ef      int
		metric  classify.Metric
		minHits float64 // share of queries whose result equals brute force
	}{{n, classify.Euclidean, 1}, {n, classify.Cosine, 1}, {64, classify.Euclidean, 0.97}, {16, classify.Euclidean, 0.85}} {
		w := &walker{ef: tc.ef, metric: tc.metric}
		hits := 0
		for q := range n {
			got := w.nearest(nil, g, x, q, kk, class)
			want := brute(q, tc.metric)
			same := len(got) == len(want)
			for a := 0; same && a < len(got); a++ {
				same = got[a].id == want[a]
			}
			if same {
				hits++
			} else if tc.ef >= n {
				t.Fatalf("ef %d, node %d: walk found %v, brute force %v", tc.ef, q, got, want)
			}
		}
		t.Logf("ef %d, metric %d: %d of %d queries exact", tc.ef, tc.metric, hits, n)
		if float64(hits) < tc.minHits*n {
			t.Errorf("ef %d: %d of %d queries exact, want ≥ %.0f%%", tc.ef, hits, n, 100*tc.minHits)
		}
	}
}

// TestPredictWalkAgrees streams the shuffled digits (all labeled, window
// 500) twice, predicting by PredictNearest and by PredictWalk: the model
// is the same (predictions do not feed back), so the two predictors must
// agree on nearly every sample.
func TestPredictWalkAgrees(t *testing.T) {
	recs, truth := digitsStream(1, 0)
	var preds [2][]string
	var acc [2]float64
	for v, p := range []Predictor{PredictNearest, PredictWalk} {
		l := newDigitsLearner(500)
		l.Predictor = p
		for _, b := range batches(recs, 10) {
			st, err := l.Learn(b)
			if err != nil {
				t.Fatal(err)
			}
			for _, pr := range st.Predictions {
				preds[v] = append(preds[v], pr.Label)
			}
		}
		acc[v] = l.Counters().Accuracy()
	}
	same := 0
	for i := range preds[0] {
		if preds[0][i] == preds[1][i] {
			same++
		}
	}
	agree := float64(same) / float64(len(preds[0]))
	t.Logf("agreement %.4f; prequential accuracy nearest %.4f, walk %.4f (%d samples)", agree, acc[0], acc[1], len(truth))
	if agree < 0.97 {
		t.Errorf("PredictWalk agrees with PredictNearest on %.4f of the samples, want ≥ 0.97", agree)
	}
}

// TestSplitSameStream replays the digits stream with the graph search, the
// walks and the first fit split over goroutines (pipeline.Split, as the
// command line does). With 2 and with 3 parts every prediction, score and
// code must be the same bit for bit (the search and walks give the serial
// result, the fit sums in fixed chunks); against the serial run, where
// the first fit sums in another order, the predictions must agree on
// 99%. Under -race it also checks that the parts share nothing they
// write.
func TestSplitSameStream(t *testing.T) {
	recs, _ := digitsStream(0.5, 20)
	var runs [3][]Prediction
	for r := range runs {
		l := newDigitsLearner(400)
		l.Predictor = PredictWalk
		l.Model.Graph.BlockSize = 64 // several blocks to split
		if r > 0 {
			l.Split = pipeline.Split(r + 1)
			l.Model.Split = pipeline.Split(r + 1)
		}
		for _, b := range batches(recs[:900], 50) {
			st, err := l.Learn(b)
			if err != nil {
				t.Fatal(err)
			}
			runs[r] = append(runs[r], st.Predictions...)
		}
	}
	if len(runs[0]) != len(runs[1]) || len(runs[1]) != len(runs[2]) || len(runs[0]) < 500 {
		t.Fatalf("%d, %d and %d predictions", len(runs[0]), len(runs[1]), len(runs[2]))
	}
	same := 0
	for i, want := range runs[1] {
		got := runs[2][i]
		if got.Label != want.Label || !sameFloat(got.Score, want.Score) || !slices.Equal(got.Code, want.Code) {
			t.Fatalf("prediction %d: 3 parts %+v, 2 parts %+v", i, got, want)
		}
		if want.Label == runs[0][i].Label {
			same++
		}
	}
	agree := float64(same) / float64(len(runs[0]))
	t.Logf("split and serial runs agree on %d of %d predictions", same, len(runs[0]))
	if agree < 0.99 {
		t.Errorf("split and serial runs agree on %.4f of the predictions, want ≥ 0.99", agree)
	}
}

// sameFloat reports whether a and b are equal or both NaN.
func sameFloat(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }
