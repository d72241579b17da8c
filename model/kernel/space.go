package kernel

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/gemm"
	"github.com/nmfstream/nmfstream/model"
)

// DefaultMaxExact is the default limit on N for exact kernel matrices: an
// N×N float64 matrix takes 8N² bytes (3.0 GiB at N = 20000, per kernel), and
// the methods hold one or more of them plus an O(N³) eigendecomposition for
// Flexible.
const DefaultMaxExact = 20000

// ErrTooLarge is wrapped by Fit when N exceeds the exact path's limit and no
// Nyström approximation is configured.
var ErrTooLarge = errors.New("kernel: too many samples for an exact kernel matrix")

// ErrNeedsExact is wrapped by the errors of the paper's projection
// (ProjectPaper, A⁺K⁻¹K_te) asked of a flexible-kernel fit or State with
// Nyström landmarks: it needs the exact kernel.
var ErrNeedsExact = errors.New("the paper's projection A⁺K⁻¹K_te needs the exact kernel")

// space is the (possibly multiple, scaled) kernel space of the training
// samples: exact N×N matrices, or Nyström features.
type space struct {
	train   model.Data
	kernels []Kernel  // bound
	scale   []float64 // K_l is divided by scale_l (its mean diagonal)
	mats    []*mat.Dense
	maps    []*nystromMap
	phis    []*mat.Dense // N×m_l non-negative Nyström features
	lmIdx   []int        // the landmarks' rows of train (Nyström)
	buf     mat.Dense    // combined kernel or factor
}

// Scaling says how each kernel of a pool is scaled before kernels are
// mixed and compared, so that kernels of different scales ((1 + xᵀy)⁴ on
// pixel data against a Gaussian) are comparable.
type Scaling int

const (
	// ScaleTrace divides K by its mean diagonal tr(K)/N: every sample has
	// unit squared norm on average in feature space. The default.
	ScaleTrace Scaling = iota
	// ScaleVariance divides K by its mean centred diagonal tr(HKH)/N,
	// H = I − 11ᵀ/N: the total variance of the mapped samples is N. A wide
	// Gaussian, nearly constant, carries little variance and is scaled up,
	// so its (small) reconstruction cost no longer wins the τ step by
	// default. Measured on the digits validation split it does worse
	// (0.77 against 0.87 for NMF_MultiK): the scaled-up constant part of
	// the wide kernels dominates the factorization instead.
	ScaleVariance
	// ScaleNone keeps the kernels as they are.
	ScaleNone
)

// newSpace binds the kernels on x and builds their matrices, or their
// Nyström features when ny is non-nil, each scaled as sc says.
func newSpace(x model.Data, ks []Kernel, ny *Nystrom, maxExact int, sc Scaling) (*space, error) {
	if model.Rows(x) == nil {
		return nil, errRows
	}
	if err := model.Validate(x); err != nil {
		return nil, err
	}
	_, n := x.Dims()
	if maxExact == 0 {
		maxExact = DefaultMaxExact
	}
	if ny == nil && n > maxExact {
		return nil, fmt.Errorf("%w: N = %d > %d (%.1f GiB per kernel matrix); set Nystrom for a landmark approximation", ErrTooLarge, n, maxExact, 8*float64(n)*float64(n)/(1<<30))
	}
	s := &space{train: x}
	sq := sqNorms(x)
	rho := map[Rule]float64{} // the pairwise distances, once for all the Gaussians
	dist := func(r Rule) (float64, error) {
		if v, ok := rho[r]; ok {
			return v, nil
		}
		v, err := PairwiseDistance(x, r)
		if err == nil {
			rho[r] = v
		}
		return v, err
	}
	for _, k := range ks {
		if k == nil {
			return nil, fmt.Errorf("kernel: nil kernel")
		}
		var b Kernel
		var err error
		if g, ok := k.(Gaussian); ok {
			b, err = g.bind(dist)
		} else {
			b, err = k.Bind(x)
		}
		if err != nil {
			return nil, err
		}
		s.kernels = append(s.kernels, b)
		s.scale = append(s.scale, 1)
		if sc == ScaleTrace {
			var tr float64
			for _, v := range sq {
				tr += b.Eval(v, v, v)
			}
			f := tr / float64(n)
			if !(f > 0) || math.IsInf(f, 0) {
				return nil, fmt.Errorf("kernel: %v has mean diagonal %g on the training samples; cannot normalize", b, f)
			}
			s.scale[len(s.scale)-1] = f
		}
	}
	if ny == nil {
		p, err := newProducts(x, x, len(s.kernels) > 1) // read by every kernel of the pool
		if err != nil {
			return nil, err
		}
		for l, k := range s.kernels {
			km := new(mat.Dense)
			if err := p.matrixTo(km, k); err != nil {
				return nil, err
			}
			if s.scale[l] != 1 {
				km.Scale(1/s.scale[l], km)
			}
			if err := checkFinite(km, k); err != nil {
				return nil, err
			}
			s.mats = append(s.mats, km)
		}
		return s, s.scaleVariance(sc)
	}
	m := ny.Landmarks
	if m == 0 {
		m = min(n, 500)
	}
	if m < 1 || m > n {
		return nil, fmt.Errorf("kernel: %d Nyström landmarks for %d samples", m, n)
	}
	s.lmIdx = ny.selectLandmarks(x, m)
	lm, err := subsetRows(x, s.lmIdx)
	if err != nil {
		return nil, err
	}
	p, err := newProducts(x, lm, len(s.kernels) > 1) // read by every kernel of the pool
	if err != nil {
		return nil, err
	}
	for l, k := range s.kernels {
		nm, err := newNystromMap(k, s.scale[l], lm)
		if err != nil {
			return nil, fmt.Errorf("kernel: %v: %w", k, err)
		}
		phi := new(mat.Dense)
		if err := nm.featuresFrom(phi, p); err != nil {
			return nil, err
		}
		if err := checkFinite(phi, k); err != nil {
			return nil, err
		}
		s.maps = append(s.maps, nm)
		s.phis = append(s.phis, phi)
	}
	return s, s.scaleVariance(sc)
}

// scaleVariance divides each kernel by tr(HKH)/N = (tr K − 1ᵀK1/N)/N when
// sc is ScaleVariance.
func (s *space) scaleVariance(sc Scaling) error {
	if sc != ScaleVariance {
		return nil
	}
	n := s.n()
	for l := range s.kernels {
		tr, sum := s.centredStats(l)
		f := (tr - sum/float64(n)) / float64(n)
		if !(f > 0) {
			return fmt.Errorf("kernel: %v has no variance on the training samples (all samples coincide in feature space)", s.kernels[l])
		}
		s.scale[l] = f
		if s.exact() {
			s.mats[l].Scale(1/f, s.mats[l])
		} else {
			s.phis[l].Scale(1/math.Sqrt(f), s.phis[l])
			s.maps[l].scale = f
		}
	}
	return nil
}

func checkFinite(m *mat.Dense, k Kernel) error {
	for _, v := range m.RawMatrix().Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("kernel: %v overflows on these samples; rescale the data", k)
		}
	}
	return nil
}

func (s *space) n() int { _, n := s.train.Dims(); return n }

func (s *space) exact() bool { return s.maps == nil }

// combined returns K^τ = Σ τ_l K_l as a dense matrix, or its factor
// Φ^τ = [√τ_1 Φ_1, …] (kernels with τ_l = 0 are left out). The result is
// valid until the next call.
func (s *space) combined(tau []float64) (k, phi *mat.Dense) {
	n := s.n()
	if len(tau) == 1 {
		if s.exact() {
			return s.mats[0], nil
		}
		return nil, s.phis[0]
	}
	if s.exact() {
		s.buf.Reset()
		s.buf.ReuseAs(n, n)
		s.buf.Zero()
		for l, t := range tau {
			if t > 0 {
				addScaled(&s.buf, t, s.mats[l])
			}
		}
		return &s.buf, nil
	}
	cols := 0
	for l, t := range tau {
		if t > 0 {
			_, m := s.phis[l].Dims()
			cols += m
		}
	}
	s.buf.Reset()
	s.buf.ReuseAs(n, cols)
	c := 0
	for l, t := range tau {
		if t <= 0 {
			continue
		}
		_, m := s.phis[l].Dims()
		dst := s.buf.Slice(0, n, c, c+m).(*mat.Dense)
		dst.Scale(math.Sqrt(t), s.phis[l])
		c += m
	}
	return nil, &s.buf
}

// crossTo stores the combined cross-kernel K^τ(train, x) (N×M) into dst and
// the self-similarities k^τ(x_j, x_j) into self (length M).
func (s *space) crossTo(dst *mat.Dense, self []float64, tau []float64, x model.Data) error {
	d, m := x.Dims()
	if td, _ := s.train.Dims(); td != d {
		return fmt.Errorf("kernel: samples have %d features, the model was fitted on %d", d, td)
	}
	if err := model.Validate(x); err != nil {
		return err
	}
	n := s.n()
	dst.Reset()
	dst.ReuseAs(n, m)
	dst.Zero()
	for j := range self {
		self[j] = 0
	}
	sq := sqNorms(x)
	// The products every kernel of the pool reads: the training samples'
	// with x, or x's with the landmarks.
	used := positives(tau)
	var p *products
	var err error
	if s.exact() {
		p, err = newProducts(s.train, x, used > 1)
	} else {
		p, err = newProducts(x, s.maps[0].lm, used > 1)
	}
	if err != nil {
		return err
	}
	var tmp mat.Dense
	for l, t := range tau {
		if t <= 0 {
			continue
		}
		tmp.Reset()
		if s.exact() {
			if err := p.crossTo(&tmp, s.kernels[l]); err != nil {
				return err
			}
			addScaled(dst, t/s.scale[l], &tmp)
			for j, v := range sq {
				self[j] += t * s.kernels[l].Eval(v, v, v) / s.scale[l]
			}
			continue
		}
		if err := s.maps[l].featuresFrom(&tmp, p); err != nil {
			return err
		}
		kt := mat.NewDense(n, m, nil)
		var ws gemm.ABTWorkspace
		gemm.ABT(kt.RawMatrix(), s.phis[l].RawMatrix(), tmp.RawMatrix(), &ws, false) // Φ_train·Φ_xᵀ
		addScaled(dst, t, kt)
		for j := 0; j < m; j++ {
			r := tmp.RawRowView(j)
			var q float64
			for _, v := range r {
				q += v * v
			}
			self[j] += t * q
		}
	}
	return nil
}

// positives returns the number of kernels of positive weight in tau.
func positives(tau []float64) int {
	n := 0
	for _, t := range tau {
		if t > 0 {
			n++
		}
	}
	return n
}

// addScaled sets dst += alpha·a (same shapes).
func addScaled(dst *mat.Dense, alpha float64, a *mat.Dense) {
	dr, ar := dst.RawMatrix(), a.RawMatrix()
	for i := 0; i < dr.Rows; i++ {
		d := dr.Data[i*dr.Stride : i*dr.Stride+dr.Cols]
		for j, v := range ar.Data[i*ar.Stride : i*ar.Stride+dr.Cols] {
			d[j] += alpha * v
		}
	}
}
