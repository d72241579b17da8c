package stages

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/record"
)

// The tests of the chain's stages one at a time: featurize (RowsOf),
// identify (Window.Identify), the window (track, Lookup, Class), and the
// factorization step behind its seam (Factorizer).

// TestRowsOfFixesDimension checks that the first batch fixes the stream's
// dimension and that every sample of a later batch of another dimension is
// rejected, naming the sample and both dimensions.
func TestRowsOfFixesDimension(t *testing.T) {
	var fz Featurize
	first := NewFeatures(denseBatch(0, [][]float64{{1, 2, 3}, {4, 5, 6}}, []string{"a", "b"}, []string{"", "1"}))
	x, keep, bad := fz.RowsOf(first)
	if fz.Dim() != 3 || len(bad) != 0 || !slices.Equal(keep, []int{0, 1}) {
		t.Fatalf("first batch: dim %d, keep %v, rejects %v; want 3, [0 1], none", fz.Dim(), keep, bad)
	}
	if _, n := x.Dims(); n != 2 {
		t.Fatalf("first batch: %d rows, want 2", n)
	}
	second := NewFeatures(denseBatch(2, [][]float64{{1, 2}, {3, 4}}, []string{"c", "d"}, []string{"", ""}))
	x, keep, bad = fz.RowsOf(second)
	if x != nil || keep != nil || len(bad) != 2 {
		t.Fatalf("second batch: rows %v, keep %v, %d rejects; want none, none, 2", x, keep, len(bad))
	}
	for i, r := range bad {
		if r.Offset != int64(2+i) || !strings.Contains(r.Reason.Error(), "2 features, the stream has 3") {
			t.Errorf("reject %d: offset %d, %v; want offset %d and the two dimensions", i, r.Offset, r.Reason, 2+i)
		}
	}
}

// TestIdentify checks the identify stage on a window holding "a": a sample
// with a live id, or an id repeated in the batch, is a duplicate whose label
// becomes late; the other samples keep their rows, in order, and the
// batch's label-only records follow the duplicates' labels.
func TestIdentify(t *testing.T) {
	w := Window{nodes: []node{{live: true, id: "a", class: -1}}, byID: map[string]int{"a": 0}}
	b := denseBatch(10, [][]float64{{1}, {2}, {3}, {4}, {5}}, []string{"a", "c", "c", "", ""}, []string{"x", "", "y", "", "z"})
	b.LateLabels = []record.LateLabel{{Offset: 15, ID: "q", Label: "w"}}
	f := NewFeatures(b)
	var fz Featurize
	x, keep, _ := fz.RowsOf(f)
	id := w.Identify(f, x, keep)
	if !slices.Equal(id.Duplicates, []int64{10, 12}) {
		t.Errorf("duplicates %v, want [10 12]", id.Duplicates)
	}
	wantLate := []record.LateLabel{{Offset: 10, ID: "a", Label: "x"}, {Offset: 12, ID: "c", Label: "y"}, {Offset: 15, ID: "q", Label: "w"}}
	if !slices.Equal(id.Late, wantLate) || id.LateLabels != 1 {
		t.Errorf("late %v (%d label-only), want %v (1)", id.Late, id.LateLabels, wantLate)
	}
	if !slices.Equal(id.IDs, []string{"c", "", ""}) || !slices.Equal(id.Offsets, []int64{11, 13, 14}) ||
		!slices.Equal(id.Labels, []string{"", "", "z"}) || !slices.Equal(id.Labeled, []bool{false, false, true}) {
		t.Errorf("new samples %v at %v labeled %v %v; want [c  ] at [11 13 14], labels [  z]", id.IDs, id.Offsets, id.Labels, id.Labeled)
	}
	rows := model.Rows(id.X).(*mat.Dense)
	if got := mat.Col(nil, 0, rows); !slices.Equal(got, []float64{2, 4, 5}) {
		t.Errorf("rows of the new samples %v, want [2 4 5]", got)
	}
	if _, ok := w.Lookup("c"); ok {
		t.Error("Identify added c to the window; only the insert stage may")
	}
}

// recorder is a Factorizer that runs the step in process and records what
// the chain asked of it.
type recorder struct {
	m      *model.Online
	rows   []int // rows per PartialFit
	labels int   // SetLabel calls
	fail   error // returned by PartialFit when set
	drop   bool  // return one node fewer than rows
}

func (r *recorder) PartialFit(x model.Data) ([]int, error) {
	if r.fail != nil {
		return nil, r.fail
	}
	_, n := x.Dims()
	r.rows = append(r.rows, n)
	ids, err := r.m.PartialFit(x)
	if r.drop && len(ids) > 0 {
		ids = ids[:len(ids)-1]
	}
	return ids, err
}

func (r *recorder) SetLabel(n, c int) error {
	r.labels++
	return r.m.SetLabel(n, c)
}

// TestFactorizerSeam runs the digits stream twice, once with the model's
// own step and once behind a Factorizer that forwards to another model of
// the same configuration: the predictions must be the same, every new
// sample must go through the Factorizer once, and every label learned on a
// node through its SetLabel. The window must hold what the graph holds.
func TestFactorizerSeam(t *testing.T) {
	recs, _ := digitsStream(0.1, 100)
	recs = recs[:600]
	const window = 200
	a := newDigitsLearner(window)
	b := newDigitsLearner(window)
	rec := &recorder{m: b.Model}
	b.Factorizer = rec
	var preds int
	for _, bt := range batches(recs, 25) {
		pa, err := a.Learn(bt)
		if err != nil {
			t.Fatal(err)
		}
		pb, err := b.Learn(bt)
		if err != nil {
			t.Fatal(err)
		}
		if len(pa.Predictions) != len(pb.Predictions) {
			t.Fatalf("%d and %d predictions", len(pa.Predictions), len(pb.Predictions))
		}
		for i := range pa.Predictions {
			p, q := pa.Predictions[i], pb.Predictions[i]
			if p.ID != q.ID || p.Node != q.Node || p.Label != q.Label {
				t.Fatalf("prediction %d: %s→%q (node %d) and %s→%q (node %d)", preds+i, p.ID, p.Label, p.Node, q.ID, q.Label, q.Node)
			}
		}
		preds += len(pa.Predictions)
	}
	sum := 0
	for _, n := range rec.rows {
		sum += n
	}
	c := b.Counters()
	if int64(sum) != c.Samples || sum != preds {
		t.Errorf("the Factorizer saw %d rows; %d samples, %d predictions", sum, c.Samples, preds)
	}
	if rec.labels == 0 || int64(rec.labels) > c.Labeled+c.Early {
		t.Errorf("%d SetLabel calls for %d labels scored and %d early", rec.labels, c.Labeled, c.Early)
	}
	if got := b.Window.Len(); got != window {
		t.Errorf("the window holds %d live nodes, the graph's window is %d", got, window)
	}
	// The last sample is live; the first left the window.
	last := recs[len(recs)-1].id
	if recs[len(recs)-1].x == nil {
		last = ""
		for i := len(recs) - 1; last == ""; i-- {
			if recs[i].x != nil {
				last = recs[i].id
			}
		}
	}
	if n, ok := b.Window.Lookup(last); !ok || !b.Model.KNN().Live(n) {
		t.Errorf("the last sample %s: node %d, in the window %v", last, n, ok)
	}
	if _, ok := b.Window.Lookup(recs[0].id); ok {
		t.Errorf("the first sample %s is still in the window", recs[0].id)
	}
	if b.Window.Class(-1) != -1 || b.Window.Class(1<<20) != -1 {
		t.Error("Class of a node outside the window is not −1")
	}
}

// TestFactorizerErrors checks that a failing step stops the chain with its
// error, and that a step that loses a sample is an error, not a panic.
func TestFactorizerErrors(t *testing.T) {
	recs, _ := digitsStream(0, 0)
	bt := batches(recs[:40], 40)[0]
	boom := errors.New("owner unreachable")
	l := &Learner{Model: &model.Online{Rank: 5, Graph: graph.KNN{K: 3}, Src: rand.NewPCG(1, 1)}}
	l.Factorizer = &recorder{m: l.Model, fail: boom}
	if _, err := l.Learn(bt); !errors.Is(err, boom) {
		t.Errorf("Learn with a failing step: %v, want %v", err, boom)
	}
	l = &Learner{Model: &model.Online{Rank: 5, Graph: graph.KNN{K: 3}, Src: rand.NewPCG(1, 1)}}
	l.Factorizer = &recorder{m: l.Model, drop: true}
	if _, err := l.Learn(bt); err == nil || !strings.Contains(err.Error(), "39 nodes for 40 samples") {
		t.Errorf("Learn with a step that loses a sample: %v, want an error naming 39 nodes for 40 samples", err)
	}
}

// TestScorer checks the prequential scorer: a prediction made before any
// label is not scored, a missing one counts as wrong, and the per-class
// scores follow the confusion matrix.
func TestScorer(t *testing.T) {
	var s Scorer
	if !math.IsNaN(s.Counters().Accuracy()) || !math.IsNaN(s.Scores().BalancedAccuracy) {
		t.Errorf("an empty scorer: accuracy %v, balanced %v; want NaN", s.Counters().Accuracy(), s.Scores().BalancedAccuracy)
	}
	s.Score(BeforeLabels, 0)
	s.Score(0, 0)
	s.Score(0, 0)
	s.Score(NoPrediction, 1)
	s.Score(1, 1)
	c := s.Counters()
	if c.Early != 1 || c.Labeled != 4 || c.Correct != 3 || c.Unpredicted != 1 {
		t.Fatalf("counters %+v; want early 1, labeled 4, correct 3, unpredicted 1", c)
	}
	// Class 0: 2 of 2 right; class 1: 1 of 2 (the missing one wrong).
	if got := s.Scores().BalancedAccuracy; math.Abs(got-0.75) > 1e-12 {
		t.Errorf("balanced accuracy %v, want 0.75", got)
	}
}
