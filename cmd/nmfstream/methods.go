package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/openblas"
	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/model/kernel"
	"github.com/nmfstream/nmfstream/pipeline"
)

// autoMethod is what --method auto (the default) runs: the semi-supervised
// method that measured best under DESIGN.md §7's protocol. The rule and its
// measurements live in one place, model.Auto.
const autoMethod = model.AutoMethod

// fitParams are the flags shared by fit and eval. A zero value means the
// method's documented default.
type fitParams struct {
	method    string
	rank      int
	neighbors int
	alpha     float64
	beta      float64
	iters     int
	seed      uint64
	projector string
}

// addFitFlags registers the fit flags on fs.
func addFitFlags(fs *flag.FlagSet, p *fitParams) {
	fs.StringVar(&p.method, "method", "auto", "factorization method: "+strings.Join(methodNames(), ", ")+", or auto (= "+autoMethod+")")
	fs.IntVar(&p.rank, "rank", 40, "rank K of the factorization (number of latent factors)")
	fs.IntVar(&p.neighbors, "neighbors", 0, "k of the k-NN graphs, in training and graph projection (0: the method's default, 5)")
	fs.Float64Var(&p.alpha, "alpha", 0, "α, the method's main graph weight (0: the method's default)")
	fs.Float64Var(&p.beta, "beta", 0, "β, the method's second graph weight (ssknmf, n2s2l, nge; 0: default)")
	fs.IntVar(&p.iters, "iters", 0, "maximum number of multiplicative updates (0: the method's default, 200)")
	fs.Uint64Var(&p.seed, "seed", 1, "seed of the initialization")
	fs.StringVar(&p.projector, "projector", "graph", "how new samples are coded: graph, nnls, clamped or pinv")
}

// params returns the flags as the map stored in a saved model.
func (p fitParams) params() map[string]string {
	return map[string]string{
		"method":    p.method,
		"rank":      strconv.Itoa(p.rank),
		"neighbors": strconv.Itoa(p.neighbors),
		"alpha":     strconv.FormatFloat(p.alpha, 'g', -1, 64),
		"beta":      strconv.FormatFloat(p.beta, 'g', -1, 64),
		"iters":     strconv.Itoa(p.iters),
		"seed":      strconv.FormatUint(p.seed, 10),
		"projector": p.projector,
	}
}

// methodSpec is one row of the method table: how to build a method from
// the common flags, and how to save and project what it fitted.
//
// Adding a method takes one entry: a build function, and, if its codes
// are to be saved, either graphK (the non-negative projections on U work
// for it) or linear. A method whose new samples need more than U and the
// training codes (the kernel methods) sets project, for eval, and state,
// for saving: its state goes into the snapshot's named Extra matrices and
// Params, and project and classify rebuild it (kernel.NewProjector).
type methodSpec struct {
	summary string
	// semi marks methods that use labels.
	semi bool
	// build returns the method with c (rank, iterations, seed, progress
	// callback) and the method-specific flags of p.
	build func(c model.Common, p fitParams) model.Method
	// anchor returns the fitted method's k-NN settings and the weight of
	// the anchor term of graph projection. Nil: graph projection uses k
	// from --neighbors (default 5), Euclidean 0-1 weights and
	// model.DefaultGNMFAlpha, the weight GNMF's graph was tuned with.
	anchor func(m model.Method, p fitParams) (graph.KNN, graph.Weighting, float64)
	// splitsCodes marks methods whose codes are split V = [V¹ V²] with one
	// column of V¹ per class, so that the rank must exceed the classes.
	splitsCodes bool
	// linear marks methods whose codes are x·U (DPCA), possibly negative.
	linear bool
	// project, if set, codes new samples in memory (eval).
	project func(m model.Method, dst *mat.Dense, x model.Data) error
	// state, set with project, exports the fitted method's projection
	// state for saving.
	state func(m model.Method) (*kernel.State, error)
}

// methods is the method table of --method.
var methods = map[string]methodSpec{
	"nmf": {
		summary: "plain NMF (Lee and Seung), ignores labels",
		build: func(c model.Common, p fitParams) model.Method {
			return &model.NMF{Common: c, NormalizeU: true}
		},
	},
	"gnmf": {
		summary: "graph-regularized NMF (Cai et al. 2011): α·tr(VᵀLV) over the k-NN graph",
		build: func(c model.Common, p fitParams) model.Method {
			g := &model.GNMF{Common: c, Alpha: p.alpha}
			g.Graph.K = p.neighbors
			return g
		},
		anchor: func(m model.Method, p fitParams) (graph.KNN, graph.Weighting, float64) {
			g := m.(*model.GNMF)
			pr := g.Projector(model.ProjectGraph)
			k := g.Graph
			if k.K == 0 {
				k.K = graph.DefaultK
			}
			return graph.KNN{K: k.K, Metric: k.Metric}, g.Weighting, pr.Alpha
		},
	},
	"dgnmf": {
		summary: "discriminant GNMF (KNMF, An 2009 §2.2): intra-class attraction, inter-class repulsion",
		semi:    true,
		build: func(c model.Common, p fitParams) model.Method {
			return &model.DGNMF{Common: c, Alpha: p.alpha, Neighbors: p.neighbors}
		},
	},
	"ssknmf": {
		summary: "semi-supervised KNMF (An 2009 §2.3): signed label graph (α) + k-NN graph (β)",
		semi:    true,
		build: func(c model.Common, p fitParams) model.Method {
			return &model.SSKNMF{Common: c, Alpha: p.alpha, Beta: p.beta, LabelNeighbors: p.neighbors, Neighbors: p.neighbors}
		},
	},
	"n2s2l": {
		summary:     "non-negative semi-supervised learning (Wang et al. 2009)",
		semi:        true,
		splitsCodes: true,
		build: func(c model.Common, p fitParams) model.Method {
			return &model.N2S2L{Common: c, Alpha: p.alpha, Beta: p.beta, Neighbors: p.neighbors}
		},
	},
	"nge": {
		summary:     "non-negative graph embedding (Yang et al. 2008), MFA graphs",
		semi:        true,
		splitsCodes: true,
		build: func(c model.Common, p fitParams) model.Method {
			return &model.NGE{Common: c, Alpha: p.alpha, Beta: p.beta, Neighbors: p.neighbors}
		},
	},
	"dpca": {
		summary: "discriminant PCA with partial supervision (Sun and Zhang 2009), a linear baseline",
		semi:    true,
		linear:  true,
		build: func(c model.Common, p fitParams) model.Method {
			return &model.DPCA{Rank: c.Rank}
		},
	},
	"kernel": {
		summary: "flexible-kernel NMF (Zhang and Liu 2009), Gaussian kernel",
		build: func(c model.Common, p fitParams) model.Method {
			return &kernel.Flexible{Common: c, Neighbors: p.neighbors, Projection: kernelProjection(p.projector)}
		},
		project: func(m model.Method, dst *mat.Dense, x model.Data) error {
			return m.(*kernel.Flexible).ProjectTo(dst, x)
		},
		state: func(m model.Method) (*kernel.State, error) { return m.(*kernel.Flexible).State() },
	},
	"multik": {
		summary: "adaptive-graph multiple-kernel NMF (Wang and AbdulJabbar 2012)",
		build: func(c model.Common, p fitParams) model.Method {
			m := &kernel.MultiK{Common: c, Alpha: p.alpha, Neighbors: p.neighbors, Projection: kernelProjection(p.projector)}
			if p.alpha == 0 {
				// Without the graph (NMF_MultiK), the paper's τ step picks a
				// near-constant kernel (0.841 on the digits); the scale-free
				// cost measures 0.910 (see kernel.CostRelative).
				m.Cost = kernel.CostRelative
			}
			return m
		},
		project: func(m model.Method, dst *mat.Dense, x model.Data) error {
			return m.(*kernel.MultiK).ProjectTo(dst, x)
		},
		state: func(m model.Method) (*kernel.State, error) { return m.(*kernel.MultiK).State() },
	},
}

// methodNames returns the names of the method table, sorted.
func methodNames() []string {
	names := make([]string, 0, len(methods))
	for n := range methods {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// lookupMethod resolves --method, auto included.
func lookupMethod(name string) (string, methodSpec, error) {
	if name == "auto" || name == "" {
		name = autoMethod
	}
	m, ok := methods[name]
	if !ok {
		return "", methodSpec{}, fmt.Errorf("%w: unknown method %q (want auto, %s)", errUsage, name, strings.Join(methodNames(), ", "))
	}
	return name, m, nil
}

// checkParams validates the flags common to fit and eval.
func checkParams(p fitParams) error {
	switch {
	case p.rank < 1:
		return fmt.Errorf("%w: --rank must be at least 1, got %d", errUsage, p.rank)
	case p.neighbors < 0:
		return fmt.Errorf("%w: --neighbors must not be negative, got %d", errUsage, p.neighbors)
	case p.alpha < 0 || p.beta < 0:
		return fmt.Errorf("%w: --alpha and --beta must not be negative", errUsage)
	case p.iters < 0:
		return fmt.Errorf("%w: --iters must not be negative, got %d", errUsage, p.iters)
	}
	if _, err := model.ParseProjection(p.projector); err != nil {
		return fmt.Errorf("%w: --projector: %v", errUsage, err)
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
	return model.Common{
		Rank:    p.rank,
		MaxIter: p.iters,
		Src:     rand.NewPCG(p.seed, p.seed),
		Split:   split,
		Callback: func(s model.Stats) bool {
			pr.update(s.Iter, maxIter, "updates")
			return !stop()
		},
	}
}

// kernelProjection maps --projector onto the kernel methods' projections:
// graph and nnls are theirs, and pinv or clamped select the papers'
// least-squares projection (kernel.ProjectPaper).
func kernelProjection(name string) kernel.Projection {
	switch name {
	case "nnls":
		return kernel.ProjectNNLS
	case "pinv", "clamped":
		return kernel.ProjectPaper
	}
	return kernel.ProjectGraph
}
