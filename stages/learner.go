package stages

import (
	"context"
	"errors"
	"runtime/trace"
	"slices"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/classify"
	"github.com/nmfstream/nmfstream/record"
)

// Learner runs the in-order stages of a stream's chain on each batch (see
// the package doc and LearnFeatures): it featurizes the batch, adds its
// samples to the online factorization (model.Online, or a Factorizer) and
// its k-NN graph, predicts each new sample's label, then learns the labels
// that arrived. It holds the state those stages share: the window's nodes
// (Window), the classes, the predictions and labels waiting for each other,
// the predictor's experts and the scorer. A service that recomposes the
// chain calls the stages' exported parts (NewFeatures, Featurize.RowsOf,
// Window.Identify, the Factorizer) and Learner for the rest.
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
	// SpreadSweeps is the number of Gauss–Seidel sweeps of PredictGraph's
	// label scores over the window per batch, before the conjugate
	// gradients that solve them. If zero, it defaults to 3.
	SpreadSweeps int
	// SpreadPower is p of PredictGraph's edge weights, the cosine of the
	// two samples (CodesOnly: of their codes) to the power p. If zero, it
	// defaults to 20 on dense rows and to binary weights on sparse ones
	// (documents); a negative value spreads over the k-NN graph's own
	// weights (Model.Weighting; binary by default).
	SpreadPower float64
	// SpreadCodes is q of the codes' factor on PredictGraph's edge
	// weights with CodesAuto: each edge of the samples' graph weighs
	// w_ij·cos(v_i, v_j)^q, v the method's codes as they stood before the
	// batch's step (codeScaled), once the model has them. If zero, it
	// defaults to 4 on dense rows (images) and 40 on sparse ones
	// (documents, whose edges are otherwise binary); a negative value
	// leaves the codes out of the weights.
	SpreadCodes float64
	// SpreadMetric, if positive, makes PredictGraph spread over a graph
	// searched under a metric learned from the window's labels, on dense
	// rows of at most 256 features with two classes labeled: each sample
	// extended by its Fisher discriminant coordinates (the window's
	// covariance shrunk halfway to a multiple of the identity), whose
	// squared length averages SpreadMetric times the samples' own, and the
	// graph rebuilt every batch (O(N²·D), metricGraph). Zero (the default)
	// spreads over the samples' own k-NN graph: the learned metric cost
	// accuracy on the digits streams (BENCHMARKS.md, "A metric learned from
	// the labels").
	SpreadMetric float64
	// Codes says what the predictor reads of the codes (CodeUse). The zero
	// value is CodesAuto.
	Codes CodeUse
	// NoCodeExpert leaves the code-space expert (codeVotes: the class
	// shares of the nearest labeled codes) out of PredictGraph's mixture on
	// documents, the ablation of BENCHMARKS.md. It must be false with
	// another Predictor or CodesOff, which read no such expert.
	NoCodeExpert bool
	// AnswerUnseenLabels makes a label-only record whose id names no
	// sample seen (none in the window, no arrival prediction waiting for
	// its label) a record without features, as docs/DESIGN.md §5 has it
	// (a late label is a later record of the same id): it is rejected
	// (record.ErrNoFeatures), answered from the class shares, scored
	// against its label, and counted in them, so that a prequential scorer
	// finds a prediction for it. Without it such a label waits for its
	// sample (Horizon), as serve's labels, which may overtake their
	// records, do. stream sets it.
	AnswerUnseenLabels bool
	// PriorPower is γ of PredictGraph's mixture on documents: each class's
	// mixed probability is divided by its share of the window's labels,
	// smoothed by one label a class, to the power γ (priorScale), so that
	// the experts that carry the labels' class prior (the linear model,
	// the recent labels, the codes' vote) do not answer the majority class
	// for every sample they cannot tell apart. Zero means
	// defaultPriorPower; a negative value none (the mixture as it is). It
	// must be zero with another Predictor, which has no mixture.
	PriorPower float64
	// Split, if set, runs the PredictWalk walks of a batch in parts at
	// once (pipeline.Split provides one), each part with its own walker;
	// the predictions are the same as without it.
	Split func(n int, body func(lo, hi int))
	// Go, if set, starts the model's deferred step of a batch on a
	// goroutine of its own (pipeline.Go): the batch's predictions are made
	// beside it, on the caller's goroutine, from PredictGraph's refresh of
	// the graph's weights and first sweeps of the label scores on, and
	// LearnFeatures returns them without waiting for the step unless it
	// fills their codes (SkipCodes), so that the step also runs beside the
	// next batch's insertion into the graph. Whatever waits for the step
	// (filling the codes, the model's next write) lends its goroutine to
	// the step's parts when the model has Lend (pipeline.Spare.Lend, with
	// the model's StepSplit the same Spare's Split). The predictions and
	// the model are the same as without it.
	Go func(f func())
	// SkipCodes leaves every Prediction.Code nil: filling the codes waits
	// for the batch's step (fillCodes), which with Go set would otherwise
	// run no further than the predictions.
	SkipCodes bool

	// Factorizer takes the factorization step (graph insertion, partial
	// fit, labels on nodes). If nil, Model takes it, in process.
	Factorizer Factorizer
	// Window holds the window's nodes (id, class, age); the chain's stages
	// write it, callers read it.
	Window

	classes []string
	classOf map[string]int
	// labelSeen: a late label has been learned (lateLabel), perhaps
	// waiting for its sample without a class yet (KnowsLabel).
	labelSeen bool
	forgotten int64       // ForgottenLabels
	walks     []*walkPart // by first position, see walk
	walked    []bool
	preds     fifo[pred]         // arrival predictions waiting for a label
	pending   fifo[string]       // labels waiting for their sample
	waited    []record.LateLabel // the batch's late labels that waited (Step.Waited), while LearnFeatures runs
	sc        Scorer             // the prequential scorer, and the learner's other counters
	sp        spreader           // PredictGraph's label scores
	wr        weightRows         // the k-NN graph's weights PredictGraph spreads over
	cg        codeGraph          // CodesOnly's graph of the codes
	cs        codeScaled         // the weights PredictGraph spreads over, scaled by the codes
	mg        metricGraph        // SpreadMetric's graph
	lin       linear             // PredictGraph's linear model
	hd        hedge              // PredictGraph's weights of its experts
	rc        recent             // PredictGraph's no-change expert

	// featureless: the batch's records without features still to
	// predict, by offset, and featurelessOut their predictions
	// (Step.Featureless), while LearnFeatures runs.
	featureless    []record.Reject
	featurelessOut []Prediction
	cp             classPrior      // their answer
	unseen         []record.Reject // the batch's label-only records of unseen ids (AnswerUnseenLabels), rejected
}

// Step is what Learn did with one batch.
type Step struct {
	// Predictions holds one entry per sample added, in input order.
	Predictions []Prediction
	// Rejects lists the records of the batch that could not be used: those
	// the source rejected and those Featurize rejected.
	Rejects []record.Reject
	// Featureless holds an arrival prediction for each record of Rejects
	// without features (record.ErrNoFeatures), in input order: made from
	// the class shares of the labels before it (Node −1, no Code), since
	// a prequential scorer counts such a record and nothing else about it
	// is known.
	Featureless []Prediction
	// Duplicates lists the offsets of samples skipped as duplicates.
	Duplicates []int64
	// Waited lists the batch's late labels that waited for their sample
	// when they were applied (neither the window held it nor an arrival
	// prediction awaited it), in the order applied: an id twice if a later
	// label of it replaced a waiting one. LabelWaits says which still wait
	// (StillWaiting counts them), Replaced which a later one replaced.
	Waited []record.LateLabel
	// Forgotten is the number of waiting labels, of this batch or earlier
	// ones, the Learner forgot while it learned the batch, oldest first,
	// to keep them within its horizon (the growth of ForgottenLabels).
	Forgotten int64
}

// Counters returns the running totals.
func (l *Learner) Counters() Counters { return l.sc.c }

// ForgottenLabels returns the number of labels that waited for their
// sample and were forgotten, the oldest first, to keep Pending within the
// horizon (Horizon), since the Learner was made or restored.
func (l *Learner) ForgottenLabels() int64 { return l.forgotten }

// Pending returns the number of labels waiting for their sample.
func (l *Learner) Pending() int { return l.pending.len() }

// KnowsLabel reports whether a label has been learned: a class, or a late
// label waiting for its sample (which takes no class until the sample
// comes). A sample predicted after it is scored: it is not early.
func (l *Learner) KnowsLabel() bool { return len(l.classes) > 0 || l.labelSeen }

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
	if l.classOf == nil {
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
// Learn is LearnFeatures(NewFeatures(b)). A pipeline runs NewFeatures in
// parallel and LearnFeatures on one goroutine instead.
func (l *Learner) Learn(b *record.Batch) (*Step, error) {
	if l.Model == nil {
		return nil, errNoModel
	}
	return l.LearnFeatures(NewFeatures(b))
}

var (
	errNoModel   = errors.New("stages: learner: no model")
	errNeighbors = errors.New("stages: learner: negative Neighbors (the voting neighbours; 0 is the predictor's default)")
)

// ErrCodesOff is Check's error for CodesOff with a predictor that
// classifies the codes (PredictNearest, PredictWalk, PredictPropagate):
// it would have nothing to predict from.
var ErrCodesOff = errors.New("stages: learner: CodesOff with a predictor of codes (nearest, walk or propagate): use PredictGraph or PredictSpread")

// LearnFeatures runs the in-order stages of the chain on a batch that
// NewFeatures (or the caller) made, in this order:
//
//	featurize (Featurize.RowsOf: the stream's dimension, TF-IDF of text)
//	→ identify (Window.Identify: new samples, duplicates, late labels)
//	→ insert (the Factorizer's step: graph insertion and partial fit)
//	→ predict and label (predict.go, label.go: each sample predicted with
//	  the labels that arrived before it, then its label learned and its
//	  prediction scored)
//	→ the linear model's pass over the last labels (PredictGraph).
//
// With Go set and Model stepping in process, the numerical part of the
// model's step (model.Online.PartialFitDeferred: the codes' sweeps and the
// U step) runs beside PredictGraph's refresh of the graph's weights, its
// first sweeps of the label scores and the predictions, which read the
// graph and the labels only (predictBeside): the results are those of the
// stages run one after the other.
//
// Under a runtime execution trace (nmfstream stream --trace) each batch
// marks its phases as trace regions, which bench/streamprof/alone.py sums:
// "insert" (the model's insertion, l.insert), "beside" (predictBeside),
// and within it "step" and "predict", its two parts.
//
// Batches must come in input order. LearnFeatures reads f and keeps no
// reference to it; it panics, before changing anything, if f's lengths
// disagree (see Features.IDs). Like every method of Learner it must be
// called from the goroutine that owns the Learner: in a pipeline, a stage
// of parallelism 1. An error means the model cannot go on (it is not a
// data error: those are rejects in Step); the Learner must not be used
// after one, except to read its Counters.
func (l *Learner) LearnFeatures(f *Features) (*Step, error) {
	if l.Model == nil {
		return nil, errNoModel
	}
	f.check()
	if err := l.Check(); err != nil {
		return nil, err
	}
	n, last := f.Records(), f.lastOffset()
	l.init()
	forgot := l.forgotten
	st := &Step{Rejects: slices.Clone(f.Rejects)}
	l.sc.c.Records += int64(n)
	x, keep, bad := l.rows(f)
	st.Rejects = append(st.Rejects, bad...)
	l.sc.c.Rejected += int64(len(st.Rejects))
	id := l.Window.Identify(f, x, keep)
	st.Duplicates = id.Duplicates
	l.sc.c.Duplicates += int64(len(id.Duplicates))
	r := trace.StartRegion(context.Background(), "insert")
	ids, step, err := l.insert(id)
	r.End()
	if err != nil {
		return nil, err
	}
	l.sc.c.LateLabels += int64(id.LateLabels)
	r = trace.StartRegion(context.Background(), "beside")
	l.waited, l.featureless = nil, featurelessQueue(st.Rejects)
	st.Predictions, err = l.predictBeside(step, ids, id)
	st.Waited, l.waited = l.waited, nil
	st.Featureless, l.featurelessOut, l.featureless = l.featurelessOut, nil, nil
	st.Forgotten = l.forgotten - forgot
	if len(l.unseen) > 0 { // records without features, not late labels
		st.Rejects = append(st.Rejects, l.unseen...)
		slices.SortStableFunc(st.Rejects, func(a, b record.Reject) int { return cmpOffset(a.Offset, b.Offset) })
		l.sc.c.Rejected += int64(len(l.unseen))
		l.sc.c.LateLabels -= int64(len(l.unseen))
		l.unseen = nil
	}
	r.End()
	if err != nil {
		return nil, err
	}
	if n > 0 {
		l.sc.c.Offset = max(l.sc.c.Offset, last+1)
	}
	return st, nil
}

// predictBeside runs step (what insert left of the model's step) beside
// the refresh of the weights PredictGraph spreads over (refreshSpread),
// the batch's first sweeps of the label scores (presweep) and
// predictInOrder, at once on a goroutine of Go's when it is set, then
// fills the predictions' codes (fillCodes, unless SkipCodes) and runs the
// linear model's pass.
// What runs beside step reads the graph, the labels and the window's rows,
// and sets labels (model.Online.PartialFitDeferred allows all of these);
// a read of the codes (the code-space vote of samples no label reaches,
// CodesOnly's graph) waits for step, so the predictions are those made
// after it.
func (l *Learner) predictBeside(step func(), ids []int, id *Identified) ([]Prediction, error) {
	var out []Prediction
	var err error
	if l.Go == nil {
		step()
		out, err = l.predictInOrder(ids, id)
	} else {
		l.Go(func() { trace.WithRegion(context.Background(), "step", step) })
		r := trace.StartRegion(context.Background(), "predict")
		l.refreshSpread()
		l.presweep(ids, id)
		out, err = l.predictInOrder(ids, id)
		r.End()
	}
	if !l.SkipCodes {
		l.fillCodes(ids, out)
	}
	if err != nil {
		return out, err
	}
	l.linearPass()
	return out, nil
}
