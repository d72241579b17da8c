package model

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/testenv"
	"github.com/nmfstream/nmfstream/model/classify"
	"github.com/nmfstream/nmfstream/model/metrics"
)

// ssnmfRow holds one line of the held-out comparison (BENCHMARKS.md, "What
// the codes add", SSNMF): held-out accuracies (ind) and accuracies on the
// pool's unlabeled rows (trans).
type ssnmfRow struct {
	name              string
	indBs, ind1NN     float64 // argmax(B·s) on projected codes; 1-NN on them
	transBs, trans1NN float64 // argmax(B·v) on the pool's codes; 1-NN on them
	fit               time.Duration
}

// transductive1NN scores 1-NN of the pool's unlabeled rows of rows (codes
// or pixels) against its labeled rows, on their true classes.
func (t digitsTask) transductive1NN(rows *mat.Dense) float64 {
	n, _ := rows.Dims()
	var idx []int
	for i := 0; i < n; i++ {
		if t.trainY[i] < 0 {
			idx = append(idx, i)
		}
	}
	un := gatherRows(rows, idx)
	truth := make([]int, len(idx))
	for r, i := range idx {
		truth[r] = t.trainTrue[i]
	}
	u := t
	u.testY = truth
	return u.nnAccuracy(rows, un)
}

// transductiveOf scores predictions for all pool rows on the unlabeled ones.
func (t digitsTask) transductiveOf(pred []int) float64 {
	var p, y []int
	for i, l := range t.trainY {
		if l < 0 {
			p, y = append(p, pred[i]), append(y, t.trainTrue[i])
		}
	}
	return metrics.Accuracy(p, y)
}

// ssnmfEval fits SSNMF with (rank, λ, α) on the task and scores it.
func ssnmfEval(tb testing.TB, task digitsTask, rank int, lambda, alpha float64) ssnmfRow {
	tb.Helper()
	m := &SSNMF{Common: Common{Rank: rank, MaxIter: int(floatList("ssnmf-iters", *ssnmfIters)[0])}, Lambda: lambda, Alpha: alpha}
	t0 := time.Now()
	if err := m.Fit(DenseRows(task.train), task.trainY); err != nil {
		tb.Fatal(err)
	}
	r := ssnmfRow{name: fmt.Sprintf("SSNMF K=%d λ=%g α=%g (%d it)", rank, lambda, max(alpha, 0), m.Result().Iters), fit: time.Since(t0)}
	var s mat.Dense
	if err := m.Projector(ProjectGraph).ProjectTo(&s, DenseRows(task.test)); err != nil {
		tb.Fatal(err)
	}
	r.indBs = metrics.Accuracy(m.ClassifyCodes(&s), task.testY)
	r.ind1NN = task.nnAccuracy(m.Codes(), &s)
	r.transBs = task.transductiveOf(m.PredictTrain())
	r.trans1NN = task.transductive1NN(m.Codes())
	return r
}

// baselineEval scores 1-NN on a method's codes (held out: projected with
// ProjectGraph and the given anchor α) and transductively.
func baselineEval(tb testing.TB, task digitsTask, name string, m Method, alpha float64) ssnmfRow {
	tb.Helper()
	t0 := time.Now()
	if err := m.Fit(DenseRows(task.train), task.trainY); err != nil {
		tb.Fatal(err)
	}
	r := ssnmfRow{name: name, fit: time.Since(t0), indBs: -1, transBs: -1}
	codes, err := task.codes(m, ProjectGraph, alpha)
	if err != nil {
		tb.Fatal(err)
	}
	r.ind1NN = task.nnAccuracy(m.Codes(), codes)
	r.trans1NN = task.transductive1NN(m.Codes())
	return r
}

// The grid and sets of TestSSNMFHeldOut, as test flags (go test ./model
// -run TestSSNMFHeldOut -args -ssnmf-ranks 20,40 …): comma-separated lists.
var (
	ssnmfRanks      = flag.String("ssnmf-ranks", "40", "TestSSNMFHeldOut: SSNMF's ranks")
	ssnmfLambdas    = flag.String("ssnmf-lambdas", "300", "TestSSNMFHeldOut: SSNMF's λ")
	ssnmfAlphas     = flag.String("ssnmf-alphas", "100", "TestSSNMFHeldOut: SSNMF's α (−1: no graph term)")
	ssnmfIters      = flag.String("ssnmf-iters", "200", "TestSSNMFHeldOut: SSNMF's updates")
	ssnmfSeeds      = flag.String("ssnmf-seeds", "1,2,3", "TestSSNMFHeldOut: the digits splits' seeds")
	ssnmfValidation = flag.Bool("ssnmf-validation", false, "TestSSNMFHeldOut: score the validation split of each pool")
	ssnmfMNIST      = flag.Bool("ssnmf-mnist", false, "TestSSNMFHeldOut: MNIST's split (10,000 pool, 5,000 test) instead of the digits")
	ssnmfBaselines  = flag.Bool("ssnmf-baselines", true, "TestSSNMFHeldOut: also score the pixels' and the codes' baselines")
)

// floatList parses the comma-separated list s of flag name.
func floatList(name, s string) []float64 {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			panic(fmt.Sprintf("-%s: %v", name, err))
		}
		out = append(out, v)
	}
	return out
}

func logRows(t *testing.T, set string, rows []ssnmfRow) {
	f := func(x float64) string {
		if x < 0 {
			return "—"
		}
		return fmt.Sprintf("%.4f", x)
	}
	for _, r := range rows {
		t.Logf("| %s | %s | %s | %s | %s | %s | %.1f s |", set, r.name, f(r.indBs), f(r.ind1NN), f(r.transBs), f(r.trans1NN), r.fit.Seconds())
	}
}

// TestSSNMFHeldOut compares SSNMF's classifier argmax(B·s) and the 1-NN on
// its codes with the 1-NN on GNMF's and SSKNMF's codes and on the pixels,
// held out and transductively (the pool's unlabeled rows), on the digits
// split of eval (10 labels per class) for the seeds of -ssnmf-seeds
// (-ssnmf-validation scores the validation split of the pool instead) or,
// with -ssnmf-mnist, TestMNISTAccuracy's split (10,000 pool, 5,000 test,
// seed 1), and logs the table of BENCHMARKS.md. SSNMF's grid is
// -ssnmf-ranks × -ssnmf-alphas × -ssnmf-lambdas. On the digits' test
// splits at the defaults it asserts what BENCHMARKS reports: argmax(B·s)
// at least label spreading on the pixels and 3 points above their 1-NN.
func TestSSNMFHeldOut(t *testing.T) {
	testenv.SkipUnlessLong(t, "SSNMF against the codes' and pixels' 1-NN, held out")
	ranks := floatList("ssnmf-ranks", *ssnmfRanks)
	lambdas := floatList("ssnmf-lambdas", *ssnmfLambdas)
	alphas := floatList("ssnmf-alphas", *ssnmfAlphas)
	run := func(set string, task digitsTask, baselines bool) []ssnmfRow {
		var rows []ssnmfRow
		if baselines {
			pix := ssnmfRow{name: "pixels 1-NN", indBs: -1, transBs: -1}
			pix.ind1NN = task.nnAccuracy(task.train, task.test)
			pix.trans1NN = task.transductive1NN(task.train)
			rows = append(rows, pix)
			var lp classify.LabelPropagation // the defaults: sklearn's LabelSpreading, 7-NN
			if err := lp.Fit(task.train, task.trainY); err != nil {
				t.Fatal(err)
			}
			rows = append(rows, ssnmfRow{name: "pixels label spreading", indBs: -1, ind1NN: metrics.Accuracy(lp.PredictTo(nil, task.test), task.testY),
				transBs: -1, trans1NN: task.transductiveOf(lp.TransductionTo(nil))})
			rows = append(rows, baselineEval(t, task, "GNMF K=40 codes", &GNMF{Common: Common{Rank: 40}}, DefaultGNMFAlpha))
			rows = append(rows, baselineEval(t, task, "SSKNMF K=40 codes", Auto(40), 10))
		}
		for _, k := range ranks {
			for _, a := range alphas {
				for _, l := range lambdas {
					rows = append(rows, ssnmfEval(t, task, int(k), l, a))
				}
			}
		}
		logRows(t, set, rows)
		return rows
	}
	if *ssnmfMNIST {
		run("MNIST seed 1", mnistTask(t), *ssnmfBaselines)
		return
	}
	defaults := *ssnmfRanks == "40" && *ssnmfLambdas == "300" && *ssnmfAlphas == "100" && *ssnmfIters == "200"
	for _, s := range floatList("ssnmf-seeds", *ssnmfSeeds) {
		set := fmt.Sprintf("digits seed %d", int(s))
		if *ssnmfValidation {
			set += " (validation)"
		}
		rows := run(set, newDigitsTask(10, uint64(s), *ssnmfValidation), *ssnmfBaselines)
		if !defaults || *ssnmfValidation || !*ssnmfBaselines {
			continue
		}
		pix, spread, ss := rows[0].ind1NN, rows[1].ind1NN, rows[len(rows)-1].indBs
		if ss < spread || ss < pix+0.03 {
			t.Errorf("%s: SSNMF's argmax(B·s) %.4f, want ≥ label spreading %.4f and ≥ pixels' 1-NN %.4f + 0.03", set, ss, spread, pix)
		}
	}
}
