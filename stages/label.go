package stages

import (
	"cmp"
	"fmt"
	"iter"
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
// Factorizer's SetLabel, the linear model's step (O(nnz·C)) and the
// score (Scorer.Score: O(log) of the class's confusion cells).

type pred struct {
	Class int // predicted class, −1 for none
	// Graph, Lin, Recent and Codes are PredictGraph's experts' classes (−1
	// for none), scored to weigh them.
	Graph, Lin, Recent, Codes int
	// Shares: a record without features answered from the class shares
	// (predictFeatureless); the experts did not answer it.
	Shares bool
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
	// Its sample left the window: the label still counts in the class
	// shares that answer what no labeled sample reaches (classPrior).
	l.cp.learn(c, l.rc.share)
	l.sc.c.Unlearned++
	return false, nil
}

// unseenLabel answers, with AnswerUnseenLabels, the label-only record ll
// if its id names no sample seen (none in the window, no arrival
// prediction waiting for its label), as a record without features: its
// prediction from the class shares (classShares) joins the batch's records
// without features, it is scored against its label, which the class
// shares then count, and it is rejected (l.unseen). It reports whether ll
// was such a record.
func (l *Learner) unseenLabel(ll record.LateLabel) bool {
	if _, held := l.Window.Lookup(ll.ID); held || l.preds.has(ll.ID) {
		return false
	}
	err := record.NoFeatures("no features, and no earlier record of its id: a label-only record follows its record (docs/DESIGN.md §5)")
	rj := record.Reject{Offset: ll.Offset, ID: ll.ID, Reason: &record.Error{Offset: ll.Offset, ID: ll.ID, Err: err}}
	p := l.classShares(rj)
	l.featurelessOut = append(l.featurelessOut, p)
	l.labelSeen = true
	c := l.class(ll.Label)
	l.score(l.predOf(&p), c)
	l.cp.learn(c, l.rc.share)
	l.unseen = append(l.unseen, rj)
	return true
}

// LabelWaits reports whether a label waits for the sample id: applied
// before it came, and neither taken by it nor forgotten since. Like every
// method of Learner it must be called from the goroutine that owns the
// Learner.
func (l *Learner) LabelWaits(id string) bool { return l.pending.has(id) }

// StillWaiting returns how many distinct ids of waited (a Step's Waited)
// have a label that still waits for their sample (LabelWaits): what serve
// answers as a label request's "pending". Like every method of Learner it
// must be called from the goroutine that owns the Learner. O(len(waited)).
func (l *Learner) StillWaiting(waited []record.LateLabel) int {
	seen := make(map[string]bool, len(waited))
	n := 0
	for _, ll := range waited {
		if !seen[ll.ID] {
			seen[ll.ID] = true
			if l.LabelWaits(ll.ID) {
				n++
			}
		}
	}
	return n
}

// ReplacedLabel is a late label that waited for its sample and that a
// later label of the same id, which waited too, replaced (one label waits
// per id).
type ReplacedLabel struct {
	Offset int64  // the replaced label's offset
	By     int64  // the offset of the label that replaced it
	ID     string // their id
}

// Replaced returns the labels of waited (a Step's Waited, in the order
// applied) that a later one of the same id replaced, each with the next
// one of its id, in the order applied. O(len(waited)).
func Replaced(waited []record.LateLabel) []ReplacedLabel {
	var out []ReplacedLabel
	last := map[string]int64{}
	for _, ll := range waited {
		if off, ok := last[ll.ID]; ok {
			out = append(out, ReplacedLabel{Offset: off, By: ll.Offset, ID: ll.ID})
		}
		last[ll.ID] = ll.Offset
	}
	return out
}

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
	return pred{Class: l.classOfPred(p), Graph: p.graph, Lin: p.lin, Recent: p.recent, Codes: p.codes, Shares: p.shares}
}

// score scores an arrival prediction p (its class a class, noPrediction,
// or beforeLabels) against the true class truth, and PredictGraph's
// experts with it.
func (l *Learner) score(p pred, truth int) {
	if p.Class != beforeLabels && !p.Shares {
		l.hd.score([experts]int{p.Graph, p.Lin, p.Recent, p.Codes}, truth)
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
	l.cp.learn(c, l.rc.share) // its arg max is the shares' (recent.probs only renormalizes)
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
		out[p] = unanswered(b.IDs[p], b.Offsets[p], n)
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
			l.predictFeatureless(ll.Offset)
			if l.AnswerUnseenLabels && l.unseenLabel(ll) {
				continue
			}
			waits, err := l.lateLabel(ll.ID, ll.Label)
			if err != nil {
				return nil, err
			}
			if waits {
				l.waited = append(l.waited, ll)
			}
		}
		if p == len(out) {
			l.predictFeatureless(math.MaxInt64)
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
		l.predictFeatureless(out[p].Offset)
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
// confusion matrix behind Scores; Score costs O(log c) for a true class
// whose row has c nonzero cells (O(c) when it adds a cell), amortized
// over the classes' growth, and Scores O(classes). The zero Scorer is
// ready to use. A Scorer is not safe for concurrent use.
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

// Scores returns the per-class summary of the scored predictions, in
// O(classes).
func (s *Scorer) Scores() Scores { return s.conf.sums.scores() }

// confusion counts scored predictions by true class (rows) and predicted
// class (columns; column k, the last, counts missing predictions) for the
// k classes it covers, growing as classes appear. It holds each row's
// nonzero cells sorted by column and the sums Scores needs, so that its
// nonzero cells come out in row-major order in O(k + cells) and its
// scores in O(k), however many classes there are.
type confusion struct {
	rows [][]cell // by true class, k of them
	sums classSums
}

// cell is a count of a confusion's row: its column, noneCol for the
// missing predictions, and its count.
type cell struct {
	col int
	n   int64
}

// noneCol is a cell's column for missing predictions: after every class,
// whatever their number.
const noneCol = math.MaxInt

// classSums are what a confusion's scores are computed from, by class
// index: the counts of its samples (the row's sum, missing predictions
// included), of its predictions (the column's sum), and of its right
// predictions (the diagonal).
type classSums struct {
	support, predicted, right []int64
}

// grow makes s cover k classes.
func (s *classSums) grow(k int) {
	for len(s.support) < k {
		s.support, s.predicted, s.right = append(s.support, 0), append(s.predicted, 0), append(s.right, 0)
	}
}

// count adds v samples of class truth (an index s covers) predicted as
// class pred (an index s covers, or negative for none).
func (s *classSums) count(truth, pred int, v int64) {
	s.support[truth] += v
	if pred >= 0 {
		s.predicted[pred] += v
		if pred == truth {
			s.right[truth] += v
		}
	}
}

// scores returns the per-class summary of the sums: the same values, to
// the bit, as metrics.PerClassOf and the majority share computed from the
// dense matrix (its float sums are sums of integers, exact while the
// counts stay below 2⁵³; its classes are taken in the same order).
func (s *classSums) scores() Scores {
	var rec, f1 float64
	k := 0
	var tot, top int64
	for i, n := range s.support {
		tot += n
		top = max(top, n)
		if n == 0 {
			continue
		}
		k++
		tp := float64(s.right[i])
		r := tp / float64(n)
		rec += r
		if tp > 0 {
			p := tp / float64(s.predicted[i])
			f1 += 2 * p * r / (p + r)
		}
	}
	out := Scores{BalancedAccuracy: math.NaN(), MacroF1: math.NaN(), Majority: math.NaN()}
	if k > 0 {
		out.BalancedAccuracy, out.MacroF1 = rec/float64(k), f1/float64(k)
	}
	if tot > 0 {
		out.Majority = float64(top) / float64(tot)
	}
	return out
}

// add counts one prediction pred (a class, or negative for none) of a
// sample of class truth.
func (m *confusion) add(truth, pred int) {
	m.grow(max(truth, pred) + 1)
	m.sums.count(truth, pred, 1)
	col := pred
	if pred < 0 {
		col = noneCol
	}
	row := m.rows[truth]
	j, found := slices.BinarySearchFunc(row, col, func(c cell, col int) int { return cmp.Compare(c.col, col) })
	if found {
		row[j].n++
		return
	}
	m.rows[truth] = slices.Insert(row, j, cell{col: col, n: 1})
}

// grow makes m cover k classes.
func (m *confusion) grow(k int) {
	for len(m.rows) < k {
		m.rows = append(m.rows, nil)
	}
	m.sums.grow(k)
}

// dense returns m's counts as k rows of k + 1 (nil if m covers no class),
// the form of LearnerState.Confusion and Confusion.N.
func (m *confusion) dense() [][]int64 {
	k := len(m.rows)
	if k == 0 {
		return nil
	}
	n := make([][]int64, k)
	for i, row := range m.rows {
		n[i] = make([]int64, k+1)
		for _, c := range row {
			n[i][min(c.col, k)] = c.n
		}
	}
	return n
}

// cells returns m's nonzero counts in row-major order, the missing
// predictions in column k (Confusion.Cells), or nil if there are none.
func (m *confusion) cells() []Cell {
	k := len(m.rows)
	nz := 0
	for _, row := range m.rows {
		for _, c := range row {
			if c.n != 0 {
				nz++
			}
		}
	}
	if nz == 0 {
		return nil
	}
	out := make([]Cell, 0, nz)
	for i, row := range m.rows {
		for _, c := range row {
			if c.n != 0 {
				out = append(out, Cell{Row: i, Col: min(c.col, k), N: c.n})
			}
		}
	}
	return out
}

// restore makes m the counts n: k rows of k + 1 (dense's form; the
// caller checks the rows' lengths).
func (m *confusion) restore(n [][]int64) {
	k := len(n)
	*m = confusion{}
	m.grow(k)
	for i, row := range n {
		for j, v := range row {
			if v == 0 {
				continue
			}
			col, pred := j, j
			if j == k {
				col, pred = noneCol, -1
			}
			m.rows[i] = append(m.rows[i], cell{col: col, n: v})
			m.sums.count(i, pred, v)
		}
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
// prediction. Cells is the sparse form of the same counts, which holds
// them when N is nil.
type Confusion struct {
	Classes []string
	N       [][]int64
	// Cells, read only when N is nil, are the nonzero counts: N[Row][Col]
	// for each Cell, in row-major order (by Row, then Col), each Row below
	// len(Classes) and each Col at most len(Classes). Learner's
	// ConfusionCells gives this form, whose size is that of its nonzero
	// cells where N's grows with the square of the classes.
	Cells []Cell
}

// Cell is a count of a Confusion: N[Row][Col] of its dense form.
type Cell struct {
	Row, Col int
	N        int64
}

// Confusion returns a copy of the counts behind Scores, in the dense form
// (N), O(classes²).
func (l *Learner) Confusion() Confusion {
	k := len(l.sc.conf.rows)
	return Confusion{Classes: slices.Clone(l.classes[:k]), N: l.sc.conf.dense()}
}

// ConfusionCells returns a copy of the counts behind Scores in the sparse
// form (Cells; N is nil), in O(classes + nonzero cells): the same
// Confusion as Confusion's, as NonZero, Add, Scores and ConfusionSum read
// it.
func (l *Learner) ConfusionCells() Confusion {
	k := len(l.sc.conf.rows)
	return Confusion{Classes: slices.Clone(l.classes[:k]), Cells: l.sc.conf.cells()}
}

// NonZero yields c's nonzero counts in row-major order, those of the rows
// past its classes left out (as Add leaves them out): N's, scanned in
// O(rows·columns), or Cells, in O(cells).
func (c Confusion) NonZero() iter.Seq[Cell] {
	k := len(c.Classes)
	return func(yield func(Cell) bool) {
		if c.N == nil {
			for _, x := range c.Cells {
				if x.Row < k && x.N != 0 && !yield(x) {
					return
				}
			}
			return
		}
		for i, row := range c.N[:min(len(c.N), k)] {
			for j, v := range row {
				if v != 0 && !yield(Cell{Row: i, Col: j, N: v}) {
					return
				}
			}
		}
	}
}

// Add returns the counts of c and o together, in the dense form, their
// classes matched by name: c's classes first, then o's others in o's
// order. Rows past the classes are left out; columns past them count as
// no prediction.
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
		for v := range x.NonZero() {
			col := k // no prediction
			if v.Col < len(x.Classes) {
				col = idx[x.Classes[v.Col]]
			}
			out.N[idx[x.Classes[v.Row]]][col] += v.N
		}
	}
	return out
}

// Scores returns the per-class summary of the counts, as Learner.Scores
// gives it for its own: from N's rows (all of them) if N is set, else
// from Cells in O(classes + cells).
func (c Confusion) Scores() Scores {
	if c.N != nil {
		return denseScores(c.N)
	}
	k := len(c.Classes)
	var s classSums
	s.grow(k)
	for v := range c.NonZero() {
		pred := v.Col
		if pred >= k {
			pred = -1
		}
		s.count(v.Row, pred, v.N)
	}
	return s.scores()
}

// denseScores returns the per-class summary of the dense counts n (rows
// by true class, each with a column per class and one for none).
func denseScores(n [][]int64) Scores {
	s := metrics.PerClassOf(n)
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

// ConfusionSum adds Confusions as Add does, classes matched by name, and
// keeps only what Scores needs (each class's sums), so that adding one
// costs O(its classes + its nonzero cells) for the sparse form (Cells)
// where Add allocates and fills the dense sum, and Scores O(classes). Its
// Scores are those of the Confusions added up with Add, to the bit. The
// zero ConfusionSum is empty and ready to use.
type ConfusionSum struct {
	idx     map[string]int // class index by name, in order of first appearance
	at      []int          // scratch: the class index of each class of the Confusion being added
	classes int
	sums    classSums
}

// Add adds c's counts.
func (s *ConfusionSum) Add(c Confusion) {
	if s.idx == nil {
		s.idx = map[string]int{}
	}
	s.at = s.at[:0]
	for _, name := range c.Classes {
		i, ok := s.idx[name]
		if !ok {
			i = s.classes
			s.idx[name] = i
			s.classes++
		}
		s.at = append(s.at, i)
	}
	s.sums.grow(s.classes)
	for v := range c.NonZero() {
		pred := -1 // no prediction
		if v.Col < len(c.Classes) {
			pred = s.at[v.Col]
		}
		s.sums.count(s.at[v.Row], pred, v.N)
	}
}

// Scores returns the per-class summary of the counts added, as Scores of
// their sum by Add.
func (s *ConfusionSum) Scores() Scores { return s.sums.scores() }

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
	// Unlearned counts the labels that arrived after their sample had left
	// the window: scored, and counted in the class shares that answer
	// what no labeled sample reaches, but not learned by the model (a
	// window longer than the labels' delay learns them).
	Unlearned int64 `json:"unlearned_labels"`
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
