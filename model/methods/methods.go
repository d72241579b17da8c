package methods

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/kernel"
)

// Auto is the name that stands for the best semi-supervised method as
// measured (model.AutoMethod). It is also what an empty name means.
const Auto = "auto"

// Options are the settings a method is built from: the command line's fit
// flags. A zero field means the method's default (Info's Alpha, Beta and
// Neighbors give them); a method ignores the fields it does not read.
type Options struct {
	// Common holds Rank (required), MaxIter, Tol, Init, Src, Callback,
	// Split and Loss, passed to the method unchanged (DPCA reads Rank
	// only). Loss is the command line's loss option (model.ParseLoss
	// reads its names, "frobenius" and "kl"); the methods whose Info has
	// KL set read it, and New refuses model.LossKL for the others.
	model.Common
	// Neighbors is the k of the method's k-NN graphs (and of the kernel
	// methods' graph projection). It must not be negative.
	Neighbors int
	// Alpha is α, the method's main graph weight. It must not be negative.
	Alpha float64
	// Beta is β, the method's second graph weight (ssknmf, n2s2l, nge). It
	// must not be negative.
	Beta float64
	// Projection chooses how the kernel methods code new samples:
	// ProjectGraph (the default) and ProjectNNLS are theirs, ProjectPinv
	// and ProjectClampedPinv select the papers' least-squares projection
	// (kernel.ProjectPaper). The other methods are projected by the
	// caller (model.Projector).
	Projection model.Projection
	// Nystrom, if positive, makes the kernel methods use that many Nyström
	// landmarks, drawn with a fixed seed, instead of exact N×N kernels.
	Nystrom int
}

// Param describes one option of a method.
type Param struct {
	// Used says whether the method reads the option.
	Used bool
	// Default is the value a zero option stands for (when Used).
	Default float64
}

// Info describes a method. Its zero value describes nothing; get one from
// List or Lookup.
type Info struct {
	// Name is the method's name, as "--method" takes it.
	Name string
	// Summary is a one-line description.
	Summary string
	// Alias, if set, is the name of the entry this one stands for: Lookup
	// returns that entry for "auto".
	Alias string
	// UsesLabels says whether Fit uses labels (the semi-supervised
	// methods); the others are given none.
	UsesLabels bool
	// NeedsLabels says whether Fit returns an error wrapping
	// model.ErrNoLabels when no sample is labeled.
	NeedsLabels bool
	// Online says whether the method can learn online: its terms are
	// graph terms on the k-NN and label graphs that model/graph keeps
	// exact under insertion and late labels, so partial updates of the
	// new rows and their neighbours apply (docs/DESIGN.md §3). It records the
	// capability; which methods model.Online runs today is its own
	// documentation's to say. DPCA (an eigenproblem) and the kernel
	// methods (N×N kernels) are batch only; NGE's row-wise M-matrix solve
	// runs on the rows a step sweeps.
	Online bool
	// SplitsCodes says whether the codes are split V = [V¹ V²] with one
	// column of V¹ per class, so that Rank must exceed the classes.
	SplitsCodes bool
	// Linear says whether the codes are x·U (DPCA), possibly negative;
	// new samples are coded by the method's own TransformTo.
	Linear bool
	// Kernels is the number of kernels a kernel method holds features of
	// (with Options.Nystrom, an N×m matrix each): 1 for the flexible-kernel
	// method, kernel.DefaultPool's size for multik; 0 for the others (see
	// Kernel).
	Kernels int
	// KL says whether the method reads Options.Loss, so that it can fit
	// the generalized KL divergence (model.LossKL) instead of the
	// Frobenius loss: the methods made of the engine's loss and graph
	// terms. Graph weights keep their meaning, not their best value: a
	// method's Alpha and Beta defaults were tuned with the Frobenius loss.
	KL bool
	// Alpha, Beta and Neighbors say which of those options the method
	// reads, and their defaults.
	Alpha, Beta, Neighbors Param

	build func(o Options) model.Method
}

// Kernel says whether new samples need more than U and the training codes
// (the kernel methods, those with Kernels): the method implements
// kernel.Projector and its State is what a saved model keeps.
func (i Info) Kernel() bool { return i.Kernels > 0 }

// New returns the method described by i, built from o. It does not check
// o; the method's Fit does. It panics for the zero Info.
func (i Info) New(o Options) model.Method { return i.build(o) }

// List returns every method, sorted by name, followed by "auto" (a copy of
// the entry it stands for, with Name "auto" and Alias set). The slice is
// the caller's.
func List() []Info {
	l := []Info{
		{
			Name:       "dgnmf",
			KL:         true,
			Summary:    "discriminant GNMF (KNMF, An 2009 §2.2): intra-class attraction, inter-class repulsion",
			UsesLabels: true, NeedsLabels: true, Online: true,
			Alpha:     Param{true, 0.01},
			Neighbors: Param{true, 5},
			build: func(o Options) model.Method {
				return &model.DGNMF{Common: o.Common, Alpha: o.Alpha, Neighbors: o.Neighbors}
			},
		},
		{
			Name:       "dpca",
			Summary:    "discriminant PCA with partial supervision (Sun and Zhang 2009), a linear baseline (N×N Gram form when N < D)",
			UsesLabels: true, Linear: true,
			build: func(o Options) model.Method { return &model.DPCA{Rank: o.Rank} },
		},
		{
			Name:      "gnmf",
			KL:        true,
			Summary:   "graph-regularized NMF (Cai et al. 2011): α·tr(VᵀLV) over the k-NN graph",
			Online:    true,
			Alpha:     Param{true, model.DefaultGNMFAlpha},
			Neighbors: Param{true, 5},
			build: func(o Options) model.Method {
				g := &model.GNMF{Common: o.Common, Alpha: o.Alpha}
				g.Graph.K = o.Neighbors
				return g
			},
		},
		{
			Name:      "kernel",
			Summary:   "flexible-kernel NMF (Zhang and Liu 2009), Gaussian kernel",
			Kernels:   1,
			Neighbors: Param{true, 5},
			build: func(o Options) model.Method {
				return &kernel.Flexible{Common: o.Common, Neighbors: o.Neighbors, Projection: KernelProjection(o.Projection), Nystrom: nystrom(o.Nystrom)}
			},
		},
		{
			Name:      "multik",
			Summary:   "adaptive-graph multiple-kernel NMF (Wang and AbdulJabbar 2012)",
			Kernels:   len(kernel.DefaultPool()),
			Alpha:     Param{Used: true}, // zero: no graph (NMF_MultiK)
			Neighbors: Param{true, 5},
			build: func(o Options) model.Method {
				m := &kernel.MultiK{Common: o.Common, Alpha: o.Alpha, Neighbors: o.Neighbors, Projection: KernelProjection(o.Projection), Nystrom: nystrom(o.Nystrom)}
				if o.Alpha == 0 {
					// Without the graph (NMF_MultiK), the paper's τ step
					// picks a near-constant kernel (0.841 on the digits);
					// the scale-free cost measures 0.910 (see
					// kernel.CostRelative).
					m.Cost = kernel.CostRelative
				}
				return m
			},
		},
		{
			Name:       "n2s2l",
			KL:         true,
			Summary:    "non-negative semi-supervised learning (Wang et al. 2009)",
			UsesLabels: true, NeedsLabels: true, Online: true, SplitsCodes: true,
			Alpha:     Param{true, 10},
			Beta:      Param{true, 100},
			Neighbors: Param{true, 5},
			build: func(o Options) model.Method {
				return &model.N2S2L{Common: o.Common, Alpha: o.Alpha, Beta: o.Beta, Neighbors: o.Neighbors}
			},
		},
		{
			Name:       "nge",
			Summary:    "non-negative graph embedding (Yang et al. 2008), MFA graphs",
			UsesLabels: true, NeedsLabels: true, SplitsCodes: true, Online: true,
			Alpha:     Param{true, 2},
			Beta:      Param{true, 100},
			Neighbors: Param{true, 5},
			build: func(o Options) model.Method {
				return &model.NGE{Common: o.Common, Alpha: o.Alpha, Beta: o.Beta, Neighbors: o.Neighbors}
			},
		},
		{
			Name:    "nmf",
			KL:      true,
			Summary: "plain NMF (Lee and Seung), ignores labels",
			Online:  true,
			build: func(o Options) model.Method {
				return &model.NMF{Common: o.Common, NormalizeU: true}
			},
		},
		{
			Name:       "ssknmf",
			KL:         true,
			Summary:    "semi-supervised KNMF (An 2009 §2.3): signed label graph (α) + k-NN graph (β)",
			UsesLabels: true, Online: true,
			Alpha:     Param{true, 1},
			Beta:      Param{true, 10},
			Neighbors: Param{true, 5},
			build: func(o Options) model.Method {
				return &model.SSKNMF{Common: o.Common, Alpha: o.Alpha, Beta: o.Beta, LabelNeighbors: o.Neighbors, Neighbors: o.Neighbors}
			},
		},
		{
			Name:       "ssnmf",
			Summary:    "semi-supervised NMF with a label factor (Lee et al. 2010; Haddock et al. 2020), Y ≈ BVᵀ beside X ≈ AVᵀ, λ = β, + k-NN graph (α)",
			UsesLabels: true, NeedsLabels: true,
			Alpha:     Param{true, model.DefaultSSNMFAlpha},
			Beta:      Param{true, model.DefaultSSNMFLambda},
			Neighbors: Param{true, 5},
			build: func(o Options) model.Method {
				return &model.SSNMF{Common: o.Common, Alpha: o.Alpha, Lambda: o.Beta, Neighbors: o.Neighbors}
			},
		},
	}
	// auto is the entry model.AutoMethod names, under another name.
	for _, m := range l {
		if m.Name == model.AutoMethod {
			m.Name, m.Alias = Auto, model.AutoMethod
			m.Summary = "the best semi-supervised method as measured (model.Auto): " + model.AutoMethod
			return append(l, m)
		}
	}
	panic("methods: model.AutoMethod " + model.AutoMethod + " is not in the table")
}

// Names returns the names of List, "auto" last.
func Names() []string {
	l := List()
	names := make([]string, len(l))
	for i, m := range l {
		names[i] = m.Name
	}
	return names
}

// Lookup returns the method called name. "auto" and "" return the entry
// "auto" stands for (model.AutoMethod); use Resolve to keep the alias. An
// unknown name returns an error listing the valid ones.
func Lookup(name string) (Info, error) {
	if name == "" {
		name = Auto
	}
	for _, m := range List() {
		if m.Name == name && m.Alias != "" {
			return Lookup(m.Alias)
		}
		if m.Name == name {
			return m, nil
		}
	}
	return Info{}, fmt.Errorf("methods: unknown method %q (want %s)", name, strings.Join(Names(), ", "))
}

// New returns the method called name built from o (see Lookup). It
// returns an error for a loss other than model.LossFrobenius when the
// method does not read Loss (Info.KL).
func New(name string, o Options) (model.Method, error) {
	i, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	if o.Loss != model.LossFrobenius && !i.KL {
		return nil, fmt.Errorf("methods: %s does not fit the %v loss (only the frobenius loss)", i.Name, o.Loss)
	}
	return i.New(o), nil
}

// KernelProjection maps p onto the kernel methods' own projection: graph
// and NNLS are theirs, and the pseudo-inverses select the papers'
// least-squares projection.
func KernelProjection(p model.Projection) kernel.Projection {
	switch p {
	case model.ProjectNNLS:
		return kernel.ProjectNNLS
	case model.ProjectPinv, model.ProjectClampedPinv:
		return kernel.ProjectPaper
	}
	return kernel.ProjectGraph
}

// nystrom returns landmarks Nyström landmarks drawn with seed (1, 1), or
// nil for exact kernels.
func nystrom(landmarks int) *kernel.Nystrom {
	if landmarks <= 0 {
		return nil
	}
	return &kernel.Nystrom{Landmarks: landmarks, Src: rand.NewPCG(1, 1)}
}
