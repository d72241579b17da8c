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
// one did, on the exact path or with Nystrom.
//
// Shapes: Train is N×D; Codes, Coef and A are N×K; KInvSqrt is N×N; FKF is
// K×K; Diag has length N; Kernels, Scale and Tau have one entry per kernel.
// With m Nyström landmarks, Landmarks has length m, Maps one m×m matrix per
// kernel, and Flexible's Coef is m×K (A and KInvSqrt are nil).
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
	// Landmarks are the Nyström landmarks' rows of Train (nil on the exact
	// path) and Maps each kernel's K_mm^{-½} on them, as Nystrom describes:
	// the training samples' features are recomputed from them, so a loaded
	// model projects bit for bit as the fitted one.
	Landmarks []int
	Maps      []*mat.Dense
	// Projection is the projection of new samples; Neighbors and GraphAlpha
	// configure ProjectGraph (resolved: never zero).
	Projection Projection
	Neighbors  int
	GraphAlpha float64
}

// State returns the projection state of the fitted method. The matrices are
// the method's own, valid until the next Fit. It returns an error before Fit.
func (m *Flexible) State() (*State, error) {
	if !m.ok {
		return nil, model.ErrNotFitted
	}
	p, alpha := m.Neighbors, m.GraphAlpha
	if p == 0 {
		p = 5
	}
	if alpha == 0 {
		alpha = 1
	}
	s := &State{
		Method: "flexible", Kernels: m.sp.kernels, Scale: m.sp.scale, Tau: []float64{1},
		Train: m.sp.train, Codes: &m.v, Coef: &m.b,
		Projection: m.Projection, Neighbors: p, GraphAlpha: alpha,
	}
	if m.sp.exact() {
		s.A, s.KInvSqrt = &m.a, m.kinvsq
	} else {
		s.Landmarks, s.Maps = m.sp.nystromState()
	}
	return s, nil
}

// nystromState returns the landmarks' rows and each kernel's K_mm^{-½}.
func (s *space) nystromState() ([]int, []*mat.Dense) {
	maps := make([]*mat.Dense, len(s.maps))
	for l, nm := range s.maps {
		maps[l] = nm.w
	}
	return s.lmIdx, maps
}

// loadSpace rebuilds the kernel space of a state: the training samples'
// exact kernel matrix for Flexible's exact path (checked against the
// stored scale), the training samples' Nyström features of the kernels
// with a positive weight when the state has landmarks, and nothing more
// for MultiK's exact path, whose projection reads only cross-kernels.
func (s *State) loadSpace() (*space, error) {
	if s.Landmarks == nil {
		if s.Method == "multik" {
			return &space{train: s.Train, kernels: s.Kernels, scale: s.Scale}, nil
		}
		_, n := s.Train.Dims()
		sp, err := newSpace(s.Train, s.Kernels, nil, n, ScaleTrace)
		if err != nil {
			return nil, err
		}
		if sp.scale[0] != s.Scale[0] {
			return nil, fmt.Errorf("kernel: state: kernel scale %v recomputes as %v (training rows changed?)", s.Scale[0], sp.scale[0])
		}
		return sp, nil
	}
	lm, err := subsetRows(s.Train, s.Landmarks)
	if err != nil {
		return nil, err
	}
	sp := &space{train: s.Train, kernels: s.Kernels, scale: s.Scale, lmIdx: s.Landmarks,
		maps: make([]*nystromMap, len(s.Kernels)), phis: make([]*mat.Dense, len(s.Kernels))}
	used := positives(s.Tau)
	var p *products // the training samples' with the landmarks, for every kernel
	for l, k := range s.Kernels {
		sp.maps[l] = &nystromMap{k: k, scale: s.Scale[l], lm: lm, w: s.Maps[l]}
		if s.Tau[l] <= 0 {
			continue // read by neither combined nor crossTo
		}
		if p == nil {
			if p, err = newProducts(s.Train, lm, used > 1); err != nil {
				return nil, err
			}
		}
		sp.phis[l] = new(mat.Dense)
		if err := sp.maps[l].featuresFrom(sp.phis[l], p); err != nil {
			return nil, err
		}
	}
	return sp, nil
}

// State returns the projection state of the fitted method. The matrices are
// the method's own, valid until the next Fit. It returns an error before Fit.
func (m *MultiK) State() (*State, error) {
	if !m.ok {
		return nil, model.ErrNotFitted
	}
	p, alpha := m.projGraph()
	s := &State{
		Method: "multik", Kernels: m.sp.kernels, Scale: m.sp.scale, Tau: m.tau,
		Train: m.sp.train, Codes: &m.v, Coef: &m.f, FKF: &m.fkf, Diag: m.diag,
		Projection: m.Projection, Neighbors: p, GraphAlpha: alpha,
	}
	if !m.sp.exact() {
		s.Landmarks, s.Maps = m.sp.nystromState()
	}
	return s, nil
}

// NewProjector returns a method rebuilt from s (a *Flexible or *MultiK)
// whose ProjectTo gives the same codes, bit for bit, as the fitted method's
// with the same Projection. It keeps references to s's matrices.
func NewProjector(s *State) (Projector, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	_, k := s.Codes.Dims()
	sp, err := s.loadSpace()
	if err != nil {
		return nil, err
	}
	switch s.Method {
	case "flexible":
		m := &Flexible{Common: model.Common{Rank: k}, Kernel: s.Kernels[0], Projection: s.Projection,
			Neighbors: s.Neighbors, GraphAlpha: s.GraphAlpha, sp: sp, kinvsq: s.KInvSqrt, ok: true}
		m.b.CloneFrom(s.Coef)
		m.v.CloneFrom(s.Codes)
		if s.A != nil {
			m.a.CloneFrom(s.A)
		}
		return m, nil
	case "multik":
		m := &MultiK{Common: model.Common{Rank: k}, Kernels: s.Kernels, Projection: s.Projection,
			Neighbors: s.Neighbors, GraphAlpha: s.GraphAlpha, ok: true,
			sp:   sp,
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
	nk := len(s.Kernels)
	if nk == 0 || len(s.Scale) != nk || len(s.Tau) != nk {
		return fmt.Errorf("kernel: state: %d kernels, %d scales, %d weights", nk, len(s.Scale), len(s.Tau))
	}
	if s.Neighbors < 1 || !(s.GraphAlpha > 0) || s.Projection < ProjectGraph || s.Projection > ProjectPaper {
		return fmt.Errorf("kernel: state: bad projection settings (%v, %d neighbours, α %g)", s.Projection, s.Neighbors, s.GraphAlpha)
	}
	coefRows := n
	if s.Landmarks != nil || s.Maps != nil {
		if err := s.checkNystrom(n); err != nil {
			return err
		}
		if s.Method == "flexible" {
			coefRows = len(s.Landmarks)
		}
	}
	if r, c := s.Coef.Dims(); r != coefRows || c != k {
		return fmt.Errorf("kernel: state: coefficients are %d×%d, want %d×%d", r, c, coefRows, k)
	}
	switch s.Method {
	case "flexible":
		switch {
		case s.Landmarks != nil && nk != 1:
			return errors.New("kernel: state: a flexible-kernel model fitted with Nyström landmarks has one kernel")
		case s.Landmarks != nil && s.Projection == ProjectPaper:
			return fmt.Errorf("kernel: a flexible-kernel model fitted with Nyström landmarks projects by graph or NNLS: %w", ErrNeedsExact)
		case s.Landmarks != nil:
			return nil
		}
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

// checkNystrom checks the landmarks (distinct rows of the n training
// samples) and one m×m map per kernel.
func (s *State) checkNystrom(n int) error {
	m := len(s.Landmarks)
	if m == 0 || len(s.Maps) != len(s.Kernels) {
		return fmt.Errorf("kernel: state: %d Nyström landmarks and %d maps for %d kernels", m, len(s.Maps), len(s.Kernels))
	}
	seen := make(map[int]bool, m)
	for _, i := range s.Landmarks {
		if i < 0 || i >= n || seen[i] {
			return fmt.Errorf("kernel: state: Nyström landmark %d is not a distinct row of the %d training samples", i, n)
		}
		seen[i] = true
	}
	for l, w := range s.Maps {
		if w == nil {
			return fmt.Errorf("kernel: state: kernel %d has no Nyström map", l)
		}
		if r, c := w.Dims(); r != m || c != m {
			return fmt.Errorf("kernel: state: kernel %d's Nyström map is %d×%d, want %d×%d", l, r, c, m, m)
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
	snapLandmark = "kernel.landmarks" // 1×m: the landmarks' rows of the training samples
	snapMaps     = "kernel.nystrom"   // (kernels·m)×m: each kernel's K_mm^{-½}, stacked
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
	if s.Landmarks != nil {
		m := len(s.Landmarks)
		idx := mat.NewDense(1, m, nil)
		for j, i := range s.Landmarks {
			idx.Set(0, j, float64(i))
		}
		snap.Extra[snapLandmark] = idx
		maps := mat.NewDense(len(s.Maps)*m, m, nil)
		for l, w := range s.Maps {
			maps.Slice(l*m, (l+1)*m, 0, m).(*mat.Dense).Copy(w)
		}
		snap.Extra[snapMaps] = maps
	}
	switch s.Method {
	case "flexible":
		if s.Landmarks == nil {
			snap.Extra[snapA] = mat.DenseCopyOf(s.A)
			snap.Extra[snapKInvSqrt] = mat.DenseCopyOf(s.KInvSqrt)
		}
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
	if err := s.nystromFromSnapshot(snap); err != nil {
		return nil, err
	}
	switch s.Method {
	case "flexible":
		if s.Landmarks != nil {
			break
		}
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

// nystromFromSnapshot reads the landmarks and maps MarshalSnapshot stored,
// if it stored any: the maps are views of the snapshot's matrix.
func (s *State) nystromFromSnapshot(snap *model.Snapshot) error {
	idx, maps := snap.Extra[snapLandmark], snap.Extra[snapMaps]
	if idx == nil && maps == nil {
		return nil
	}
	if idx == nil || maps == nil {
		return fmt.Errorf("kernel: snapshot of %s has %q without %q or the reverse", snap.Method, snapLandmark, snapMaps)
	}
	if r, _ := idx.Dims(); r != 1 {
		return fmt.Errorf("kernel: snapshot: %q has %d rows, want 1", snapLandmark, r)
	}
	row := idx.RawRowView(0)
	m := len(row)
	s.Landmarks = make([]int, m)
	for j, v := range row {
		if v != math.Trunc(v) || !(math.Abs(v) < 1<<40) {
			return fmt.Errorf("kernel: snapshot: landmark %v is not a row index", v)
		}
		s.Landmarks[j] = int(v)
	}
	r, c := maps.Dims()
	if c != m || r != m*len(s.Kernels) {
		return fmt.Errorf("kernel: snapshot: %q is %d×%d, want %d×%d", snapMaps, r, c, m*len(s.Kernels), m)
	}
	s.Maps = make([]*mat.Dense, len(s.Kernels))
	for l := range s.Maps {
		s.Maps[l] = maps.Slice(l*m, (l+1)*m, 0, m).(*mat.Dense)
	}
	return nil
}
