package stages

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/classify"
	"github.com/nmfstream/nmfstream/model/sparse"
	"github.com/nmfstream/nmfstream/record"
)

// Predictor chooses how Learner predicts a new sample's label.
type Predictor int

const (
	// PredictGraph (the default) spreads the labels over the graph and, on
	// sparse rows (documents), mixes in two more experts, the three weighted
	// by their recent mistakes on the stream (exponential weights): the
	// known labels spread over the stream's k-NN graph, the graph of every
	// sample in the window, labeled or not (the harmonic function of Zhu,
	// Ghahramani and Lafferty, ICML 2003, with class mass normalization over
	// the classes labeled in the window); an online multinomial logistic
	// regression on the samples' features (an AdaGrad step on each label as
	// it is learned, and one pass per batch over the labels of the last 3
	// batches); and the class shares of the last labels (a no-change
	// forecaster, for streams whose labels come in runs). The spreading uses
	// the unlabeled samples, which carry labels along the data's manifold:
	// on the digits and MNIST streams it leads from the first label on; the
	// linear model separates documents that the graph mixes (BENCHMARKS.md).
	// The spreading costs SpreadSweeps·(edges)·C per batch for C classes,
	// plus O(k²·C) per label learned within the batch; the linear model
	// O(nnz·C) per label per step, and C·D weights (none above 2²²: then the
	// spreading alone predicts).
	PredictGraph Predictor = iota
	// PredictNearest votes among the Neighbors nearest labeled window
	// samples in code space. It costs n·L·K per batch of n samples with L
	// labeled samples in the window.
	PredictNearest
	// PredictPropagate runs label propagation (Zhou et al. 2004, see
	// classify.LabelPropagation) over a k-NN graph of the codes of the
	// whole window, the new samples included. It costs about N²·K per
	// batch for a window of N: for windows of a few thousand samples.
	PredictPropagate
	// PredictWalk votes, like PredictNearest, among the Neighbors nearest
	// labeled samples in code space, but looks for them by a best-first
	// walk of the k-NN graph from the new sample (HNSW's search on one
	// layer, keeping the ef = max(64, Neighbors) nearest nodes reached)
	// instead of reading every labeled code: it costs about n·ef·k·K per
	// batch of n samples for a graph of k neighbours, independent of the
	// window size. A sample whose walk reaches fewer than Neighbors
	// labeled samples is predicted as PredictNearest does.
	PredictWalk
	// PredictSpread is PredictGraph without its linear component: the
	// labels spread over the graph alone.
	PredictSpread
)

// Learner is the online learning stage of a stream: it featurizes each
// batch, adds its samples to the online factorization (model.Online) and
// its k-NN graph, predicts each new sample's label, then learns the labels
// that arrived.
//
// Prediction is prequential: a sample's label is predicted on arrival,
// after its insertion into the graph and the model's step, with every
// label that arrived before it (in earlier batches, or earlier in this
// one) and none after (Predictor: by default the labels spread over the
// graph). Its own label, with it or later, is learned after it is
// predicted, and the prediction is then scored (Counters).
//
// Ids: a sample with a non-empty id that is already in the window is a
// duplicate and is skipped (its label, if any, counts as a late label).
// A label that arrives for an id in the window labels that node
// (model.Online.SetLabel); a label for an id not yet seen waits, up to
// Horizon labels, until its sample arrives. Arrival predictions wait for their label for up
// to Horizon samples, even after the sample left the window.
//
// A Learner is not safe for concurrent use: one goroutine owns it and its
// model.
type Learner struct {
	// Model is the online factorization. It must be set, with Rank.
	Model *model.Online
	// Featurize turns batches into rows.
	Featurize Featurize
	// Predictor selects the classifier. The default is PredictGraph.
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
	// SpreadSweeps is the number of sweeps of PredictGraph's label scores
	// over the window per batch. If zero, it defaults to 3.
	SpreadSweeps int
	// SpreadPower is p of PredictGraph's edge weights, the cosine of the
	// two samples (CodesOnly: of their codes) to the power p. If zero, it
	// defaults to 20 on dense rows and to binary weights on sparse ones
	// (documents); a negative value spreads over the k-NN graph's own
	// weights (Model.Weighting; binary by default).
	SpreadPower float64
	// Codes says what the predictor reads of the codes (CodeUse). The zero
	// value is CodesAuto.
	Codes CodeUse
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
	sp      spreader  // PredictGraph's label scores
	cg      codeGraph // CodesOnly's graph of the codes
	lin     linear    // PredictGraph's linear model
	hd      hedge     // PredictGraph's weights of its experts
	rc      recent    // PredictGraph's no-change expert
	conf    confusion // scored predictions by true and predicted class
}

type node struct {
	live  bool
	id    string
	class int // −1: unlabeled
	seq   int
	// revisits is the number of the linear model's passes the node's
	// label may still take part in (linearRevisits when it is learned).
	revisits int
}

type pred struct {
	Class int // predicted class, −1 for none
	// Graph, Lin and Recent are PredictGraph's experts' classes (−1 for
	// none), scored to weigh them.
	Graph, Lin, Recent int
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

	early              bool // made before any label was known
	graph, lin, recent int  // PredictGraph's experts' classes, −1 for none
}

// Step is what Learn did with one batch.
type Step struct {
	// Predictions holds one entry per sample added, in input order.
	Predictions []Prediction
	// Rejects lists the records of the batch that could not be used: those
	// the source rejected and those Featurize rejected.
	Rejects []record.Reject
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
func (l *Learner) Learn(b *record.Batch) (*Step, error) {
	if l.Model == nil {
		return nil, errNoModel
	}
	return l.LearnFeatures(Prepare(b))
}

var (
	errNoModel  = errors.New("stages: learner: no model")
	errCodesOff = errors.New("stages: learner: CodesOff with a predictor of codes (nearest, walk or propagate): use PredictGraph or PredictSpread")
)

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
	if l.Codes == CodesOff && l.Predictor != PredictGraph && l.Predictor != PredictSpread {
		return nil, errCodesOff
	}
	l.init()
	st := &Step{Rejects: slices.Clone(f.Rejects)}
	l.c.Records += int64(f.Records())
	x, keep, bad := l.rows(f)
	st.Rejects = append(st.Rejects, bad...)
	l.c.Rejected += int64(len(st.Rejects))
	// The samples' bookkeeping, in the shape track and predict read.
	b := &record.Batch{IDs: f.IDs, Labels: f.Labels, Labeled: f.Labeled, Offsets: f.Offsets}
	// Duplicates: ids already in the window, or repeated in this batch.
	var late []record.LateLabel
	inBatch := map[string]bool{}
	var fresh []int // positions in keep
	for p, i := range keep {
		id := b.IDs[i]
		if id != "" {
			if _, ok := l.byID[id]; ok || inBatch[id] {
				st.Duplicates = append(st.Duplicates, b.Offsets[i])
				if b.Labeled[i] {
					late = append(late, record.LateLabel{Offset: b.Offsets[i], ID: id, Label: b.Labels[i]})
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
	var ids []int
	if len(fresh) > 0 {
		var err error
		if ids, err = l.Model.PartialFit(x); err != nil {
			return nil, fmt.Errorf("stages: learner: %w", err)
		}
		l.track(ids, b, keep, fresh)
		if l.Codes == CodesOnly && l.Model.Started() {
			l.cg.k = l.Model.Graph.K
			if l.cg.k == 0 {
				l.cg.k = defaultCodeNeighbors
			}
			l.cg.add(l.Model.KNN(), l.Model.Codes(), ids)
		}
		l.c.Samples += int64(len(fresh))
	}
	for _, ll := range f.LateLabels {
		late = append(late, ll)
		l.c.LateLabels++
	}
	var err error
	if st.Predictions, err = l.predictInOrder(ids, b, keep, fresh, late); err != nil {
		return nil, err
	}
	l.linearPass()
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
		l.score(p, c)
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

// noPrediction and beforeLabels stand for a missing prediction: made
// after a label was known (scored as wrong), or before any (not scored).
const (
	noPrediction = -1
	beforeLabels = -2
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
// or beforeLabels) against the true class truth.
func (l *Learner) score(p pred, truth int) {
	pred := p.Class
	if pred == beforeLabels {
		l.c.Early++
		return
	}
	l.hd.score([experts]int{p.Graph, p.Lin, p.Recent}, truth)
	l.c.Labeled++
	switch {
	case pred < 0:
		l.c.Unpredicted++
	case pred == truth:
		l.c.Correct++
	}
	l.conf.add(truth, pred)
}

func (l *Learner) setLabel(n, c int) error {
	if l.nodes[n].class == c {
		return nil
	}
	if err := l.Model.SetLabel(n, c); err != nil {
		return fmt.Errorf("stages: learner: %w", err)
	}
	l.nodes[n].class = c
	l.nodes[n].revisits = linearRevisits
	if l.linear() {
		d, ind, val := l.linRow(n)
		l.lin.step(d, ind, val, c)
		l.rc.learn(c)
	}
	l.sp.dirty = append(l.sp.dirty, n)
	return nil
}

// track records the new nodes and forgets the ones the window removed.
func (l *Learner) track(ids []int, b *record.Batch, keep, fresh []int) {
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

// predictInOrder predicts the batch's new nodes ids and learns the batch's
// labels in input order: a sample is predicted with every label that
// arrived before it (in earlier batches, or earlier in this one), and its
// own label, with it or waiting for it, is learned right after. The
// samples between two labels are predicted together. late holds the
// batch's label-only records and the labels of its duplicates, by offset.
func (l *Learner) predictInOrder(ids []int, b *record.Batch, keep, fresh []int, late []record.LateLabel) ([]Prediction, error) {
	out := make([]Prediction, len(ids))
	for p, n := range ids {
		i := keep[fresh[p]]
		out[p] = Prediction{ID: b.IDs[i], Offset: b.Offsets[i], Node: n, Score: math.NaN(), graph: noPrediction, lin: noPrediction, recent: noPrediction}
	}
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
			i := keep[fresh[p]]
			label, labeled = b.Labels[i], b.Labeled[i]
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

// predict fills out (one per new node ids) with predictions from the labels
// known now.
func (l *Learner) predict(ids []int, out []Prediction) {
	if len(l.classes) == 0 {
		for p := range out {
			out[p].early = true
		}
	}
	if l.Model.Started() {
		v := l.Model.Codes()
		for p, n := range ids {
			out[p].Code = slices.Clone(v.RawRowView(n))
		}
	}
	if l.Predictor == PredictGraph || l.Predictor == PredictSpread {
		l.predictGraph(ids, out)
		return
	}
	if !l.Model.Started() {
		return
	}
	q := l.codesOf(ids)
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
}

// codesOf returns the codes of nodes ids, one per row, in a new matrix.
func (l *Learner) codesOf(ids []int) *mat.Dense {
	v := l.Model.Codes()
	_, k := v.Dims()
	q := mat.NewDense(len(ids), k, nil)
	for p, n := range ids {
		copy(q.RawRowView(p), v.RawRowView(n))
	}
	return q
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
