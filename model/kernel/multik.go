package kernel

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
)

// TauStep chooses how MultiK updates the kernel weights τ for fixed (F, V).
type TauStep int

const (
	// TauLP is the paper's step (eq. 23): the linear program
	// min Σ τ_l g_l on the simplex, g_l = tr(K_l Z Zᵀ), Z = I − FVᵀ. Its
	// optimum puts all the weight on the kernel with the smallest g_l (ties
	// to the first). The default, for fidelity.
	//
	// Measured on digits with DefaultPool: the smallest reconstruction cost
	// belongs to the widest Gaussian (σ = 100ρ, K ≈ 11ᵀ, nearly rank one),
	// so the LP always ends there; TauEntropy and TauSimplex spread τ over
	// the three widest Gaussians (10ρ, 50ρ, 100ρ) and measure about the
	// same (see the package tests for the figures).
	TauLP TauStep = iota
	// TauEntropy adds the entropy γ Σ τ_l log τ_l: τ_l ∝ exp(−g_l/γ), a
	// mixture that tends to TauLP as γ → 0.
	TauEntropy
	// TauSimplex adds (γ/2)‖τ‖²: τ is the Euclidean projection of −g/γ onto
	// the simplex, sparse but not necessarily a single kernel.
	TauSimplex
)

// String returns "lp", "entropy" or "simplex".
func (s TauStep) String() string {
	switch s {
	case TauLP:
		return "lp"
	case TauEntropy:
		return "entropy"
	case TauSimplex:
		return "simplex"
	}
	return fmt.Sprintf("TauStep(%d)", int(s))
}

// MultiK is kernel NMF with multiple kernels and an adaptive graph (Wang
// and AbdulJabbar, "Adaptive Graph via Multiple Kernel Learning for
// Nonnegative Matrix Factorization", SPPRA 2012). It minimizes
//
//	tr(K^τ (I − FVᵀ)(I − FVᵀ)ᵀ) + α tr(Vᵀ L^τ V),   K^τ = Σ_l τ_l K_l,
//
// over F ≥ 0 (N×K; the basis is Φ(X)F), V ≥ 0 (N×K codes, the paper's Wᵀ)
// and τ on the simplex. Its special cases are the paper's three methods:
//
//   - NMF_K: one kernel, Alpha = 0 (Lee, Cichocki and Choi 2009);
//   - NMF_MultiK: several kernels, Alpha = 0 (An, Yun and Choi 2011);
//   - AdapGrNMF_MultiK: several kernels, Alpha > 0.
//
// Fit alternates Outer times: rebuild the graph L^τ as the Neighbors-nearest
// neighbour graph in the τ-weighted kernel space (eq. 15, symmetrized, see
// Graph), run the updates of eq. 22 as model.Engine with KernelLoss on K^τ
// and a model.GraphTerm{Weight: Alpha} (the objective does not increase
// within an alternation), then update τ by Step. Unlike the paper's
// published code, every node gets Neighbors neighbours, and the graph is
// symmetric.
//
// The kernels are scaled (see Scaling; by default divided by their mean
// diagonal): without it, (1 + xᵀy)⁴ on pixel data dwarfs every Gaussian and
// τ only reflects the scales.
//
// The zero value follows the paper (DefaultPool, TauLP, CostReconstruction).
// Its τ step rewards the kernel that is easiest to reconstruct, which on
// digits is the nearly constant Gaussian σ = 100ρ: without a graph, held-out
// 1-NN accuracy on digits is below scikit-learn NMF's. The options Cost
// (CostRelative, CostAlignment), MinVariance and ScalePool change that.
// With the graph (Alpha = 1) the paper's step does well, because the graph
// carries the class structure (BENCHMARKS.md, "Defaults and how they were
// chosen", gives the figures).
//
// MultiK is not safe for concurrent use.
type MultiK struct {
	// Common holds Rank (required, in [1, N]), MaxIter (the total number of
	// updates over all alternations; default 200), Tol (of each
	// alternation; default 1e-5), Init (NNDSVDa by default, applied to K^τ),
	// Src and Callback (called for every update; Iter restarts at each
	// alternation).
	model.Common
	// Kernels is the pool. If nil, it defaults to DefaultPool().
	Kernels []Kernel
	// Alpha weights the graph term. Zero disables it (NMF_K, NMF_MultiK).
	// It must not be negative.
	Alpha float64
	// Neighbors is P, the neighbours of each sample in the graph. If zero,
	// it defaults to 5.
	Neighbors int
	// Weighting chooses the graph's edge weights. The zero value is ZeroOne.
	Weighting Weighting
	// Step chooses the τ update. The zero value is TauLP (the paper's).
	Step TauStep
	// Gamma is the temperature of TauEntropy and TauSimplex relative to the
	// spread max_l g_l − min_l g_l. If zero, it defaults to 0.05.
	Gamma float64
	// Outer is the number of alternations. If zero, it defaults to 10, or 1
	// for one kernel without graph (NMF_K, where nothing alternates).
	Outer int
	// Projection chooses how ProjectTo codes new samples. The zero value is
	// ProjectGraph.
	Projection Projection
	// GraphAlpha weights the anchor term of ProjectGraph. If zero, it
	// defaults to Alpha, or 1 if Alpha is zero.
	GraphAlpha float64
	// Nystrom, if non-nil, replaces every K_l by its landmark approximation
	// Φ₊Φ₊ᵀ (one landmark set for all kernels).
	Nystrom *Nystrom
	// MaxExact bounds N on the exact path (default DefaultMaxExact); above
	// it Fit returns an error wrapping ErrTooLarge.
	MaxExact int
	// Scaling chooses how the kernels are scaled. The zero value is
	// ScaleTrace.
	Scaling Scaling
	// Cost chooses the cost g_l that Step minimizes. The zero value is
	// CostReconstruction (the paper's); CostAlignment uses Fit's labels.
	Cost TauCost
	// MinVariance leaves out of the pool (τ_l = 0 throughout) every kernel
	// whose centred variance fraction tr(HK_lH)/tr(K_l), H = I − 11ᵀ/N, is
	// below it: nearly constant kernels (a Gaussian much wider than the
	// data, whose fraction is about 10⁻⁴ for σ = 100 × the largest
	// distance on digits) are cheap to reconstruct but carry no structure.
	// Zero keeps every kernel (the paper). It must be in [0, 1). Alone it
	// is not enough on digits: with 0.05 the LP moves to the σ = ρ
	// Gaussian and measures 0.785 (test split, 1-NN).
	MinVariance float64

	sp       *space
	active   []bool // kernels not left out by MinVariance
	align    []float64
	tau      []float64
	history  [][]float64
	gvals    []float64
	f, v     mat.Dense
	fkf      mat.Dense
	diag     []float64
	graph    *model.GraphTerm
	res      model.Result
	ok       bool
	kte, tmp mat.Dense
	chol     mat.Cholesky
}

var (
	_ model.Method = (*MultiK)(nil)
	_ Projector    = (*MultiK)(nil)
)

func (m *MultiK) kernels() []Kernel {
	if m.Kernels == nil {
		return DefaultPool()
	}
	return m.Kernels
}

func (m *MultiK) outer() int {
	switch {
	case m.Outer != 0:
		return m.Outer
	case len(m.kernels()) == 1 && m.Alpha == 0:
		return 1
	}
	return 10
}

// Fit factorizes the samples of x (model.DenseRows or model.SparseRows,
// entries ≥ 0). labels (nil, or one per sample, −1 for unlabeled) is used
// only by CostAlignment.
func (m *MultiK) Fit(x model.Data, labels []int) error {
	m.ok = false
	ks := m.kernels()
	switch {
	case len(ks) == 0:
		return fmt.Errorf("kernel: MultiK needs at least one kernel")
	case m.Alpha < 0 || math.IsNaN(m.Alpha):
		return fmt.Errorf("kernel: graph weight α = %v, want ≥ 0", m.Alpha)
	case m.Gamma < 0 || m.Outer < 0 || m.Neighbors < 0:
		return fmt.Errorf("kernel: negative Gamma, Outer or Neighbors")
	case !(m.MinVariance >= 0 && m.MinVariance < 1):
		return fmt.Errorf("kernel: MinVariance = %v, want in [0, 1)", m.MinVariance)
	case m.Cost < CostReconstruction || m.Cost > CostAlignment:
		return fmt.Errorf("kernel: unknown %v", m.Cost)
	}
	if _, n := x.Dims(); labels != nil && len(labels) != n {
		return fmt.Errorf("kernel: %d labels for %d samples", len(labels), n)
	}
	sp, err := newSpace(x, ks, m.Nystrom, m.MaxExact, m.Scaling)
	if err != nil {
		return err
	}
	m.sp = sp
	n := sp.n()
	if m.Rank < 1 || m.Rank > n {
		return fmt.Errorf("kernel: rank %d out of range [1, N=%d]", m.Rank, n)
	}
	nk := len(ks)
	if err := m.selectKernels(labels); err != nil {
		return err
	}
	m.history = [][]float64{slices.Clone(m.tau)}
	if err := m.init(); err != nil {
		return err
	}
	outer := m.outer()
	maxIter := m.MaxIter
	if maxIter == 0 {
		maxIter = 200
	}
	per := max(1, (maxIter+outer-1)/outer)
	p, _ := m.projGraph()
	m.res = model.Result{}
	for t := 0; t < outer; t++ {
		k, phi := sp.combined(m.tau)
		loss := &KernelLoss{K: k, Phi: phi, Split: m.Split}
		eng := model.Engine{Loss: loss, MaxIter: per, Tol: m.Tol, Callback: m.Callback, Split: m.Split}
		m.graph = nil
		if m.Alpha > 0 {
			g := loss.g0()
			s, err := graphOf(&g, min(p, n-1), m.Weighting)
			if err != nil {
				return err
			}
			m.graph = &model.GraphTerm{Label: "adaptive graph", Weight: m.Alpha, S: s}
			eng.Terms = []model.Term{m.graph}
		}
		res, err := eng.Run(&m.f, &m.v)
		m.res.Iters += res.Iters
		m.res.Objective, m.res.Converged = res.Objective, res.Converged
		m.res.Warnings = append(m.res.Warnings, res.Warnings...)
		if err != nil {
			return diverged(err, "kernel.MultiK")
		}
		if nk > 1 {
			m.stepTau()
			m.history = append(m.history, slices.Clone(m.tau))
		}
	}
	// Unit-norm basis vectors ΦF_j in feature space, codes scaled inversely
	// (as Cai et al. do with U), so that code distances are comparable.
	k, phi := sp.combined(m.tau)
	var g gram
	g.set(k, phi, m.Split)
	var kf mat.Dense
	g.mulTo(&kf, &m.f)
	m.fkf.Reset()
	m.fkf.Mul(m.f.T(), &kf)
	for j := 0; j < m.Rank; j++ {
		nrm := math.Sqrt(max(m.fkf.At(j, j), 0))
		if nrm == 0 {
			continue
		}
		scaleCol(&m.f, j, 1/nrm)
		scaleCol(&m.v, j, nrm)
	}
	m.fkf.Reset()
	kf.Reset()
	g.mulTo(&kf, &m.f)
	m.fkf.Mul(m.f.T(), &kf)
	m.diag = g.diag
	if m.Alpha > 0 { // the graph of the final τ, for Graph()
		s, err := graphOf(&g, min(p, n-1), m.Weighting)
		if err != nil {
			return err
		}
		m.graph = &model.GraphTerm{Label: "adaptive graph", Weight: m.Alpha, S: s}
	}
	if err := model.CheckFinite("kernel.MultiK codes", &m.v); err != nil {
		return err
	}
	m.ok = true
	return nil
}

// g0 returns the gram of the loss.
func (l *KernelLoss) g0() gram {
	l.prepare()
	return l.g
}

// init sets V from the initialization of K^τ (as data) and F so that ΦF's
// columns are V-weighted means of the samples, then rescales V optimally.
func (m *MultiK) init() error {
	k, phi := m.sp.combined(m.tau)
	data := k
	if data == nil {
		data = phi
	}
	xd := model.DenseRows(data)
	if d, _ := xd.Dims(); m.Rank > d {
		return fmt.Errorf("kernel: rank %d exceeds the %d Nyström features", m.Rank, d)
	}
	_, v, err := model.Initialize(xd, m.Rank, m.Init, m.Src)
	if err != nil {
		return fmt.Errorf("kernel: %w", err)
	}
	m.v.CloneFrom(v)
	m.f.CloneFrom(v)
	n, r := v.Dims()
	for j := 0; j < r; j++ {
		var s float64
		for i := 0; i < n; i++ {
			s += v.At(i, j)
		}
		if s > 0 {
			scaleCol(&m.f, j, 1/s)
		}
	}
	// V ← cV with c minimizing tr(K) − 2c·tr(VᵀKF) + c²·tr(FᵀKF VᵀV).
	var g gram
	g.set(k, phi, m.Split)
	var kf, fkf, vtv mat.Dense
	g.mulTo(&kf, &m.f)
	fkf.Mul(m.f.T(), &kf)
	vtv.Mul(m.v.T(), &m.v)
	if den := inner(&fkf, &vtv); den > 0 {
		m.v.Scale(inner(&m.v, &kf)/den, &m.v)
	}
	return nil
}

// selectKernels sets the active kernels (MinVariance), the alignments
// (CostAlignment) and the initial τ: uniform over the active kernels, or
// the step on the alignment costs.
func (m *MultiK) selectKernels(labels []int) error {
	nk := len(m.sp.kernels)
	m.active = make([]bool, nk)
	na := 0
	for l := range m.active {
		m.active[l] = nk == 1 || m.MinVariance == 0 || m.sp.varianceFraction(l) >= m.MinVariance
		if m.active[l] {
			na++
		}
	}
	if na == 0 {
		return fmt.Errorf("kernel: no kernel has a centred variance fraction ≥ MinVariance = %v", m.MinVariance)
	}
	m.tau = make([]float64, nk)
	for l := range m.tau {
		if m.active[l] {
			m.tau[l] = 1 / float64(na)
		}
	}
	m.align = nil
	if m.Cost != CostAlignment || nk == 1 {
		return nil
	}
	var ids, y []int
	classes := map[int]bool{}
	for i, c := range labels {
		if c >= 0 {
			ids, y = append(ids, i), append(y, c)
			classes[c] = true
		}
	}
	if len(classes) < 2 {
		return fmt.Errorf("kernel: CostAlignment needs labeled samples of at least two classes, have %d", len(classes))
	}
	m.align = make([]float64, nk)
	m.gvals = resize(m.gvals, nk)
	for l := range m.align {
		m.align[l] = m.sp.alignment(l, ids, y)
		m.gvals[l] = 1 - m.align[l]
	}
	m.applyStep()
	return nil
}

// applyStep updates τ by Step from m.gvals over the active kernels.
func (m *MultiK) applyStep() {
	var g, t []float64
	for l, a := range m.active {
		if a {
			g = append(g, m.gvals[l])
		}
	}
	t = make([]float64, len(g))
	TauStepTo(t, g, m.Step, m.gamma())
	j := 0
	for l, a := range m.active {
		m.tau[l] = 0
		if a {
			m.tau[l] = t[j]
			j++
		}
	}
}

// Alignments returns the centred kernel-target alignment of each kernel
// with the labeled samples, or nil unless Cost is CostAlignment.
func (m *MultiK) Alignments() []float64 { m.mustFit(); return m.align }

// Active reports which kernels of the pool MinVariance kept.
func (m *MultiK) Active() []bool { m.mustFit(); return m.active }

// stepTau sets g_l = tr(K_l Z Zᵀ) (or its Cost variant) and updates τ by
// Step.
func (m *MultiK) stepTau() {
	if m.Cost == CostAlignment {
		return // τ was set from the labels by selectKernels
	}
	nk := len(m.tau)
	m.gvals = resize(m.gvals, nk)
	var vtv, kf, fkf mat.Dense
	vtv.Mul(m.v.T(), &m.v)
	for l := 0; l < nk; l++ {
		if !m.active[l] {
			m.gvals[l] = math.Inf(1)
			continue
		}
		var g gram
		if m.sp.exact() {
			g.set(m.sp.mats[l], nil, m.Split)
		} else {
			g.set(nil, m.sp.phis[l], m.Split)
		}
		kf.Reset()
		g.mulTo(&kf, &m.f)
		fkf.Reset()
		fkf.Mul(m.f.T(), &kf)
		m.gvals[l] = g.trace - 2*inner(&m.v, &kf) + inner(&fkf, &vtv)
		if m.Cost == CostRelative {
			tr, sum := m.sp.centredStats(l)
			// A floor on the variance keeps a constant kernel's cost finite.
			m.gvals[l] /= max(tr-sum/float64(m.sp.n()), 1e-12*tr)
		}
	}
	m.applyStep()
}

func (m *MultiK) gamma() float64 {
	if m.Gamma == 0 {
		return 0.05
	}
	return m.Gamma
}

// TauStepTo stores in tau the kernel weights on the simplex minimizing
// Σ τ_l g_l (TauLP), plus γ·spread·Σ τ_l log τ_l (TauEntropy) or
// (γ·spread/2)‖τ‖² (TauSimplex), where spread = max g − min g. A zero
// spread gives uniform weights for the regularized steps.
func TauStepTo(tau, g []float64, step TauStep, gamma float64) {
	if len(tau) != len(g) {
		panic("kernel: TauStepTo: length mismatch")
	}
	lo, hi := slices.Min(g), slices.Max(g)
	spread := hi - lo
	switch {
	case step == TauLP:
		best := slices.Index(g, lo)
		for l := range tau {
			tau[l] = 0
		}
		tau[best] = 1
	case spread == 0:
		for l := range tau {
			tau[l] = 1 / float64(len(tau))
		}
	case step == TauEntropy:
		t := gamma * spread
		var s float64
		for l, x := range g {
			tau[l] = math.Exp(-(x - lo) / t)
			s += tau[l]
		}
		for l := range tau {
			tau[l] /= s
		}
	case step == TauSimplex:
		t := gamma * spread
		for l, x := range g {
			tau[l] = -(x - lo) / t
		}
		projectSimplex(tau)
	default:
		panic(fmt.Sprintf("kernel: unknown %v", step))
	}
}

// projectSimplex replaces y by its Euclidean projection onto
// {τ ≥ 0, Σ τ = 1} (Held, Wolfe and Crowder 1974; Duchi et al. 2008).
func projectSimplex(y []float64) {
	u := slices.Clone(y)
	slices.Sort(u)
	slices.Reverse(u)
	var cum, theta float64
	for j, x := range u {
		cum += x
		t := (cum - 1) / float64(j+1)
		if x-t > 0 {
			theta = t
		}
	}
	for i, x := range y {
		y[i] = max(x-theta, 0)
	}
}

// Tau returns the kernel weights τ after Fit (length len(Kernels)).
func (m *MultiK) Tau() []float64 { m.mustFit(); return m.tau }

// TauHistory returns τ before Fit's first alternation and after each one.
func (m *MultiK) TauHistory() [][]float64 { m.mustFit(); return m.history }

// Costs returns the g_l of the last τ step (nil for one kernel; +Inf for
// kernels left out by MinVariance).
func (m *MultiK) Costs() []float64 { m.mustFit(); return m.gvals }

// Graph returns the adaptive graph for the final τ (N×N), or nil when Alpha
// is zero.
func (m *MultiK) Graph() *model.GraphTerm {
	m.mustFit()
	return m.graph
}

// Basis returns F (N×K): the basis vectors are Φ(X)F, normalized to unit
// norm in feature space. It panics with model.ErrNotFitted before Fit.
func (m *MultiK) Basis() *mat.Dense { m.mustFit(); return &m.f }

// Codes returns V (N×K, the paper's Wᵀ). It panics before Fit.
func (m *MultiK) Codes() *mat.Dense { m.mustFit(); return &m.v }

// Result returns the summary of the last Fit (Iters over all alternations,
// Objective of the last one).
func (m *MultiK) Result() model.Result { return m.res }

func (m *MultiK) mustFit() {
	if !m.ok {
		panic(model.ErrNotFitted)
	}
}

// ProjectTo stores the codes of x's samples (M×K) into dst (empty or M×K),
// by the method's Projection, in the kernel space of the fitted τ. A
// sample whose kernel values with the training samples are not finite
// (values far beyond the training data's) gets NaN codes; the others are
// projected as if it were not there.
func (m *MultiK) ProjectTo(dst *mat.Dense, x model.Data) error {
	m.mustFit()
	_, nm := x.Dims()
	reuseDst(dst, nm, m.Rank)
	self := make([]float64, nm)
	m.kte.Reset()
	if err := m.sp.crossTo(&m.kte, self, m.tau, x); err != nil {
		return err
	}
	bad := quarantine(&m.kte, self, math.MaxFloat64) // their codes are NaN
	defer poisonRows(dst, bad)
	// Least-squares codes (FᵀKF)⁻¹FᵀK_te.
	sym := mat.NewSymDense(m.Rank, nil)
	for i := 0; i < m.Rank; i++ {
		for j := i; j < m.Rank; j++ {
			sym.SetSym(i, j, (m.fkf.At(i, j)+m.fkf.At(j, i))/2)
		}
	}
	if !m.chol.Factorize(sym) {
		return fmt.Errorf("kernel: FᵀKF is singular (a basis vector is zero or collinear); refit with a smaller rank")
	}
	m.tmp.Reset()
	m.tmp.Mul(m.f.T(), &m.kte) // K×M
	var ls mat.Dense
	if err := m.chol.SolveTo(&ls, &m.tmp); err != nil {
		return fmt.Errorf("kernel: project: %w", err)
	}
	dst.Copy(ls.T())
	if m.Projection == ProjectPaper {
		return nil
	}
	floorCodes(dst)
	eng := model.Engine{Loss: newCrossLoss(&m.kte, &m.f, &m.fkf, self), FixU: true, MaxIter: projMaxIter, Tol: projTol}
	if m.Projection == ProjectGraph {
		p, alpha := m.projGraph()
		eng.Terms = []model.Term{&model.AnchorTerm{Weight: alpha, B: anchorGraph(&m.kte, m.diag, self, p), C: &m.v}}
	}
	_, err := eng.Run(&m.f, dst)
	return err
}

// projGraph returns the neighbours per sample and the anchor weight of
// graph-aware projection, defaults filled in: Neighbors or 5, GraphAlpha,
// else Alpha, else 1.
func (m *MultiK) projGraph() (p int, alpha float64) {
	p = m.Neighbors
	if p == 0 {
		p = 5
	}
	alpha = m.GraphAlpha
	if alpha == 0 {
		alpha = m.Alpha
	}
	if alpha == 0 {
		alpha = 1
	}
	return p, alpha
}

func scaleCol(m *mat.Dense, j int, s float64) {
	raw := m.RawMatrix()
	for i := 0; i < raw.Rows; i++ {
		raw.Data[i*raw.Stride+j] *= s
	}
}

func resize(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}
