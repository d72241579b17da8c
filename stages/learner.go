package stages

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/classify"
	"github.com/nmfstream/nmfstream/model/sparse"
	"github.com/nmfstream/nmfstream/sources"
)

// Predictor chooses how Learner predicts a new sample's label from codes.
type Predictor int

const (
	// PredictNearest (the default) votes among the Neighbors nearest labeled
	// window samples in code space. It costs n·L·K per batch of n samples
	// with L labeled samples in the window.
	PredictNearest Predictor = iota
	// PredictPropagate runs label propagation (Zhou et al. 2004, see
	// classify.LabelPropagation) over the codes of the whole window, the
	// new samples included, so that unlabeled samples carry labels to
	// their neighbours. It costs about N²·K per batch for a window of N:
	// for windows of a few thousand samples.
	PredictPropagate
	// PredictWalk votes, like PredictNearest, among the Neighbors nearest
	// labeled samples in code space, but looks for them by a best-first
	// walk of the k-NN graph from the new sample (HNSW's search on one
	// layer, keeping the ef = max(64, Neighbors) nearest nodes reached)
	// instead of reading every labeled code: it costs about n·ef·k·K per
	// batch of n samples for a graph of k neighbours, independent of the
	// window size. A sample whose walk reaches fewer than Neighbors
	// labeled samples is predicted as PredictNearest does. On MNIST
	// (README.md) it was the faster and the more accurate of the two.
	PredictWalk
)

// Learner is the online learning stage of a stream: it featurizes each
// batch, adds its samples to an online GNMF (model.Online), predicts each
// new sample's label from its code, then learns the labels that arrived.
//
// Prediction is prequential: a sample's label is predicted on arrival,
// from its code right after insertion (the code is fitted to the sample
// and its graph neighbours, before any label of this batch is known), by a
// vote among the labeled samples of the window (Predictor). When its label
// becomes known, with the sample or later, the prediction is scored.
//
// Ids: a sample with a non-empty id that is already in the window is a
// duplicate and is skipped (its label, if any, counts as a late label).
// A label that arrives for an id in the window labels that node (SetLabel
// on the graph); a label for an id not yet seen waits, up to Horizon labels,
// until its sample arrives. Arrival predictions wait for their label for up
// to Horizon samples, even after the sample left the window.
//
// A Learner is not safe for concurrent use: one goroutine owns it and its
// model.
type Learner struct {
	// Model is the online factorization. It must be set, with Rank.
	Model *model.Online
	// Featurize turns batches into rows.
	Featurize Featurize
	// Predictor selects the classifier on codes. The default is
	// PredictNearest.
	Predictor Predictor
	// Neighbors is the number of labeled neighbours that vote with
	// PredictNearest, and of neighbours per sample with PredictPropagate.
	// If zero, it defaults to 1 for PredictNearest and 7 for
	// PredictPropagate.
	Neighbors int
	// Metric is the code-space distance of the classifier. The default is
	// classify.Cosine's zero value, Euclidean.
	Metric classify.Metric
	// Horizon bounds the labels waiting for their sample and the arrival
	// predictions waiting for their label. If zero, it defaults to
	// max(10·Window, 100000) (Window from Model.Graph; 100000 without one).
	Horizon int
	// Split, if set, runs the PredictWalk walks of a batch in parts at
	// once (pipeline.Split provides one), each part with its own walker;
	// the predictions are the same as without it.
	Split func(n int, body func(lo, hi int))

	nodes   []node         // by node id (graph slot)
	byID    map[string]int // record id → node id, for live nodes
	seq     int            // insertion counter, for age order
	classes []string
	classOf map[string]int
	walks   []*walkPart // by first position, see walk
	walked  []bool
	preds   fifo[pred]   // arrival predictions waiting for a label
	pending fifo[string] // labels waiting for their sample
	c       Counters
}

type node struct {
	live  bool
	id    string
	class int // −1: unlabeled
	seq   int
}

type pred struct {
	Class int // predicted class, −1 for none
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
	// Labeled counts arrival predictions scored against a known label.
	Labeled int64 `json:"labeled"`
	// Correct counts the scored predictions that were right.
	Correct int64 `json:"correct"`
	// Unpredicted counts the scored samples that had no prediction (no
	// labeled sample or no model yet); they count as wrong.
	Unpredicted int64 `json:"unpredicted"`
	// Offset is one past the input offset of the last record applied: where
	// a resumed stream starts.
	Offset int64 `json:"offset"`
}

// Accuracy returns the prequential accuracy: Correct over the scored
// samples that had a prediction, NaN before any. Samples predicted before
// any label was known (Unpredicted) are left out, as River's
// progressive_val_score skips empty predictions; AccuracyAll counts them
// as wrong.
func (c Counters) Accuracy() float64 {
	if c.Labeled-c.Unpredicted == 0 {
		return math.NaN()
	}
	return float64(c.Correct) / float64(c.Labeled-c.Unpredicted)
}

// AccuracyAll returns Correct/Labeled, counting samples without a
// prediction as wrong, or NaN before any label.
func (c Counters) AccuracyAll() float64 {
	if c.Labeled == 0 {
		return math.NaN()
	}
	return float64(c.Correct) / float64(c.Labeled)
}

// Prediction is one sample's arrival-time prediction.
type Prediction struct {
	ID     string
	Offset int64
	// Node is the sample's node id in the graph (model.Online.KNN).
	Node int
	// Label is the predicted label, "" when no prediction could be made.
	Label string
	// Score is the vote share (PredictNearest) or label probability
	// (PredictPropagate) of Label, NaN without a prediction.
	Score float64
	// Code is the sample's code (K values) right after insertion, nil
	// before the model's first fit.
	Code []float64
}

// Step is what Learn did with one batch.
type Step struct {
	// Predictions holds one entry per sample added, in input order.
	Predictions []Prediction
	// Rejects lists the records of the batch that could not be used: those
	// the source rejected and those Featurize rejected.
	Rejects []sources.Reject
	// Duplicates lists the offsets of samples skipped as duplicates.
	Duplicates []int64
}

// Counters returns the running totals.
func (l *Learner) Counters() Counters { return l.c }

// Pending returns the number of labels waiting for their sample.
func (l *Learner) Pending() int { return l.pending.len() }

// Classes returns the labels seen so far, class c being Classes()[c], in a
// new slice.
func (l *Learner) Classes() []string { return slices.Clone(l.classes) }

func (l *Learner) horizon() int {
	if l.Horizon > 0 {
		return l.Horizon
	}
	if w := l.Model.Graph.Window; w > 0 {
		return max(10*w, 100000)
	}
	return 100000
}

func (l *Learner) init() {
	if l.byID == nil {
		l.byID = map[string]int{}
		l.classOf = map[string]int{}
		l.preds.init()
		l.pending.init()
	}
}

func (l *Learner) class(label string) int {
	if c, ok := l.classOf[label]; ok {
		return c
	}
	c := len(l.classes)
	l.classes = append(l.classes, label)
	l.classOf[label] = c
	return c
}

// Learn processes one batch: reject what cannot be used, add the samples to
// the model, predict their labels, then learn the labels of the batch (with
// the samples or late). Records must come in input order; b's Offsets say
// where Learn resumes (Counters.Offset). An error means the model cannot go
// on (it is not a data error: those are rejects in Step).
//
// Learn is LearnFeatures(Prepare(b)). A pipeline runs Prepare in parallel
// and LearnFeatures on one goroutine instead.
func (l *Learner) Learn(b *sources.Batch) (*Step, error) {
	if l.Model == nil {
		return nil, errNoModel
	}
	return l.LearnFeatures(Prepare(b))
}

var errNoModel = errors.New("stages: learner: no model")

// LearnFeatures is the learning stage of a stream, on a batch Prepare (or
// the caller) featurized: it vectorizes text, rejects the samples whose
// dimension is not the stream's, adds the others to the model (graph
// insertion and partial fit), predicts their labels, then learns the labels
// of the batch, with the samples or late. Batches must come in input order.
//
// LearnFeatures reads f and keeps no reference to it; it panics, before
// changing anything, if f's lengths disagree (see Featurized.IDs). Like
// every method of Learner it must be called from the goroutine that owns
// the Learner: in a pipeline, a stage of parallelism 1. An error means the
// model cannot go on (it is not a data error: those are rejects in Step);
// the Learner must not be used after one, except to read its Counters.
func (l *Learner) LearnFeatures(f *Featurized) (*Step, error) {
	if l.Model == nil {
		return nil, errNoModel
	}
	f.check()
	l.init()
	st := &Step{Rejects: slices.Clone(f.Rejects)}
	l.c.Records += int64(f.Records())
	x, keep, bad := l.rows(f)
	st.Rejects = append(st.Rejects, bad...)
	l.c.Rejected += int64(len(st.Rejects))
	// The samples' bookkeeping, in the shape track and predict read.
	b := &sources.Batch{IDs: f.IDs, Labels: f.Labels, Labeled: f.Labeled, Offsets: f.Offsets}
	// Duplicates: ids already in the window, or repeated in this batch.
	var late []sources.LateLabel
	inBatch := map[string]bool{}
	var fresh []int // positions in keep
	for p, i := range keep {
		id := b.IDs[i]
		if id != "" {
			if _, ok := l.byID[id]; ok || inBatch[id] {
				st.Duplicates = append(st.Duplicates, b.Offsets[i])
				if b.Labeled[i] {
					late = append(late, sources.LateLabel{Offset: b.Offsets[i], ID: id, Label: b.Labels[i]})
				}
				continue
			}
			inBatch[id] = true
		}
		fresh = append(fresh, p)
	}
	l.c.Duplicates += int64(len(st.Duplicates))
	if len(fresh) < len(keep) && len(fresh) > 0 {
		x = subRows(x, fresh)
	}
	if len(fresh) > 0 {
		ids, err := l.Model.PartialFit(x)
		if err != nil {
			return nil, fmt.Errorf("stages: learner: %w", err)
		}
		l.track(ids, b, keep, fresh)
		st.Predictions = l.predict(ids, b, keep, fresh)
		// Learn: labels that came with their samples, or waited for them.
		for p, q := range fresh {
			i := keep[q]
			pr := &st.Predictions[p]
			label, ok := b.Labels[i], b.Labeled[i]
			if !ok && pr.ID != "" {
				label, ok = l.pending.take(pr.ID)
			}
			if ok {
				l.score(l.classOfPred(pr), l.class(label))
				if err := l.setLabel(pr.Node, l.class(label)); err != nil {
					return nil, err
				}
			} else if pr.ID != "" {
				l.preds.put(pr.ID, pred{Class: l.classOfPred(pr)}, l.horizon())
			}
		}
		l.c.Samples += int64(len(fresh))
	}
	for _, ll := range f.LateLabels {
		late = append(late, ll)
		l.c.LateLabels++
	}
	for _, ll := range late {
		if err := l.lateLabel(ll.ID, ll.Label); err != nil {
			return nil, err
		}
	}
	if f.Records() > 0 {
		l.c.Offset = max(l.c.Offset, f.lastOffset()+1)
	}
	return st, nil
}

// Label applies a label that arrives without features (a late label, as in
// a label-only record), scoring the arrival prediction of id if it waits.
func (l *Learner) Label(id, label string) error {
	if l.Model == nil {
		return errNoModel
	}
	l.init()
	l.c.LateLabels++
	return l.lateLabel(id, label)
}

func (l *Learner) lateLabel(id, label string) error {
	c := l.class(label)
	scored := false
	if p, ok := l.preds.take(id); ok {
		l.score(p.Class, c)
		scored = true
	}
	if n, ok := l.byID[id]; ok {
		return l.setLabel(n, c)
	}
	if !scored {
		l.pending.put(id, label, l.horizon())
	}
	return nil
}

func (l *Learner) classOfPred(p *Prediction) int {
	if p.Label == "" {
		return -1
	}
	return l.classOf[p.Label]
}

func (l *Learner) score(pred, truth int) {
	l.c.Labeled++
	switch {
	case pred < 0:
		l.c.Unpredicted++
	case pred == truth:
		l.c.Correct++
	}
}

func (l *Learner) setLabel(n, c int) error {
	if l.nodes[n].class == c {
		return nil
	}
	if _, err := l.Model.KNN().SetLabel(n, c); err != nil {
		return fmt.Errorf("stages: learner: %w", err)
	}
	l.nodes[n].class = c
	return nil
}

// track records the new nodes and forgets the ones the window removed.
func (l *Learner) track(ids []int, b *sources.Batch, keep, fresh []int) {
	g := l.Model.KNN()
	for len(l.nodes) < g.Slots() {
		l.nodes = append(l.nodes, node{class: -1})
	}
	// Nodes whose slot was freed (and maybe reused by this batch).
	reused := make(map[int]bool, len(ids))
	for _, n := range ids {
		reused[n] = true
	}
	for n := range l.nodes {
		if l.nodes[n].live && (!g.Live(n) || reused[n]) {
			if l.nodes[n].id != "" {
				delete(l.byID, l.nodes[n].id)
			}
			l.nodes[n] = node{class: -1}
		}
	}
	for p, n := range ids {
		id := b.IDs[keep[fresh[p]]]
		l.nodes[n] = node{live: true, id: id, class: -1, seq: l.seq}
		l.seq++
		if id != "" {
			l.byID[id] = n
		}
	}
}

// predict predicts the new nodes' labels from their codes, with the labels
// known before this batch.
func (l *Learner) predict(ids []int, b *sources.Batch, keep, fresh []int) []Prediction {
	out := make([]Prediction, len(ids))
	for p, n := range ids {
		i := keep[fresh[p]]
		out[p] = Prediction{ID: b.IDs[i], Offset: b.Offsets[i], Node: n, Score: math.NaN()}
	}
	if !l.Model.Started() {
		return out
	}
	v := l.Model.Codes()
	_, k := v.Dims()
	q := mat.NewDense(len(ids), k, nil)
	for p, n := range ids {
		copy(q.RawRowView(p), v.RawRowView(n))
		out[p].Code = slices.Clone(v.RawRowView(n))
	}
	var classes []int
	var scores []float64
	switch l.Predictor {
	case PredictPropagate:
		classes, scores = l.propagate(ids)
	case PredictWalk:
		classes, scores = l.walk(ids, q)
	default:
		classes, scores = l.nearest(q)
	}
	for p := range ids {
		if classes != nil && classes[p] >= 0 {
			out[p].Label = l.classes[classes[p]]
			out[p].Score = scores[p]
		}
	}
	return out
}

// nearest votes among the labeled live nodes.
func (l *Learner) nearest(q *mat.Dense) ([]int, []float64) {
	var lab []int
	var y []int
	for n, nd := range l.nodes {
		if nd.live && nd.class >= 0 {
			lab = append(lab, n)
			y = append(y, nd.class)
		}
	}
	if len(lab) == 0 {
		return nil, nil
	}
	v := l.Model.Codes()
	_, k := v.Dims()
	ref := mat.NewDense(len(lab), k, nil)
	for r, n := range lab {
		copy(ref.RawRowView(r), v.RawRowView(n))
	}
	kk := l.Neighbors
	if kk == 0 {
		kk = 1
	}
	nn := classify.NearestNeighbor{K: min(kk, len(lab)), Metric: l.Metric}
	if err := nn.Fit(ref, y); err != nil {
		return nil, nil // zero code rows under Cosine, for instance: no prediction
	}
	return nn.PredictScoresTo(nil, nil, q)
}

// walkPart is the workspace of one part of walk's batch.
type walkPart struct {
	w     walker
	nb    []distItem
	votes []float64
	rest  []int // positions the walk could not predict
}

// walk predicts the new nodes ids (codes in the rows of q) by PredictWalk,
// the batch cut into parts by Split (walks only read the graph and codes).
func (l *Learner) walk(ids []int, q *mat.Dense) ([]int, []float64) {
	kk := l.Neighbors
	if kk == 0 {
		kk = 1
	}
	g, v := l.Model.KNN(), l.Model.Codes()
	class := func(n int) int { return l.nodes[n].class }
	classes := make([]int, len(ids))
	scores := make([]float64, len(ids))
	for len(l.walks) < len(ids) {
		l.walks = append(l.walks, nil)
		l.walked = append(l.walked, false)
	}
	clear(l.walks[len(ids):]) // from a larger batch
	split := l.Split
	if split == nil {
		split = func(n int, body func(lo, hi int)) { body(0, n) }
	}
	split(len(ids), func(lo, hi int) {
		wp := l.walks[lo]
		if wp == nil {
			wp = new(walkPart)
			l.walks[lo] = wp
		}
		wp.w.ef, wp.w.metric = max(64, kk), l.Metric
		wp.votes = slices.Grow(wp.votes[:0], len(l.classes))[:len(l.classes)]
		wp.rest = wp.rest[:0]
		for p := lo; p < hi; p++ {
			wp.nb = wp.w.nearest(wp.nb[:0], g, v, ids[p], kk, class)
			if len(wp.nb) < kk {
				wp.rest = append(wp.rest, p)
				continue
			}
			clear(wp.votes)
			top := 0.0
			for _, it := range wp.nb {
				c := class(it.id)
				wp.votes[c]++
				top = max(top, wp.votes[c])
			}
			// Nearest first: among tied classes, the one with the nearest member.
			for _, it := range wp.nb {
				if c := class(it.id); wp.votes[c] == top {
					classes[p], scores[p] = c, top/float64(kk)
					break
				}
			}
		}
		l.walked[lo] = true
	})
	var rest []int
	for lo, done := range l.walked[:len(ids)] {
		if !done {
			l.walks[lo] = nil // keep the workspaces of this cut only
			continue
		}
		l.walked[lo] = false
		rest = append(rest, l.walks[lo].rest...)
	}
	if len(rest) > 0 {
		sub := mat.NewDense(len(rest), q.RawMatrix().Cols, nil)
		for r, p := range rest {
			copy(sub.RawRowView(r), q.RawRowView(p))
		}
		c, s := l.nearest(sub)
		for r, p := range rest {
			if c == nil {
				classes[p] = -1
				continue
			}
			classes[p], scores[p] = c[r], s[r]
		}
	}
	return classes, scores
}

// propagate runs label propagation over the window's codes.
func (l *Learner) propagate(ids []int) ([]int, []float64) {
	var all, y []int
	pos := map[int]int{}
	labeled := 0
	for n, nd := range l.nodes {
		if nd.live {
			pos[n] = len(all)
			all = append(all, n)
			y = append(y, nd.class)
			if nd.class >= 0 {
				labeled++
			}
		}
	}
	if labeled == 0 {
		return nil, nil
	}
	v := l.Model.Codes()
	_, k := v.Dims()
	x := mat.NewDense(len(all), k, nil)
	for r, n := range all {
		copy(x.RawRowView(r), v.RawRowView(n))
	}
	kk := l.Neighbors
	if kk == 0 {
		kk = 7
	}
	lp := classify.LabelPropagation{K: min(kk, len(all)-1), Metric: l.Metric}
	if len(all) < 2 || lp.Fit(x, y) != nil {
		return nil, nil
	}
	dist := lp.LabelDistributionsTo(nil)
	classes := make([]int, len(ids))
	scores := make([]float64, len(ids))
	for p, n := range ids {
		row := dist.RawRowView(pos[n])
		best, bv := -1, 0.0
		for c, f := range row {
			if f > bv {
				best, bv = c, f
			}
		}
		classes[p], scores[p] = best, bv
	}
	return classes, scores
}

// subRows returns the rows of x at positions pos.
func subRows(x model.Data, pos []int) model.Data {
	switch r := model.Rows(x).(type) {
	case *mat.Dense:
		_, d := r.Dims()
		m := mat.NewDense(len(pos), d, nil)
		for i, p := range pos {
			copy(m.RawRowView(i), r.RawRowView(p))
		}
		return model.DenseRows(m)
	case *sparse.CSR:
		_, d := r.Dims()
		m := sparse.Zeros(0, d)
		for _, p := range pos {
			m.AppendRow(r.Row(p))
		}
		return model.SparseRows(m)
	}
	panic(fmt.Sprintf("stages: unsupported rows %T", x))
}
