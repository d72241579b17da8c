package model

import (
	"fmt"
	"os"
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
	m := &SSNMF{Common: Common{Rank: rank, MaxIter: int(envList("NMFSTREAM_SSNMF_ITERS", "200")[0])}, Lambda: lambda, Alpha: alpha}
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

func envList(name, def string) []float64 {
	s := os.Getenv(name)
	if s == "" {
		s = def
	}
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			panic(fmt.Sprintf("%s: %v", name, err))
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
// split of eval (10 labels per class) for seeds NMFSTREAM_SEEDS (default
// 1,2,3; NMFSTREAM_VALIDATION=1 scores the validation split of the pool
// instead) and, with NMFSTREAM_SSNMF_MNIST=1, TestMNISTAccuracy's split
// (10,000 pool, 5,000 test, seed 1). SSNMF's grid: ranks
// NMFSTREAM_SSNMF_RANKS (default 40), λ NMFSTREAM_SSNMF_LAMBDAS (default
// 300), α NMFSTREAM_SSNMF_ALPHAS (default 100; −1: no graph term), all
// comma-separated lists. It logs a table and asserts nothing but that
// every fit succeeds: it is a measurement. NMFSTREAM_SSNMF_ITERS bounds
// SSNMF's updates (default 200, the engine's).
func TestSSNMFHeldOut(t *testing.T) {
	testenv.SkipUnlessLong(t, "SSNMF against the codes' and pixels' 1-NN, held out")
	ranks := envList("NMFSTREAM_SSNMF_RANKS", "40")
	lambdas := envList("NMFSTREAM_SSNMF_LAMBDAS", "300")
	alphas := envList("NMFSTREAM_SSNMF_ALPHAS", "100")
	run := func(set string, task digitsTask, baselines bool) {
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
	}
	if os.Getenv("NMFSTREAM_SSNMF_MNIST") == "1" {
		run("MNIST seed 1", mnistTask(t), os.Getenv("NMFSTREAM_SSNMF_BASELINES") != "0")
		return
	}
	for _, s := range envList("NMFSTREAM_SEEDS", "1,2,3") {
		val := os.Getenv("NMFSTREAM_VALIDATION") == "1"
		set := fmt.Sprintf("digits seed %d", int(s))
		if val {
			set += " (validation)"
		}
		run(set, newDigitsTask(10, uint64(s), val), os.Getenv("NMFSTREAM_SSNMF_BASELINES") != "0")
	}
}
