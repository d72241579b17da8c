package stages

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/nmfstream/nmfstream/record"
)

// The label stage: it applies the labels of a batch in input order,
// interleaved with the predict stage so that every prediction is
// prequential, and scores each arrival prediction when its label is known
// (scores.go). It owns the arrival predictions waiting for their label
// (Learner.preds), the labels waiting for their sample (Learner.pending)
// and the classes' names; it writes a node's class through the
// Factorizer (SetLabel) and the window, and feeds each label learned to
// PredictGraph's experts. Its cost is O(1) per label beyond the
// Factorizer's SetLabel and the linear model's step (O(nnz·C)).

type pred struct {
	Class int // predicted class, −1 for none
	// Graph, Lin and Recent are PredictGraph's experts' classes (−1 for
	// none), scored to weigh them.
	Graph, Lin, Recent int
}

// Label applies a label that arrives without features (a late label, as in
// a label-only record), scoring the arrival prediction of id if it waits.
func (l *Learner) Label(id, label string) error {
	if l.Model == nil {
		return errNoModel
	}
	l.init()
	l.sc.c.LateLabels++
	return l.lateLabel(id, label)
}

func (l *Learner) lateLabel(id, label string) error {
	c := l.class(label)
	scored := false
	if p, ok := l.preds.take(id); ok {
		l.score(p, c)
		scored = true
	}
	if n, ok := l.Window.Lookup(id); ok {
		return l.setLabel(n, c)
	}
	if !scored {
		l.pending.put(id, label, l.horizon())
	}
	return nil
}

// noPrediction and beforeLabels stand for a missing prediction: made
// after a label was known (scored as wrong), or before any (not scored).
const (
	noPrediction = NoPrediction
	beforeLabels = BeforeLabels
)

// classOfPred returns p's predicted class, noPrediction, or beforeLabels
// if no label was known when p was made.
func (l *Learner) classOfPred(p *Prediction) int {
	switch {
	case p.Label != "":
		return l.classOf[p.Label]
	case p.early:
		return beforeLabels
	}
	return noPrediction
}

// predOf returns what is kept of the arrival prediction p until its label
// arrives.
func (l *Learner) predOf(p *Prediction) pred {
	return pred{Class: l.classOfPred(p), Graph: p.graph, Lin: p.lin, Recent: p.recent}
}

// score scores an arrival prediction p (its class a class, noPrediction,
// or beforeLabels) against the true class truth, and PredictGraph's
// experts with it.
func (l *Learner) score(p pred, truth int) {
	if p.Class != beforeLabels {
		l.hd.score([experts]int{p.Graph, p.Lin, p.Recent}, truth)
	}
	l.sc.Score(p.Class, truth)
}

func (l *Learner) setLabel(n, c int) error {
	if l.nodes[n].class == c {
		return nil
	}
	if err := l.factorizer().SetLabel(n, c); err != nil {
		return fmt.Errorf("stages: learner: %w", err)
	}
	l.Window.setClass(n, c)
	if l.linear() {
		d, ind, val := l.Model.Row(n)
		l.lin.step(d, ind, val, c)
		l.rc.learn(c)
	}
	l.sp.dirty = append(l.sp.dirty, n)
	return nil
}

// predictInOrder predicts the new nodes ids (the samples of b, in order)
// and learns b's labels in input order: a sample is predicted with every
// label that arrived before it (in earlier batches, or earlier in this
// one), and its own label, with it or waiting for it, is learned right
// after. The samples between two labels are predicted together. b.Late
// (the batch's label-only records and the labels of its duplicates) is
// applied by offset; predictInOrder sorts it.
func (l *Learner) predictInOrder(ids []int, b *Identified) ([]Prediction, error) {
	out := make([]Prediction, len(ids))
	for p, n := range ids {
		out[p] = Prediction{ID: b.IDs[p], Offset: b.Offsets[p], Node: n, Score: math.NaN(), graph: noPrediction, lin: noPrediction, recent: noPrediction}
	}
	late := b.Late
	slices.SortStableFunc(late, func(a, b record.LateLabel) int { return cmp.Compare(a.Offset, b.Offset) })
	l.sp.newBatch()
	lo, next := 0, 0 // out[lo:p] waits for its prediction; late[next:] for its turn
	for p := 0; p <= len(out); p++ {
		// Labels that arrived before sample p (all remaining ones at the end).
		var due []record.LateLabel
		for next < len(late) && (p == len(out) || late[next].Offset < out[p].Offset) {
			due = append(due, late[next])
			next++
		}
		var label string
		var labeled bool
		if p < len(out) {
			label, labeled = b.Labels[p], b.Labeled[p]
			if !labeled && out[p].ID != "" {
				label, labeled = l.pending.take(out[p].ID)
			}
		}
		// Predict the waiting samples before a label changes what is known.
		if lo < p && (len(due) > 0 || p == len(out)) {
			l.predict(ids[lo:p], out[lo:p])
			for q := lo; q < p; q++ {
				if out[q].ID != "" {
					l.preds.put(out[q].ID, l.predOf(&out[q]), l.horizon())
				}
			}
			lo = p
		}
		for _, ll := range due {
			if err := l.lateLabel(ll.ID, ll.Label); err != nil {
				return nil, err
			}
		}
		if p == len(out) || !labeled {
			continue
		}
		l.predict(ids[lo:p+1], out[lo:p+1])
		for q := lo; q < p; q++ {
			if out[q].ID != "" {
				l.preds.put(out[q].ID, l.predOf(&out[q]), l.horizon())
			}
		}
		lo = p + 1
		c := l.class(label)
		l.score(l.predOf(&out[p]), c)
		if err := l.setLabel(out[p].Node, c); err != nil {
			return nil, err
		}
	}
	return out, nil
}
