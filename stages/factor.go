package stages

import (
	"fmt"

	"github.com/nmfstream/nmfstream/model"
)

// Factorizer is the factorization step of the chain, the one owner of the
// model's writes: it inserts a batch's new samples into the k-NN graph,
// takes the online step (model.Online.PartialFit: codes of the new samples,
// then the basis U), and records labels on nodes. *model.Online runs the
// step in process. A backend that runs it elsewhere (on the owners of a
// distributed model, issue 29) implements this interface and must leave
// Learner.Model, which the predict stage reads (codes, graph), as the
// step left it when PartialFit returns: the chain never reads the model
// between a write and its return.
//
// PartialFit returns the node ids of the rows of x, in order; an error
// stops the stream. SetLabel labels node n with class c (see
// model.Online.SetLabel).
type Factorizer interface {
	PartialFit(x model.Data) ([]int, error)
	SetLabel(n, c int) error
}

var _ Factorizer = (*model.Online)(nil)

func (l *Learner) factorizer() Factorizer {
	if l.Factorizer != nil {
		return l.Factorizer
	}
	return l.Model
}

// insert is the graph-insert and factorization stage: it adds the new
// samples of id to the model through the Factorizer, then records their
// nodes in the window. It returns the nodes, one per sample of id, in
// order, and what is left of the model's step (never nil): with Model
// stepping in process, the numerical part of model.Online's step
// (PartialFitDeferred), which the caller may run beside what reads only
// the graph and the labels (LearnFeatures runs it beside the spreading's
// refresh and first sweeps, predictBeside);
// with a Factorizer, nothing. Its cost is the model's step
// (model.Online.PartialFit) plus O(slots) for the window.
func (l *Learner) insert(id *Identified) ([]int, func(), error) {
	step := func() {}
	if id.X == nil {
		return nil, step, nil
	}
	var ids []int
	var err error
	// spreadGraph reads the codes the step leaves, beside the next step.
	l.Model.KeepLastCodes = (l.Predictor == PredictGraph || l.Predictor == PredictSpread) && l.spreadCodes() > 0
	if l.Factorizer == nil {
		ids, step, err = l.Model.PartialFitDeferred(id.X)
	} else {
		ids, err = l.Factorizer.PartialFit(id.X)
	}
	if err != nil {
		step()
		return nil, func() {}, fmt.Errorf("stages: learner: %w", err)
	}
	if len(ids) != len(id.IDs) {
		step()
		return nil, func() {}, fmt.Errorf("stages: learner: the factorization step returned %d nodes for %d samples", len(ids), len(id.IDs))
	}
	l.Window.track(l.Model.KNN(), ids, id.IDs)
	if l.Codes == CodesOnly && l.Model.Started() {
		l.cg.k = l.Model.Graph.K
		if l.cg.k == 0 {
			l.cg.k = defaultCodeNeighbors
		}
		l.cg.add(l.Model.KNN(), l.classCodes(l.Model.Codes()), ids)
	}
	l.sc.c.Samples += int64(len(ids))
	return ids, step, nil
}
