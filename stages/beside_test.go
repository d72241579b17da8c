package stages

import (
	"runtime"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/splittest"
	"github.com/nmfstream/nmfstream/pipeline"
)

// TestStepBesideSame replays the digits stream (window 400, PredictGraph;
// labels late, with their samples and ahead of them: mixedLabels) with the
// model's deferred step run beside the spreading's refresh and first
// sweeps and the predictions (Learner.Split) and without, the model's own
// parts split alike, with the step's parts through a pipeline.Spare that
// the predictions' goroutine lends itself to once done (Model.StepSplit,
// Learner.Lend) and without, and on one and on two cores (GOMAXPROCS):
// every prediction, score and code, and the final codes and basis, must be
// the same bit for bit. Under -race it also checks that the step and the
// refresh share nothing they write.
//
// The step also runs on a goroutine of its own (Learner.Go), beside the
// predictions and, once they are returned, on: with the codes filled
// (which waits for it) and without (SkipCodes, which does not).
func TestStepBesideSame(t *testing.T) { checkStepBeside(t, CodesAuto, 0, 0) }

// TestStepAheadSame is TestStepBesideSame on a graph searched in a random
// projection of the samples (Model.SearchDim), whose rows the model does
// not share with the graph: with Learner.Go, the next batch's insertion
// into the graph runs while the last batch's step still runs
// (model.Online.PartialFitDeferred), and the model's Lend makes the
// goroutine that then waits for that step take its parts.
func TestStepAheadSame(t *testing.T) { checkStepBeside(t, CodesAuto, 0, 16) }

// TestPredictBesideCodesOnly is TestStepBesideSame with CodesOnly, whose
// graph of the codes the predictions beside the step wait for.
func TestPredictBesideCodesOnly(t *testing.T) { checkStepBeside(t, CodesOnly, 0, 0) }

// TestPredictBesideSpreadMetric is TestStepBesideSame with SpreadMetric,
// whose graph, rebuilt from the window's rows and labels, is built beside
// the step.
func TestPredictBesideSpreadMetric(t *testing.T) { checkStepBeside(t, CodesAuto, 0.1, 0) }

// checkStepBeside checks that the predictions (labels, scores, codes) and
// the final codes and basis are the same bits with the step run before
// the predictions and beside them, on one core or two, with codes use u,
// SpreadMetric metric and the model's SearchDim searchDim.
func checkStepBeside(t *testing.T, u CodeUse, metric float64, searchDim int) {
	t.Helper()
	recs := mixedLabels()
	type run struct {
		preds []Prediction
		v, u  *mat.Dense
		skip  bool
	}
	var runs []run
	for _, c := range []struct {
		beside, procs int
		spare         bool
		goStep, skip  bool // Learner.Go, SkipCodes
	}{{0, 2, false, false, false}, {2, 2, false, false, false}, {2, 1, false, false, false},
		{2, 2, true, false, false}, {2, 1, true, false, false}, {-1, 2, true, false, false},
		{2, 2, true, true, false}, {2, 2, true, true, true}, {2, 1, true, true, true}, {0, 2, false, true, true}} {
		old := runtime.GOMAXPROCS(c.procs)
		l := newDigitsLearner(400)
		l.Codes = u
		l.SpreadMetric = metric
		l.Model.SearchDim = searchDim
		l.Model.Split = pipeline.Split(2)
		switch {
		case c.beside > 0:
			l.Split = pipeline.Split(c.beside)
		case c.beside < 0:
			// The predictions' part first, then the step's, on one
			// goroutine: the predictions must not wait to lend
			// themselves to a step that runs after them.
			l.Split = splittest.Reverse
		}
		if c.spare {
			// The step's parts on the step's goroutine, and on the
			// predictions' once they are done.
			sp := new(pipeline.Spare)
			l.Model.StepSplit, l.Lend, l.Model.Lend = sp.Split, sp.Lend, sp.Lend
		}
		if c.goStep {
			l.Go, l.SkipCodes = pipeline.Go, c.skip
		}
		r := run{skip: c.skip}
		for _, b := range batches(recs[:1000], 50) {
			st, err := l.Learn(b)
			if err != nil {
				runtime.GOMAXPROCS(old)
				t.Fatal(err)
			}
			r.preds = append(r.preds, st.Predictions...)
		}
		runtime.GOMAXPROCS(old)
		r.v, r.u = mat.DenseCopyOf(l.Model.Codes()), mat.DenseCopyOf(l.Model.Basis())
		runs = append(runs, r)
	}
	want := runs[0]
	if len(want.preds) < 700 { // 1,000 records, some of them label-only
		t.Fatalf("%d predictions", len(want.preds))
	}
	for k, got := range runs[1:] {
		if len(got.preds) != len(want.preds) {
			t.Fatalf("run %d: %d predictions, want %d", k+1, len(got.preds), len(want.preds))
		}
		for i, w := range want.preds {
			g := got.preds[i]
			if got.skip {
				if g.Code != nil {
					t.Fatalf("run %d, prediction %d: a code with SkipCodes", k+1, i)
				}
				g.Code = w.Code // none to compare
			}
			if g.Label != w.Label || !sameFloat(g.Score, w.Score) || !slices.Equal(g.Code, w.Code) {
				t.Fatalf("run %d, prediction %d: %+v, want %+v", k+1, i, g, w)
			}
		}
		if !mat.Equal(got.v, want.v) || !mat.Equal(got.u, want.u) {
			t.Errorf("run %d: the final codes or basis differ", k+1)
		}
	}
}

// mixedLabels is digitsStream(0.3, 20) with some labels moved: every
// third late label comes with its sample instead, and every third of the
// others arrives 30 records before it (a pending label).
func mixedLabels() []testRecord {
	recs, _ := digitsStream(0.3, 20)
	at := map[string]int{}
	for i, r := range recs {
		if r.x != nil {
			at[r.id] = i
		}
	}
	var with, ahead = map[string]string{}, map[int][]testRecord{}
	late := 0
	for _, r := range recs {
		if r.x != nil {
			continue
		}
		switch late++; late % 3 {
		case 0:
			with[r.id] = r.label
		case 1:
			if i := at[r.id] - 30; i > 0 {
				ahead[i] = append(ahead[i], r)
			}
		}
	}
	var out []testRecord
	for i, r := range recs {
		out = append(out, ahead[i]...)
		if r.x == nil && (with[r.id] != "" || slices.ContainsFunc(ahead[at[r.id]-30], func(a testRecord) bool { return a.id == r.id })) {
			continue // moved
		}
		if l, ok := with[r.id]; ok && r.x != nil {
			r.label, r.labeled = l, true
		}
		out = append(out, r)
	}
	return out
}
