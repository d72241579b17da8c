package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/classify"
	"github.com/nmfstream/nmfstream/model/metrics"
	"github.com/nmfstream/nmfstream/model/sparse"
	"github.com/nmfstream/nmfstream/stages"
)

func init() {
	register(command{
		name:    "eval",
		summary: "fit on a training file and report held-out accuracy on a test file",
		run:     runEval,
	})
}

const evalSynopsis = `eval --train F --test F [--method M] [--rank K] [--neighbors k] [--alpha a] [--beta b] [--iters T] [--seed s] [--projector P] [--landmarks M] [--graph-metric G] [text flags] [--codes auto|off|only] [--priors mpe|em|uniform] [--doc-codes pair|append|off] [--self-training pair|joint] [--rejects R] [--json]

Fits a model on the training file as "nmfstream fit" does (labeled and
unlabeled records; a null label means unlabeled), codes the test file as
"nmfstream project" does, predicts each test record's class as
"nmfstream classify" does, and reports the accuracy on the test labels
(docs/DESIGN.md §7: the test set is never seen in training). The test file must
have labels; test records without one are not scored.

The classifier depends on the features:
  dense       kernel self-training on the training features and codes,
              and on the features alone; the mean of the two kernel
              classifiers fitted on those labels (classify.Joint; the
              pair: --self-training joint keeps the first alone). The
              two self-trainings run side by side, at up to twice one's
              memory (about 2 GiB for 10,000 training images)
  text/sparse LapRLS: a linear classifier on the TF-IDF (or sparse) rows
              whose scores are smoothed over the cosine k-NN graph of all
              training records, labeled or not; whether the graph is used
              is picked by cross-validation on the labels (said on stderr);
              the class priors estimated from the unlabeled training
              records (--priors mpe, the default: of two classes
              labeled alike by mixture proportion estimation, otherwise
              by the EM; em: by the EM; uniform: not), since a labeled
              subset of L per
              class says nothing of them; where that estimate collapses
              one of three classes or more and the labels are
              balanced by design, the graph fit pooled with the
              supervised fit (their calibrated scores' mean), its class
              masses moved to the supervised fit's; by default the mean
              of two such fits' calibrated scores, one on the rows and
              one on the rows with each record's code on the basis
              appended (--doc-codes pair; append: the second alone;
              off: the first alone)
  otherwise   1-NN over the self-labeled training codes
Documents are vectorized as fit's text flags say (--sublinear-tf, --min-df,
--stop-words, --stem; see "nmfstream fit -help").

--json prints one JSON object:
  method, accuracy, balanced_accuracy, macro_f1, classifier, n_train,
  n_labeled, n_test, fit_seconds, project_seconds, rejected, seed,
  projection, rank, classes, features, precision, codes, code_1nn,
  code_nmi, and priors (the class priors LapRLS assumed, in the order of
  the sorted class names; absent where it assumed them uniform)
(classifier: joint, joint-only, joint-features, laprls-graph, laprls-supervised, laprls-pool or codes-1nn;
the laprls names, what cross-validation picked on the rows, end in +pair
with --doc-codes pair, the default, and in +codes with append)

Examples:
  nmfstream eval --train digits-train.arrow --test digits-test.arrow
  nmfstream eval --train digits-train.arrow --test digits-test.arrow --method gnmf --rank 40 --json
  for m in nmf gnmf dgnmf ssknmf; do nmfstream eval --train tr.arrow --test te.arrow --method $m --json; done`

// evalSummary is what eval --json prints.
type evalSummary struct {
	Method           string  `json:"method"`
	Accuracy         float64 `json:"accuracy"`
	BalancedAccuracy float64 `json:"balanced_accuracy"`
	MacroF1          float64 `json:"macro_f1"`
	Classifier       string  `json:"classifier"`
	NTrain           int     `json:"n_train"`
	NLabeled         int     `json:"n_labeled"`
	NTest            int     `json:"n_test"`
	// NTestUnseen counts the labeled test records whose class the
	// training file does not have: scored, always wrong (a warning on
	// stderr names the classes).
	NTestUnseen    int     `json:"n_test_unseen"`
	FitSeconds     float64 `json:"fit_seconds"`
	ProjectSeconds float64 `json:"project_seconds"`
	Rejected       int     `json:"rejected"`
	Seed           uint64  `json:"seed"`
	Projection     string  `json:"projection"`
	Rank           int     `json:"rank"`
	Classes        int     `json:"classes"`
	Features       int     `json:"features"`
	Precision      string  `json:"precision"` // of the fit's products with X: float32 or float64
	// Landmarks are the kernel methods' Nyström landmarks; absent for
	// exact kernels and the other methods.
	Landmarks int `json:"landmarks,omitempty"`
	// GraphMetric is the distance of the k-NN graphs on the training
	// records (--graph-metric resolved): euclidean or cosine.
	GraphMetric string `json:"graph_metric"`
	// Codes is --codes: what the classifier read of the codes.
	Codes string `json:"codes"`
	// CodeNN1 is the accuracy of 1-NN of the test codes against the
	// labeled training codes (the papers' protocol), CodeNMI the NMI of a
	// k-means clustering of the test codes against the test labels
	// (classify.EmbeddingOf): the codes' own quality, whatever classifier
	// decides. Null where undefined.
	CodeNN1 jsonFloat `json:"code_1nn"`
	CodeNMI jsonFloat `json:"code_nmi"`
	// Priors are the class priors the document classifier assumed,
	// estimated from the unlabeled training records (--priors mpe or em,
	// in the order of the classes' names); absent where it assumed them
	// uniform (--priors uniform, the estimate failed the guard, or no
	// document classifier).
	Priors []float64 `json:"priors,omitempty"`
	// PriorsCodes are the class priors the pair's second fit (--doc-codes
	// pair: the rows with their codes appended) assumed, as Priors are
	// the first fit's; absent without the pair or where that fit assumed
	// them uniform.
	PriorsCodes []float64 `json:"priors_codes,omitempty"`
}

func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("eval", evalSynopsis, stderr)
	var p fitParams
	addFitFlags(fs, &p)
	var tp textParams
	addTextFlags(fs, &tp)
	train := fs.String("train", "", "training `file` (required)")
	test := fs.String("test", "", "test `file` with labels (required)")
	rejects := fs.String("rejects", "", "write rejected records of both files to this `file` (JSON lines)")
	asJSON := fs.Bool("json", false, "print one JSON object instead of text")
	codes := stages.CodesAuto
	fs.Func("codes", "what the classifier reads of the codes: auto (the default: dense features and codes, self-training on both, see above; documents: LapRLS on their rows and codes as --doc-codes says), off (the same classifier on the features alone; documents: LapRLS on their rows, as --doc-codes off) or only (1-NN on the self-labeled training codes) — the ablations of BENCHMARKS.md", func(s string) (err error) {
		codes, err = stages.ParseCodeUse(s)
		return err
	})
	priors := addPriorsFlag(fs)
	docCodes := addDocCodesFlag(fs)
	jointOnly := addSelfTrainingFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	p.given = givenFlags(fs)
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q (flags go before, as --flag value)", errUsage, fs.Arg(0))
	}
	if *train == "" || *test == "" {
		return fmt.Errorf("%w: --train and --test are required (see nmfstream eval -help)", errUsage)
	}
	if *train == "-" && *test == "-" {
		return fmt.Errorf("%w: --train and --test cannot both be stdin", errUsage)
	}
	if err := docCodes.check(codes); err != nil {
		return err
	}
	if err := checkStart(checkInput("--train", *train), checkInput("--test", *test), checkOutput("--rejects", *rejects)); err != nil {
		return err
	}
	ev, err := evaluate(ctx, p, tp, *train, *test, *rejects, classifierOptions{codes: codes, priors: *priors, jointOnly: *jointOnly, docCodes: *docCodes}, stderr)
	if err != nil {
		return err
	}
	sum := ev.sum
	if *asJSON {
		return json.NewEncoder(stdout).Encode(sum)
	}
	fmt.Fprintf(stdout, "%s (rank %d, %s projection, seed %d): held-out accuracy %.4f on %d test records (balanced accuracy %.4f, macro-F1 %.4f; classifier %s)\n",
		sum.Method, sum.Rank, sum.Projection, sum.Seed, sum.Accuracy, sum.NTest, sum.BalancedAccuracy, sum.MacroF1, sum.Classifier)
	fmt.Fprintf(stdout, "trained on %d records (%d labeled, %d classes, %d features; graphs by the %s distance) in %.2fs; %d records rejected\n",
		sum.NTrain, sum.NLabeled, sum.Classes, sum.Features, sum.GraphMetric, sum.FitSeconds, sum.Rejected)
	fmt.Fprintf(stdout, "the test codes alone: 1-NN against the labeled training codes %v, NMI of k-means %v\n", sum.CodeNN1, sum.CodeNMI)
	return nil
}

// codeTest returns the model data of the test records tin and their codes
// on the fit f's basis, projected as proj says (or by the in-memory
// method's own projection).
func codeTest(ctx context.Context, f *fitted, proj model.Projection, tin *input, test string, stderr io.Writer) (model.Data, *mat.Dense, error) {
	var codes *mat.Dense
	var err error
	var sp space
	if f.snap != nil {
		if sp, err = spaceOf(f.snap); err != nil {
			return nil, nil, err
		}
	} else {
		_, isSparse := model.Rows(f.x).(*sparse.CSR)
		sp = space{form: formName(f.in.form), tf: f.tf, d: f.in.d, sparse: isSparse}
	}
	x, err := modelData(sp, tin)
	if err != nil {
		return nil, nil, err
	}
	if f.spec.project != nil { // in memory: no rebuild from the snapshot
		codes = &mat.Dense{}
		err = f.spec.project(f.m, codes, x)
	} else {
		codes, err = codeData(ctx, f.snap, proj, x, stderr)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", test, err)
	}
	n := tin.n()
	if codes, err = rejectBadCodes(tin, codes, math.MaxFloat64); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", test, err)
	}
	if tin.n() < n { // records rejected: their rows leave x too
		if x, err = modelData(sp, tin); err != nil {
			return nil, nil, err
		}
	}
	return x, codes, nil
}

// projectionName is how the test records of the fit f were coded, as
// eval --json names it.
func projectionName(f *fitted, proj model.Projection, p fitParams) string {
	switch {
	case f.spec.Linear:
		return "linear"
	case f.spec.project != nil:
		return "kernel-" + kernelProjection(p.projector).String()
	}
	return proj.String()
}

// evaluation is what eval measures: the fit, and the test records'
// predicted and true classes (−1: no label).
type evaluation struct {
	sum         evalSummary
	f           *fitted
	pred, truth []int
	cs          metrics.ClassScores
}

// readTest reads the test file and codes its records on the fit f's basis
// (codeTest), then reports its rejected records, those whose codes are bad
// among them, to stderr and appends them to rejects (if set). start is
// when the coding began (eval's project_seconds count from it).
func readTest(ctx context.Context, f *fitted, proj model.Projection, p fitParams, test, rejects string, stderr io.Writer) (tin *input, x model.Data, codes *mat.Dense, start time.Time, err error) {
	pr := newProgress(stderr, "reading "+test)
	tin, err = readInput(ctx, test, p.csv.opener(os.Stdin), pr)
	pr.done()
	start = time.Now()
	if err == nil {
		x, codes, err = codeTest(ctx, f, proj, tin, test, stderr)
	}
	if tin != nil {
		if rerr := reportRejects(stderr, tin, rejects, true); rerr != nil && err == nil {
			err = rerr
		}
	}
	return tin, x, codes, start, err
}

// evaluate fits p's method on the train file, codes and classifies the
// test file, and scores the predictions against the test labels, as eval
// does; rejected records of both files go to rejects (if set) and stderr.
func evaluate(ctx context.Context, p fitParams, tp textParams, train, test, rejects string, opt classifierOptions, stderr io.Writer) (*evaluation, error) {
	if err := checkParams(p); err != nil {
		return nil, err
	}
	if _, err := tp.tfidf(); err != nil {
		return nil, err
	}
	f, err := fitFileText(ctx, train, p, tp, stderr)
	if f != nil {
		if rerr := reportRejects(stderr, f.in, rejects, false); rerr != nil && err == nil {
			err = rerr
		}
	}
	if err != nil {
		return nil, err
	}
	proj, _ := model.ParseProjection(p.projector)

	tin, x, codes, start, err := readTest(ctx, f, proj, p, test, rejects, stderr)
	if err != nil {
		return nil, err
	}
	var trainX model.Data
	if !f.spec.Linear { // as classify: a saved linear model keeps no training rows
		trainX = f.x
	}
	opt.snap = f.snap // as classify: the model file's NNLS projector codes --doc-codes' rows
	opt.progress = newProgress(stderr, "classifier: self-training")
	cl, err := newCodesClassifier(trainX, f.m.Codes(), f.y, f.classes, train, opt)
	if err != nil {
		return nil, err
	}
	if cl.lap != nil { // a choice was made: say which
		fmt.Fprintf(stderr, "nmfstream: classifier: %s\n", cl.describe())
	}
	pred, _, err := cl.predictData(x, codes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", test, err)
	}
	truth, nTest := cl.truth(tin)
	if nTest == 0 {
		return nil, fmt.Errorf("%s: no test record has a label, so accuracy cannot be measured: give a labeled test file", test)
	}
	projSeconds := time.Since(start).Seconds()
	projName := projectionName(f, proj, p)
	cs := metrics.PerClass(pred, truth, len(f.classes)+1)
	ev := &evaluation{f: f, pred: pred, truth: truth, cs: cs}
	ev.sum = evalSummary{
		Method:           f.method,
		Accuracy:         metrics.Accuracy(pred, truth),
		BalancedAccuracy: cs.BalancedAccuracy,
		MacroF1:          cs.MacroF1,
		Classifier:       cl.name(),
		NTrain:           f.in.n(),
		NLabeled:         f.in.nLabeled(),
		NTest:            nTest,
		FitSeconds:       f.seconds,
		ProjectSeconds:   projSeconds,
		Rejected:         len(f.in.rejects) + len(tin.rejects),
		Seed:             p.seed,
		Projection:       projName,
		Rank:             p.rank,
		Classes:          len(f.classes),
		Features:         f.in.d,
		Precision:        f.precision,
		Landmarks:        f.landmarks,
		GraphMetric:      f.metric.String(),
		Codes:            opt.codes.String(),
		Priors:           priors(cl.lap),
		PriorsCodes:      priors(cl.lapCodes),
	}
	ev.sum.NTestUnseen = cl.warnUnseen(stderr, tin)
	emb := classify.EmbeddingOf(codes, truth, f.m.Codes(), f.y)
	ev.sum.CodeNN1, ev.sum.CodeNMI = jsonFloat(emb.NN1), jsonFloat(emb.NMI)
	return ev, nil
}
