package stages

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/record"
)

// noFeatures returns the reject of a record without features at off.
func noFeatures(off int64, id string) record.Reject {
	return record.Reject{Offset: off, ID: id, Reason: &record.Error{Offset: off, ID: id, Err: record.NoFeatures("empty document")}}
}

// TestFeaturelessPredicted: a document stream's records without features
// (rejected) get an arrival prediction from the shares of the labels
// before them, not after, in input order, with node −1; their late labels
// score them without moving the hedge's weights; one before any label is
// not scored; a reject of another kind gets none.
func TestFeaturelessPredicted(t *testing.T) {
	topics := [][]string{{"goal", "match", "team", "score", "league"}, {"market", "stock", "price", "bank", "trade"}}
	rnd := rand.New(rand.NewPCG(4, 4))
	var off int64
	doc := func(b *record.Batch, c int, label string) {
		var w []string
		for range 6 {
			w = append(w, topics[c][rnd.IntN(len(topics[c]))])
		}
		b.Text = append(b.Text, strings.Join(w, " "))
		b.IDs = append(b.IDs, "")
		b.Labels = append(b.Labels, label)
		b.Labeled = append(b.Labeled, label != "")
		b.Offsets = append(b.Offsets, off)
		off++
	}
	newLearner := func() *Learner {
		return &Learner{Model: &model.Online{Rank: 2, Graph: graph.KNN{K: 3, Metric: graph.Cosine}, InitSize: 8, Src: rand.NewPCG(1, 1)}}
	}
	l := newLearner()
	// Batch 1: a record without features before any label, then twelve
	// documents, the finance ones labeled.
	b := &record.Batch{Form: record.FormText, Rejects: []record.Reject{noFeatures(0, "e0")}}
	off = 1
	for i := range 12 {
		c := i % 2
		doc(b, c, map[bool]string{true: "finance", false: ""}[c == 1])
	}
	st, err := l.Learn(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Featureless) != 1 || st.Featureless[0].ID != "e0" || st.Featureless[0].Label != "" || st.Featureless[0].Node != -1 {
		t.Fatalf("batch 1's featureless predictions %+v, want e0 without a label (no label known), node -1", st.Featureless)
	}
	// Batch 2: e1 (with the id the sources give a record without one: its
	// offset) after the finance labels, five labeled sport documents, e2, a
	// reject of another kind, then the late labels of e0 and e1.
	b = &record.Batch{Form: record.FormText}
	b.Rejects = append(b.Rejects, noFeatures(off, fmt.Sprint(off)))
	e1 := off
	off++
	for range 5 {
		doc(b, 0, "sport")
	}
	b.Rejects = append(b.Rejects, noFeatures(off, "e2"), record.Rejectf(off+1, "bad", "negative value"))
	off += 2
	b.LateLabels = []record.LateLabel{{Offset: off, ID: "e0", Label: "sport"}, {Offset: off + 1, ID: "13", Label: "finance"}}
	off += 2
	before := l.Counters()
	if st, err = l.Learn(b); err != nil {
		t.Fatal(err)
	}
	if e1 != 13 {
		t.Fatalf("e1 at %d, the late label names 13", e1)
	}
	f := st.Featureless
	if len(f) != 2 || f[0].ID != "13" || f[1].ID != "e2" || f[0].Node != -1 || f[1].Node != -1 || f[0].Code != nil {
		t.Fatalf("batch 2's featureless predictions %+v, want 13 and e2, node -1, no code", f)
	}
	// e1 saw only finance labels: finance with all of the shares; e2 saw
	// five sport labels after them: sport.
	if f[0].Label != "finance" || f[0].Score != 1 || f[1].Label != "sport" || !(f[1].Score > 0.5 && f[1].Score < 1) {
		t.Errorf("predictions %s (%.3f), %s (%.3f); want finance (1), sport (in (0.5, 1))", f[0].Label, f[0].Score, f[1].Label, f[1].Score)
	}
	got := l.Counters()
	// e0 was predicted before any label: not scored. e1 is scored, right.
	if d := got.Labeled - before.Labeled; d != 6 {
		t.Errorf("labeled went up by %d, want 6 (5 sport documents and e1, not e0)", d)
	}
	if d := got.Rejected - before.Rejected; d != 3 {
		t.Errorf("rejected went up by %d, want 3 (still rejects)", d)
	}
	// e2's label in a batch of its own scores it without moving the
	// hedge's weights, in the Learner and in one restored from its state.
	s, err := l.State()
	if err != nil {
		t.Fatal(err)
	}
	restored := newLearner()
	if err := restored.Restore(s); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(restored.cp.count, l.cp.count) || restored.cp.hits != l.cp.hits || len(l.cp.count) != 2 {
		t.Errorf("restored class prior %+v, want %+v (two classes)", restored.cp, l.cp)
	}
	for _, l := range []*Learner{l, restored} {
		hd := l.hd
		before = l.Counters()
		if _, err = l.Learn(&record.Batch{Form: record.FormText, LateLabels: []record.LateLabel{{Offset: off, ID: "e2", Label: "sport"}}}); err != nil {
			t.Fatal(err)
		}
		if got := l.Counters(); got.Labeled != before.Labeled+1 || got.Correct != before.Correct+1 || l.hd != hd {
			t.Errorf("e2's label: labeled %d → %d, correct %d → %d, hedge %v → %v; want one more right, the hedge as it was",
				before.Labeled, got.Labeled, before.Correct, got.Correct, hd, l.hd)
		}
	}
}

// TestFeaturelessDense: where the predictor keeps no recent shares (dense
// rows), a record without features is answered by the class with the
// most labels in the window.
func TestFeaturelessDense(t *testing.T) {
	l := &Learner{Model: &model.Online{Rank: 2, Graph: graph.KNN{K: 3, Window: 100}}}
	r := rand.New(rand.NewPCG(5, 5))
	rows, _, _ := fourFeatures(0, 6, r)
	b := denseBatch(0, rows, []string{"a", "b", "c", "d", "e", "f"}, []string{"p", "q", "q", "", "p", "q"})
	for i := 2; i < 6; i++ {
		b.Offsets[i]++ // offsets 0, 1, 3, …, 6: z is record 2
	}
	b.Rejects = []record.Reject{noFeatures(2, "z")}
	st, err := l.Learn(b)
	if err != nil {
		t.Fatal(err)
	}
	// z comes between b's label and c's: p and q one each, p first.
	if len(st.Featureless) != 1 || st.Featureless[0].Label != "p" || st.Featureless[0].Score != 0.5 {
		t.Fatalf("featureless %+v, want z answered p with 0.5", st.Featureless)
	}
	st, err = l.Learn(&record.Batch{Form: record.FormDense, Rejects: []record.Reject{noFeatures(7, "y")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Featureless) != 1 || st.Featureless[0].Label != "q" || st.Featureless[0].Score != 0.6 {
		t.Fatalf("featureless %+v, want y answered q with 0.6", st.Featureless)
	}
}

// TestClassPrior: each expert is scored on a label before it is learned,
// its right answers decaying by hedgeDecay; the better one answers a
// record without features, the recent labels' class on a tie.
func TestClassPrior(t *testing.T) {
	var cp classPrior
	cp.learn(0, nil)             // nothing to score yet
	cp.learn(0, []float64{1, 0}) // both right
	cp.learn(1, []float64{1, 0}) // both wrong
	cp.learn(0, []float64{0, 1}) // the recent class wrong, the most frequent right
	d := hedgeDecay
	if want := [2]float64{d * d, d*d + 1}; math.Abs(cp.hits[0]-want[0]) > 1e-12 || math.Abs(cp.hits[1]-want[1]) > 1e-12 || !slices.Equal(cp.count, []float64{3, 1}) {
		t.Fatalf("hits %v, counts %v; want %v, [3 1]", cp.hits, cp.count, want)
	}
	l := &Learner{classes: []string{"a", "b"}, rc: recent{share: []float64{0.2, 0.8}}, cp: cp}
	if p := l.classShares(noFeatures(9, "x")); p.Label != "a" || p.Score != 0.75 {
		t.Errorf("the most frequent class answering: %s (%v), want a (0.75)", p.Label, p.Score)
	}
	l.cp.hits = [2]float64{1, 1}
	if p := l.classShares(noFeatures(9, "x")); p.Label != "b" || p.Score != 0.8 {
		t.Errorf("on a tie: %s (%v), want the recent labels' b (0.8)", p.Label, p.Score)
	}
}
