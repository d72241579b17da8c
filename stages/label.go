package stages

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/nmfstream/nmfstream/model/metrics"
	"github.com/nmfstream/nmfstream/record"
)

// The label-and-score stage: it applies the labels of a batch in input
// order, interleaved with the predict stage so that every prediction is
// prequential, and scores each arrival prediction when its label is known
// (Scorer, below). It owns the arrival predictions waiting for their label
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
	_, err := l.lateLabel(id, label)
	return err
}

// lateLabel applies a late label and reports whether it waits for its
// sample.
func (l *Learner) lateLabel(id, label string) (waits bool, err error) {
	l.labelSeen = true
	p, predicted := l.preds.take(id)
	n, held := l.Window.Lookup(id)
	if !predicted && !held {
		// Its sample has not come: the label waits without making its
		// class, so that labels whose sample never comes take no class
		// (Featurize.MaxClasses).
		l.forgotten += int64(l.pending.put(id, label, l.horizon()))
		return true, nil
	}
	c := l.class(label)
	if predicted {
		l.score(p, c)
	}
	if held {
		return false, l.setLabel(n, c)
	}
	return false, nil
}

// LabelWaits reports whether a label waits for the sample id: applied
// before it came, and neither taken by it nor forgotten since. Like every
// method of Learner it must be called from the goroutine that owns the
// Learner.
func (l *Learner) LabelWaits(id string) bool { return l.pending.has(id) }

// waitingLabel returns the label waiting for the sample id (lateLabel), if
// any, and takes it: a label that would add a class beyond
// Featurize.MaxClasses is dropped (the sample is learned unlabeled).
func (l *Learner) waitingLabel(id string) (string, bool) {
	label, ok := l.pending.take(id)
	if !ok {
		return "", false
	}
	if _, known := l.classOf[label]; !known && l.Featurize.MaxClasses > 0 && len(l.classes) >= l.Featurize.MaxClasses {
		return "", false
	}
	return label, true
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
		d, ind, val := l.linRow(n)
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
	if l.sp.pre == nil {
		l.sp.newBatch() // else presweep began the batch
	}
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
				label, labeled = l.waitingLabel(out[p].ID)
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
			waits, err := l.lateLabel(ll.ID, ll.Label)
			if err != nil {
				return nil, err
			}
			if waits {
				l.waited = append(l.waited, ll.ID)
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

// Scorer is the prequential scorer of a stream, the one place its
// accuracy is computed (Learner's, and stream --nats's): each arrival
// prediction is scored once, when its sample's label is known, against that
// label (Dawid's prequential protocol, docs/DESIGN.md §7). It owns the scoring
// counters (Counters.Labeled, Correct, Unpredicted, Early) and the
// confusion matrix behind Scores; Score costs O(1), amortized over the
// classes' growth. The zero Scorer is ready to use. A Scorer is not safe
// for concurrent use.
type Scorer struct {
	c    Counters  // Learner keeps its other counters here too
	conf confusion // scored predictions by true and predicted class
}

// NoPrediction and BeforeLabels are the predicted classes Score takes for a
// missing prediction: one made after a label of the stream was known,
// which counts as wrong, and one made before any, which is not scored
// (Counters.Early).
const (
	NoPrediction = -1
	BeforeLabels = -2
)

// Score scores an arrival prediction of class pred (a class index,
// NoPrediction or BeforeLabels) against the sample's true class truth
// (a class index, not negative).
func (s *Scorer) Score(pred, truth int) {
	if pred == BeforeLabels {
		s.c.Early++
		return
	}
	s.c.Labeled++
	switch {
	case pred < 0:
		s.c.Unpredicted++
	case pred == truth:
		s.c.Correct++
	}
	s.conf.add(truth, pred)
}

// Counters returns the scoring counters: Labeled, Correct, Unpredicted and
// Early (the others are zero for a Scorer of its own).
func (s *Scorer) Counters() Counters { return s.c }

// Scores returns the per-class summary of the scored predictions.
func (s *Scorer) Scores() Scores { return s.conf.scores() }

// confusion counts scored predictions by true class (rows) and predicted
// class (columns); the last column counts missing predictions. It grows
// as classes appear.
type confusion struct {
	n [][]int64
}

// add counts one prediction pred (a class, or negative for none) of a
// sample of class truth.
func (m *confusion) add(truth, pred int) {
	c := max(truth, pred) + 1
	m.grow(c)
	if pred < 0 {
		pred = len(m.n)
	}
	m.n[truth][pred]++
}

// grow makes m cover c classes, moving the missing column to the end.
func (m *confusion) grow(c int) {
	if c <= len(m.n) {
		return
	}
	old := len(m.n)
	for i := range m.n {
		row := make([]int64, c+1)
		copy(row, m.n[i][:old])
		row[c] = m.n[i][old]
		m.n[i] = row
	}
	for len(m.n) < c {
		m.n = append(m.n, make([]int64, c+1))
	}
}

// Scores summarizes the scored arrival predictions of a stream per class.
type Scores struct {
	// BalancedAccuracy is the mean over the classes with a scored sample of
	// the share of that class's samples predicted right (recall), NaN
	// before any scored sample.
	BalancedAccuracy float64
	// MacroF1 is the mean over the classes with a scored sample of
	// 2·precision·recall/(precision+recall), a class never predicted having
	// precision 0; NaN before any scored sample.
	MacroF1 float64
	// Majority is the accuracy that always answering the most frequent
	// class of the scored samples would have had: a floor for accuracy
	// where classes are skewed (no stream knows that class in advance);
	// NaN before any scored sample.
	Majority float64
}

// Scores returns the per-class summary of the scored predictions (those
// Counters.Labeled counts).
func (l *Learner) Scores() Scores { return l.sc.Scores() }

// Confusion is the scored predictions' counts by class, in a form that
// the counts of several Learners add in (a distributed stream's owners,
// each with its own class indices): N[i][j] counts the samples of class
// Classes[i] predicted as Classes[j], N[i][len(Classes)] those without a
// prediction.
type Confusion struct {
	Classes []string
	N       [][]int64
}

// Confusion returns a copy of the counts behind Scores.
func (l *Learner) Confusion() Confusion {
	n := l.sc.conf.n
	c := Confusion{Classes: slices.Clone(l.classes[:len(n)])}
	for _, row := range n {
		c.N = append(c.N, slices.Clone(row))
	}
	return c
}

// Add returns the counts of c and o together, their classes matched by
// name: c's classes first, then o's others in o's order. Rows past the
// classes are left out; columns past them count as no prediction.
func (c Confusion) Add(o Confusion) Confusion {
	idx := map[string]int{}
	var out Confusion
	at := func(name string) int {
		i, ok := idx[name]
		if !ok {
			i = len(out.Classes)
			idx[name] = i
			out.Classes = append(out.Classes, name)
		}
		return i
	}
	for _, x := range []Confusion{c, o} {
		for _, name := range x.Classes {
			at(name)
		}
	}
	k := len(out.Classes)
	out.N = make([][]int64, k)
	for i := range out.N {
		out.N[i] = make([]int64, k+1)
	}
	for _, x := range []Confusion{c, o} {
		for i, row := range x.N[:min(len(x.N), len(x.Classes))] {
			for j, v := range row {
				col := k // no prediction
				if j < len(x.Classes) {
					col = idx[x.Classes[j]]
				}
				out.N[idx[x.Classes[i]]][col] += v
			}
		}
	}
	return out
}

// Scores returns the per-class summary of the counts, as Learner.Scores
// gives it for its own.
func (c Confusion) Scores() Scores { return (&confusion{n: c.N}).scores() }

func (m *confusion) scores() Scores {
	s := metrics.PerClassOf(m.n)
	out := Scores{BalancedAccuracy: s.BalancedAccuracy, MacroF1: s.MacroF1, Majority: math.NaN()}
	tot, top := 0, 0
	for _, n := range s.Support {
		tot += n
		top = max(top, n)
	}
	if tot > 0 {
		out.Majority = float64(top) / float64(tot)
	}
	return out
}

// Counters are a Learner's running totals. They are part of its state and
// cover the whole stream across checkpoints.
type Counters struct {
	// Records counts input records consumed: samples, late labels,
	// duplicates and rejects.
	Records int64 `json:"records"`
	// Samples counts samples added to the model.
	Samples int64 `json:"samples"`
	// Rejected counts records that could not be used.
	Rejected int64 `json:"rejected"`
	// Duplicates counts samples skipped because their id was in the window.
	Duplicates int64 `json:"duplicates"`
	// LateLabels counts label-only records.
	LateLabels int64 `json:"late_labels"`
	// Labeled counts the arrival predictions scored against a known
	// label: every sample whose label the learner learned (with it or
	// later) and that arrived after the first label of the stream.
	Labeled int64 `json:"labeled"`
	// Correct counts the scored predictions that were right.
	Correct int64 `json:"correct"`
	// Unpredicted counts the scored samples that got no prediction; they
	// count as wrong.
	Unpredicted int64 `json:"unpredicted"`
	// Early counts the samples whose label the learner learned but that
	// arrived before any label was known: nothing could be predicted for
	// them, and they are not scored.
	Early int64 `json:"early"`
	// Offset is one past the input offset of the last record applied: where
	// a resumed stream starts.
	Offset int64 `json:"offset"`
}

// Accuracy returns the prequential accuracy Correct/Labeled, in which a
// scored sample without a prediction counts as wrong, or NaN before any
// scored sample. It is what an outside scorer computes from the arrival
// predictions of every labeled sample after the first label.
func (c Counters) Accuracy() float64 {
	if c.Labeled == 0 {
		return math.NaN()
	}
	return float64(c.Correct) / float64(c.Labeled)
}

// Interval returns the Wilson score interval of Accuracy at confidence
// z standard normal deviates (1.96 for 95%), or NaNs before any scored
// sample (Wilson, "Probable inference, the law of succession, and
// statistical inference", JASA 22(158), 1927).
func (c Counters) Interval(z float64) (lo, hi float64) {
	if c.Labeled == 0 {
		return math.NaN(), math.NaN()
	}
	n := float64(c.Labeled)
	p := float64(c.Correct) / n
	den := 1 + z*z/n
	mid := (p + z*z/(2*n)) / den
	half := z * math.Sqrt(p*(1-p)/n+z*z/(4*n*n)) / den
	return max(0, mid-half), min(1, mid+half)
}
