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

// normStream returns 300 digits as batches of 10 (ids d0…, every fifth
// labeled, a zero row at offset 7), with a record of huge values (id
// "huge", labeled) as the third record of the 16th batch, an eleventh,
// when huge is nonzero; offsets run on in input order.
func normStream(huge float64) []*record.Batch {
	x, y := digitsRows()
	var rows [][]float64
	var ids, labels []string
	for i := range 300 {
		row := slices.Clone(x[i])
		if i == 7 {
			clear(row)
		}
		if huge != 0 && i == 152 {
			big := make([]float64, len(row))
			for j := range big {
				big[j] = huge
			}
			rows, ids, labels = append(rows, big), append(ids, "huge"), append(labels, "3")
		}
		lab := ""
		if i%5 == 0 {
			lab = y[i]
		}
		rows, ids, labels = append(rows, row), append(ids, fmt.Sprint("d", i)), append(labels, lab)
	}
	var bs []*record.Batch
	for lo := 0; lo < len(rows); {
		hi := min(lo+10, len(rows))
		if huge != 0 && lo == 150 {
			hi++ // the same batches as without it, this one a record longer
		}
		bs = append(bs, denseBatch(int64(lo), rows[lo:hi], ids[lo:hi], labels[lo:hi]))
		lo = hi
	}
	return bs
}

func normLearner(ratio float64) *Learner {
	l := &Learner{Model: &model.Online{Rank: 8, Graph: graph.KNN{K: 5, Window: 200}, Src: rand.NewPCG(1, 1)}}
	l.Featurize.MaxNormRatio = ratio
	return l
}

// TestMaxNormRatio streams 300 digits with one record of 10³⁰ in every
// pixel: it is rejected, named, before the model sees it, so every other
// sample's prediction and code are those of the same stream without it (a
// zero row among them is not refused); with the bound off it is learned
// and the codes change. A Learner restored from a checkpoint refuses such
// a record too, even in a batch of its own (the window's norms are
// restored with it).
func TestMaxNormRatio(t *testing.T) {
	run := func(l *Learner, bs []*record.Batch) (map[string]Prediction, []record.Reject) {
		t.Helper()
		preds := map[string]Prediction{}
		var rej []record.Reject
		for _, b := range bs {
			st, err := l.Learn(b)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range st.Predictions {
				preds[p.ID] = p
			}
			rej = append(rej, st.Rejects...)
		}
		return preds, rej
	}
	clean, rej := run(normLearner(0), normStream(0))
	if len(rej) != 0 {
		t.Fatalf("clean stream: rejects %v", rej)
	}
	guarded := normLearner(0)
	got, rej := run(guarded, normStream(1e30))
	if len(rej) != 1 || rej[0].ID != "huge" || rej[0].Offset != 152 ||
		!strings.Contains(rej[0].Reason.Error(), `record 152 (id "huge")`) || !strings.Contains(rej[0].Reason.Error(), "--max-norm-ratio") {
		t.Fatalf("rejects %v, want the huge record's, naming it and --max-norm-ratio", rej)
	}
	if c := guarded.Counters(); c.Rejected != 1 || c.Samples != 300 {
		t.Errorf("counters %+v, want 1 rejected, 300 samples", c)
	}
	for id, p := range clean {
		q, ok := got[id]
		if !ok || q.Label != p.Label || !slices.Equal(q.Code, p.Code) {
			t.Fatalf("%s: %+v with the huge record refused, %+v without it", id, q, p)
		}
	}
	open, rej := run(normLearner(-1), normStream(1e30))
	if len(rej) != 0 || len(open) != 301 {
		t.Fatalf("bound off: %d rejects, %d predictions; want 0 and 301", len(rej), len(open))
	}
	changed := 0
	for id, p := range clean {
		if !slices.Equal(open[id].Code, p.Code) {
			changed++
		}
	}
	if changed == 0 {
		t.Error("bound off: the huge record changed no code")
	}

	// A checkpoint's window keeps its norms: a batch of the huge record
	// alone has no other norm to compare with.
	st, err := guarded.State()
	if err != nil {
		t.Fatal(err)
	}
	restored := normLearner(0)
	if err := restored.Restore(st); err != nil {
		t.Fatal(err)
	}
	alone := denseBatch(301, [][]float64{slices.Repeat([]float64{1e30}, 64)}, []string{"huge2"}, []string{""})
	if s, err := restored.Learn(alone); err != nil || len(s.Rejects) != 1 || len(s.Predictions) != 0 {
		t.Fatalf("restored learner, a batch of the huge record alone: %v, %+v; want it rejected", err, s)
	}
}

// TestNegativeNeighbors checks that a Learner with negative Neighbors
// returns an error instead of panicking in PredictWalk (index out of range)
// or predicting nothing with PredictNearest.
func TestNegativeNeighbors(t *testing.T) {
	for _, p := range []Predictor{PredictWalk, PredictNearest, PredictPropagate} {
		l := normLearner(0)
		l.Predictor, l.Neighbors = p, -1
		for _, b := range normStream(0)[:15] {
			if _, err := l.Learn(b); err == nil || !strings.Contains(err.Error(), "Neighbors") {
				t.Fatalf("predictor %v, Neighbors -1: %v, want an error naming Neighbors", p, err)
			}
		}
	}
}

// TestMaxNormRatioText checks that documents are not bounded by
// MaxNormRatio (their TF-IDF rows have unit length): a ratio below 1,
// which would reject every dense row of typical norm, rejects no document
// and changes no prediction.
func TestMaxNormRatioText(t *testing.T) {
	run := func(ratio float64) []Prediction {
		l := newTopicLearner()
		l.Featurize.MaxNormRatio = ratio
		var preds []Prediction
		for _, b := range topicBatches(7, 30) {
			s, err := l.Learn(b)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Rejects) != 0 {
				t.Fatalf("MaxNormRatio %v: rejects %v", ratio, s.Rejects)
			}
			preds = append(preds, s.Predictions...)
		}
		return preds
	}
	def, low := run(0), run(0.5)
	if len(def) == 0 || len(low) != len(def) {
		t.Fatalf("%d predictions at MaxNormRatio 0.5, %d at the default", len(low), len(def))
	}
	for i := range def {
		if low[i].Label != def[i].Label || low[i].Score != def[i].Score && !(math.IsNaN(low[i].Score) && math.IsNaN(def[i].Score)) {
			t.Fatalf("offset %d: %+v at MaxNormRatio 0.5, %+v at the default", def[i].Offset, low[i], def[i])
		}
	}
}
