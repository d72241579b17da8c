package stages

import (
	"runtime"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/pipeline"
)

// TestStepBesideSame replays the digits stream (window 400, PredictGraph;
// labels late, with their samples and ahead of them: mixedLabels) with the
// model's deferred step run on a goroutine of its own (Learner.Go) beside
// the spreading's refresh and first sweeps and the predictions, and
// returned with the codes filled (which waits for it) or not (SkipCodes,
// which does not); with the step's parts through a pipeline.Spare that
// whatever waits for the step lends itself to (Model.StepSplit,
// Model.Lend) and without; with a Go that never runs the step (whatever
// waits for it must run it); and on one and on two cores (GOMAXPROCS):
// every prediction, score and code, and the final codes and basis, must be
// the same bit for bit as with the stages one after the other. Under -race
// it also checks that the step and the predictions share nothing they
// write.
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
	const (
		inOrder = iota // no Go: the step, then the predictions
		goStep         // pipeline.Go
		dropped        // a Go that never runs the step
	)
	for _, c := range []struct {
		procs, step int
		spare, skip bool // the step's parts through a Spare, SkipCodes
	}{{2, inOrder, false, false}, {2, goStep, false, false}, {1, goStep, false, false},
		{2, goStep, true, false}, {1, goStep, true, false}, {2, dropped, true, false},
		{2, goStep, true, true}, {1, goStep, true, true}, {2, goStep, false, true}} {
		old := runtime.GOMAXPROCS(c.procs)
		l := newDigitsLearner(400)
		l.Codes = u
		l.SpreadMetric = metric
		l.Model.SearchDim = searchDim
		l.Model.Split = pipeline.Split(2)
		if c.spare {
			sp := new(pipeline.Spare)
			l.Model.StepSplit, l.Model.Lend = sp.Split, sp.Lend
		}
		switch c.step {
		case goStep:
			l.Go = pipeline.Go
		case dropped:
			l.Go = func(func()) {}
		}
		l.SkipCodes = c.skip
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
