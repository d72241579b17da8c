package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"

	"github.com/nmfstream/nmfstream/internal/testenv"
	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/metrics"
	"github.com/nmfstream/nmfstream/model/sparse"
	"github.com/nmfstream/nmfstream/stages"
)

// docFiles writes the split of the batch protocol (one third of each class
// held out, l labels per class from the rest, seed 1) of the documents as
// train and test Arrow files with columns text, label (utf8, null for the
// unlabeled training records) and id.
func docFiles(t testing.TB, dir string, texts, labels []string, l int) (train, test string) {
	t.Helper()
	var enc metrics.LabelEncoder
	enc.Fit(labels)
	y, err := enc.Encode(nil, labels)
	if err != nil {
		t.Fatal(err)
	}
	split, err := metrics.Split(y, 1.0/3, l, rand.NewPCG(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	labeled := map[int]bool{}
	for _, i := range split.Labeled {
		labeled[i] = true
	}
	schema := arrow.NewSchema([]arrow.Field{field("text", arrow.BinaryTypes.String), field("label", arrow.BinaryTypes.String), field("id", arrow.PrimitiveTypes.Int64)}, nil)
	var tr, te [][]any
	for _, i := range split.Train {
		var lab any
		if labeled[i] {
			lab = labels[i]
		}
		tr = append(tr, []any{texts[i], lab, int64(i)})
	}
	for _, i := range split.Test {
		te = append(te, []any{texts[i], labels[i], int64(i)})
	}
	train, test = filepath.Join(dir, "docs-train.arrow"), filepath.Join(dir, "docs-test.arrow")
	writeArrow(t, train, schema, tr)
	writeArrow(t, test, schema, te)
	return train, test
}

// evalDocs runs eval --json with the defaults (method auto) on the
// documents' split and returns its summary.
func evalDocs(t *testing.T, texts, labels []string, l int) (sum evalSummary, train, test string) {
	t.Helper()
	train, test = docFiles(t, t.TempDir(), texts, labels, l)
	code, out, errb := runCmd(t, "eval", "--train", train, "--test", test, "--json")
	if code != 0 {
		t.Fatalf("eval exit %d: %s", code, errb)
	}
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("eval --json output %q: %v", out, err)
	}
	t.Logf("%s", strings.TrimSpace(errb))
	t.Logf("accuracy %.4f, balanced %.4f, macro-F1 %.4f (%s; %d train, %d labeled, %d test, fit %.1fs)",
		sum.Accuracy, sum.BalancedAccuracy, sum.MacroF1, sum.Classifier, sum.NTrain, sum.NLabeled, sum.NTest, sum.FitSeconds)
	return sum, train, test
}

// TestEvalBrownDocuments is the figure for documents: eval with the
// defaults on the Brown corpus (500 texts, 15 genres), 3 labels per genre,
// one third held out (seed 1). A linear SVM on the 45 labeled TF-IDF rows
// scores 0.361 on this split, LabelSpreading 0.343 and raw TF-IDF 1-NN
// 0.313; the default pair (--doc-codes pair) measures 0.385, and LapRLS on
// the rows alone, its graph fit pooled with its supervised fit, 0.367
// (0.373 without LapRLS.Pool and 0.385 without LapRLS.Masses, which lose
// on this split and gain over thirty-two and sixteen: BENCHMARKS.md,
// "Skewed text: the two fits pooled" and "Skewed text: the two fits
// averaged"). It needs NMFSTREAM_LONG=1 and the corpus: one to two
// minutes, most of it the SSKNMF fit.
func TestEvalBrownDocuments(t *testing.T) {
	testenv.SkipUnlessLong(t, "fits SSKNMF on 331 documents, one to two minutes")
	texts, labels := testenv.BrownTexts(t)
	sum, train, test := evalDocs(t, texts, labels, 3)
	if sum.Accuracy < 0.36 {
		t.Errorf("accuracy %.4f, want ≥ 0.36", sum.Accuracy)
	}
	if sum.Classifier != "laprls-pool+pair" {
		t.Errorf("classifier %q, want laprls-pool+pair (the priors' estimate collapses on Brown's genres, and the labels are balanced; the codes' fit beside the rows')", sum.Classifier)
	}
	// classify with the saved model predicts as eval does: the model keeps
	// the training TF-IDF rows and labels, and LapRLS is refitted on them.
	dir := filepath.Dir(train)
	m := filepath.Join(dir, "docs.model")
	mustRun(t, "fit", "--train", train, "--save", m)
	out := mustRun(t, "classify", "--model", m, "--in", test, "--out", filepath.Join(dir, "pred.arrow"))
	if want := fmt.Sprintf("accuracy on the %d labeled records: %.4f", sum.NTest, sum.Accuracy); !strings.Contains(out, want) {
		t.Errorf("classify printed %q, want %q", out, want)
	}
}

// TestEvalSpamDocuments: eval with the defaults on the SpamAssassin corpus
// (6,046 mails), 10 labels per class, one third held out (seed 1). A
// linear SVM on the 20 labeled mails scores 0.914, raw TF-IDF 1-NN 0.859;
// the default measures 0.9196: mixture proportion estimation puts spam's
// 31% at 0.22 of the pool, a bound that is loose where neither class is
// one topic (BENCHMARKS.md, "Skewed text: the priors by mixture
// proportion estimation").
// It takes 3–6 minutes here (the SSKNMF fit of 4,031 mails), so it runs
// only with NMFSTREAM_LONG=1.
func TestEvalSpamDocuments(t *testing.T) {
	testenv.SkipUnlessLong(t, "fits SSKNMF on 4,031 mails, 3 to 6 minutes")
	texts, labels := testenv.Spam(t)
	sum, _, _ := evalDocs(t, texts, labels, 10)
	if sum.Accuracy < 0.915 {
		t.Errorf("accuracy %.4f, want ≥ 0.915, above the linear SVM's 0.914", sum.Accuracy)
	}
}

// TestEvalTextSmall runs eval on the 45 Brown texts kept in the repository
// (3 per genre: 1 held out, 1 labeled, 1 unlabeled per genre) and checks
// the summary's fields: the text path (vectorizer, LapRLS, scores) without
// the full corpus.
func TestEvalTextSmall(t *testing.T) {
	names, texts := testenv.BrownGolden(t)
	labels := make([]string, len(names))
	for i, n := range names {
		labels[i] = n[1:2] // the genre letter: ca01 → a
	}
	train, test := docFiles(t, t.TempDir(), texts, labels, 1)
	out := mustRun(t, "eval", "--train", train, "--test", test, "--rank", "10", "--json")
	var sum evalSummary
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("eval --json output %q: %v", out, err)
	}
	t.Logf("%+v", sum)
	if sum.NTest != 15 || sum.NLabeled != 15 || sum.NTrain != 30 {
		t.Errorf("n_test %d, n_labeled %d, n_train %d, want 15, 15, 30", sum.NTest, sum.NLabeled, sum.NTrain)
	}
	if !strings.HasPrefix(sum.Classifier, "laprls") {
		t.Errorf("classifier %q, want laprls-…", sum.Classifier)
	}
	for name, v := range map[string]float64{"accuracy": sum.Accuracy, "balanced_accuracy": sum.BalancedAccuracy, "macro_f1": sum.MacroF1} {
		if !(v >= 0 && v <= 1) {
			t.Errorf("%s %g outside [0, 1]", name, v)
		}
	}
	// One test text per genre: balanced accuracy is the accuracy.
	if sum.BalancedAccuracy != sum.Accuracy {
		t.Errorf("balanced accuracy %g, want the accuracy %g (one test record per class)", sum.BalancedAccuracy, sum.Accuracy)
	}
}

// skewedTexts returns n short texts of two overlapping topics, "rare" a
// share of them: a text of one topic draws 5 words of its 20, and the
// topics share 16 of their words.
func skewedTexts(rng *rand.Rand, n int, share float64) (texts, labels []string) {
	for range n {
		c, label := 0, "common"
		if rng.Float64() < share {
			c, label = 1, "rare"
		}
		words := make([]string, 5)
		for k := range words {
			words[k] = fmt.Sprintf("w%02d", 4*c+rng.IntN(20))
		}
		texts = append(texts, strings.Join(words, " "))
		labels = append(labels, label)
	}
	return texts, labels
}

// TestEvalPriors checks eval's --priors on documents with a 7% class and
// 10 labels per class (balanced by design): by default the document
// classifier estimates the priors from the unlabeled training records,
// reports them in --json and scores a higher accuracy than with
// --priors uniform, which reports none, and so does --priors em, whose
// estimate differs; --codes off predicts as
// --doc-codes off, the rows alone; a bad value is a usage error.
func TestEvalPriors(t *testing.T) {
	texts, labels := skewedTexts(rand.New(rand.NewPCG(3, 4)), 1800, 0.07)
	train, test := docFiles(t, t.TempDir(), texts, labels, 10)
	run := func(args ...string) evalSummary {
		t.Helper()
		out := mustRun(t, append([]string{"eval", "--train", train, "--test", test, "--rank", "5", "--json"}, args...)...)
		var sum evalSummary
		if err := json.Unmarshal([]byte(out), &sum); err != nil {
			t.Fatalf("eval --json output %q: %v", out, err)
		}
		return sum
	}
	mpe, em, uniform := run(), run("--priors", "em"), run("--priors", "uniform")
	t.Logf("--priors mpe: accuracy %.4f, macro-F1 %.4f, priors %v; em: %.4f, %.4f, %v; uniform: %.4f, %.4f", mpe.Accuracy, mpe.MacroF1, mpe.Priors, em.Accuracy, em.MacroF1, em.Priors, uniform.Accuracy, uniform.MacroF1)
	// Classes are sorted by name: common, rare.
	for _, c := range []struct {
		name string
		sum  evalSummary
	}{{"mpe", mpe}, {"em", em}} {
		if len(c.sum.Priors) != 2 || !(c.sum.Priors[1] > 0.02 && c.sum.Priors[1] < 0.15) {
			t.Errorf("--priors %s: priors %v, want two, the rare class's near its 7%%", c.name, c.sum.Priors)
		}
		if c.sum.Accuracy <= uniform.Accuracy {
			t.Errorf("--priors %s: accuracy with the estimated priors %.4f, want above the uniform priors' %.4f", c.name, c.sum.Accuracy, uniform.Accuracy)
		}
	}
	if slices.Equal(mpe.Priors, em.Priors) {
		t.Errorf("--priors mpe and em estimated the same priors %v: the switch changes nothing", mpe.Priors)
	}
	if uniform.Priors != nil {
		t.Errorf("--priors uniform reported priors %v", uniform.Priors)
	}
	// --codes off is the rows alone, as --doc-codes off, and stderr says
	// that the codes are not read.
	rows := run("--doc-codes", "off")
	// The pair's second fit (the rows with their codes) reports its own
	// priors: those of the same fit alone (--doc-codes append; at rank 10,
	// where that fit's estimate is kept); the rows alone report none of
	// the kind.
	pair10, app10 := run("--rank", "10"), run("--rank", "10", "--doc-codes", "append")
	if len(pair10.PriorsCodes) != 2 || !slices.Equal(pair10.PriorsCodes, app10.Priors) || slices.Equal(pair10.PriorsCodes, pair10.Priors) {
		t.Errorf("the pair's priors_codes %v, want --doc-codes append's priors %v, not the rows fit's %v", pair10.PriorsCodes, app10.Priors, pair10.Priors)
	}
	if rows.PriorsCodes != nil {
		t.Errorf("--doc-codes off reported priors_codes %v", rows.PriorsCodes)
	}
	code, out, errb := runCmd(t, "eval", "--train", train, "--test", test, "--rank", "5", "--json", "--codes", "off")
	var off evalSummary
	if err := json.Unmarshal([]byte(out), &off); code != 0 || err != nil || off.Accuracy != rows.Accuracy || off.MacroF1 != rows.MacroF1 {
		t.Errorf("--codes off: exit %d, accuracy %.4f, macro-F1 %.4f (%v); want 0 and --doc-codes off's %.4f, %.4f", code, off.Accuracy, off.MacroF1, err, rows.Accuracy, rows.MacroF1)
	}
	if !strings.Contains(errb, "the codes are not read (--doc-codes off or --codes off") {
		t.Errorf("--codes off: stderr %q does not say that LapRLS reads no codes", errb)
	}
	code, _, errb = runCmd(t, "eval", "--train", train, "--test", test, "--priors", "bayes")
	if code != 2 || !strings.Contains(errb, `--priors "bayes": want mpe, em or uniform`) {
		t.Errorf("--priors bayes: exit %d, stderr %q; want 2 and the flag's error", code, errb)
	}
}

// TestDescribeOverruled checks what eval and classify say when LapRLS's
// GraphGuard takes the supervised fit over cross-validation's graph: a
// guard of 10⁻⁹ overrules the graph wherever the two fits' class shares
// differ at all, on the synthetic corpus of TestEvalPriors (seed 5, where
// cross-validation picks the graph and the supervised fit is above
// chance).
func TestDescribeOverruled(t *testing.T) {
	texts, labels := skewedTexts(rand.New(rand.NewPCG(5, 4)), 600, 0.07)
	tf := stages.DefaultDocumentTFIDF()
	x, err := tf.FitTransform(texts)
	if err != nil {
		t.Fatal(err)
	}
	y := make([]int, len(labels))
	var have [2]int
	for i, l := range labels {
		c := 0
		if l == "rare" {
			c = 1
		}
		y[i] = -1
		if have[c] < 10 {
			y[i], have[c] = c, have[c]+1
		}
	}
	lr := lapRLSFor(x, priorsMPE)
	lr.GraphGuard = 1e-9
	if err := lr.Fit(x, y); err != nil {
		t.Fatal(err)
	}
	if !lr.Overruled() {
		t.Fatalf("not overruled (cross-validated %v, shares' distance %g): the corpus no longer exercises the message", lr.Scores(), lr.SharesDistance())
	}
	c := &classifier{lap: lr}
	c.enc.Fit([]string{"common", "rare"})
	got := c.describe()
	want := fmt.Sprintf("cross-validation on the labels picked the graph (balanced accuracy %.3f against %.3f without it), but the two fits' class shares over the unlabeled training records differ by %.3f (total variation, above 1e-09)", lr.Scores()[0], lr.Scores()[1], lr.SharesDistance())
	if !strings.Contains(got, want) || !strings.HasPrefix(got, "LapRLS on the features without the graph") {
		t.Errorf("describe = %q, want it to start with the supervised fit and say %q", got, want)
	}
}

// TestEvalDocCodes checks --doc-codes: on documents the default (pair)
// reads each record's code beside its row in one of two fits, append in
// the only fit, and off (or --codes off) in none; each says so on stderr
// and in eval --json's classifier name, and the codes change the scores
// with the Frobenius loss and the KL divergence; classify on the model fit
// saves predicts what eval scores, by default and with append; a kernel
// model's codes are read; a model that cannot code the rows leaves the
// default on the rows alone and refuses an explicit pair; pair and append
// are refused, as a usage error, with --codes off and on dense records.
func TestEvalDocCodes(t *testing.T) {
	dir := t.TempDir()
	texts, labels := skewedTexts(rand.New(rand.NewPCG(5, 6)), 600, 0.3)
	train, test := docFiles(t, dir, texts, labels, 10)
	evalJSON := func(args ...string) (evalSummary, string) {
		t.Helper()
		code, out, errb := runCmd(t, append([]string{"eval", "--train", train, "--test", test, "--rank", "5", "--json"}, args...)...)
		var sum evalSummary
		if err := json.Unmarshal([]byte(out), &sum); code != 0 || err != nil {
			t.Fatalf("eval %v: exit %d, %v; stderr %s", args, code, err, errb)
		}
		return sum, errb
	}
	def, errDef := evalJSON()
	pair, _ := evalJSON("--doc-codes", "pair")
	appended, errApp := evalJSON("--doc-codes", "append")
	off, errOff := evalJSON("--doc-codes", "off")
	codesOff, _ := evalJSON("--codes", "off")
	t.Logf("accuracy / macro-F1: pair %.4f / %.4f, append %.4f / %.4f, off %.4f / %.4f", pair.Accuracy, pair.MacroF1, appended.Accuracy, appended.MacroF1, off.Accuracy, off.MacroF1)
	if def.Accuracy != pair.Accuracy || def.MacroF1 != pair.MacroF1 || def.Classifier != pair.Classifier {
		t.Errorf("the default %+v differs from --doc-codes pair %+v", def, pair)
	}
	for _, c := range []struct {
		name, errb, say, suffix string
		sum                     evalSummary
	}{
		{"pair", errDef, "the mean of two LapRLS fits' calibrated scores (--doc-codes pair)", "+pair", pair},
		{"append", errApp, "each document's code on the basis appended to its row (--doc-codes append)", "+codes", appended},
		{"off", errOff, "the codes are not read (--doc-codes off or --codes off", "", off},
	} {
		if !strings.Contains(c.errb, c.say) {
			t.Errorf("--doc-codes %s: stderr %q does not say %q", c.name, c.errb, c.say)
		}
		if name := strings.TrimPrefix(c.sum.Classifier, "laprls-"); strings.Contains(name, "+") != (c.suffix != "") || !strings.HasSuffix(name, c.suffix) {
			t.Errorf("--doc-codes %s: classifier %q, want the suffix %q", c.name, c.sum.Classifier, c.suffix)
		}
	}
	if codesOff.Accuracy != off.Accuracy || codesOff.MacroF1 != off.MacroF1 || codesOff.Classifier != off.Classifier {
		t.Errorf("--codes off %+v, --doc-codes off %+v: want the rows alone in both", codesOff, off)
	}

	// A KL basis codes the documents under the KL divergence (the
	// projector's Loss): the path runs and reads the codes too.
	klOff, _ := evalJSON("--loss", "kl", "--doc-codes", "off")
	klApp, _ := evalJSON("--loss", "kl", "--doc-codes", "append")
	t.Logf("--loss kl: accuracy %.4f without the codes, %.4f appended", klOff.Accuracy, klApp.Accuracy)
	if klApp.Accuracy == klOff.Accuracy && klApp.MacroF1 == klOff.MacroF1 {
		t.Errorf("--loss kl --doc-codes append scores as --doc-codes off (%.4f, %.4f): the codes were not read", klApp.Accuracy, klApp.MacroF1)
	}

	mdl := filepath.Join(dir, "docs.model")
	mustRun(t, "fit", "--train", train, "--save", mdl, "--rank", "5")
	classified := func(args ...string) (map[string]outcome, float64) {
		t.Helper()
		out := filepath.Join(dir, "p.jsonl")
		mustRun(t, append([]string{"classify", "--model", mdl, "--in", test, "--out", out}, args...)...)
		p := readPredictionsJSONL(t, out)
		right := 0
		for id, r := range p {
			i, err := strconv.Atoi(id) // docFiles's ids index texts
			if err != nil {
				t.Fatal(err)
			}
			if r.pred == labels[i] {
				right++
			}
		}
		return p, float64(right) / float64(len(p))
	}
	pd, accDef := classified()
	po, _ := classified("--doc-codes", "off")
	_, accApp := classified("--doc-codes", "append")
	differ := 0
	for id, p := range pd {
		if po[id].pred != p.pred {
			differ++
		}
	}
	t.Logf("classify: %d of %d predictions differ between the default and --doc-codes off", differ, len(pd))
	if differ == 0 {
		t.Errorf("the codes changed no prediction of classify")
	}
	if accDef != def.Accuracy || accApp != appended.Accuracy {
		t.Errorf("classify scores %.4f (default) and %.4f (append), eval %.4f and %.4f: the two paths differ", accDef, accApp, def.Accuracy, appended.Accuracy)
	}

	// A kernel model codes the rows in its kernel space: the pair reads
	// those codes. A linear model's codes (x·U) are not NNLS codes: the
	// default reads the rows alone and says why; an explicit pair is
	// refused.
	if kern, errK := evalJSON("--method", "kernel"); !strings.HasSuffix(kern.Classifier, "+pair") || strings.Contains(errK, "not read") {
		t.Errorf("eval --method kernel: classifier %q, stderr %q; want the pair", kern.Classifier, errK)
	}
	// A model that cannot code the rows (here a kernel model's state
	// lost): the default reads the rows alone and says why, an explicit
	// pair is a usage error.
	f, err := fitFile(context.Background(), train, fitParams{method: "kernel", rank: 5, seed: 1, projector: "graph"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	delete(f.snap.Extra, "kernel.coef")
	x := model.Rows(f.x).(*sparse.CSR)
	for _, set := range []bool{false, true} {
		var c classifier
		opt := defaultClassifier
		opt.snap, opt.docCodes = f.snap, docCodesFlag{mode: docCodesPair, set: set}
		err := c.fitDocuments(x, f.y, stages.CodesAuto, opt)
		switch {
		case !set && (err != nil || c.lapCodes != nil || c.nnls != nil || c.docCodesWhy != `kernel: snapshot of kernel has no "kernel.coef" matrix`):
			t.Errorf("the default without codes: %v, %q; want the rows alone, and why", err, c.docCodesWhy)
		case set && (err == nil || !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "--doc-codes pair: kernel: snapshot")):
			t.Errorf("--doc-codes pair without codes: %v; want a usage error saying why", err)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--doc-codes", "append", "--codes", "off"}, "--doc-codes append reads documents' codes beside their rows, with --codes auto: drop it or --codes off"},
		{[]string{"--doc-codes", "pair", "--codes", "only"}, "--doc-codes pair reads documents' codes beside their rows, with --codes auto: drop it or --codes only"},
		{[]string{"--doc-codes", "yes"}, `--doc-codes "yes": want pair, append or off`},
	} {
		code, _, errb := runCmd(t, append([]string{"eval", "--train", train, "--test", test, "--rank", "5"}, c.args...)...)
		if code != 2 || !strings.Contains(errb, c.want) {
			t.Errorf("eval %v: exit %d, stderr %q; want 2 and %q", c.args, code, errb, c.want)
		}
	}
	dtr, dte, _ := digitsFiles(t, dir, 4)
	code, _, errb := runCmd(t, "eval", "--train", dtr, "--test", dte, "--doc-codes", "append")
	if want := "--doc-codes changes nothing on dense records"; code != 2 || !strings.Contains(errb, want) {
		t.Errorf("eval --doc-codes append on the digits: exit %d, stderr %q; want 2 and %q", code, errb, want)
	}
}
