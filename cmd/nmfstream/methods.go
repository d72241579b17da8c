package main

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/openblas"
	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/model/kernel"
	"github.com/nmfstream/nmfstream/model/methods"
	"github.com/nmfstream/nmfstream/pipeline"
	"github.com/nmfstream/nmfstream/stages"
)

// autoMethod is what --method auto (the default) runs: the semi-supervised
// method that measured best under docs/DESIGN.md §7's protocol. The rule and its
// measurements live in one place, model.Auto.
const autoMethod = model.AutoMethod

// fitParams are the flags shared by fit and eval. A zero value means the
// method's documented default.
type fitParams struct {
	// given names the flags the command line set (givenFlags), for
	// checkTrainForm; nil where the command has none to check.
	given     map[string]bool
	method    string
	rank      int
	neighbors int
	alpha     float64
	beta      float64
	iters     int
	seed      uint64
	projector string
	loss      string
	precision string // --precision: auto, float32 or float64 (see useFloat32)
	float32   bool   // --float32: --precision float32; newCommon reads it as the choice made
	maxBasis  int64  // --max-basis: bytes of the D×K basis (8·D·K) above which fit refuses; ≤ 0: no bound
	landmarks int    // --landmarks: the kernel methods' Nyström landmarks (0: exact up to maxKernelExact records; see kernelLandmarks)
	// maxNormRatio is --max-norm-ratio: training records whose norm is
	// above it times the typical norm are rejected (0: the default,
	// stages.DefaultMaxNormRatio; negative: no bound).
	maxNormRatio float64
	csv          csvFlags // how CSV inputs are read
	// graphMetric is --graph-metric: auto, euclidean or cosine; metric
	// is what fitFileText resolved it to (graphMetricOf), the metric of
	// the method's graphs (model.Common.Metric) and of the projection's.
	graphMetric string
	metric      graph.Metric

	// objective, if non-nil, receives the objective after every update
	// of the fit (the report's curve).
	objective *[]float64
}

// addFitFlags registers the fit flags on fs.
func addFitFlags(fs *flag.FlagSet, p *fitParams) {
	fs.StringVar(&p.method, "method", "auto", "factorization method: "+strings.Join(methodNames(), ", ")+", or auto (= "+autoMethod+")")
	fs.IntVar(&p.rank, "rank", 40, "rank K of the factorization (number of latent factors)")
	fs.IntVar(&p.neighbors, "neighbors", 0, "k of the k-NN graphs, in training and graph projection (0: the method's default, 5)")
	fs.Float64Var(&p.alpha, "alpha", 0, "α, the method's main graph weight (0: the method's default)")
	fs.Float64Var(&p.beta, "beta", 0, "β, the method's second graph weight (ssknmf, n2s2l, nge; for ssnmf λ, the label factor's weight; 0: default)")
	fs.IntVar(&p.iters, "iters", 0, "maximum number of multiplicative updates (0: the method's default, 200)")
	fs.Uint64Var(&p.seed, "seed", 1, "seed of the randomized SVD behind the NNDSVDa initialization, which is otherwise deterministic: another seed moves the fit by rounding, rarely a prediction")
	fs.StringVar(&p.projector, "projector", "graph", "how new samples are coded: graph, nnls, clamped or pinv (the codes written and their code_1nn; the default image classifier predicts from the features, so it changes predictions only with --codes only; the documents' classifier reads each document's NNLS code whatever this says: eval and classify --doc-codes)")
	fs.IntVar(&p.landmarks, "landmarks", 0, fmt.Sprintf("Nyström landmarks of the kernel methods (kernel, multik), at most %d: their kernel matrices approximated on that many training records (0: exact kernels up to %d training records, %d landmarks above)", maxKernelExact, maxKernelExact, defaultLandmarks))
	fs.StringVar(&p.graphMetric, "graph-metric", "auto", "distance of the k-NN graphs on the training records, in the fit and in the graph projection of new records: euclidean, cosine, or auto (the cosine, unless the Euclidean distance classifies the labeled records better, leave-one-out, by 3 standard deviations, on dense features with at least 100 labeled records: model.ChooseMetric from model.DefaultBatchMetric; euclidean on documents). The kernel methods search their kernel space and dpca builds no graph: they take auto only; documents, whose TF-IDF rows have unit length so that the two find the same neighbours, take auto only")
	fs.StringVar(&p.loss, "loss", "frobenius", "reconstruction loss: frobenius, or kl (the generalized KL divergence of Lee and Seung; nmf, gnmf, dgnmf, ssknmf, n2s2l)")
	addPrecisionFlags(fs, p)
	fs.Int64Var(&p.maxBasis, "max-basis", model.DefaultMaxBasisBytes, "refuse, before fitting, a D×K basis of more than `bytes` (8·D·K; 0: no bound)")
	fs.Float64Var(&p.maxNormRatio, "max-norm-ratio", stages.DefaultMaxNormRatio, "reject a training record (features, not text) whose Euclidean norm is more than this many times the typical norm (the geometric mean of the other records' nonzero norms): one corrupt record, such as a pixel of 1e30, would otherwise set the basis and the classifier's scale alone; negative: no bound")
	addCSVFlags(fs, &p.csv)
}

// params returns the flags as the map stored in a saved model.
func (p fitParams) params() map[string]string {
	return map[string]string{
		"method":       p.method,
		"rank":         strconv.Itoa(p.rank),
		"neighbors":    strconv.Itoa(p.neighbors),
		"alpha":        strconv.FormatFloat(p.alpha, 'g', -1, 64),
		"beta":         strconv.FormatFloat(p.beta, 'g', -1, 64),
		"iters":        strconv.Itoa(p.iters),
		"seed":         strconv.FormatUint(p.seed, 10),
		"projector":    p.projector,
		"loss":         p.loss,
		"graph-metric": p.metric.String(),
	}
}

// methodSpec is a method of the registry (package model/methods) with what
// the command line adds to it: how to save and project what it fitted.
// Methods whose new samples need more than U and the training codes (the
// kernel methods, methods.Info.Kernel) set project, for eval, and state,
// for saving: their state goes into the snapshot's named Extra matrices
// and Params, and project and classify rebuild it (kernel.NewProjector).
type methodSpec struct {
	methods.Info
	// anchor returns the fitted method's k-NN settings and the weight of
	// the anchor term of graph projection. Nil: graph projection uses k
	// from --neighbors (default 5), Euclidean 0-1 weights and
	// model.DefaultGNMFAlpha, the weight GNMF's graph was tuned with.
	anchor func(m model.Method, p fitParams) (graph.KNN, graph.Weighting, float64)
	// project, if set, codes new samples in memory (eval).
	project func(m model.Method, dst *mat.Dense, x model.Data) error
	// state, set with project, exports the fitted method's projection
	// state for saving.
	state func(m model.Method) (*kernel.State, error)
}

// kernelMethod is what the kernel methods (kernel.Flexible, kernel.MultiK)
// offer beyond model.Method.
type kernelMethod interface {
	model.Method
	ProjectTo(dst *mat.Dense, x model.Data) error
	State() (*kernel.State, error)
}

// specOf adds the command line's saving and projection rules to i.
func specOf(i methods.Info) methodSpec {
	s := methodSpec{Info: i}
	if i.Kernel() {
		s.project = func(m model.Method, dst *mat.Dense, x model.Data) error {
			return m.(kernelMethod).ProjectTo(dst, x)
		}
		s.state = func(m model.Method) (*kernel.State, error) { return m.(kernelMethod).State() }
	}
	if i.Name == "gnmf" {
		s.anchor = func(m model.Method, p fitParams) (graph.KNN, graph.Weighting, float64) {
			g := m.(*model.GNMF)
			pr := g.Projector(model.ProjectGraph)
			k := g.Graph
			if g.Metric == graph.Cosine { // Common.Metric: GNMF searched by the cosine
				k.Metric = graph.Cosine
			}
			if k.K == 0 {
				k.K = graph.DefaultK
			}
			return graph.KNN{K: k.K, Metric: k.Metric}, g.Weighting, pr.Alpha
		}
	}
	return s
}

// build returns the method with c (rank, iterations, seed, progress
// callback) and the method-specific flags of p.
func (s methodSpec) build(c model.Common, p fitParams) model.Method {
	proj, _ := model.ParseProjection(p.projector) // unknown: graph, as checkParams reports
	return s.New(methods.Options{Common: c, Neighbors: p.neighbors, Alpha: p.alpha, Beta: p.beta, Projection: proj, Nystrom: p.landmarks})
}

// methodNames returns the names --method takes besides auto, sorted.
func methodNames() []string {
	var names []string
	for _, m := range methods.List() {
		if m.Alias == "" {
			names = append(names, m.Name)
		}
	}
	return names
}

// lookupMethod resolves --method, auto included.
func lookupMethod(name string) (string, methodSpec, error) {
	i, err := methods.Lookup(name)
	if err != nil {
		return "", methodSpec{}, fmt.Errorf("%w: %v", errUsage, err)
	}
	return i.Name, specOf(i), nil
}

// checkParams validates the flags common to fit and eval.
func checkParams(p fitParams) error {
	switch {
	case p.rank < 1:
		return fmt.Errorf("%w: --rank must be at least 1, got %d", errUsage, p.rank)
	case p.neighbors < 0:
		return fmt.Errorf("%w: --neighbors must not be negative, got %d", errUsage, p.neighbors)
	case !(p.alpha >= 0 && p.beta >= 0) || math.IsInf(p.alpha, 0) || math.IsInf(p.beta, 0):
		return fmt.Errorf("%w: --alpha %v, --beta %v: each must be a finite number, not negative (0: the method's default)", errUsage, p.alpha, p.beta)
	case p.iters < 0:
		return fmt.Errorf("%w: --iters must not be negative, got %d", errUsage, p.iters)
	case p.landmarks < 0 || p.landmarks > maxKernelExact:
		return fmt.Errorf("%w: --landmarks must be in [0, %d] (0: exact kernels up to %d training records), got %d", errUsage, maxKernelExact, maxKernelExact, p.landmarks)
	}
	if _, err := model.ParseProjection(p.projector); err != nil {
		return fmt.Errorf("%w: --projector: %v", errUsage, err)
	}
	if err := checkGraphMetric(p); err != nil {
		return err
	}
	if err := checkNormRatio(p.maxNormRatio); err != nil {
		return err
	}
	if err := checkPrecision(p); err != nil {
		return err
	}
	loss, err := model.ParseLoss(p.loss)
	if err != nil {
		return fmt.Errorf("%w: --loss: %v", errUsage, err)
	}
	if loss != model.LossFrobenius {
		if i, err := methods.Lookup(p.method); err == nil && !i.KL {
			return fmt.Errorf("%w: --loss %s: method %s fits the Frobenius loss only (kl works with nmf, gnmf, dgnmf, ssknmf and n2s2l)", errUsage, p.loss, i.Name)
		}
	}
	if i, err := methods.Lookup(p.method); err == nil {
		if p.landmarks != 0 && !i.Kernel() {
			return fmt.Errorf("%w: --landmarks %d: method %s has no kernel matrix to approximate (kernel and multik do): drop --landmarks or choose one of those methods", errUsage, p.landmarks, i.Name)
		}
		return unreadParams(i, p.alpha, p.beta, 0, false)
	}
	return nil
}

// checkNormRatio refuses a --max-norm-ratio that is not a number, or a
// positive ratio of 1 or less: it would reject the records of the typical
// norm themselves (every document: their TF-IDF rows have unit length). 0
// is the default's spelling in checkpoints, and a negative ratio no bound.
func checkNormRatio(r float64) error {
	if math.IsNaN(r) || r > 0 && r <= 1 {
		return fmt.Errorf("%w: --max-norm-ratio %v: want a ratio above 1 (the default %g), or a negative one for no bound; a ratio of 1 or less rejects the records of the typical norm", errUsage, r, stages.DefaultMaxNormRatio)
	}
	return nil
}

// unreadParams refuses --alpha, --beta or --q given a value (not zero,
// their default) that method i does not read (methods.Info's Alpha, Beta
// and SplitsCodes), naming the methods that read it: among those that
// learn online when online is set (stream). Negative q is checkQ's.
func unreadParams(i methods.Info, alpha, beta float64, q int, online bool) error {
	for _, f := range []struct {
		name  string
		value any
		set   bool
		reads func(methods.Info) bool
	}{
		{"alpha", alpha, alpha != 0, func(m methods.Info) bool { return m.Alpha.Used }},
		{"beta", beta, beta != 0, func(m methods.Info) bool { return m.Beta.Used }},
		{"q", q, q != 0, func(m methods.Info) bool { return m.SplitsCodes }},
	} {
		if !f.set || f.reads(i) {
			continue
		}
		var who []string
		for _, m := range methods.List() {
			if m.Alias == "" && f.reads(m) && (m.Online || !online) {
				who = append(who, m.Name)
			}
		}
		return fmt.Errorf("%w: --%s %v: method %s does not read --%s (%s do): drop --%s or choose one of those methods",
			errUsage, f.name, f.value, i.Name, f.name, strings.Join(who, ", "), f.name)
	}
	return nil
}

// newCommon returns the shared settings of a fit: rank, iterations, a
// seeded source and a callback that reports progress and stops on cancel.
func newCommon(p fitParams, stop func() bool, pr *progress) model.Common {
	maxIter := p.iters
	if maxIter == 0 {
		maxIter = 200 // model.Common's default, for the progress bar
	}
	var split func(int, func(int, int))
	if !openblas.Enabled {
		// Products and graph terms in parts over the cores: 1.5–1.6×
		// faster per GNMF iteration than one core running internal/gemm
		// (BenchmarkGNMFIterSplit20000x784 against
		// BenchmarkGNMFIter20000x784). OpenBLAS already keeps both cores
		// busy, and its idle threads would spin against the parts. Share
		// rather than Split: pieces go to whichever core is free.
		split = pipeline.Share(runtime.GOMAXPROCS(0))
	}
	loss, _ := model.ParseLoss(p.loss) // checked by checkParams
	return model.Common{
		Loss:    loss,
		Rank:    p.rank,
		MaxIter: p.iters,
		Src:     rand.NewPCG(p.seed, p.seed),
		Split:   split,
		Float32: p.float32,
		Metric:  p.metric,
		Callback: func(s model.Stats) bool {
			if p.objective != nil {
				*p.objective = append(*p.objective, s.Objective)
			}
			pr.update(s.Iter, maxIter, "updates")
			return !stop()
		},
	}
}

// kernelProjection maps --projector onto the kernel methods' projections:
// graph and nnls are theirs, and pinv or clamped select the papers'
// least-squares projection (methods.KernelProjection).
func kernelProjection(name string) kernel.Projection {
	p, _ := model.ParseProjection(name) // unknown: graph
	return methods.KernelProjection(p)
}

// checkGraphMetric refuses a --graph-metric that is not auto, euclidean or
// cosine, and one named for a method that searches no graph of the
// training records: dpca, the kernel methods (their kernel space), and nmf
// coded otherwise than by graph projection.
func checkGraphMetric(p fitParams) error {
	_, named, err := parseGraphMetric(p.graphMetric)
	if err != nil {
		return fmt.Errorf("%w: --graph-metric %v", errUsage, err)
	}
	if !named {
		return nil
	}
	i, err := methods.Lookup(p.method)
	if err != nil {
		return nil // lookupMethod reports it
	}
	proj, _ := model.ParseProjection(p.projector)
	if i.Linear || i.Kernel() || (i.Name == "nmf" && proj != model.ProjectGraph) {
		return fmt.Errorf("%w: --graph-metric %s: method %s with --projector %s searches no k-NN graph of the training records: drop it, or use --projector graph with a method that has a graph", errUsage, p.graphMetric, i.Name, p.projector)
	}
	return nil
}

// graphMetricOf resolves --graph-metric for method spec on the training
// rows x and their classes y (−1 unlabeled): the metric named, or, for
// auto, model.ChooseMetric's choice for the methods whose graphs search
// the records (Euclidean for dpca and the kernel methods). A metric named
// for documents (text true) is a usage error: their TF-IDF rows have unit
// length, so both metrics find the same neighbours and the choice would
// change nothing.
func graphMetricOf(p fitParams, spec methodSpec, x model.Data, y []int, text bool) (graph.Metric, error) {
	m, named, _ := parseGraphMetric(p.graphMetric) // checked by checkGraphMetric
	switch {
	case named && text:
		return 0, fmt.Errorf("%w: --graph-metric %s: the training records are documents, whose TF-IDF rows have unit length, so the two metrics find the same neighbours: drop --graph-metric", errUsage, p.graphMetric)
	case named:
		return m, nil
	case spec.Linear || spec.Kernel():
		return graph.Euclidean, nil
	}
	return model.ChooseMetric(x, y, p.neighbors, model.DefaultBatchMetric), nil
}

// parseGraphMetric reads --graph-metric: auto (or "", the zero fitParams)
// names no metric; euclidean and cosine name theirs (graph.Metric.String).
func parseGraphMetric(s string) (m graph.Metric, named bool, err error) {
	switch s {
	case "auto", "":
		return graph.Euclidean, false, nil
	case graph.Euclidean.String():
		return graph.Euclidean, true, nil
	case graph.Cosine.String():
		return graph.Cosine, true, nil
	}
	return graph.Euclidean, false, fmt.Errorf("%q: want auto, euclidean or cosine", s)
}
