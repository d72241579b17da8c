package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/classify"
	"github.com/nmfstream/nmfstream/model/metrics"
	"github.com/nmfstream/nmfstream/model/sparse"
	"github.com/nmfstream/nmfstream/pipeline"
	"github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/sinks"
	"github.com/nmfstream/nmfstream/stages"
)

func init() {
	register(command{
		name:    "classify",
		summary: "predict the class of the records of a file with a saved model",
		run:     runClassify,
	})
}

const classifySynopsis = `classify --model M --in F --out F.arrow [--projector P] [--codes auto|off|only] [--priors mpe|em|uniform] [--doc-codes pair|append|off] [--self-training pair|joint] [--rejects R]

Codes every record of F on the saved model M (as "nmfstream project" does)
and predicts its class. If the model keeps dense training records (every
method but dpca, on dense or image features), the classifier is
classify.Joint: the unlabeled training records are labeled twice by
kernel self-training, on their features and codes together and on their
features alone, and the two Gaussian kernel classifiers on the features
fitted on those labels are averaged (the pair; --self-training joint
keeps the first alone). The two self-trainings run side by side, at up
to twice one's memory (about 2 GiB for 10,000 training images). On the digits, 10 labels per class: 0.972
held-out accuracy, mean of 5 splits, against 0.971 for the features
alone and 0.950 for 1-NN on codes; on two MNIST splits 0.906 and 0.899
against 0.894 and 0.879 for the features alone. If it keeps
sparse training records (text or sparse features), the classifier is
classify.LapRLS on the records' features: a linear classifier whose scores
are smoothed over the cosine k-NN graph of the training records, with or
without the graph as cross-validation on the labels decides (Brown, 3
labels per genre: 0.373 held out against 0.361 for a linear SVM on the
labeled documents). By default it is two such fits, one on the records'
features and one on them with each record's code on the model's basis
appended, whose calibrated scores are averaged (--doc-codes pair; append
keeps the second alone, off the first). Otherwise (dpca) it is 1-NN against the training
codes, self-labeled in code space (classify.SelfTraining).
Writes one row per usable record, in input order, to F.arrow: id, code,
pred (the label, as text) and score: the kernel classifier's output for
the predicted label, in [0, 1] (about 1 for a record like the training
records of that class); for LapRLS its raw decision value xW for the
predicted label (the mean of the two fits' with --doc-codes pair), not a
probability: regressed toward 1 − 1/C for a
record's class and −1/C for the others, but shrunk by the regularization
to a scale of the model's own (about 10⁻⁴ on the Brown documents) and
negative for a record unlike every class, so it ranks the records of one
model only; for the code-space classifier the share of the 5 nearest
labeled training codes that carry the predicted label.
An output ending in .jsonl writes JSON lines instead, and - an Arrow
stream on stdout (the summary then goes to stderr).
If F has labels, the accuracy on them is printed.

Examples:
  nmfstream classify --model digits.model --in test.arrow --out pred.arrow
  nmfstream classify --model docs.model --in new.parquet --out pred.arrow --rejects bad.jsonl`

func runClassify(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("classify", classifySynopsis, stderr)
	f := bindCodeFlags(fs)
	use := stages.CodesAuto
	fs.Func("codes", "what the classifier reads of the codes: auto (the default, see above; documents: LapRLS on their rows and codes as --doc-codes says), off (the same classifier on the features alone; documents: LapRLS on their rows, as --doc-codes off) or only (1-NN on the self-labeled training codes): eval's ablations", func(s string) (err error) {
		use, err = stages.ParseCodeUse(s)
		return err
	})
	priors := addPriorsFlag(fs)
	jointOnly := addSelfTrainingFlag(fs)
	docCodes := addDocCodesFlag(fs)
	snap, proj, err := f.load(fs, "classify", args)
	if err != nil {
		return err
	}
	if err := docCodes.check(use); err != nil {
		return err
	}
	if form, _, ok := seedForm(snap); ok {
		if err := checkTrainForm(givenFlags(fs), form); err != nil { // the fitted model's training records fix it
			return err
		}
	}
	if err := checkLinearProjector(snap, *f.projector, *f.model); err != nil {
		return err
	}
	var train model.Data
	if snap.TrainDense != nil {
		train = model.DenseRows(snap.TrainDense)
	} else if snap.TrainSparse != nil {
		train = model.SparseRows(snap.TrainSparse)
	}
	cl, err := newCodesClassifier(train, snap.V, snap.Labels, snap.Classes, *f.model,
		classifierOptions{codes: use, priors: *priors, jointOnly: *jointOnly, docCodes: *docCodes, snap: snap, progress: newProgress(stderr, "classifier: self-training")})
	if err != nil {
		return err
	}
	if cl.lap != nil { // as eval: say what cross-validation and the priors chose
		fmt.Fprintf(stderr, "nmfstream: classifier: %s\n", cl.describe())
	}
	in, codes, err := f.codeInput(ctx, snap, proj, stderr)
	if err != nil {
		return err
	}
	var x model.Data
	if cl.joint != nil || cl.lap != nil {
		sp, err := spaceOf(snap)
		if err != nil {
			return err
		}
		if x, err = modelData(sp, in); err != nil {
			return err
		}
	}
	pred, score, err := cl.predictData(x, codes)
	if err != nil {
		return err
	}
	names, err := cl.enc.Decode(nil, pred)
	if err != nil {
		return err
	}
	_, k := codes.Dims()
	if err := writeResults(*f.out, k, cl.withFeatureless(sinks.Results{IDs: in.ids, Codes: codes, Preds: names, Scores: score}, in)); err != nil {
		return err
	}
	sum := summaryOut(*f.out, stdout, stderr)
	fmt.Fprintf(sum, "classified %d records of %s into %s; %d rejected\n", in.n(), *f.in, *f.out, len(in.rejects))
	if truth, nt := cl.truth(in); nt > 0 {
		cl.warnUnseen(stderr, in)
		fmt.Fprintf(sum, "accuracy on the %d labeled records: %.4f\n", nt, metrics.Accuracy(pred, truth))
	}
	return nil
}

// classifier predicts classes from features and codes. With dense training
// features it is classify.Joint at its defaults (the pair: kernel
// self-training on features and codes and on the features alone, then
// the mean of two kernel classifiers on the features; 0.972 mean held-out
// accuracy over 5 digits splits against 0.971 for the features alone; on
// two MNIST splits 0.906 and 0.899 against 0.894 and 0.879: BENCHMARKS.md,
// "The joint classifier's pair"). Without
// them (sparse or text features, whose densified N×D rows may not fit in
// memory, or a linear model that keeps no training rows) it is 1-NN
// against all training codes, the unlabeled ones labeled first by
// self-training in code space (classify.SelfTraining, 0.5–1.8 points above
// 1-NN on the labeled codes alone, see model.Auto).
//
// With sparse training rows (documents, and other sparse features) that
// the model keeps, it is classify.LapRLS on those rows: a linear
// classifier on the features whose scores are also smoothed over the
// cosine k-NN graph of every training row, labeled or not. Whether the
// graph term is used (γ_I = classify.DefaultLapRLSGammaI) or not (γ_I = 0,
// the supervised fit) is decided by cross-validation on the labels
// (LapRLS.Choices), unless the graph fit's class shares over the
// unlabeled rows depart from the supervised fit's by more than a fifth
// (LapRLS.GraphGuard); describe says which won. On Brown (3 labels per genre)
// and SpamAssassin (10 per class) it beats a linear SVM on the labeled
// documents (BENCHMARKS.md, "Documents"). Unless --priors uniform, it
// estimates the class priors from the unlabeled training rows
// (LapRLS.Priors), since a labeled subset of L per class says nothing of
// them (BENCHMARKS.md, "Skewed text: the priors estimated, guarded and
// halved"); where that estimate collapses and the labels are balanced by
// design, it pools the graph fit with the supervised fit and moves the
// pool's class masses to the supervised fit's (LapRLS.Masses, Pool). By
// default (--doc-codes pair) a second such fit reads each document's code
// on the basis beside its row (lapRows), and the two fits' calibrated
// scores are averaged (BENCHMARKS.md, "Skewed text: the two fits
// averaged").
type classifier struct {
	enc   metrics.LabelEncoder
	joint *classify.Joint       // dense training rows
	lap   *classify.LapRLS      // sparse training rows
	st    classify.SelfTraining // neither: the codes-only classifier
	// nnls, if set, codes the rows on the factorization's basis
	// (non-negative least squares; a kernel method's in its kernel space)
	// and lapRows appends each row's code at length lapCodeLength: lap
	// reads those rows (--doc-codes append), or, with lapCodes set,
	// lapCodes reads them and lap the rows alone (--doc-codes pair).
	nnls     projector
	lapCodes *classify.LapRLS
	// labels counts the training labels by class (withFeatureless).
	labels []int
	// docCodesWhy, if set, says why the default --doc-codes pair fell back
	// to the rows alone (the model's basis cannot code rows).
	docCodesWhy string
}

// lapCodeLength is the Euclidean length of the code appended to each
// document's TF-IDF row (of length 1) for LapRLS with --doc-codes pair or
// append: as long as half the row, the better on average of the two
// lengths (½ and 1) a scratch script tried with a linear SVM on eight
// skewed text sets (BENCHMARKS.md, "Skewed text: the codes beside the
// rows").
const lapCodeLength = 0.5

// lapRows returns the rows LapRLS reads for the sparse rows x: x with each
// row's NNLS code on the basis appended (classify.AppendCodes) when c
// codes them, else x.
func (c *classifier) lapRows(x *sparse.CSR) (*sparse.CSR, error) {
	if c.nnls == nil {
		return x, nil
	}
	var v mat.Dense
	if err := c.nnls.ProjectTo(&v, model.SparseRows(x)); err != nil {
		return nil, err
	}
	return classify.AppendCodes(x, &v, lapCodeLength)
}

// docCodesMisuse returns the usage error of an explicit --doc-codes
// pair|append where it does not apply: with use other than CodesAuto, or
// training records that are dense or absent.
func docCodesMisuse(mode docCodesMode, use stages.CodeUse, dense bool) error {
	why := "the model keeps no training documents"
	switch {
	case use != stages.CodesAuto:
		why = "drop it or --codes " + use.String()
	case dense:
		why = "the training records are dense, and the joint classifier already reads their codes: drop --doc-codes"
	}
	return fmt.Errorf("%w: --doc-codes %s reads documents' codes beside their rows, with --codes auto: %s", errUsage, mode, why)
}

// docCodesMode is --doc-codes: what the document classifier reads of the
// codes.
type docCodesMode int

const (
	// docCodesPair, the default: the mean of two LapRLS fits' calibrated
	// scores, one on the rows, one on the rows with the codes appended
	// (classify.PairPredictScoresTo).
	docCodesPair docCodesMode = iota
	// docCodesAppend: the fit on the rows with the codes appended alone.
	docCodesAppend
	// docCodesOff: the fit on the rows alone, which reads no code.
	docCodesOff
)

var docCodesNames = [...]string{docCodesPair: "pair", docCodesAppend: "append", docCodesOff: "off"}

func (m docCodesMode) String() string { return docCodesNames[m] }

// docCodesFlag is --doc-codes' value and whether it was given.
type docCodesFlag struct {
	mode docCodesMode
	set  bool
}

// check returns docCodesMisuse's error if the flag was given as pair or
// append beside --codes use other than auto.
func (f *docCodesFlag) check(use stages.CodeUse) error {
	if f.set && f.mode != docCodesOff && use != stages.CodesAuto {
		return docCodesMisuse(f.mode, use, false)
	}
	return nil
}

// addDocCodesFlag binds --doc-codes of eval and classify.
func addDocCodesFlag(fs *flag.FlagSet) *docCodesFlag {
	f := &docCodesFlag{}
	fs.Func("doc-codes", "documents: what the classifier (LapRLS) reads of each record's code on the model's basis (non-negative least squares), appended beside its TF-IDF row at half the row's length, the graph on the rows alone: pair (the default: the mean of the calibrated scores of a fit on the rows and a fit on the rows with the codes), append (the fit with the codes alone) or off (the rows alone). On eight skewed text sets (eight splits each) pair lifts macro-F1 by 1.1 points on average, its worst set losing 1.0 (2.3 on eight more splits), and append by 1.2, its worst losing 3.6 (4.5) (BENCHMARKS.md, \"Skewed text: the two fits averaged\"). A kernel model's codes are its NNLS codes in its kernel space; pair falls back to the rows where the model cannot code them, and says why; the others need --codes auto", func(s string) error {
		i := slices.Index(docCodesNames[:], s)
		if i < 0 {
			return fmt.Errorf("--doc-codes %q: want pair, append or off", s)
		}
		f.mode, f.set = docCodesMode(i), true
		return nil
	})
	return f
}

// newClassifier returns the codes-only classifier.
func newClassifier(v *mat.Dense, labels []int, classes []string, path string) (*classifier, error) {
	return newDataClassifier(nil, v, labels, classes, path)
}

// newDataClassifier returns the joint classifier if train (the training
// features, one sample per column of train as in model.Data) has dense
// rows, LapRLS if it has sparse ones, and the codes-only classifier
// without train.
func newDataClassifier(train model.Data, v *mat.Dense, labels []int, classes []string, path string) (*classifier, error) {
	return newCodesClassifier(train, v, labels, classes, path, defaultClassifier)
}

// newCodesClassifier is newDataClassifier with the options of eval's and
// classify's flags. opt.codes is the --codes ablation: CodesAuto as
// newDataClassifier; CodesOff the same classifiers without the codes (the
// joint classifier self-trains on the features alone; LapRLS never reads
// them); CodesOnly the codes-only classifier whatever the features.
// opt.priors is --priors: unless uniform, LapRLS estimates the class
// priors from the unlabeled training rows (LapRLS.Priors; with em by the
// EM, LapRLS.PriorsEM); uniform assumes them uniform. opt.jointOnly is
// --self-training joint (classify.Joint's
// JointOnly).
func newCodesClassifier(train model.Data, v *mat.Dense, labels []int, classes []string, path string, opt classifierOptions) (*classifier, error) {
	use := opt.codes
	if use == stages.CodesOnly {
		train = nil
	}
	if use == stages.CodesOff && train == nil {
		return nil, fmt.Errorf("%s: --codes off: the model keeps no training features, so only its codes can classify", path)
	}
	c := &classifier{labels: make([]int, len(classes))}
	c.enc.Fit(classes)
	for _, y := range labels {
		if y >= 0 && y < len(classes) {
			c.labels[y]++
		}
	}
	var dense *mat.Dense
	var rows *sparse.CSR
	var isDense, isSparse bool
	if train != nil {
		dense, isDense = model.Rows(train).(*mat.Dense)
		rows, isSparse = model.Rows(train).(*sparse.CSR)
	}
	var err error
	if opt.docCodes.set && opt.docCodes.mode != docCodesOff && (use != stages.CodesAuto || !isSparse) {
		return nil, docCodesMisuse(opt.docCodes.mode, use, isDense)
	}
	switch {
	case isDense:
		// Split runs the pair's two self-trainings side by side (at up to
		// twice one's peak memory) and each kernel classifier's products
		// in parts (classify.Joint.Split).
		c.joint = &classify.Joint{JointOnly: opt.jointOnly, Split: pipeline.Split(runtime.GOMAXPROCS(0))}
		if use == stages.CodesOff {
			c.joint.CodeWeight = -1
		}
		if opt.progress != nil {
			c.joint.Progress = func(done, total int) { opt.progress.update(done, total, "kernel fits") }
		}
		err = c.joint.Fit(dense, v, labels)
		opt.progress.done()
	case isSparse:
		err = c.fitDocuments(rows, labels, use, opt)
	default:
		err = c.st.Fit(v, labels)
	}
	if err != nil {
		if errors.Is(err, classify.ErrNoLabels) {
			return nil, fmt.Errorf("%s: the model has no labeled training records, so it cannot classify: refit with labels (it can still project)", path)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// fitDocuments fits the document classifier on the sparse training rows
// x (labels −1 where unlabeled) as opt.docCodes says: LapRLS on the rows,
// on the rows with each row's NNLS code on opt.snap's basis appended
// (lapRows; a kernel model's NNLS codes in its kernel space), or both (the
// pair). With --codes other than auto it fits the rows alone. Where the
// model codes no rows by NNLS (a linear model), an explicit pair or append
// is a usage error and the default falls back to the rows alone, saying
// why in c.docCodesWhy.
func (c *classifier) fitDocuments(x *sparse.CSR, labels []int, use stages.CodeUse, opt classifierOptions) error {
	c.lap = lapRLSFor(x, opt.priors)
	mode := opt.docCodes.mode
	if use != stages.CodesAuto {
		mode = docCodesOff
	}
	if mode != docCodesOff {
		var err error
		if c.nnls, err = snapshotProjector(opt.snap, model.ProjectNNLS); err != nil {
			if opt.docCodes.set {
				return fmt.Errorf("%w: --doc-codes %s: %v: use --doc-codes off or another --method", errUsage, mode, err)
			}
			c.docCodesWhy, mode = err.Error(), docCodesOff
		}
	}
	switch mode {
	case docCodesOff:
		return c.lap.Fit(x, labels)
	case docCodesAppend:
		return c.fitCodes(c.lap, x, labels)
	}
	// The pair: the two fits read x alone, side by side.
	c.lapCodes = lapRLSFor(x, opt.priors)
	var errs [2]error
	pipeline.Split(runtime.GOMAXPROCS(0))(2, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if i == 0 {
				errs[0] = c.lap.Fit(x, labels)
			} else {
				errs[1] = c.fitCodes(c.lapCodes, x, labels)
			}
		}
	})
	if errs[0] != nil {
		return errs[0]
	}
	return errs[1]
}

// fitCodes fits lr on the sparse rows x with each row's code appended
// (lapRows), its graph on x alone: the documents are joined by their
// words, and the codes weigh in the fit only.
func (c *classifier) fitCodes(lr *classify.LapRLS, x *sparse.CSR, labels []int) error {
	z, err := c.lapRows(x)
	if err != nil {
		return err
	}
	lr.GraphRows = x
	return lr.Fit(z, labels)
}

// lapRLSFor returns the LapRLS that classifies with the training rows x:
// the graph term on or off as cross-validation decides unless the two
// fits' class shares disagree (LapRLS.GraphGuard), with k at most one
// below the number of non-zero rows, and no graph with fewer than 3;
// the class priors estimated from the unlabeled rows unless priors is
// uniform (by the EM with em),
// and, where that estimate collapses, the graph fit pooled with the
// supervised fit, its class masses moved (LapRLS.Masses, Pool); the
// graph's search on every core (LapRLS.Split).
func lapRLSFor(x *sparse.CSR, priors priorsMode) *classify.LapRLS {
	estimatePriors, em := priors != priorsUniform, priors == priorsEM
	n, _ := x.Dims()
	nz := 0
	for i := range n {
		if x.Indptr[i+1] > x.Indptr[i] {
			nz++
		}
	}
	if nz < 3 {
		return &classify.LapRLS{GammaI: -1, Priors: estimatePriors, PriorsEM: em}
	}
	return &classify.LapRLS{K: min(classify.DefaultLapRLSK, nz-1), Choices: []float64{classify.DefaultLapRLSGammaI, 0}, Priors: estimatePriors, PriorsEM: em,
		GraphGuard: classify.DefaultLapRLSGraphGuard, Masses: true, Pool: true, Split: pipeline.Split(runtime.GOMAXPROCS(0))}
}

// predict returns the class and score of each row of codes with the
// codes-only classifier.
func (c *classifier) predict(codes *mat.Dense) ([]int, []float64) {
	if c.joint != nil {
		panic("nmfstream: the joint classifier needs the records' features")
	}
	return c.st.PredictScoresTo(nil, nil, codes)
}

// predictData returns the class and score of each record of x, whose codes
// are given; x is used only by the joint classifier and LapRLS (it may be
// nil otherwise). Scores are clamped to [0, 1]. It returns an error if
// --doc-codes could not code x's rows.
func (c *classifier) predictData(x model.Data, codes *mat.Dense) ([]int, []float64, error) {
	var pred []int
	var score []float64
	switch {
	case c.lap != nil:
		rows := model.Rows(x).(*sparse.CSR)
		z, err := c.lapRows(rows)
		if err != nil {
			return nil, nil, fmt.Errorf("coding the records for the document classifier: %w", err)
		}
		if c.lapCodes == nil {
			pred, score = c.lap.PredictScoresTo(nil, nil, z)
		} else if pred, score, err = classify.PairPredictScoresTo(nil, nil, c.lap, rows, c.lapCodes, z); err != nil {
			return nil, nil, err
		}
	case c.joint != nil:
		pred, score = c.joint.PredictScoresTo(nil, nil, denseRows(x), codes)
	default:
		pred, score := c.predict(codes)
		return pred, score, nil
	}
	for i, s := range score {
		score[i] = min(max(s, 0), 1)
	}
	return pred, score, nil
}

// withFeatureless returns r, the results of in's samples (in input
// order, with codes if r.Codes is set), with a row for each record of in
// rejected for having no features (record.ErrNoFeatures), in input order:
// no code, the class with the largest of the document classifier's
// estimated priors (classify.LapRLS.EstimatedPriors), else the one with
// the most training labels, its share as the score. A scorer that reads
// --out counts every record, and nothing else is known of these; their
// ids are theirs, or their offsets in decimal (docs/DESIGN.md §5).
func (c *classifier) withFeatureless(r sinks.Results, in *input) sinks.Results {
	var empty []record.Reject
	for _, rj := range in.rejects {
		if errors.Is(rj.Reason, record.ErrNoFeatures) {
			empty = append(empty, rj)
		}
	}
	if len(empty) == 0 {
		return r
	}
	share := make([]float64, len(c.labels))
	if c.lap != nil && len(c.lap.EstimatedPriors()) == len(share) {
		copy(share, c.lap.EstimatedPriors())
	} else {
		for j, n := range c.labels {
			share[j] = float64(n)
		}
	}
	best, total := 0, 0.0
	for j, v := range share {
		total += v
		if v > share[best] {
			best = j
		}
	}
	class, score := "", math.NaN()
	if total > 0 {
		class, score = c.enc.Classes()[best], share[best]/total
	}
	slices.SortStableFunc(empty, func(a, b record.Reject) int { return cmp.Compare(a.Offset, b.Offset) })
	n := r.Len() + len(empty)
	out := sinks.Results{IDs: make([]string, 0, n), Preds: make([]string, 0, n), Scores: make([]float64, 0, n)}
	var src []int // row of r per output row, −1 for a record without features
	for i, e := 0, 0; i < r.Len() || e < len(empty); {
		if e < len(empty) && (i == r.Len() || empty[e].Offset < in.offsets[i]) {
			id := empty[e].ID
			if id == "" {
				id = strconv.FormatInt(empty[e].Offset, 10)
			}
			out.IDs, out.Preds, out.Scores = append(out.IDs, id), append(out.Preds, class), append(out.Scores, score)
			src = append(src, -1)
			e++
			continue
		}
		out.IDs, out.Preds, out.Scores = append(out.IDs, r.IDs[i]), append(out.Preds, r.Preds[i]), append(out.Scores, r.Scores[i])
		src = append(src, i)
		i++
	}
	if r.Codes != nil {
		_, k := r.Codes.Dims()
		out.Codes, out.NoCode = mat.NewDense(n, k, nil), make([]bool, n)
		for o, i := range src {
			if i < 0 || r.NoCode != nil && r.NoCode[i] {
				out.NoCode[o] = true
			} else {
				out.Codes.SetRow(o, r.Codes.RawRowView(i))
			}
		}
	}
	return out
}

// describe says which classifier c is and, for LapRLS, what
// cross-validation picked.
func (c *classifier) describe() string {
	switch {
	case c.joint != nil && c.joint.CodeWeight < 0:
		return "kernel self-training and kernel classifier on the features alone (classify.Joint without the codes: --codes off)"
	case c.joint != nil && c.joint.JointOnly:
		return "kernel self-training on the features and codes, then a kernel classifier on the features (classify.Joint without the pair: --self-training joint)"
	case c.joint != nil:
		return "kernel self-training on the features and codes and on the features alone, the two kernel classifiers on the features averaged (classify.Joint, the pair)"
	case c.lapCodes != nil:
		return "the mean of two LapRLS fits' calibrated scores (--doc-codes pair): one on the features, " + lapChoice(c.lap) +
			"; one on the features with each document's code on the basis appended, its graph on the features alone, " + lapChoice(c.lapCodes) +
			"; the first fit's " + describePriors(c.lap, c.enc.Classes()) + "; the second fit's " + describePriors(c.lapCodes, c.enc.Classes())
	case c.nnls != nil:
		return lapChoice(c.lap) + "; " + describePriors(c.lap, c.enc.Classes()) + "; each document's code on the basis appended to its row (--doc-codes append), the graph on the rows alone"
	case c.lap != nil && c.docCodesWhy != "":
		return lapChoice(c.lap) + "; " + describePriors(c.lap, c.enc.Classes()) + "; the codes are not read: the model codes no documents (" + c.docCodesWhy + ")"
	case c.lap != nil:
		return lapChoice(c.lap) + "; " + describePriors(c.lap, c.enc.Classes()) + "; " + lapCodesNote
	}
	return "1-NN on the self-labeled training codes (classify.SelfTraining)"
}

// lapChoice says what cross-validation picked for the LapRLS fit lr.
func lapChoice(lr *classify.LapRLS) string {
	sc := lr.Scores()
	var s string
	switch {
	case len(sc) < 2:
		s = "LapRLS on the features without the graph (γ_I = 0, supervised): too few training records for a graph"
	case lr.Overruled():
		s = fmt.Sprintf("LapRLS on the features without the graph (γ_I = 0, supervised): cross-validation on the labels picked the graph (balanced accuracy %.3f against %.3f without it), but the two fits' class shares over the unlabeled training records differ by %.3f (total variation, above %g), so the graph spread the labels along something other than the classes", sc[0], sc[1], lr.SharesDistance(), lr.GraphGuard)
	case lr.GammaIChosen() > 0:
		s = fmt.Sprintf("LapRLS on the features with the cosine k-NN graph of the training records (γ_I = %g), picked by cross-validation on the labels: balanced accuracy %.3f against %.3f without the graph", lr.GammaIChosen(), sc[0], sc[1])
	default:
		s = fmt.Sprintf("LapRLS on the features without the graph (γ_I = 0, supervised), picked by cross-validation on the labels: balanced accuracy %.3f against %.3f with the graph", sc[1], sc[0])
	}
	if auc := lr.AUCs(); len(sc) == 2 && sc[0] == sc[1] && len(auc) == 2 {
		if auc[0] == auc[1] {
			s += fmt.Sprintf(" (a tie, and of the held-out scores' AUC too, %.3f: the graph, listed first)", auc[0])
		} else {
			s += fmt.Sprintf(" (a tie, broken by the held-out scores' AUC: %.3f with the graph, %.3f without)", auc[0], auc[1])
		}
	}
	return s
}

// lapCodesNote says, after LapRLS's description, that it reads no codes,
// so that --codes auto and off predict alike on documents.
const lapCodesNote = "the codes are not read (--doc-codes off or --codes off: the rows alone)"

// describePriors says which class priors the predictions of the LapRLS
// fit lr assume; classes names them.
func describePriors(lr *classify.LapRLS, classes []string) string {
	pi := lr.EstimatedPriors()
	if pi == nil {
		return "class priors uniform over the labeled classes (--priors uniform)"
	}
	var b strings.Builder
	for j, v := range pi {
		if j > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %.3f", classes[j], v)
	}
	if lr.PriorsUsed() {
		return "class priors of the training records (the labeled counted, the unlabeled estimated), half their shift from the uniform priors applied: " + b.String()
	}
	s := "class priors kept uniform: their estimate from the unlabeled training records (" + b.String() + ") collapsed a labeled class"
	switch {
	case lr.Pooled():
		s += "; the graph fit and the supervised fit pooled (the mean of their calibrated scores), its class masses over the unlabeled training records moved to the supervised fit's, since the labels are balanced by design"
	case lr.MassesMoved():
		s += "; the graph fit's class masses over the unlabeled training records moved to the supervised fit's, since the labels are balanced by design"
	}
	return s
}

// priors returns the class priors the LapRLS fit lr's predictions assume
// where they are estimated (--priors mpe or em, the estimate kept), nil otherwise
// or without lr: c.lap's, the document classifier's (with the pair, its
// fit on the rows alone), or c.lapCodes', the pair's fit on the rows with
// their codes.
func priors(lr *classify.LapRLS) []float64 {
	if lr == nil || !lr.PriorsUsed() {
		return nil
	}
	return lr.EstimatedPriors()
}

// classifierOptions are the choices eval and classify leave to the user
// beside the features: which codes the classifier reads (--codes), how
// LapRLS sets the class priors (--priors), and whether the joint
// classifier drops the features' own self-training (--self-training
// joint: classify.Joint's JointOnly).
type classifierOptions struct {
	codes     stages.CodeUse
	priors    priorsMode
	jointOnly bool
	// docCodes is --doc-codes: what LapRLS reads of each document's code
	// beside its row (classifier.fitDocuments), coded by NNLS on snap's
	// basis with its loss (snapshotProjector: a kernel model's in its
	// kernel space; none for a linear model).
	docCodes docCodesFlag
	snap     *model.Snapshot
	// progress, if set, reports the joint classifier's kernel fits (they
	// take minutes on tens of thousands of images); it is erased once the
	// classifier is fitted.
	progress *progress
}

// defaultClassifier is what eval and classify use without flags.
var defaultClassifier = classifierOptions{codes: stages.CodesAuto, priors: priorsMPE}

// addSelfTrainingFlag binds --self-training of eval and classify and
// returns where its value lands: true for joint, false for pair (the
// default).
func addSelfTrainingFlag(fs *flag.FlagSet) *bool {
	return addChoiceFlag(fs, "self-training", "joint", "pair", false, "how the classifier of dense features labels the unlabeled training records: pair (the default: kernel self-training on the features and codes together, and on the features alone; the two kernel classifiers fitted on their labels are averaged, so that codes which mislabel the records cost half) or joint (the first alone: the ablation of the pair). Without codes (--codes off) there is one self-training either way; documents are not self-trained")
}

// priorsMode is --priors: how LapRLS sets the class priors.
type priorsMode int

const (
	priorsMPE     priorsMode = iota // estimated: two classes labeled alike by mixture proportion estimation, others by the EM (the default)
	priorsEM                        // estimated by the EM (LapRLS.PriorsEM)
	priorsUniform                   // not estimated: the labeled classes weigh alike
)

var priorsNames = [...]string{priorsMPE: "mpe", priorsEM: "em", priorsUniform: "uniform"}

// addPriorsFlag binds --priors of eval and classify and returns where
// its value lands (priorsMPE without the flag).
func addPriorsFlag(fs *flag.FlagSet) *priorsMode {
	v := priorsMPE
	fs.Func("priors", "class priors of the document (sparse) classifier: mpe (the default: estimated from the unlabeled training records, of two classes labeled alike (L per class) by mixture proportion estimation, the share of them at least as sure of a class as its own labeled records are under cross-validation, with a floor under a rare class; of three or more, or labels drawn at random, by the EM of Saerens et al.; half their log-ratio to the uniform priors added to the scores, unless the EM's estimate collapsed one of three classes or more; for labeled subsets of L per class on skewed classes), em (the EM for two classes too, the estimator before, with the floor: it over-states a rare class beside a class made of many kinds; BENCHMARKS.md, \"Skewed text: the priors by mixture proportion estimation\") or uniform (the labeled classes weigh alike)", func(s string) error {
		i := slices.Index(priorsNames[:], s)
		if i < 0 {
			return fmt.Errorf("--priors %q: want mpe, em or uniform", s)
		}
		v = priorsMode(i)
		return nil
	})
	return &v
}

// addChoiceFlag binds --name, whose value is on or off, and returns where
// it lands: true for on, false for off, def without the flag. Any other
// value is a usage error naming both.
func addChoiceFlag(fs *flag.FlagSet, name, on, off string, def bool, usage string) *bool {
	v := def
	fs.Func(name, usage, func(s string) error {
		switch s {
		case on:
			v = true
		case off:
			v = false
		default:
			return fmt.Errorf("--%s %q: want %s or %s", name, s, on, off)
		}
		return nil
	})
	return &v
}

// name is describe's one-word form, for --json.
func (c *classifier) name() string {
	switch {
	case c.joint != nil && c.joint.CodeWeight < 0:
		return "joint-features"
	case c.joint != nil && c.joint.JointOnly:
		return "joint-only"
	case c.joint != nil:
		return "joint"
	case c.lapCodes != nil: // --doc-codes pair
		return lapName(c.lap) + "+pair"
	case c.nnls != nil: // --doc-codes append
		return lapName(c.lap) + "+codes"
	case c.lap != nil:
		return lapName(c.lap)
	}
	return "codes-1nn"
}

// lapName is the one-word form of what cross-validation picked for lr.
func lapName(lr *classify.LapRLS) string {
	switch {
	case lr.Pooled():
		return "laprls-pool"
	case lr.GammaIChosen() > 0:
		return "laprls-graph"
	}
	return "laprls-supervised"
}

func (c *classifier) truth(in *input) ([]int, int) {
	nc := len(c.enc.Classes())
	t := make([]int, in.n())
	n := 0
	for i := range t {
		t[i] = -1
		if !in.labeled[i] {
			continue
		}
		n++
		y, err := c.enc.Encode(nil, in.labels[i:i+1])
		if err != nil {
			t[i] = nc
			continue
		}
		t[i] = y[0]
	}
	return t, n
}

// warnUnseen says on stderr which labels of in's labeled records the
// classifier was not fitted on: those records are scored, and always
// wrong, which accuracy alone would not tell. It returns their number.
func (c *classifier) warnUnseen(stderr io.Writer, in *input) int {
	known := map[string]bool{}
	for _, k := range c.enc.Classes() {
		known[k] = true
	}
	count := map[string]int{}
	n := 0
	for i, l := range in.labels {
		if in.labeled[i] && !known[l] {
			count[l]++
			n++
		}
	}
	if n == 0 {
		return 0
	}
	names := slices.Sorted(maps.Keys(count))
	var shown []string
	for _, l := range names[:min(len(names), 10)] {
		shown = append(shown, fmt.Sprintf("%q (%d)", l, count[l]))
	}
	if len(names) > 10 {
		shown = append(shown, fmt.Sprintf("and %d more", len(names)-10))
	}
	classes := fmt.Sprintf("%d classes", len(names))
	if len(names) == 1 {
		classes = "a class"
	}
	fmt.Fprintf(stderr, "nmfstream: warning: %s: %d labeled records have %s the model does not know, %s: they are counted wrong in the accuracy (refit with them labeled in the training file)\n",
		in.path, n, classes, strings.Join(shown, ", "))
	return n
}

// denseRows returns x's samples as the rows of a dense matrix (N×D): the
// matrix of DenseRows data itself, or a dense copy of SparseRows data. It
// panics for other Data, which the commands never build.
func denseRows(x model.Data) *mat.Dense {
	switch r := model.Rows(x).(type) {
	case *mat.Dense:
		return r
	case *sparse.CSR:
		return r.ToDense()
	}
	panic(fmt.Sprintf("nmfstream: %T data has no rows", x))
}
