package stages

import (
	"math"
	"testing"
)

// runDigitsBatch is runDigits with batches of n records.
func runDigitsBatch(t *testing.T, l *Learner, n int) (Counters, map[string]string) {
	t.Helper()
	recs, _ := digitsStream(0.1, 100)
	pred := map[string]string{}
	for _, b := range batches(recs, n) {
		st, err := l.Learn(b)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range st.Predictions {
			pred[p.ID] = p.Label
		}
	}
	return l.Counters(), pred
}

// TestMetricGraphOwn checks the graph SpreadMetric spreads over against
// the samples' own: searched under the samples themselves (no Fisher
// block), it joins the same nodes as the model's k-NN graph of the digits
// stream, with the same weights up to rounding (spreadWeights reads the
// graph's stored distances, metricGraph the rows), the two ends' lists
// averaged alike (spreadWeighting, codeGraph.weights).
func TestMetricGraphOwn(t *testing.T) {
	l := newDigitsLearner(0)
	runDigitsBatch(t, l, 100)
	g := l.Model.KNN()
	live := g.IDs()
	x0, _, _ := l.Model.Row(live[0])
	var mg metricGraph
	mg.x = reuseDense(nil, g.Slots(), len(x0))
	for _, i := range live {
		x, _, _ := l.Model.Row(i)
		copy(mg.x.RawRowView(i), x)
	}
	mg.z = mg.x
	const p = 20
	got := mg.graph(g, live, 5, p)
	want := spreadWeights(g, l.spreadWeighting(), p)
	edges := 0
	for _, i := range live {
		gi, gv := got.Row(i)
		wi, wv := want.Row(i)
		if len(gi) != len(wi) {
			t.Fatalf("node %d: %d neighbours %v, want %v", i, len(gi), gi, wi)
		}
		for q := range gi {
			if gi[q] != wi[q] || math.Abs(gv[q]-wv[q]) > 1e-12 {
				t.Fatalf("node %d: edge %d (%d, %v), want (%d, %v)", i, q, gi[q], gv[q], wi[q], wv[q])
			}
		}
		edges += len(gi)
	}
	if edges < 5*len(live) {
		t.Fatalf("%d edges over %d nodes, want at least k = 5 per node", edges, len(live))
	}
}

// TestSpreadMetric checks that SpreadMetric changes the graph the labels
// spread over, and so predictions, on the digits stream.
func TestSpreadMetric(t *testing.T) {
	def, pd := runDigitsBatch(t, newDigitsLearner(0), 100)
	l := newDigitsLearner(0)
	l.SpreadMetric = 1
	one, p1 := runDigitsBatch(t, l, 100)
	differ := 0
	for id, p := range pd {
		if p1[id] != p {
			differ++
		}
	}
	t.Logf("default %d/%d right, SpreadMetric 1: %d/%d, %d predictions differ", def.Correct, def.Labeled, one.Correct, one.Labeled, differ)
	if differ == 0 {
		t.Error("SpreadMetric 1: every prediction is the default's, want the learned metric's graph to change some")
	}
}
