package stages

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/classify"
)

// The predict stage: it owns how a new sample's label is predicted from the
// labels known now (Predictor) and the experts' workspaces (walks here; the
// spreading, the linear model and their weights in spread.go and
// linear.go). It reads the window's nodes (Window: live, class) and the
// model's codes and graph (Model.Codes, Model.KNN) and writes only
// Predictions and its own workspaces; it learns nothing, so the labels of a
// batch are applied after it (the label stage, label.go, calls it in input
// order). Its cost per batch is the Predictor's (see each constant). Change
// the predictor here: predict picks the Predictor's function.

// Predictor chooses how Learner predicts a new sample's label.
type Predictor int

const (
	// PredictGraph (the default) spreads the labels over the graph and, on
	// sparse rows (documents), mixes in three more experts, the four weighted
	// by their recent mistakes on the stream (exponential weights): the
	// known labels spread over the stream's k-NN graph, the graph of every
	// sample in the window, labeled or not (the harmonic function of Zhu,
	// Ghahramani and Lafferty, ICML 2003, with class mass normalization over
	// the classes labeled in the window); an online multinomial logistic
	// regression on the samples' features (an AdaGrad step on each label as
	// it is learned, and one pass per batch over the labels of the last 3
	// batches); the class shares of the last labels (a no-change
	// forecaster, for streams whose labels come in runs); and, once the
	// model has codes, the vote of the sample's nearest labeled codes
	// (codevote.go; not with CodesOff or NoCodeExpert), which waits for the
	// batch's step. Each class's mixed probability is then divided by the
	// class's share of the window's labels to the power PriorPower
	// (priorScale), which the experts that follow the labels' majority
	// would otherwise count twice. The spreading uses
	// the unlabeled samples, which carry labels along the data's manifold:
	// on the digits and MNIST streams it leads from the first label on; the
	// linear model separates documents that the graph mixes (BENCHMARKS.md).
	// The spreading is solved, not approximated: conjugate gradients once
	// per batch, then each label learned within it moves the scores by its
	// own harmonic function (stages/harmonic.go). It costs (SpreadSweeps +
	// the iterations, about 7 a batch on MNIST)·(edges)·C per batch for C
	// classes, plus about k·(the nodes a label reaches at a residual of
	// 10⁻³, some 1,500 on MNIST) per label learned; the linear model
	// O(nnz·C) per label per step, and C·D weights (none above 2²²: then the
	// spreading alone predicts); the codes' vote O(n·L·K) per batch of n
	// samples with L labeled samples in the window and K code columns.
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

	early                     bool // made before any label was known
	shares                    bool // answered from the class shares (answerFromShares), not by the experts
	graph, lin, recent, codes int  // PredictGraph's experts' classes, −1 for none
}

// unanswered returns the arrival prediction of record id (at offset off,
// node n; −1 for a record without features) before any predictor has
// answered it: no label, a NaN score, and no expert's class.
func unanswered(id string, off int64, n int) Prediction {
	return Prediction{ID: id, Offset: off, Node: n, Score: math.NaN(), graph: noPrediction, lin: noPrediction, recent: noPrediction, codes: noPrediction}
}

// predict fills out (one per new node ids) with predictions from the labels
// known now: the Predictor's, and for a sample it leaves without an answer
// once a label is known (no labeled sample of the window reaches it, as
// when every label so far came after its sample left the window) the
// answer of a record without features (answerFromShares): a prediction
// left without an answer counts as wrong.
func (l *Learner) predict(ids []int, out []Prediction) {
	l.predictBy(ids, out)
	for p := range out {
		if out[p].Label == "" && !out[p].early {
			l.answerFromShares(&out[p])
		}
	}
}

// predictBy fills out (one per new node ids) with the Predictor's
// predictions from the labels known now.
func (l *Learner) predictBy(ids []int, out []Prediction) {
	if !l.KnowsLabel() {
		for p := range out {
			out[p].early = true
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

// fillCodes sets each out[p].Code to a copy of node ids[p]'s code once the
// model has codes. It waits for the batch's step (model.Online.Codes), so
// predict, which fills no codes, can run beside that step.
func (l *Learner) fillCodes(ids []int, out []Prediction) {
	if !l.Model.Started() {
		return
	}
	v := l.Model.Codes()
	for p, n := range ids {
		out[p].Code = slices.Clone(v.RawRowView(n))
	}
}

// classCodes returns the columns of v, codes by slot (the model's Codes or
// LastCodes), that classify (model.Online.ClassCols): v itself, or a view
// of it. Every reader of the codes that predicts or scores a class reads
// them through it; the codes written to --out are the whole rows.
func (l *Learner) classCodes(v *mat.Dense) *mat.Dense {
	lo, hi := l.Model.ClassCols()
	r, k := v.Dims()
	if lo == 0 && hi == k {
		return v
	}
	return v.Slice(0, r, lo, hi).(*mat.Dense)
}

// codesOf returns the classifying codes (classCodes) of nodes ids, one per
// row, in a new matrix.
func (l *Learner) codesOf(ids []int) *mat.Dense {
	v := l.classCodes(l.Model.Codes())
	_, k := v.Dims()
	q := mat.NewDense(len(ids), k, nil)
	for p, n := range ids {
		copy(q.RawRowView(p), v.RawRowView(n))
	}
	return q
}

// liveCodes returns the live nodes of the window (only the labeled ones if
// labeled), in slot order, their classes (−1 for none) and their codes, one
// row per node, in a new matrix.
func (l *Learner) liveCodes(labeled bool) (nodes, classes []int, codes *mat.Dense) {
	for n, nd := range l.nodes {
		if nd.live && (!labeled || nd.class >= 0) {
			nodes = append(nodes, n)
			classes = append(classes, nd.class)
		}
	}
	if len(nodes) == 0 {
		return nil, nil, nil
	}
	return nodes, classes, l.codesOf(nodes)
}

// nearest votes among the labeled live nodes.
func (l *Learner) nearest(q *mat.Dense) ([]int, []float64) {
	kk := l.Neighbors
	if kk == 0 {
		kk = 1
	}
	nn, _ := l.labeledVoters(kk, l.Metric)
	if nn == nil {
		return nil, nil
	}
	return nn.PredictScoresTo(nil, nil, q)
}

// labeledVoters returns the labeled live window samples' classifying codes
// fitted for a vote of k neighbours (at most their number) under metric,
// and their classes in the order the vote's indices name them; nil without
// a labeled sample or where the codes cannot be fitted (zero code rows
// under Cosine, for instance). It copies the L labeled codes: O(L·K).
func (l *Learner) labeledVoters(k int, metric classify.Metric) (*classify.NearestNeighbor, []int) {
	_, y, ref := l.liveCodes(true)
	if len(y) == 0 {
		return nil, nil
	}
	nn := &classify.NearestNeighbor{K: min(k, len(y)), Metric: metric}
	if err := nn.Fit(ref, y); err != nil {
		return nil, nil
	}
	return nn, y
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
	g, v := l.Model.KNN(), l.classCodes(l.Model.Codes())
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
	all, y, x := l.liveCodes(false)
	if !slices.ContainsFunc(y, func(c int) bool { return c >= 0 }) {
		return nil, nil
	}
	pos := make(map[int]int, len(all))
	for r, n := range all {
		pos[n] = r
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
