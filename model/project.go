package model

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/gemm"
	"github.com/nmfstream/nmfstream/internal/vec"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// Projection selects how new samples are coded on a learned basis U.
// docs/DESIGN.md §4 gives the measured accuracies that choose the default.
type Projection int

const (
	// ProjectGraph is graph-aware out-of-sample projection: the new sample
	// joins the k-NN graph of the training samples, whose codes stay fixed,
	// and its code solves min ‖x − Uv‖² + α Σ_j S_j ‖v − v_j‖², v ≥ 0, by
	// multiplicative updates with U fixed. It measures best and is the default.
	ProjectGraph Projection = iota
	// ProjectNNLS is non-negative least squares min ‖x − Uv‖², v ≥ 0, by
	// multiplicative updates with U fixed, started from the clamped
	// pseudo-inverse.
	ProjectNNLS
	// ProjectPinv is the least-squares code (UᵀU)⁻¹Uᵀx, which may be negative.
	ProjectPinv
	// ProjectClampedPinv is max(0, (UᵀU)⁻¹Uᵀx), as in Cai's GNMF code.
	ProjectClampedPinv
)

// String returns the projection's command-line name.
func (p Projection) String() string {
	switch p {
	case ProjectGraph:
		return "graph"
	case ProjectNNLS:
		return "nnls"
	case ProjectPinv:
		return "pinv"
	case ProjectClampedPinv:
		return "clamped"
	}
	return fmt.Sprintf("Projection(%d)", int(p))
}

// ParseProjection returns the Projection named s ("graph", "nnls", "pinv",
// "clamped").
func ParseProjection(s string) (Projection, error) {
	for p := ProjectGraph; p <= ProjectClampedPinv; p++ {
		if p.String() == s {
			return p, nil
		}
	}
	return 0, fmt.Errorf("model: unknown projection %q (want graph, nnls, pinv or clamped)", s)
}

// Projector codes new samples on a fixed basis U (D×K).
//
// The Cholesky factor of UᵀU is computed once and cached. A Projector is
// not safe for concurrent use; give each goroutine its own (they may share
// U, which is only read).
type Projector struct {
	// Method selects the projection. The zero value is ProjectGraph.
	Method Projection
	// U is the basis (D×K). It must be set.
	U *mat.Dense
	// MaxIter bounds the multiplicative updates of NNLS and graph-aware
	// projection. If zero, it defaults to 100.
	MaxIter int
	// Tol is the relative objective change that stops those updates. If
	// zero, it defaults to 1e-6.
	Tol float64

	// Graph-aware projection needs the training samples' neighbourhoods:
	// Neighbors(x) returns, for each new sample (row), a sparse row of
	// weights to training samples, and TrainCodes their codes (M×K).
	// Alpha is the weight of the anchor term; use the training α.
	// Loss is the loss the basis was fitted with; the codes minimize the
	// same one: LossFrobenius (the zero value) or LossKL (the generalized
	// KL divergence). Pinv and clamped pinv ignore it.
	Loss LossKind

	Neighbors  func(x Data) (*sparse.CSR, error)
	TrainCodes *mat.Dense
	Alpha      float64

	chol    mat.Cholesky
	cholFor *mat.Dense
	xtu     mat.Dense // XᵀU of the samples being projected
	loss    fixedBasisLoss
	eng     Engine
}

// fixedBasisLoss is the Frobenius loss ‖X − UVᵀ‖²_F for a basis that does
// not change: XᵀU and UᵀU are computed once per projection instead of once
// per update (the engine runs with FixU).
type fixedBasisLoss struct {
	x   Data
	xtu *mat.Dense // N×K, XᵀU
	utu mat.Dense  // K×K, UᵀU
	vtv mat.Dense
	ws  gemm.Workspace // mulTransTo's, for UᵀU and VᵀV
}

var _ FastLoss = (*fixedBasisLoss)(nil)

func (l *fixedBasisLoss) Dims() (d, n int) { return l.x.Dims() }

// UGradTo is never called: the engine keeps U fixed.
func (l *fixedBasisLoss) UGradTo(neg, pos, u, v *mat.Dense) {
	panic("model: fixedBasisLoss.UGradTo called with U fixed")
}

// VGradTo stores XᵀU into neg and V(UᵀU) into pos.
func (l *fixedBasisLoss) VGradTo(neg, pos, u, v *mat.Dense) {
	neg.Copy(l.xtu)
	mulTo(pos, v, &l.utu)
}

// Value returns the loss at V; u is the fixed basis.
func (l *fixedBasisLoss) Value(u, v *mat.Dense) float64 { return l.LastValue(v) }

// LastValue returns ‖X‖² − 2⟨V, XᵀU⟩ + ⟨UᵀU, VᵀV⟩.
func (l *fixedBasisLoss) LastValue(v *mat.Dense) float64 {
	l.vtv.Reset()
	mulTransTo(&l.vtv, v, v, &l.ws)
	f := l.x.SqNorm() - 2*inner(v, l.xtu) + inner(&l.utu, &l.vtv)
	return max(f, 0) // rounding on a near-exact fit
}

// ProjectTo stores the codes of x's samples (N×K) into dst. dst must be
// empty or N×K.
func (p *Projector) ProjectTo(dst *mat.Dense, x Data) error {
	d, n := x.Dims()
	ud, k := p.U.Dims()
	if d != ud {
		return fmt.Errorf("model: project: data has %d features, basis has %d", d, ud)
	}
	if err := Validate(x); err != nil {
		return err
	}
	if dst.IsEmpty() {
		dst.ReuseAs(n, k)
	} else if r, c := dst.Dims(); r != n || c != k {
		panic(mat.ErrShape)
	}
	if err := p.pinvTo(dst, x); err != nil {
		return err
	}
	if p.Method == ProjectPinv {
		return nil
	}
	clampNonNeg(dst)
	if p.Method == ProjectClampedPinv {
		return nil
	}
	// Multiplicative updates cannot move an entry away from zero: start
	// every entry from at least a small fraction of the row's mean.
	floorRows(dst)
	p.loss.x, p.loss.xtu = x, &p.xtu
	p.loss.utu.Reset()
	mulTransTo(&p.loss.utu, p.U, p.U, &p.loss.ws)
	p.eng = Engine{Loss: &p.loss, FixU: true, MaxIter: p.MaxIter, Tol: p.Tol, Terms: p.eng.Terms[:0]}
	switch p.Loss {
	case LossFrobenius:
	case LossKL:
		p.eng.Loss = NewKL(x)
	default:
		return fmt.Errorf("model: project: unknown loss %v", p.Loss)
	}
	if p.eng.MaxIter == 0 {
		p.eng.MaxIter = 100
	}
	if p.eng.Tol == 0 {
		p.eng.Tol = 1e-6
	}
	if p.Method == ProjectGraph {
		if p.Neighbors == nil || p.TrainCodes == nil {
			return fmt.Errorf("model: graph-aware projection needs the training graph; use ProjectNNLS without one")
		}
		b, err := p.Neighbors(x)
		if err != nil {
			return err
		}
		p.eng.Terms = append(p.eng.Terms, &AnchorTerm{Weight: p.Alpha, B: b, C: p.TrainCodes})
	}
	_, err := p.eng.Run(p.U, dst)
	return err
}

// maxGramCond is the largest condition number of UᵀU that pinvTo solves
// with as it is; above it, gonum's solve reports the matrix near-singular
// (at 1e16) and pinvTo adds a ridge first.
const maxGramCond = 1e12

// pinvTo stores XᵀU(UᵀU)⁻¹ into dst, through the cached Cholesky factor.
func (p *Projector) pinvTo(dst *mat.Dense, x Data) error {
	if p.cholFor != p.U {
		var utu mat.SymDense
		gramUpper(&utu, p.U)
		if !p.chol.Factorize(&utu) || p.chol.Cond() > maxGramCond {
			// A basis column that multiplicative updates drove to zero
			// makes UᵀU singular, and nearly collinear columns (a rank
			// close to the dimension) make it near-singular, where the
			// solve below fails. A ridge of a relative 1e-8 solves the
			// rest exactly enough and gives such a column a zero code.
			_, k := p.U.Dims()
			ridge := 1e-8 * mat.Trace(&utu) / float64(k)
			if ridge == 0 {
				return fmt.Errorf("model: project: the basis is zero; refit the model")
			}
			for i := 0; i < k; i++ {
				utu.SetSym(i, i, utu.At(i, i)+ridge)
			}
			if !p.chol.Factorize(&utu) {
				return fmt.Errorf("model: project: UᵀU is singular (collinear basis columns); refit with a smaller rank")
			}
		}
		p.cholFor = p.U
	}
	p.xtu.Reset()
	x.TMulTo(&p.xtu, p.U) // N×K
	// dst = XᵀU (UᵀU)⁻¹, i.e. dstᵀ = (UᵀU)⁻¹ (XᵀU)ᵀ.
	var t mat.Dense
	if err := p.chol.SolveTo(&t, p.xtu.T()); err != nil {
		return fmt.Errorf("model: project: %w", err)
	}
	dst.Copy(t.T())
	return nil
}

// gramBlock is the rows of U gramUpper takes at once (64 rows of K = 40:
// 20 KB, in the first-level cache while every row of the Gram takes them).
const gramBlock = 64

// gramUpper sets g (K×K, upper storage) to UᵀU for u (D×K, finite), the
// bits of gonum's g.SymOuterK(1, u.T()), whose BLAS (Dsyrk, transposed, upper)
// adds, to each entry (i, j ≥ i), u[l][i]·u[l][j] for l = 0, 1, … in turn,
// each product rounded and then added, skipping the rows whose u[l][i]
// is zero: gramUpper adds the same products in the same order (a zero
// one adds +0, which leaves a sum the same bits: a sum that starts at +0
// never becomes −0), but four rows at a time (vec.Axpy4, no fused
// multiply-add) and in blocks of gramBlock rows for every row of g, so it
// reads U once instead of K times (on documents U's support has thousands
// of rows: TestGramUpperSameBits).
func gramUpper(g *mat.SymDense, u *mat.Dense) {
	d, k := u.Dims()
	if n := g.SymmetricDim(); g.IsEmpty() || n != k {
		g.Reset()
		g.ReuseAsSym(k)
	}
	raw := g.RawSymmetric()
	for i := range k {
		clear(raw.Data[i*raw.Stride+i : i*raw.Stride+k])
	}
	ur := u.RawMatrix()
	row := func(l, i int) []float64 { return ur.Data[l*ur.Stride+i : l*ur.Stride+k] }
	var a [4]float64
	for lo := 0; lo < d; lo += gramBlock {
		hi := min(lo+gramBlock, d)
		for i := range k {
			gi := raw.Data[i*raw.Stride+i : i*raw.Stride+k]
			l := lo
			for ; l+4 <= hi; l += 4 {
				a = [4]float64{ur.Data[l*ur.Stride+i], ur.Data[(l+1)*ur.Stride+i], ur.Data[(l+2)*ur.Stride+i], ur.Data[(l+3)*ur.Stride+i]}
				vec.Axpy4(gi, &a, row(l, i), row(l+1, i), row(l+2, i), row(l+3, i))
			}
			for ; l < hi; l++ {
				if t := ur.Data[l*ur.Stride+i]; t != 0 {
					vec.Axpy(t, row(l, i), gi)
				}
			}
		}
	}
}

func clampNonNeg(m *mat.Dense) {
	raw := m.RawMatrix()
	for i := 0; i < raw.Rows; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols]
		for j, x := range row {
			if x < 0 {
				row[j] = 0
			}
		}
	}
}

// floorRows raises every entry of each row to at least 1e-3 of the row's
// mean (or 1e-6 for an all-zero row), so multiplicative updates can move it.
func floorRows(m *mat.Dense) {
	const (
		rel  = 1e-3 // small next to the row's scale, yet movable
		zero = 1e-6 // for a row that projects to zero entirely
	)
	raw := m.RawMatrix()
	for i := 0; i < raw.Rows; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols]
		var s float64
		for _, x := range row {
			s += x
		}
		f := rel * s / float64(len(row))
		if f == 0 {
			f = zero
		}
		for j, x := range row {
			if x < f {
				row[j] = f
			}
		}
	}
}
