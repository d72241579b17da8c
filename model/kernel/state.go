package kernel

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// State is the plain-data projection state of a fitted Flexible or MultiK:
// what ProjectTo reads, with every data-dependent parameter resolved (the
// Gaussian widths σ, the kernel scales, τ, the graph neighbours and α).
// NewProjector rebuilds a method from it that projects exactly as the fitted
// one did. Only the exact path is supported: a method fitted with Nystrom
// has no State.
//
// Shapes: Train is N×D; Codes, Coef and A are N×K; KInvSqrt is N×N; FKF is
// K×K; Diag has length N; Kernels, Scale and Tau have one entry per kernel.
type State struct {
	// Method is "flexible" or "multik".
	Method string
	// Kernels are the bound kernels (Gaussian with Sigma set), Scale the
	// divisor of each kernel matrix and Tau the kernel weights (one kernel
	// of weight 1 for Flexible).
	Kernels []Kernel
	Scale   []float64
	Tau     []float64
	// Train holds the training samples, whose cross-kernel with new
	// samples projection needs.
	Train model.Data
	// Codes are the training codes V.
	Codes *mat.Dense
	// Coef is B = K^{½}A for Flexible and F for MultiK.
	Coef *mat.Dense
	// A is Flexible's basis coefficients (ProjectPaper), or nil.
	A *mat.Dense
	// KInvSqrt is Flexible's K^{-½}, or nil.
	KInvSqrt *mat.Dense
	// FKF is MultiK's FᵀK^τF, or nil.
	FKF *mat.Dense
	// Diag is MultiK's diagonal of K^τ, or nil.
	Diag []float64
	// Projection is the projection of new samples; Neighbors and GraphAlpha
	// configure ProjectGraph (resolved: never zero).
	Projection Projection
	Neighbors  int
	GraphAlpha float64
}

var errNystromState = errors.New("kernel: a model fitted with Nystrom has no saved state (only the exact path is supported)")

// State returns the projection state of the fitted method. The matrices are
// the method's own, valid until the next Fit. It returns an error before Fit
// and for a Nyström fit.
func (m *Flexible) State() (*State, error) {
	if !m.ok {
		return nil, model.ErrNotFitted
	}
	if !m.sp.exact() {
		return nil, errNystromState
	}
	p, alpha := m.Neighbors, m.GraphAlpha
	if p == 0 {
		p = 5
	}
	if alpha == 0 {
		alpha = 1
	}
	return &State{
		Method: "flexible", Kernels: m.sp.kernels, Scale: m.sp.scale, Tau: []float64{1},
		Train: m.sp.train, Codes: &m.v, Coef: &m.b, A: &m.a, KInvSqrt: m.kinvsq,
		Projection: m.Projection, Neighbors: p, GraphAlpha: alpha,
	}, nil
}

// State returns the projection state of the fitted method. The matrices are
// the method's own, valid until the next Fit. It returns an error before Fit
// and for a Nyström fit.
func (m *MultiK) State() (*State, error) {
	if !m.ok {
		return nil, model.ErrNotFitted
	}
	if !m.sp.exact() {
		return nil, errNystromState
	}
	p, alpha := m.projGraph()
	return &State{
		Method: "multik", Kernels: m.sp.kernels, Scale: m.sp.scale, Tau: m.tau,
		Train: m.sp.train, Codes: &m.v, Coef: &m.f, FKF: &m.fkf, Diag: m.diag,
		Projection: m.Projection, Neighbors: p, GraphAlpha: alpha,
	}, nil
}

// NewProjector returns a method rebuilt from s (a *Flexible or *MultiK)
// whose ProjectTo gives the same codes, bit for bit, as the fitted method's
// with the same Projection. It keeps references to s's matrices.
func NewProjector(s *State) (Projector, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	_, k := s.Codes.Dims()
	switch s.Method {
	case "flexible":
		_, n := s.Train.Dims()
		sp, err := newSpace(s.Train, s.Kernels, nil, n, ScaleTrace)
		if err != nil {
			return nil, err
		}
		if sp.scale[0] != s.Scale[0] {
			return nil, fmt.Errorf("kernel: state: kernel scale %v recomputes as %v (training rows changed?)", s.Scale[0], sp.scale[0])
		}
		m := &Flexible{Common: model.Common{Rank: k}, Kernel: s.Kernels[0], Projection: s.Projection,
			Neighbors: s.Neighbors, GraphAlpha: s.GraphAlpha, sp: sp, kinvsq: s.KInvSqrt, ok: true}
		m.b.CloneFrom(s.Coef)
		m.v.CloneFrom(s.Codes)
		m.a.CloneFrom(s.A)
		return m, nil
	case "multik":
		m := &MultiK{Common: model.Common{Rank: k}, Kernels: s.Kernels, Projection: s.Projection,
			Neighbors: s.Neighbors, GraphAlpha: s.GraphAlpha, ok: true,
			sp:   &space{train: s.Train, kernels: s.Kernels, scale: s.Scale},
			tau:  s.Tau,
			diag: s.Diag,
		}
		m.f.CloneFrom(s.Coef)
		m.v.CloneFrom(s.Codes)
		m.fkf.CloneFrom(s.FKF)
		return m, nil
	}
	return nil, fmt.Errorf("kernel: state: unknown method %q", s.Method)
}

func (s *State) check() error {
	if s.Train == nil || s.Codes == nil || s.Coef == nil {
		return errors.New("kernel: state: no training samples, codes or coefficients")
	}
	_, n := s.Train.Dims()
	if r, _ := s.Codes.Dims(); r != n {
		return fmt.Errorf("kernel: state: %d codes for %d training samples", r, n)
	}
	_, k := s.Codes.Dims()
	if r, c := s.Coef.Dims(); r != n || c != k {
		return fmt.Errorf("kernel: state: coefficients are %d×%d, want %d×%d", r, c, n, k)
	}
	nk := len(s.Kernels)
	if nk == 0 || len(s.Scale) != nk || len(s.Tau) != nk {
		return fmt.Errorf("kernel: state: %d kernels, %d scales, %d weights", nk, len(s.Scale), len(s.Tau))
	}
	if s.Neighbors < 1 || !(s.GraphAlpha > 0) || s.Projection < ProjectGraph || s.Projection > ProjectPaper {
		return fmt.Errorf("kernel: state: bad projection settings (%v, %d neighbours, α %g)", s.Projection, s.Neighbors, s.GraphAlpha)
	}
	switch s.Method {
	case "flexible":
		if nk != 1 || s.A == nil || s.KInvSqrt == nil {
			return errors.New("kernel: state: flexible needs one kernel, A and K^{-½}")
		}
		if r, c := s.KInvSqrt.Dims(); r != n || c != n {
			return fmt.Errorf("kernel: state: K^{-½} is %d×%d, want %d×%d", r, c, n, n)
		}
		if r, c := s.A.Dims(); r != n || c != k {
			return fmt.Errorf("kernel: state: A is %d×%d, want %d×%d", r, c, n, k)
		}
	case "multik":
		if s.FKF == nil || len(s.Diag) != n {
			return errors.New("kernel: state: multik needs FᵀKF and the diagonal of K")
		}
		if r, c := s.FKF.Dims(); r != k || c != k {
			return fmt.Errorf("kernel: state: FᵀKF is %d×%d, want %d×%d", r, c, k, k)
		}
	}
	return nil
}

// Names of the snapshot entries written by MarshalSnapshot.
const (
	snapKernels  = "kernel.kernels" // one row per kernel: kind, p1, p2, p3, scale, τ
	snapCoef     = "kernel.coef"
	snapA        = "kernel.a"
	snapKInvSqrt = "kernel.kinvsqrt"
	snapFKF      = "kernel.fkf"
	snapDiag     = "kernel.diag" // 1×N
	snapMethod   = "kernel.method"
	snapProj     = "kernel.projection"
	snapNeigh    = "kernel.neighbors"
	snapAlpha    = "kernel.graph_alpha"
)

// Kernel kinds in the snapshot's kernel table.
const (
	kindGaussian = iota
	kindPolynomial
	kindCosine
	kindLinear
)

// MarshalSnapshot stores s into snap: the training codes as V, the
// training rows as TrainDense or TrainSparse, the matrices as named Extra
// entries ("kernel.…") and the settings as Params ("kernel.…", floats in
// their shortest exact form). If snap.U is nil it is set to an input-space
// summary of the basis, the code-weighted mean of the training samples of
// each factor (D×K, non-negative); projection does not use it. Only the
// kernels of this package can be stored.
func (s *State) MarshalSnapshot(snap *model.Snapshot) error {
	if err := s.check(); err != nil {
		return err
	}
	tab := mat.NewDense(len(s.Kernels), 6, nil)
	for l, k := range s.Kernels {
		var row []float64
		switch k := k.(type) {
		case Gaussian:
			row = []float64{kindGaussian, k.Sigma, float64(k.Rule), 0}
		case Polynomial:
			h := 0.0
			if k.Homogeneous {
				h = 1
			}
			row = []float64{kindPolynomial, float64(k.Degree), k.Offset, h}
		case Cosine:
			row = []float64{kindCosine, 0, 0, 0}
		case Linear:
			row = []float64{kindLinear, 0, 0, 0}
		default:
			return fmt.Errorf("kernel: state: cannot store kernel %v of type %T", k, k)
		}
		tab.SetRow(l, append(row, s.Scale[l], s.Tau[l]))
	}
	if snap.Extra == nil {
		snap.Extra = map[string]*mat.Dense{}
	}
	if snap.Params == nil {
		snap.Params = map[string]string{}
	}
	snap.Extra[snapKernels] = tab
	snap.Extra[snapCoef] = mat.DenseCopyOf(s.Coef)
	switch s.Method {
	case "flexible":
		snap.Extra[snapA] = mat.DenseCopyOf(s.A)
		snap.Extra[snapKInvSqrt] = mat.DenseCopyOf(s.KInvSqrt)
	case "multik":
		snap.Extra[snapFKF] = mat.DenseCopyOf(s.FKF)
		snap.Extra[snapDiag] = mat.NewDense(1, len(s.Diag), append([]float64(nil), s.Diag...))
	}
	snap.Params[snapMethod] = s.Method
	snap.Params[snapProj] = s.Projection.String()
	snap.Params[snapNeigh] = strconv.Itoa(s.Neighbors)
	snap.Params[snapAlpha] = strconv.FormatFloat(s.GraphAlpha, 'g', -1, 64)
	snap.V = mat.DenseCopyOf(s.Codes)
	snap.TrainDense, snap.TrainSparse = nil, nil
	switch r := model.Rows(s.Train).(type) {
	case *mat.Dense:
		snap.TrainDense = r
	case *sparse.CSR:
		snap.TrainSparse = r
	default:
		return fmt.Errorf("kernel: state: cannot store training rows of type %T", r)
	}
	if snap.U == nil {
		snap.U = preimage(s.Train, s.Codes)
	}
	return nil
}

// preimage returns the D×K matrix whose column j is Σ_i V_ij x_i / Σ_i V_ij,
// the code-weighted mean of the training samples (zero for an unused
// factor).
func preimage(x model.Data, v *mat.Dense) *mat.Dense {
	var u mat.Dense
	x.MulTo(&u, v)
	_, k := v.Dims()
	for j := 0; j < k; j++ {
		s := mat.Sum(v.ColView(j))
		if s > 0 {
			scaleCol(&u, j, 1/s)
		}
	}
	return &u
}

// StateFromSnapshot reads the state that MarshalSnapshot stored in snap.
// The returned state keeps references to snap's matrices.
func StateFromSnapshot(snap *model.Snapshot) (*State, error) {
	get := func(name string) (*mat.Dense, error) {
		m := snap.Extra[name]
		if m == nil {
			return nil, fmt.Errorf("kernel: snapshot of %s has no %q matrix", snap.Method, name)
		}
		return m, nil
	}
	s := &State{Method: snap.Params[snapMethod], Train: snap.Train(), Codes: snap.V}
	if s.Train == nil {
		return nil, fmt.Errorf("kernel: snapshot of %s has no training rows", snap.Method)
	}
	var err error
	switch snap.Params[snapProj] {
	case ProjectGraph.String():
		s.Projection = ProjectGraph
	case ProjectNNLS.String():
		s.Projection = ProjectNNLS
	case ProjectPaper.String():
		s.Projection = ProjectPaper
	default:
		return nil, fmt.Errorf("kernel: snapshot: unknown projection %q", snap.Params[snapProj])
	}
	if s.Neighbors, err = strconv.Atoi(snap.Params[snapNeigh]); err != nil {
		return nil, fmt.Errorf("kernel: snapshot: neighbours: %w", err)
	}
	if s.GraphAlpha, err = strconv.ParseFloat(snap.Params[snapAlpha], 64); err != nil {
		return nil, fmt.Errorf("kernel: snapshot: graph α: %w", err)
	}
	tab, err := get(snapKernels)
	if err != nil {
		return nil, err
	}
	if _, c := tab.Dims(); c != 6 {
		return nil, fmt.Errorf("kernel: snapshot: kernel table has %d columns, want 6", c)
	}
	nk, _ := tab.Dims()
	for l := 0; l < nk; l++ {
		row := tab.RawRowView(l)
		var k Kernel
		switch row[0] {
		case kindGaussian:
			if !(row[1] > 0) {
				return nil, fmt.Errorf("kernel: snapshot: Gaussian width %v", row[1])
			}
			k = Gaussian{Sigma: row[1], Rule: Rule(row[2])}
		case kindPolynomial:
			if row[1] != math.Trunc(row[1]) || row[1] < 0 {
				return nil, fmt.Errorf("kernel: snapshot: polynomial degree %v", row[1])
			}
			k = Polynomial{Degree: int(row[1]), Offset: row[2], Homogeneous: row[3] != 0}
		case kindCosine:
			k = Cosine{}
		case kindLinear:
			k = Linear{}
		default:
			return nil, fmt.Errorf("kernel: snapshot: unknown kernel kind %v", row[0])
		}
		if k, err = k.Bind(nil); err != nil {
			return nil, err
		}
		s.Kernels = append(s.Kernels, k)
		s.Scale = append(s.Scale, row[4])
		s.Tau = append(s.Tau, row[5])
	}
	if s.Coef, err = get(snapCoef); err != nil {
		return nil, err
	}
	switch s.Method {
	case "flexible":
		if s.A, err = get(snapA); err != nil {
			return nil, err
		}
		if s.KInvSqrt, err = get(snapKInvSqrt); err != nil {
			return nil, err
		}
	case "multik":
		if s.FKF, err = get(snapFKF); err != nil {
			return nil, err
		}
		d, err := get(snapDiag)
		if err != nil {
			return nil, err
		}
		if r, _ := d.Dims(); r != 1 {
			return nil, fmt.Errorf("kernel: snapshot: diagonal has %d rows, want 1", r)
		}
		s.Diag = d.RawRowView(0)
	default:
		return nil, fmt.Errorf("kernel: snapshot: unknown kernel method %q", s.Method)
	}
	return s, s.check()
}
