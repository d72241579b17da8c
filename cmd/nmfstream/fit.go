package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/model/metrics"
	"github.com/nmfstream/nmfstream/model/sparse"
	"github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/sinks"
	"github.com/nmfstream/nmfstream/stages"
)

func init() {
	register(command{
		name:    "fit",
		summary: "fit a factorization on a training file and save the model",
		run:     runFit,
	})
}

const fitSynopsis = `fit --train F --save OUT [--method M] [--rank K] [--neighbors k] [--alpha a] [--beta b] [--iters T] [--seed s] [--projector P] [--landmarks M] [--graph-metric G] [--rejects R] [--precision P] [--json] [CSV flags] [text flags]

Fits a non-negative factorization X ≈ UVᵀ to the records of F and saves
the model to OUT (an Arrow IPC file) for "nmfstream project", "classify"
and "serve --model".

F is an Arrow IPC file (.arrow), an Arrow stream (.arrows, or - for stdin),
Parquet or CSV (.csv, .csv.gz), one record per row, with exactly one
feature column:
  x                dense features ≥ 0 (fixed_size_list or list of float)
  indices, values  sparse features, the dimension in schema metadata "dim"
  text             documents (turned into TF-IDF, which the model keeps)
  image            PNG, JPEG, GIF, BMP or PGM/PPM bytes (grayscale pixels)
and optional columns label (int64 or utf8; null = unlabeled) and id.
A CSV holds numeric features, or documents with --text-column; it has a
label only with --label-column or a header column named "label"
(--label-column NAME|N, --id-column NAME|N, --text-column NAME|N,
--unlabeled V).
Documents become TF-IDF rows over the terms of at least --min-df training
documents, without --stop-words, with sublinear tf (--sublinear-tf) and
unit-length rows; --stem stems the terms (text flags: --sublinear-tf=true|false,
--min-df n, --stop-words english|none, --stem). The model keeps the vectorizer.
Semi-supervised methods use the labeled records; every record shapes the
factorization. Records that cannot be used are counted and skipped.
--precision auto (the default) runs the products with dense data in
float32 when the input stores float32 or bytes (Arrow or Parquet float32
lists, IDX images), as scikit-learn keeps float32 input as float32, and in
float64 otherwise; float32 or float64 chooses (--float32 is --precision
float32). In float32 the products run about twice as fast (a whole GNMF
fit of 10,000 MNIST images about 1.3×), objective and accuracy unchanged
within rounding; an input with a value above 10¹⁵ keeps float64 (its
products could overflow float32); --json says which ran ("precision").
Feature values above 10⁶⁰ (record.MaxValue) are rejected.
--model OUT is the deprecated spelling of --save OUT.

Examples:
  nmfstream fit --train train.arrow --save digits.model
  nmfstream fit --train docs.parquet --save docs.model --method gnmf --rank 20 --neighbors 10
  nmfstream fit --train digits.csv.gz --label-column 65 --save digits.model
  nmfstream fit --train train.arrow --save m.model --json > fit.json`

func runFit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("fit", fitSynopsis, stderr)
	var p fitParams
	addFitFlags(fs, &p)
	var tp textParams
	addTextFlags(fs, &tp)
	train := fs.String("train", "", "training `file` (required)")
	out := fs.String("save", "", "`file` to write the model to (required)")
	oldOut := fs.String("model", "", "deprecated spelling of --save")
	rejects := fs.String("rejects", "", "write rejected records to this `file` (JSON lines)")
	asJSON := fs.Bool("json", false, "print a JSON summary instead of text")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	p.given = givenFlags(fs)
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q (flags go before, as --flag value)", errUsage, fs.Arg(0))
	}
	if *oldOut != "" {
		if *out != "" {
			return fmt.Errorf("%w: --model is the deprecated spelling of --save: give only --save", errUsage)
		}
		warnDeprecated(stderr, "fit", "--model OUT", "--save OUT")
		*out = *oldOut
	}
	if *train == "" || *out == "" {
		return fmt.Errorf("%w: --train and --save are required (see nmfstream fit -help)", errUsage)
	}
	if err := errors.Join(checkInput("--train", *train), checkOutput("--save", *out), checkOutput("--rejects", *rejects)); err != nil {
		return err
	}
	if err := checkParams(p); err != nil {
		return err
	}
	if _, err := tp.tfidf(); err != nil {
		return err
	}
	if _, _, err := lookupMethod(p.method); err != nil {
		return err
	}
	f, err := fitFileText(ctx, *train, p, tp, stderr)
	if f != nil {
		if rerr := reportRejects(stderr, f.in, *rejects, false); rerr != nil && err == nil {
			err = rerr
		}
	}
	if err != nil {
		return err
	}
	if err := sinks.SaveModel(*out, f.snap); err != nil {
		return fmt.Errorf("%s: %w", *out, err)
	}
	sum := fitSummary{
		Method: f.method, Model: *out, Rank: p.rank, NTrain: f.in.n(), NLabeled: f.in.nLabeled(),
		Classes: len(f.snap.Classes), Features: f.in.d, Rejected: len(f.in.rejects),
		FitSeconds: f.seconds, Iters: f.iters, Objective: f.objective, Seed: p.seed,
		Projection: f.snap.Projection.String(), Precision: f.precision, Landmarks: f.landmarks,
		GraphMetric: f.metric.String(),
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(sum)
	}
	fmt.Fprintf(stdout, "fitted %s (rank %d) on %d records of %s (%d labeled, %d classes, %d features; graphs by the %s distance) in %.2fs; %d rejected\nmodel written to %s\n",
		sum.Method, sum.Rank, sum.NTrain, *train, sum.NLabeled, sum.Classes, sum.Features, sum.GraphMetric, sum.FitSeconds, sum.Rejected, *out)
	return nil
}

// fitSummary is what fit --json prints.
type fitSummary struct {
	Method     string  `json:"method"`
	Model      string  `json:"model"`
	Rank       int     `json:"rank"`
	NTrain     int     `json:"n_train"`
	NLabeled   int     `json:"n_labeled"`
	Classes    int     `json:"classes"`
	Features   int     `json:"features"`
	Rejected   int     `json:"rejected"`
	FitSeconds float64 `json:"fit_seconds"`
	Iters      int     `json:"iters"`
	Objective  float64 `json:"objective"`
	Seed       uint64  `json:"seed"`
	Projection string  `json:"projection"`
	Precision  string  `json:"precision"`           // of the products with X: float32 or float64
	Landmarks  int     `json:"landmarks,omitempty"` // the kernel methods' Nyström landmarks (absent: exact kernels)
	// GraphMetric is the distance of the k-NN graphs on the training
	// records (--graph-metric resolved): euclidean or cosine.
	GraphMetric string `json:"graph_metric"`
}

// fitted is the outcome of fitFile.
type fitted struct {
	in        *input
	method    string
	spec      methodSpec
	m         model.Method
	x         model.Data
	tf        *stages.TFIDF
	y         []int    // class of each training sample, −1 unlabeled
	classes   []string // label of each class
	snap      *model.Snapshot
	seconds   float64
	iters     int
	objective float64
	precision string       // "float32" if the products with X ran in float32, else "float64"
	landmarks int          // the kernel method's Nyström landmarks (0: exact kernels, or not a kernel method)
	metric    graph.Metric // of the k-NN graphs on the training records (--graph-metric resolved)
}

// resulter is what the engine-based methods report after a fit.
type resulter interface{ Result() model.Result }

// fitFile reads the training file, fits the method of p and builds the
// snapshot, documents vectorized by the default text flags. On a data
// error it still returns what it read (for rejects).
func fitFile(ctx context.Context, path string, p fitParams, stderr io.Writer) (*fitted, error) {
	return fitFileText(ctx, path, p, defaultTextParams(), stderr)
}

// fitFileText is fitFile with documents vectorized as tp says.
func fitFileText(ctx context.Context, path string, p fitParams, tp textParams, stderr io.Writer) (*fitted, error) {
	name, spec, err := lookupMethod(p.method)
	if err != nil {
		return nil, err
	}
	pr := newProgress(stderr, "reading "+path)
	in, err := readInput(ctx, path, p.csv.opener(os.Stdin), pr)
	pr.done()
	if err != nil {
		if in != nil {
			return &fitted{in: in}, err
		}
		return nil, err
	}
	if err := checkTrainForm(p.given, in.form); err != nil {
		return nil, err
	}
	f := &fitted{in: in, method: name, spec: spec}
	if in.form == record.FormText {
		if tp.minDF > in.n() {
			return f, fmt.Errorf("%w: --min-df %d: %s has %d training documents, so no term could be kept: pass %d or less", errUsage, tp.minDF, path, in.n(), in.n())
		}
		if f.tf, err = tp.tfidf(); err != nil {
			return f, err
		}
		f.tf.MaxDim = p.csv.maxDim // --max-dim bounds the vocabulary too
	}
	x, err := in.data(f.tf, true)
	if err != nil {
		return f, err
	}
	if x, err = in.capNorms(x, p.maxNormRatio); err != nil {
		return f, err
	}
	f.x = x
	if err := checkFitShape(x, p, path); err != nil {
		return f, err
	}
	if f.landmarks, err = kernelLandmarks(spec, x, p.landmarks, path, stderr); err != nil {
		return f, err
	}
	p.landmarks = f.landmarks
	y, known, err := encodeLabels(in)
	if err != nil {
		return f, err
	}
	f.y, f.classes = y, known
	if p.metric, err = graphMetricOf(p, spec, x, y, in.form == record.FormText); err != nil {
		return f, err
	}
	f.metric = p.metric
	if spec.UsesLabels && in.nLabeled() == 0 {
		return f, fmt.Errorf("method %s needs labeled records, and %s has none (every label is null): add labels or use --method gnmf", name, path)
	}

	if spec.SplitsCodes && p.rank <= len(f.classes) {
		return f, fmt.Errorf("%w: method %s gives each of the %d classes of %s a code column, plus at least one more: pass --rank %d or more",
			errUsage, name, len(f.classes), path, len(f.classes)+1)
	}
	if err := f.fit(ctx, p, path, stderr); err != nil {
		return f, err
	}
	f.snap, err = snapshotOf(f, p, path)
	return f, err
}

// fit fits f's method on its records f.x and labels f.y with p, showing
// progress on stderr, and records the fit's time, iterations, objective
// and precision in f. Errors name the method and path.
func (f *fitted) fit(ctx context.Context, p fitParams, path string, stderr io.Writer) error {
	pr := newProgress(stderr, "fitting "+f.method)
	start := time.Now()
	p.float32 = p.useFloat32(f.in.prec)
	f.m = f.spec.build(newCommon(p, func() bool { return ctx.Err() != nil }, pr), p)
	err := f.m.Fit(f.x, f.y)
	pr.done()
	f.seconds = time.Since(start).Seconds()
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	if err != nil {
		if nerr := neighborsError(err, f.spec, p, f.x); nerr != nil {
			return nerr
		}
		return fitError(err, f.method, path)
	}
	f.precision = "float64"
	if r, ok := f.m.(resulter); ok {
		res := r.Result()
		f.iters, f.objective = res.Iters, res.Objective
		if res.Float32 {
			f.precision = "float32"
		}
	}
	return nil
}

// maxKernelExact bounds the training records on which fit and eval give
// a kernel method (kernel, multik) exact kernel matrices, and the Nyström
// landmarks --landmarks takes. The exact path (kernel.DefaultMaxExact
// allows 20,000) holds N×N matrices and decomposes them in time N³ without
// checking for cancellation: the kernel method's fit took 5 s at 1,000
// MNIST images and 61 s at 2,000, multik's 10 s and 33 s (BENCHMARKS.md,
// "Kernel methods' size"). Above it, defaultLandmarks landmarks stand in.
const maxKernelExact = 2000

// defaultLandmarks is the Nyström landmarks of a kernel method fitted on
// more than maxKernelExact records without --landmarks (BENCHMARKS.md,
// "Kernel methods' size").
const defaultLandmarks = 500

// maxKernelFeatureBytes bounds the Nyström features a kernel fit holds,
// 8·N·m bytes per kernel of the method (one for kernel, ten for multik's
// pool). The fit holds more beside them: multik's peak at 10,000 MNIST
// images and 500 landmarks (0.4 GiB of features) was 2.2 GiB above
// GNMF's (BENCHMARKS.md, "Kernel methods' size").
const maxKernelFeatureBytes = 1 << 30

// kernelLandmarks resolves --landmarks (given) for method spec on the
// training records x of path: 0 (exact kernels) up to maxKernelExact
// records, defaultLandmarks above, said on stderr; given, if positive,
// unless it exceeds the records. It refuses Nyström features of more than
// maxKernelFeatureBytes. Methods other than the kernel methods get given
// (checkParams refuses a positive one).
func kernelLandmarks(spec methodSpec, x model.Data, given int, path string, stderr io.Writer) (int, error) {
	if !spec.Kernel() {
		return given, nil
	}
	_, n := x.Dims()
	m := given
	switch {
	case m > n:
		return 0, fmt.Errorf("%w: --landmarks %d: %s has %d training records; the landmarks are some of them", errUsage, m, path, n)
	case m == 0 && n <= maxKernelExact:
		return 0, nil
	case m == 0:
		m = min(defaultLandmarks, n)
		fmt.Fprintf(stderr, "method %s: %d training records, over the %d of exact kernel matrices: Nyström features on %d landmarks (--landmarks)\n", spec.Name, n, maxKernelExact, m)
	}
	kernels := int64(spec.Kernels)
	if b := 8 * int64(n) * int64(m) * kernels; b > maxKernelFeatureBytes {
		return 0, fmt.Errorf("%w: method %s on %s: %d training records × %d landmarks × %d kernels take %d MiB of Nyström features, over %d MiB: fit it on a sample of fewer records, pass a smaller --landmarks, or use another --method",
			model.ErrTooLarge, spec.Name, path, n, m, kernels, b>>20, maxKernelFeatureBytes>>20)
	}
	return m, nil
}

// checkFitShape refuses, before fitting, a basis over --max-basis and a
// rank above min(features, records).
func checkFitShape(x model.Data, p fitParams, path string) error {
	d, n := x.Dims()
	// 8·d·rank > maxBasis, without overflow.
	if p.maxBasis > 0 && int64(d) > p.maxBasis/(8*int64(max(p.rank, 1))) {
		return fmt.Errorf("%w: %s has %d features: a basis of %d×%d (--rank) takes %d MiB, over --max-basis %d MiB: lower --rank, use fewer features (--max-dim; text: --min-df), or raise --max-basis",
			model.ErrTooLarge, path, d, d, p.rank, 8*int64(d)*int64(p.rank)>>20, p.maxBasis>>20)
	}
	if p.rank > min(d, n) {
		return fmt.Errorf("%w: --rank %d is larger than min(features %d, records %d) of %s: pass --rank %d or less",
			errUsage, p.rank, d, n, path, min(d, n))
	}
	// X = 0 factorizes as U = 0 or V = 0: the model would code every
	// record as zero, and project refuses its zero basis.
	if !slices.ContainsFunc(model.RowNorms(x), func(v float64) bool { return v != 0 }) {
		return fmt.Errorf("%s: every training record is zero: nothing to factorize (give records with nonzero features)", path)
	}
	return nil
}

// encodeLabels returns each record's class (−1: unlabeled) and the
// classes, the sorted distinct labels (metrics.LabelEncoder).
func encodeLabels(in *input) ([]int, []string, error) {
	var enc metrics.LabelEncoder
	var known []string
	for i, l := range in.labels {
		if in.labeled[i] {
			known = append(known, l)
		}
	}
	enc.Fit(known)
	y := make([]int, len(in.labels))
	for i := range y {
		y[i] = -1
		if in.labeled[i] {
			c, err := enc.Encode(nil, in.labels[i:i+1])
			if err != nil {
				return nil, nil, err
			}
			y[i] = c[0]
		}
	}
	return y, append([]string{}, enc.Classes()...), nil
}

// neighborsError returns, for a fit that failed with err when the
// training records x do not outnumber the k of its k-NN graph
// (--neighbors, graph.DefaultK by default), an error naming the flag and
// the fix; the graph's own error names neither. It returns nil otherwise.
func neighborsError(err error, spec methodSpec, p fitParams, x model.Data) error {
	_, n := x.Dims()
	k := cmp.Or(p.neighbors, graph.DefaultK)
	if !spec.Neighbors.Used || n > k || errors.Is(err, model.ErrDiverged) || errors.Is(err, model.ErrNoLabels) {
		return nil
	}
	return fmt.Errorf("%w: --neighbors %d needs more training records than %d (the file has %d): lower --neighbors", errUsage, k, k, n)
}

// fitError says what to do about a failed fit of method name on path.
func fitError(err error, name, path string) error {
	switch {
	case errors.Is(err, model.ErrNoLabels):
		return fmt.Errorf("method %s on %s: %w: add labels or use --method gnmf", name, path, err)
	case errors.Is(err, model.ErrDiverged):
		return fmt.Errorf("method %s on %s: %w (--alpha, --beta), or use another --method; no model was written", name, path, err)
	}
	return fmt.Errorf("method %s on %s: %w", name, path, err)
}

// snapshotOf returns the model file of the fit f: basis, codes, labels,
// the training rows and graph a projection needs, the vectorizer.
func snapshotOf(f *fitted, p fitParams, path string) (*model.Snapshot, error) {
	name, spec, in, x, y := f.method, f.spec, f.in, f.x, f.y
	proj, _ := model.ParseProjection(p.projector) // checked by checkParams
	s := &model.Snapshot{
		Version:    model.SnapshotVersion,
		Method:     name,
		Params:     p.params(),
		U:          mat.DenseCopyOf(f.m.Basis()),
		V:          mat.DenseCopyOf(f.m.Codes()),
		Projection: proj,
		Linear:     spec.Linear,
		Classes:    f.classes,
		IntLabels:  allInts(in.labels, in.labeled),
		Labels:     y,
		Form:       formName(in.form),
	}
	s.Params["method"] = name
	p.csv.saveColumns(s.Params, path)
	if !spec.Linear {
		switch r := model.Rows(x).(type) {
		case *mat.Dense:
			s.TrainDense = r
		case *sparse.CSR:
			s.TrainSparse = r
		}
		if spec.anchor != nil {
			s.Graph, s.Weighting, s.Alpha = spec.anchor(f.m, p)
		} else {
			k := p.neighbors
			if k == 0 {
				k = graph.DefaultK
			}
			s.Graph, s.Alpha = graph.KNN{K: k, Metric: p.metric}, model.DefaultGNMFAlpha
		}
	}
	if spec.state != nil {
		// Kernel methods: the basis is N×K coefficients of the training
		// samples; the snapshot gets their state, and U is set to an
		// input-space summary (see kernel.State.MarshalSnapshot).
		st, err := spec.state(f.m)
		if err != nil {
			return nil, fmt.Errorf("method %s: %w", name, err)
		}
		s.U = nil
		if err := st.MarshalSnapshot(s); err != nil {
			return nil, fmt.Errorf("method %s: %w", name, err)
		}
	}
	if f.tf != nil {
		b, err := f.tf.MarshalBinary()
		if err != nil {
			return nil, err
		}
		s.Vectorizer = b
	}
	return s, nil
}

func formName(f record.Form) string {
	switch f {
	case record.FormDense:
		return "dense"
	case record.FormSparse:
		return "sparse"
	case record.FormText:
		return "text"
	}
	return strconv.Itoa(int(f))
}
