package classify_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/testenv"
	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/classify"
	"github.com/nmfstream/nmfstream/model/kernel"
	"github.com/nmfstream/nmfstream/model/methods"
	"github.com/nmfstream/nmfstream/model/metrics"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// skewedSet is one corpus of BENCHMARKS.md's "Skewed text": a corpus of
// docCorpus, with class rare thinned (seeded) to share of the documents
// when share > 0.
type skewedSet struct {
	name, corpus string
	rare         int
	share        float64
	// vsRest, if set, makes the set binary: class rare (1) against all
	// the others (0), perClass labeled documents of each.
	vsRest   bool
	perClass int
}

// skewedSets are TestSkewedDocuments' sets. minF1 is a floor under the
// mean macro-F1 of eval's document classifier (LapRLS with Priors,
// GraphGuard, which overrules no graph on these seeds, and Masses) over
// seeds 1–3, 0.01 or so under the measured figure (in the comment);
// priorsGain marks the two-class sets with a rare class, where the
// estimated priors must raise the mean accuracy over the uniform ones.
var skewedSets = []struct {
	skewedSet
	minF1      float64
	priorsGain bool
}{
	{skewedSet{name: "spam7", corpus: "spam", rare: 1, share: 0.07}, 0.83, true},    // spam thinned to 7%; 0.844 (0.841 with the EM's priors)
	{skewedSet{name: "brown7", corpus: "brown", rare: 8, share: 0.07}, 0.34, false}, // genre j (learned, the 9th sorted) thinned to 7%; 0.365 (0.350 without Pool)
	{skewedSet{name: "spam", corpus: "spam", rare: -1}, 0.905, false},               // 0.911 (0.915 with the EM's priors)
	{skewedSet{name: "brown", corpus: "brown", rare: -1}, 0.345, false},             // 0.362 (0.356 without Pool, 0.366 without Masses, which gains over sixteen splits, not on these three)
	{skewedSet{name: "sotu", corpus: "sotu", rare: -1}, 0.495, false},               // 0.507 (Masses and Pool move none of these three)
	// Brown's news (a, the first sorted; 9% of the texts) against the
	// other genres, 10 labels each: the over-prediction of a rare class
	// issue 26 quotes on a held-out news set.
	{skewedSet{name: "brownnews", corpus: "brown", rare: 0, vsRest: true, perClass: 10}, 0.74, true},                  // 0.769 (0.754 with the EM's priors)
	{skewedSet{name: "brownlearned7", corpus: "brown", rare: 8, share: 0.07, vsRest: true, perClass: 10}, 0.68, true}, // 0.702 (0.691 with the EM's priors)
	{skewedSet{name: "sotuvs", corpus: "sotu", rare: 2, vsRest: true, perClass: 10}, 0.895, false},                    // the Democratic-Republicans (13%) against the rest; 0.969 (0.907 with the EM's priors, whose estimate collapsed on seeds 1–3)
}

// skewedVariants are the document classifiers TestSkewedDocuments
// measures: eval's classifier of the rows (laprls: LapRLS with Priors,
// GraphGuard, Masses and Pool; eval --doc-codes off, and the first of the
// default pair's two fits), eval's --priors uniform (laprls-uniform, where Masses does
// nothing), and the ablations of each part: the default without
// GraphGuard (laprls-noguard), without Masses (laprls-nomasses), with
// Masses but not Pool (laprls-nopool) and with none of them
// (laprls-neither). The checks read laprls, laprls-uniform and
// laprls-noguard by their index (skewedDefault, skewedUniform,
// skewedNoGuard).
var skewedVariants = [...]struct {
	name   string
	priors bool
	guard  float64
	masses bool
	pool   bool
}{
	{"laprls", true, classify.DefaultLapRLSGraphGuard, true, true},
	{"laprls-uniform", false, classify.DefaultLapRLSGraphGuard, true, true},
	{"laprls-noguard", true, 0, true, true},
	{"laprls-neither", false, 0, false, false},
	{"laprls-nomasses", true, classify.DefaultLapRLSGraphGuard, false, false},
	{"laprls-nopool", true, classify.DefaultLapRLSGraphGuard, true, false},
}

const (
	skewedDefault = iota
	skewedUniform
	skewedNoGuard
)

// skewedOut, if set (go test … -args -skewed-out DIR), is where
// TestSkewedDocuments writes its splits for bench/skewed/compare.py.
var skewedOut = flag.String("skewed-out", "", "TestSkewedDocuments: write each split's TF-IDF rows and predictions under this folder")

// skewedSeeds is how many splits (seeds 1, …, n) TestSkewedDocuments
// runs per set (go test … -args -skewed-seeds 8); its floors are of 3.
var skewedSeeds = flag.Int("skewed-seeds", 3, "TestSkewedDocuments: splits (seeds 1, …, n) per set")

// skewedFirst is the first split's seed (go test … -args -skewed-first 17
// -skewed-seeds 16 runs seeds 17, …, 32: splits on which no default was
// chosen); the floors are checked on seeds 1–3 only.
var skewedFirst = flag.Int("skewed-first", 1, "TestSkewedDocuments: the first split's seed")

// skewedCodes, if positive, adds laprls-codes, laprls-codescv and
// laprls-pair (lapRLSWithCodes: eval --doc-codes append, a choice by
// cross-validation, and --doc-codes pair, the codes appended at this
// length),
// their bases fitted by skewedCodesMethod (bench/skewed/run.sh's CODES and
// CODESMETHOD).
var skewedCodes = flag.Float64("skewed-codes", 0, "TestSkewedDocuments: also run eval's classifier on the rows with the codes of eval's factorization appended at this length, alone (laprls-codes) and averaged with the rows' (laprls-pair); 0: not run")

var skewedCodesMethod = flag.String("skewed-codes-method", "auto", "TestSkewedDocuments: the method whose basis codes laprls-codes' rows (with -skewed-codes)")

// skewedPerClass, if positive, is the labels per class of every set
// (go test … -args -skewed-per-class 20) in place of each set's own; the
// checks need each set's own.
var skewedPerClass = flag.Int("skewed-per-class", 0, "TestSkewedDocuments: labels per class of every set (0: each set's own)")

// thinClass keeps a seeded random part of class rare so that it is share
// of the documents.
func thinClass(texts []string, y []int, rare int, share float64, seed uint64) ([]string, []int) {
	var in int
	for _, c := range y {
		if c == rare {
			in++
		}
	}
	keep := share / (1 - share) * float64(len(y)-in) / float64(in)
	rng := rand.New(rand.NewPCG(seed, 77))
	var t2 []string
	var y2 []int
	for i, c := range y {
		if c != rare || rng.Float64() < keep {
			t2, y2 = append(t2, texts[i]), append(y2, c)
		}
	}
	return t2, y2
}

// scores returns the accuracy, balanced accuracy and macro-F1 of pred.
func scores(pred, truth []int, classes int) (acc, bal, f1 float64) {
	tp := make([]float64, classes)
	np := make([]float64, classes)
	nt := make([]float64, classes)
	for i, c := range truth {
		nt[c]++
		if pred[i] >= 0 {
			np[pred[i]]++
		}
		if pred[i] == c {
			tp[c]++
		}
	}
	var m int
	for c := range classes {
		if nt[c] == 0 {
			continue
		}
		m++
		bal += tp[c] / nt[c]
		if tp[c] > 0 {
			f1 += 2 * tp[c] / (np[c] + nt[c])
		}
	}
	return metrics.Accuracy(pred, truth), bal / float64(m), f1 / float64(m)
}

// writeSVMLight writes the rows of x labeled y in the svmlight format
// (1-based feature indices): the unlabeled rows (y < 0) too, as −1, if
// all is set, else only the labeled ones.
func writeSVMLight(tb testing.TB, path string, x *sparse.CSR, y []int, all bool) {
	var b strings.Builder
	for i, c := range y {
		if c < 0 && !all {
			continue
		}
		fmt.Fprintf(&b, "%d", c)
		ind, val := x.Row(i)
		for p := range ind {
			fmt.Fprintf(&b, " %d:%.9g", ind[p]+1, val[p])
		}
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
}

func writeInts(tb testing.TB, path string, v []int) {
	var b strings.Builder
	for _, c := range v {
		fmt.Fprintln(&b, c)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// TestSkewedDocuments measures eval's document classifier (LapRLS with
// cross-validated γ_I, Priors and GraphGuard), the same without Priors
// (the uniform priors, --priors uniform) and both without GraphGuard
// (skewedVariants) on the skewed and balanced corpora of
// skewedSets, seeds 1–3 (metrics.Split: one third held out, the labels
// per class of docCorpus or of the set), and logs accuracy / balanced
// accuracy / macro-F1. It checks each set's mean macro-F1 against a
// floor, and that on the two-class sets with a rare class marked
// priorsGain the estimated priors raise the mean accuracy (brownnews
// 0.798 → 0.910; 0.894 with the EM's estimate). With -skewed-out DIR it writes each split's TF-IDF rows
// (labeled training rows and test rows, svmlight) and predictions under
// DIR for bench/skewed/compare.py, which scores LinearSVC and
// always-majority on the same rows; -skewed-seeds N runs N splits and
// -skewed-per-class L draws L labels per class in every set (the checks
// need 3 splits and each set's own labels). It needs NMFSTREAM_LONG=1 and
// the data;
// -run 'TestSkewedDocuments/spam7' runs one set.
func TestSkewedDocuments(t *testing.T) {
	testenv.SkipUnlessLong(t, "LapRLS on 24 splits of eight text sets")
	out := *skewedOut
	for _, set := range skewedSets {
		t.Run(set.name, func(t *testing.T) {
			texts0, y0, perClass := docCorpus(t, set.corpus)
			classes := 0
			for _, c := range y0 {
				classes = max(classes, c+1)
			}
			var sum [len(skewedVariants)][3]float64
			var seeds float64 // splits drawn
			for seed := uint64(*skewedFirst); seed < uint64(*skewedFirst+*skewedSeeds); seed++ {
				texts, y := texts0, y0
				if set.share > 0 {
					texts, y = thinClass(texts0, y0, set.rare, set.share, seed)
				}
				pc := perClass
				if set.vsRest {
					y2 := make([]int, len(y))
					for i, c := range y {
						if c == set.rare {
							y2[i] = 1
						}
					}
					y, pc, classes = y2, set.perClass, 2
				}
				if *skewedPerClass > 0 {
					pc = *skewedPerClass
					// A rare class may have too few documents for them.
					if _, err := metrics.Split(y, 1.0/3, pc, rand.NewPCG(seed, 1)); err != nil {
						t.Logf("seed %d: no split: %v", seed, err)
						continue
					}
				}
				seeds++
				xtr, ytr, xte, yte := splitDocuments(t, texts, y, pc, seed)
				dir := ""
				if out != "" {
					dir = filepath.Join(out, fmt.Sprintf("%s-seed%d", set.name, seed))
					if err := os.MkdirAll(dir, 0o755); err != nil {
						t.Fatal(err)
					}
					writeSVMLight(t, filepath.Join(dir, "train.svm"), xtr, ytr, false)
					writeSVMLight(t, filepath.Join(dir, "pool.svm"), xtr, ytr, true)
					writeSVMLight(t, filepath.Join(dir, "test.svm"), xte, yte, false)
				}
				var def *classify.LapRLS // the default variant's fit, laprls-codescv's alternative
				for v, vr := range skewedVariants {
					lr := classify.LapRLS{Choices: []float64{1e5, 0}, Priors: vr.priors, GraphGuard: vr.guard, Masses: vr.masses, Pool: vr.pool}
					if err := lr.Fit(xtr, ytr); err != nil {
						t.Fatal(err)
					}
					if v == skewedDefault {
						def = &lr
					}
					pred := lr.PredictTo(nil, xte)
					a, b, f := scores(pred, yte, classes)
					sum[v][0] += a
					sum[v][1] += b
					sum[v][2] += f
					name := vr.name
					if name == "laprls" {
						t.Logf("seed %d: T = %.4g, priors %.3f, used %v; shares' distance %.3f, overruled %v; masses moved %v", seed, lr.Temperature(), lr.EstimatedPriors(), lr.PriorsUsed(), lr.SharesDistance(), lr.Overruled(), lr.MassesMoved())
					}
					t.Logf("seed %d %s (γ_I %g, cross-validated %.3f): %.3f / %.3f / %.3f", seed, name, lr.GammaIChosen(), lr.Scores(), a, b, f)
					if dir != "" {
						writeInts(t, filepath.Join(dir, "pred-"+name+".txt"), pred)
					}
				}
				if *skewedCodes > 0 {
					pred, cv, pair := lapRLSWithCodes(t, xtr, ytr, xte, *skewedCodes, def)
					for name, p := range map[string][]int{"laprls-codes": pred, "laprls-codescv": cv, "laprls-pair": pair} {
						a, b, f := scores(p, yte, classes)
						t.Logf("seed %d %s: %.3f / %.3f / %.3f", seed, name, a, b, f)
						if dir != "" {
							writeInts(t, filepath.Join(dir, "pred-"+name+".txt"), p)
						}
					}
				}
			}
			for v, vr := range skewedVariants {
				t.Logf("%s mean over %d splits: accuracy %.3f, balanced %.3f, macro-F1 %.3f",
					vr.name, int(seeds), sum[v][0]/seeds, sum[v][1]/seeds, sum[v][2]/seeds)
			}
			if *skewedSeeds != 3 || *skewedFirst != 1 || *skewedPerClass > 0 {
				return // the floors are of seeds 1–3 and each set's labels
			}
			if f := sum[skewedDefault][2] / seeds; f < set.minF1 {
				t.Errorf("mean macro-F1 %.3f, floor %.3f", f, set.minF1)
			}
			if set.priorsGain && sum[skewedDefault][0] <= sum[skewedUniform][0] {
				t.Errorf("the estimated priors' mean accuracy %.3f, want above the uniform priors' %.3f", sum[skewedDefault][0]/seeds, sum[skewedUniform][0]/seeds)
			}
		})
	}
}

// lapRLSWithCodes predicts the test rows xte as eval --doc-codes does:
// eval's document classifier (the default variant) fitted on the training
// rows xtr (labels ytr, −1 unlabeled), each row with its NNLS code on the
// basis of a rank-40 fit of -skewed-codes-method (eval's auto: SSKNMF, with
// the labels; a kernel method's NNLS code in its kernel space) appended at length w (classify.AppendCodes), its graph on the
// rows alone (GraphRows). cv is the same or plain (the default variant
// fitted without codes), whichever cross-validated better on the labels
// (ties: plain), a choice measured and not kept: the label-aware basis saw
// every label, so the folds' held-out labels shaped the codes they are
// scored on. pair is eval's default (--doc-codes pair): the mean of plain's
// and the codes' fit's calibrated scores (classify.PairPredictScoresTo).
func lapRLSWithCodes(t *testing.T, xtr *sparse.CSR, ytr []int, xte *sparse.CSR, w float64, plain *classify.LapRLS) (pred, cv, pair []int) {
	t.Helper()
	m, err := methods.New(*skewedCodesMethod, methods.Options{Common: model.Common{Rank: 40}, Projection: model.ProjectNNLS})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Fit(model.SparseRows(xtr), ytr); err != nil {
		t.Fatal(err)
	}
	var pr kernel.Projector = &model.Projector{Method: model.ProjectNNLS, U: m.Basis()}
	if kp, ok := m.(kernel.Projector); ok { // a kernel method codes in its kernel space, as eval's pair
		pr = kp
	}
	var vtr, vte mat.Dense
	if err := pr.ProjectTo(&vtr, model.SparseRows(xtr)); err != nil {
		t.Fatal(err)
	}
	if err := pr.ProjectTo(&vte, model.SparseRows(xte)); err != nil {
		t.Fatal(err)
	}
	ztr, err := classify.AppendCodes(xtr, &vtr, w)
	if err != nil {
		t.Fatal(err)
	}
	zte, err := classify.AppendCodes(xte, &vte, w)
	if err != nil {
		t.Fatal(err)
	}
	vr := skewedVariants[skewedDefault]
	lr := classify.LapRLS{Choices: []float64{1e5, 0}, Priors: vr.priors, GraphGuard: vr.guard, Masses: vr.masses, Pool: vr.pool, GraphRows: xtr}
	if err := lr.Fit(ztr, ytr); err != nil {
		t.Fatal(err)
	}
	pred = lr.PredictTo(nil, zte)
	pair, _, err = classify.PairPredictScoresTo(nil, nil, plain, xte, &lr, zte)
	if err != nil {
		t.Fatal(err)
	}
	cv = plain.PredictTo(nil, xte)
	if slices.Max(lr.Scores()) > slices.Max(plain.Scores()) {
		cv = pred
	}
	t.Logf("cross-validated with codes %.3f, without %.3f", lr.Scores(), plain.Scores())
	return pred, cv, pair
}
