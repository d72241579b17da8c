package stages

import (
	"errors"
	"math"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/classify"
)

// Consolidation is what a warm-started batch refit of the window
// (Learner.Consolidate) found: how far the online factorization was from
// a batch fit of the same method on the window's samples, graphs and
// labels known so far, the reference of docs/DESIGN.md §3 for the online
// updates.
type Consolidation struct {
	// Iterations is the number of batch updates run (at most those asked
	// for: the engine stops earlier once the objective settles).
	Iterations int
	// ObjectiveOnline and ObjectiveBatch are the method's objective over
	// the window (model.Online.Objective) before and after the refit.
	ObjectiveOnline, ObjectiveBatch float64
	// CodesChange is ‖V_batch − V_online‖_F / ‖V_online‖_F over the live
	// samples' codes. NGE's iteration may reorder the columns of V, which
	// this counts as change.
	CodesChange float64
	// Online and Batch score the window's labeled codes before and after
	// the refit (Embedding).
	Online, Batch classify.Embedding
}

// Gap returns the relative objective gap (ObjectiveOnline −
// ObjectiveBatch) / |ObjectiveBatch|: positive when the batch fit is
// lower, NaN when the batch objective is zero.
func (c Consolidation) Gap() float64 {
	if c.ObjectiveBatch == 0 {
		return math.NaN()
	}
	return (c.ObjectiveOnline - c.ObjectiveBatch) / math.Abs(c.ObjectiveBatch)
}

// Consolidate refits the model on its window in place, warm-started from
// the online U and V (model.Online.Refit: the method's full terms on the
// window's current graphs and labels, at most iters updates), and reports
// how far the online state was from that fit. The learner goes on from the
// refitted codes: a stream may consolidate now and then (on the digits, a
// refit of 50 updates after every step moved the codes' 1-NN by less than
// half a point, BENCHMARKS.md "Online codes against a batch refit"), and
// stream's --batch-reference runs it once, after the last prediction. It
// costs iters batch updates of the window, plus Embedding twice. It returns
// model.ErrNotFitted before the model's first fit, and the refit's error
// (model.ErrDiverged) with what it reports of the fit so far.
func (l *Learner) Consolidate(iters int) (Consolidation, error) {
	if l.Model == nil {
		return Consolidation{}, errors.New("stages: learner: no model")
	}
	if iters <= 0 {
		return Consolidation{}, errors.New("stages: learner: consolidate: iterations must be positive")
	}
	l.Model.Settle()
	if !l.Model.Started() {
		return Consolidation{}, model.ErrNotFitted
	}
	c := Consolidation{ObjectiveOnline: l.Model.Objective(), Online: l.Embedding()}
	live := l.Model.KNN().IDs()
	v := l.Model.Codes()
	_, k := v.Dims()
	before := make([]float64, 0, len(live)*k)
	for _, n := range live {
		before = append(before, v.RawRowView(n)...)
	}
	res, err := l.Model.Refit(iters)
	c.Iterations = res.Iters
	c.ObjectiveBatch = l.Model.Objective()
	v = l.Model.Codes()
	var diff, size float64 // ‖V_batch − V_online‖², ‖V_online‖²
	for r, n := range live {
		for j, x := range v.RawRowView(n) {
			b := before[r*k+j]
			diff += (x - b) * (x - b)
			size += b * b
		}
	}
	c.CodesChange = math.Sqrt(diff / size)
	c.Batch = l.Embedding()
	return c, err
}
