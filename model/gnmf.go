package model

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// GNMF is graph-regularized NMF: it minimizes
//
//	‖X − UVᵀ‖²_F + α tr(Vᵀ L V),   U, V ≥ 0,
//
// where L = D − S is the Laplacian of a k-nearest-neighbour graph S over
// the samples, so that neighbours get similar codes (Cai, He, Han, Huang,
// "Graph Regularized Nonnegative Matrix Factorization for Data
// Representation", IEEE TPAMI 33(8), 2011). It is the Frobenius loss plus
// one GraphTerm on the engine:
//
//	U ← U ⊙ (XV) / (UVᵀV),   V ← V ⊙ (XᵀU + αSV) / (VUᵀU + αDV).
//
// The objective is not invariant to U → UΛ, V → VΛ⁻¹: unnormalized
// updates slowly trade the graph term for scale, so the result depends on
// where the iterations stop. Following Cai's code, U's columns are
// normalized once after the last update by default, which scores best at
// the default budget of 200 updates but drifts with longer runs.
// ScaleEachIter normalizes after every U update instead: the fit then
// converges to the same answer whatever the budget (BENCHMARKS.md,
// "Defaults and how they were chosen").
//
// Options reproduce what Cai's reference code does beyond the paper: U's
// columns normalized after the last update (the default), α scaled by N (ScaleAlpha), heat-kernel width t defaulting to
// the mean neighbour distance, max(W, Wᵀ) symmetrization (the graph
// package's default), and the clamped pseudo-inverse projection
// (ProjectClampedPinv). GNMF ignores labels; the label-aware methods of this
// package add label graphs to the same engine.
//
// GNMF is not safe for concurrent use.
type GNMF struct {
	Common
	// Alpha is α, the weight of the graph term. If zero, it defaults to
	// DefaultGNMFAlpha; a negative value disables the term (plain NMF).
	Alpha float64
	// ScaleAlpha multiplies α by the number of samples N, as the option
	// alpha_nSmp of Cai's code does, so that α means the same for any N.
	ScaleAlpha bool
	// Graph configures the k-NN graph. The zero value is k = 5, Euclidean
	// (or the cosine, if Common.Metric says so).
	Graph graph.KNN
	// Weighting sets the edge weights. The zero value is 0-1 weights,
	// symmetrized by max(W, Wᵀ).
	Weighting graph.Weighting
	// S, if non-nil, is a precomputed N×N symmetric weight matrix used
	// instead of building the k-NN graph; Projector then needs
	// ProjectNNLS or another projection that does not use the graph.
	S *sparse.CSR
	// Scaling says when U's columns are normalized to unit norm, V's
	// columns absorbing the scale so that UVᵀ is unchanged. The zero value
	// normalizes once, after the last update.
	Scaling Scaling

	fitted
	eng   Engine
	x     Data
	knn   *graph.KNN // the graph's settings, nil without a k-NN graph
	alpha float64    // effective α of the last fit
	heatT float64    // effective heat-kernel width of the last fit
}

// Scaling says when a method normalizes U's columns.
type Scaling int

const (
	// ScaleAtEnd normalizes once after the last update, as Cai's code
	// does (the default).
	ScaleAtEnd Scaling = iota
	// ScaleEachIter normalizes after every U update.
	ScaleEachIter
	// ScaleNone never normalizes; the objective then is exactly the one
	// the multiplicative updates never increase.
	ScaleNone
)

func (s Scaling) engine() Normalization {
	switch s {
	case ScaleEachIter:
		return NormalizeEachIter
	case ScaleNone:
		return NormalizeNone
	}
	return NormalizeAtEnd
}

// DefaultGNMFAlpha is GNMF's default α. It was chosen on a validation split
// of the digits data (pixels in [0, 16]); α scales with ‖X‖², so rescaled
// data wants a rescaled α.
const DefaultGNMFAlpha = 100

var _ Method = (*GNMF)(nil)

// Fit factorizes x. labels is ignored (pass nil).
func (g *GNMF) Fit(x Data, labels []int) error {
	if err := g.start(&g.fitted, x); err != nil {
		return err
	}
	_, n := x.Dims()
	g.x = x
	g.alpha = g.Alpha
	if g.alpha == 0 {
		g.alpha = DefaultGNMFAlpha
	}
	if g.alpha < 0 {
		g.alpha = 0
	}
	if g.ScaleAlpha {
		g.alpha *= float64(n)
	}
	s := g.S
	g.knn = nil
	if s == nil && g.alpha > 0 {
		// The batch build reads x's rows in place; a batch fit needs only
		// the graph's weights, so the graph (its lists, and its float32
		// rows while it searches) is dropped after this block.
		c := g.Graph
		if g.Metric == graph.Cosine {
			c.Metric = graph.Cosine
		}
		knn, err := buildGraph(c, x, g.Split) // the search in parts too
		if err != nil {
			return err
		}
		g.heatT = g.Weighting.HeatT
		if g.Weighting.Scheme == graph.HeatKernel && g.heatT == 0 {
			g.heatT = meanNeighborDistance(knn)
		}
		w := g.Weighting
		w.HeatT = g.heatT
		s = knn.Weights(w)
		cfg := knn.Config()
		g.knn = &cfg
	}
	loss, err := g.loss(x)
	if err != nil {
		return err
	}
	g.eng = Engine{Loss: loss, Normalize: g.Scaling.engine()}
	if s != nil {
		if r, c := s.Dims(); r != n || c != n {
			return fmt.Errorf("model: GNMF: S is %d×%d for %d samples", r, c, n)
		}
		g.eng.Terms = []Term{&GraphTerm{Label: "graph", Weight: g.alpha, S: s}}
	}
	return diverged(g.run(&g.fitted, &g.eng), "GNMF", "lower Alpha")
}

// Projector returns a Projector for new samples on the fitted basis. For
// ProjectGraph it searches each new sample's k nearest training samples
// with the fit's metric and weighting, and uses the fit's α. The returned
// Projector reads the training data given to Fit: do not modify it while
// the Projector is in use. It panics with ErrNotFitted before a Fit.
func (g *GNMF) Projector(p Projection) *Projector {
	pr := &Projector{Method: p, U: g.Basis(), TrainCodes: g.Codes(), Alpha: g.alpha}
	if g.knn != nil {
		w := g.Weighting
		w.HeatT = g.heatT
		q := &Query{Train: g.x, K: g.knn.K, Metric: g.knn.Metric, Weighting: w}
		pr.Neighbors = q.Weights
	}
	return pr
}

// BuildGraph builds the exact k-NN graph of x's samples with c.
func BuildGraph(c graph.KNN, x Data) (*graph.Graph, error) { return buildGraph(c, x, nil) }

// buildGraph is BuildGraph with the search in parts by split
// (graph.KNN.DenseSplit, SparseSplit), if it is set.
func buildGraph(c graph.KNN, x Data, split func(n int, body func(lo, hi int))) (*graph.Graph, error) {
	switch r := Rows(x).(type) {
	case *mat.Dense:
		return c.DenseSplit(r, split)
	case *sparse.CSR:
		return c.SparseSplit(r, split)
	}
	return nil, fmt.Errorf("model: cannot build a k-NN graph on %T: use DenseRows or SparseRows", x)
}

// meanNeighborDistance returns the mean Euclidean distance between
// neighbours over the directed pairs of g (for the Cosine metric, between
// unit-norm rows): the heat-kernel width the graph package uses by default,
// computed here so that projection uses the same width.
func meanNeighborDistance(g *graph.Graph) float64 {
	var s float64
	var n int
	cos := g.Config().Metric == graph.Cosine
	for _, id := range g.IDs() {
		_, dist := g.Neighbors(id)
		for _, d := range dist {
			if cos {
				d = math.Sqrt(2 * d) // Neighbors gives 1 − cos
			}
			s += d
			n++
		}
	}
	if n == 0 || s == 0 {
		return 1
	}
	return s / float64(n)
}
