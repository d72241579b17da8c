package stages

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/sources"
)

// TestLinearLearns fits the linear model on two classes of sparse rows that
// share noise features: the mean log-loss falls pass after pass, the
// probabilities sum to one, and the training rows end up classified right.
func TestLinearLearns(t *testing.T) {
	const n, d = 200, 50
	rng := rand.New(rand.NewPCG(1, 2))
	ind := make([][]int, n)
	val := make([][]float64, n)
	y := make([]int, n)
	for i := range n {
		y[i] = i % 2
		set := map[int]bool{}
		for range 3 { // class features: 0–9 or 10–19
			set[10*y[i]+rng.IntN(10)] = true
		}
		for range 5 { // noise: 20–49
			set[20+rng.IntN(30)] = true
		}
		for j := range set {
			ind[i] = append(ind[i], j)
		}
		slices.Sort(ind[i])
		for range ind[i] {
			val[i] = append(val[i], 0.5+rng.Float64())
		}
	}
	var m linear
	if !m.fit(2, d) {
		t.Fatal("fit refused 2×50 weights")
	}
	if m.probs(nil, ind[0], val[0]) != nil {
		t.Fatal("a model that learned nothing predicts")
	}
	nodes := make([]int, n)
	for i := range nodes {
		nodes[i] = i
	}
	row := func(i int) ([]float64, []int, []float64) { return nil, ind[i], val[i] }
	loss := func() (l float64, right int) {
		for i := range n {
			p := m.probs(nil, ind[i], val[i])
			if s := p[0] + p[1]; math.Abs(s-1) > 1e-12 {
				t.Fatalf("probabilities sum to %v", s)
			}
			l -= math.Log(p[y[i]])
			if p[y[i]] > 0.5 {
				right++
			}
		}
		return l / n, right
	}
	prev := math.Inf(1)
	for pass := range 5 {
		m.pass(nodes, y, row)
		l, right := loss()
		if l >= prev {
			t.Errorf("pass %d: mean log-loss %.4f, not below %.4f", pass, l, prev)
		}
		prev = l
		if pass == 4 && right < n*95/100 {
			t.Errorf("after 5 passes %d of %d training rows right, want ≥ 95%%", right, n)
		}
	}
	// Too many weights: the model stays off.
	var big linear
	if big.fit(3, linearMaxWeights/2) || big.probs(nil, ind[0], val[0]) != nil {
		t.Error("a model above linearMaxWeights was used")
	}
}

// TestHedgeFollowsTheBetter checks that the weights move to the component
// that makes fewer mistakes, and back.
func TestHedgeFollowsTheBetter(t *testing.T) {
	var h hedge
	if g, l := h.weights(); g != 0.5 || l != 0.5 {
		t.Fatalf("initial weights %v %v, want equal", g, l)
	}
	for range 20 {
		h.score(1, 0, 0) // the linear model right, the graph wrong
	}
	if _, l := h.weights(); l < 0.99 {
		t.Errorf("linear weight %.3f after 20 samples it alone got right, want ≥ 0.99", l)
	}
	for range 60 {
		h.score(0, -1, 0) // the graph right, the linear model silent
	}
	if g, _ := h.weights(); g < 0.99 {
		t.Errorf("graph weight %.3f after 60 samples it alone got right, want ≥ 0.99", g)
	}
}

// TestLearnerTextLinearRoundTrip streams documents whose topics share most
// of their words, so that the linear component takes part, and checks that
// a Learner restored from a mid-stream state predicts exactly as the
// original.
func TestLearnerTextLinearRoundTrip(t *testing.T) {
	topics := [][]string{
		{"goal", "match", "team", "score", "league", "coach", "player"},
		{"market", "stock", "price", "bank", "trade", "profit", "investor"},
	}
	common := []string{"report", "week", "people", "city", "year", "news", "today", "local"}
	rnd := rand.New(rand.NewPCG(3, 3))
	var bs []*sources.Batch
	var off int64
	for range 14 {
		b := &sources.Batch{Form: sources.FormText}
		for i := range 10 {
			c := rnd.IntN(2)
			var w []string
			for range 2 {
				w = append(w, topics[c][rnd.IntN(len(topics[c]))])
			}
			for range 6 {
				w = append(w, common[rnd.IntN(len(common))])
			}
			b.Text = append(b.Text, strings.Join(w, " "))
			b.IDs = append(b.IDs, "")
			b.Labels = append(b.Labels, []string{"sport", "finance"}[c])
			b.Labeled = append(b.Labeled, i < 2)
			b.Offsets = append(b.Offsets, off)
			off++
		}
		bs = append(bs, b)
	}
	newLearner := func() *Learner {
		return &Learner{Model: &model.Online{Rank: 4, Graph: graph.KNN{K: 5, Metric: graph.Cosine}, InitSize: 20, Src: rand.NewPCG(1, 1)}}
	}
	a := newLearner()
	for _, b := range bs[:7] {
		if _, err := a.Learn(b); err != nil {
			t.Fatal(err)
		}
	}
	s, err := a.State()
	if err != nil {
		t.Fatal(err)
	}
	if s.Linear == nil || s.Linear.Steps == 0 || len(s.PredGraph) != len(s.PredIDs) {
		t.Fatalf("state without the linear model: %+v", s.Linear)
	}
	r := newLearner()
	if err := r.Restore(s); err != nil {
		t.Fatal(err)
	}
	learnBoth(t, a, r, bs[7:], func(p, q Prediction) bool { return p.Label == q.Label && p.Score == q.Score })
	if a.Counters() != r.Counters() || a.hd != r.hd {
		t.Fatalf("counters differ: %+v vs %+v", a.Counters(), r.Counters())
	}
	if acc := a.Counters().Accuracy(); acc < 0.8 {
		t.Errorf("accuracy %.3f, want ≥ 0.8 on two topics", acc)
	}
}
