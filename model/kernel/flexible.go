package kernel

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/sparse"
	"github.com/nmfstream/nmfstream/record"
)

// Flexible is flexible-kernel NMF (Zhang and Liu, "An Efficient
// Nonnegative Matrix Factorization Approach in Flexible Kernel Space",
// IJCAI 2009): Φ(X) ≈ Φ(X)A H with the basis Φ(X)A in the kernel-induced
// feature space, minimizing ½tr(K − 2KAH + HᵀAᵀKAH).
//
// With a Gaussian kernel it is the paper's "GNMF" (Gaussian NMF), which is
// not Cai et al.'s graph-regularized GNMF (model.GNMF); with a polynomial
// kernel it is the paper's pKNMF.
//
// Following the paper, K^{½} is computed from the symmetric
// eigendecomposition of K with its negative entries clipped to 0, B = K^{½}A
// and H are updated by eq. 20 and 22,
//
//	B ← B ⊙ (K^{½}Hᵀ) / (BHHᵀ),   H ← H ⊙ (BᵀK^{½}) / (BᵀBH),
//
// which are the Lee–Seung updates of ‖K^{½} − BH‖² on the data K^{½}: Fit
// runs model.Engine with model.Frobenius on K^{½} (N×N; V = Hᵀ), so the
// objective never increases (Theorem 1). Finally A = (K^{½})⁻¹B, by an LU
// solve. The cost per iteration is O(N²K), independent of the input
// dimension D once K is built.
//
// With Nystrom set, the same updates run on the Nyström features Φ₊ (N×m)
// in place of K^{½} (see Nystrom); A is not formed, and ProjectPaper is not
// available.
//
// Flexible is not safe for concurrent use.
type Flexible struct {
	// Common holds Rank (required, in [1, N]; with Nyström in [1, min(N, m)]),
	// MaxIter (default 200), Tol (default 1e-5), Init (NNDSVDa of K^{½} by
	// default), Src and Callback. The callback sees ‖K^{½} − BH‖²_F, which is
	// 2·J₃ up to a constant.
	model.Common
	// Kernel is the kernel. If nil, it defaults to Gaussian{Scale: 0.8,
	// Rule: MeanDistance} (σ = 0.8 × the mean pairwise distance, the best
	// width on the digits validation split; see the package tests).
	Kernel Kernel
	// Projection chooses how ProjectTo codes new samples. The zero value is
	// ProjectGraph.
	Projection Projection
	// Neighbors and GraphAlpha configure ProjectGraph: the number of nearest
	// training samples (default 5) and the weight of the anchor term
	// (default 1).
	Neighbors  int
	GraphAlpha float64
	// Nystrom, if non-nil, replaces K by a landmark approximation.
	Nystrom *Nystrom
	// MaxExact bounds N on the exact path. If zero, it defaults to
	// DefaultMaxExact; above it Fit returns an error wrapping ErrTooLarge.
	MaxExact int

	sp       *space
	ksq      *mat.Dense // clipped K^{½} (exact path)
	kinvsq   *mat.Dense // K^{-½} (exact path)
	b, v, a  mat.Dense
	res      model.Result
	warnings []error
	ok       bool

	chol      mat.Cholesky
	cholReady bool
	cholRidge float64
	qr        mat.QR
	qrReady   bool
	proj      model.Projector
	kte       mat.Dense
}

var (
	_ model.Method = (*Flexible)(nil)
	_ Projector    = (*Flexible)(nil)
)

func (m *Flexible) kernel() Kernel {
	if m.Kernel == nil {
		return Gaussian{Scale: 0.8, Rule: MeanDistance}
	}
	return m.Kernel
}

// Fit factorizes the samples of x (model.DenseRows or model.SparseRows,
// entries ≥ 0). labels is ignored.
func (m *Flexible) Fit(x model.Data, labels []int) error {
	m.ok, m.cholReady, m.qrReady, m.warnings = false, false, false, nil
	sp, err := newSpace(x, []Kernel{m.kernel()}, m.Nystrom, m.MaxExact, ScaleTrace)
	if err != nil {
		return err
	}
	m.sp = sp
	var data *mat.Dense
	if sp.exact() {
		m.ksq, m.kinvsq = new(mat.Dense), new(mat.Dense)
		if err := invSqrtTo(m.kinvsq, m.ksq, sp.mats[0]); err != nil {
			return err
		}
		m.ksq.Apply(func(_, _ int, v float64) float64 { return max(v, 0) }, m.ksq)
		data = m.ksq
	} else {
		data = sp.phis[0]
	}
	xd := model.DenseRows(data)
	u, v, err := model.Initialize(xd, m.Rank, m.Init, m.Src)
	if err != nil {
		return fmt.Errorf("kernel: %w", err)
	}
	eng := model.Engine{Loss: model.NewFrobenius(xd), MaxIter: m.MaxIter, Tol: m.Tol, Callback: m.Callback, Split: m.Split}
	res, err := eng.Run(u, v)
	m.res = res
	if err != nil {
		return diverged(err, "kernel.Flexible")
	}
	m.b.CloneFrom(u)
	m.v.CloneFrom(v)
	if sp.exact() {
		ridge, err := solveRidge(&m.a, m.ksq, &m.b)
		if err != nil {
			return err
		}
		if ridge > 0 {
			m.warnings = append(m.warnings, fmt.Errorf("kernel: K^{½} is singular (duplicate samples?); A solved with ridge %.3g", ridge))
		}
	}
	if err := model.CheckFinite("kernel.Flexible codes", &m.v); err != nil {
		return err
	}
	m.ok = true
	return nil
}

// condMax is the largest condition number accepted before a ridge is added:
// solves then keep about 4 significant digits (float64 has 16).
const condMax = 1e12

// ridges are the relative ridges δ/mean(diag) tried in turn.
var ridges = []float64{0, 1e-10, 1e-8, 1e-6, 1e-4, 1e-2}

// solveRidge stores (S + δI)⁻¹B into dst with the smallest δ in ridges
// (relative to S's mean diagonal) for which S + δI has condition number
// below condMax, and returns δ.
func solveRidge(dst, s, b *mat.Dense) (float64, error) {
	n, _ := s.Dims()
	md := mat.Trace(s) / float64(n)
	var t mat.Dense
	var lu mat.LU
	for _, r := range ridges {
		t.CloneFrom(s)
		for i := 0; i < n; i++ {
			t.Set(i, i, t.At(i, i)+r*md)
		}
		lu.Factorize(&t)
		if lu.Cond() > condMax {
			continue
		}
		dst.Reset()
		if err := lu.SolveTo(dst, false, b); err != nil {
			continue
		}
		return r * md, nil
	}
	return 0, fmt.Errorf("kernel: the kernel matrix is singular even with a ridge of %g·mean(diag)", ridges[len(ridges)-1])
}

// cholFactor factorizes K + δI with the smallest δ in ridges giving a
// condition number below condMax.
func cholFactor(c *mat.Cholesky, k *mat.Dense) (float64, error) {
	n, _ := k.Dims()
	md := mat.Trace(k) / float64(n)
	sym := mat.NewSymDense(n, nil)
	for _, r := range ridges {
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				v := k.At(i, j)
				if i == j {
					v += r * md
				}
				sym.SetSym(i, j, v)
			}
		}
		if c.Factorize(sym) && c.Cond() <= condMax {
			return r * md, nil
		}
	}
	return 0, fmt.Errorf("kernel: K is singular even with a ridge of %g·mean(diag)", ridges[len(ridges)-1])
}

// Basis returns A (N×K), the coefficients of the basis Φ(X)A; with Nyström,
// B (m×K), the basis in the Nyström coordinates. It panics with
// model.ErrNotFitted before a successful Fit.
func (m *Flexible) Basis() *mat.Dense {
	m.mustFit()
	if m.sp.exact() {
		return &m.a
	}
	return &m.b
}

// B returns B = K^{½}A (N×K; with Nyström m×K). It panics before Fit.
func (m *Flexible) B() *mat.Dense { m.mustFit(); return &m.b }

// Codes returns Hᵀ (N×K), one row per training sample. It panics with
// model.ErrNotFitted before a successful Fit.
func (m *Flexible) Codes() *mat.Dense { m.mustFit(); return &m.v }

// Result returns the summary of the last Fit, with warnings (a ridge added
// to a singular K) appended.
func (m *Flexible) Result() model.Result {
	r := m.res
	r.Warnings = append(append([]error(nil), r.Warnings...), m.warnings...)
	return r
}

func (m *Flexible) mustFit() {
	if !m.ok {
		panic(model.ErrNotFitted)
	}
}

// ProjectTo stores the codes of x's samples (M×K) into dst (empty or M×K),
// by the method's Projection. It returns an error if x's features differ
// from the training data's or an entry is negative or not finite. A
// sample whose kernel values with the training samples are not finite
// (values far beyond the training data's) gets NaN codes; the others are
// projected as if it were not there.
func (m *Flexible) ProjectTo(dst *mat.Dense, x model.Data) error {
	m.mustFit()
	_, nm := x.Dims()
	_, k := m.v.Dims()
	reuseDst(dst, nm, k)
	self := make([]float64, nm)
	var coords mat.Dense // M×(N or m): the samples' coordinates
	var bad []int        // samples whose kernel values are not finite: NaN codes
	defer func() { poisonRows(dst, bad) }()
	if m.sp.exact() {
		if err := m.sp.crossTo(&m.kte, self, []float64{1}, x); err != nil {
			return err
		}
		bad = quarantine(&m.kte, self, math.MaxFloat64)
		if m.Projection == ProjectPaper {
			return m.paperTo(dst)
		}
		coords.Mul(m.kte.T(), m.kinvsq) // (K^{-½}K_te)ᵀ, K^{-½} symmetric
		coords.Apply(func(_, _ int, v float64) float64 { return max(v, 0) }, &coords)
	} else {
		if m.Projection == ProjectPaper {
			return fmt.Errorf("kernel: %w; use ProjectNNLS with Nyström", ErrNeedsExact)
		}
		if err := m.sp.maps[0].featuresTo(&coords, x); err != nil {
			return err
		}
		// The coordinates are the projection's data: a sample's row with
		// an entry above record.MaxValue (or not finite) is zeroed.
		for i := range nm {
			row := coords.RawRowView(i)
			for _, v := range row {
				if !(math.Abs(v) <= record.MaxValue) {
					bad = append(bad, i)
					clear(row)
					break
				}
			}
		}
		if m.Projection == ProjectGraph {
			if err := m.sp.crossTo(&m.kte, self, []float64{1}, x); err != nil {
				return err
			}
			bad = slices.Compact(slices.Sorted(slices.Values(append(bad, quarantine(&m.kte, self, math.MaxFloat64)...))))
		}
	}
	m.proj = model.Projector{Method: model.ProjectNNLS, U: &m.b, MaxIter: projMaxIter, Tol: projTol}
	if m.Projection == ProjectGraph {
		p, alpha := m.Neighbors, m.GraphAlpha
		if p == 0 {
			p = 5
		}
		if alpha == 0 {
			alpha = 1
		}
		k, phi := m.sp.combined([]float64{1})
		var g gram
		g.set(k, phi, nil)
		s := anchorGraph(&m.kte, g.diag, self, p)
		m.proj.Method = model.ProjectGraph
		m.proj.TrainCodes = &m.v
		m.proj.Alpha = alpha
		m.proj.Neighbors = func(model.Data) (*sparse.CSR, error) { return s, nil }
	}
	return m.proj.ProjectTo(dst, model.DenseRows(&coords))
}

// paperTo stores (A⁺K⁻¹K_te)ᵀ into dst: a Cholesky solve with K (a ridge
// is added if K is singular) and a least-squares QR solve with A.
func (m *Flexible) paperTo(dst *mat.Dense) error {
	if !m.cholReady {
		r, err := cholFactor(&m.chol, m.sp.mats[0])
		if err != nil {
			return err
		}
		m.cholRidge, m.cholReady = r, true
	}
	if !m.qrReady {
		m.qr.Factorize(&m.a)
		m.qrReady = true
	}
	var y, c mat.Dense
	if err := m.chol.SolveTo(&y, &m.kte); err != nil {
		return fmt.Errorf("kernel: K⁻¹K_te: %w", err)
	}
	if err := m.qr.SolveTo(&c, false, &y); err != nil {
		return fmt.Errorf("kernel: A⁺: %w", err)
	}
	dst.Copy(c.T())
	for _, v := range dst.RawMatrix().Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("kernel: the paper's projection is not finite")
		}
	}
	return nil
}

// diverged names method in err if it is a *model.DivergedError, and
// returns err.
func diverged(err error, method string) error {
	var d *model.DivergedError
	if errors.As(err, &d) {
		d.Method = method
	}
	return err
}
