package kernel

import (
	"fmt"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/gemm"
	"github.com/nmfstream/nmfstream/model"
)

// KernelLoss is the kernel reconstruction loss of NMF in feature space,
//
//	‖Φ(X) − Φ(X)F Vᵀ‖² = tr(K) − 2 tr(Vᵀ K F) + tr((FᵀKF)(VᵀV)),
//
// for the engine's U = F (N×K: the basis Φ(X)F is a combination of the
// mapped samples and is never formed) and V (N×K codes). It is the
// objective of NMF_K in Wang and AbdulJabbar (eq. 12, with W = Vᵀ).
//
// The kernel is K (N×N, symmetric), or a factor Phi (N×m, ≥ 0) with
// K = ΦΦᵀ (a Nyström approximation); exactly one must be set.
//
// The halved gradients are ½∂/∂F = KF(VᵀV) − KV and ½∂/∂V = V(FᵀKF) − KF.
// With K ≥ 0 entrywise (every kernel of this package on non-negative data,
// and any non-negative factor) the split is neg = KV, pos = KF(VᵀV) for F and
// neg = KF, pos = V(FᵀKF) for V: the updates of eq. 22, which do not
// increase the loss (the Lee–Seung auxiliary function needs only the
// non-negativity of the quadratic forms VᵀV ⊗ K and FᵀKF). A dense K with
// negative entries is split as K = K⁺ − K⁻ and K⁻'s contributions move to
// the other side of each fraction (as for signed graphs); the updates then
// keep F, V ≥ 0 but monotonicity is no longer proven.
//
// A KernelLoss is not safe for concurrent use.
type KernelLoss struct {
	// K is the N×N kernel matrix, or nil if Phi is set. It is not copied.
	K *mat.Dense
	// Phi is an N×m non-negative factor with K = ΦΦᵀ, or nil if K is set.
	// It is not copied.
	Phi *mat.Dense
	// Split, if set, runs the products with K or Φ in parts, as
	// model.Engine.Split does (pipeline.Share provides one). Where the
	// gemm kernels serve (gemm.Serves64) every entry is the same sum
	// whatever the parts, so the results do not depend on it.
	Split func(n int, body func(lo, hi int))

	g        gram
	prepared bool
	kf, fkf  mat.Dense // K·F and FᵀKF of the last VGradTo or Value
	kfOf     mat.Dense // the F of kf, which UGradTo reuses while F is unchanged
	kfOK     bool      // kfOf holds the F of kf
	vtv      mat.Dense
	tmp      mat.Dense
	tmp2     mat.Dense
}

var _ model.FastLoss = (*KernelLoss)(nil)

func (l *KernelLoss) prepare() {
	if !l.prepared || l.g.k != l.K || l.g.phi != l.Phi {
		if (l.K == nil) == (l.Phi == nil) {
			panic("kernel: KernelLoss needs exactly one of K and Phi")
		}
		l.g.set(l.K, l.Phi, l.Split)
		l.prepared, l.kfOK = true, false
	}
	l.g.split = l.Split // Split may change between fits of the same K
}

// Reset drops cached state; call it after changing K or Phi in place.
func (l *KernelLoss) Reset() { l.prepared, l.kfOK = false, false }

// setKF stores K·F into l.kf and remembers F, for UGradTo.
func (l *KernelLoss) setKF(f *mat.Dense) {
	l.kf.Reset()
	l.g.mulTo(&l.kf, f)
	r, c := f.Dims()
	shape(&l.kfOf, r, c)
	l.kfOf.Copy(f)
	l.kfOK = true
}

// kfFor reports whether l.kf is K·f: f is, bit for bit, the F it was
// computed for. The engine updates V between a VGradTo and the next
// UGradTo, and leaves F as VGradTo saw it, so each iteration needs one
// product with F instead of two.
func (l *KernelLoss) kfFor(f *mat.Dense) bool {
	if !l.kfOK {
		return false
	}
	r, c := f.Dims()
	if kr, kc := l.kfOf.Dims(); kr != r || kc != c {
		return false
	}
	for i := 0; i < r; i++ {
		a, b := f.RawRowView(i), l.kfOf.RawRowView(i)
		for j, x := range a {
			if x != b[j] {
				return false
			}
		}
	}
	return true
}

// Dims returns (N, N): F and V both have one row per sample.
func (l *KernelLoss) Dims() (d, n int) {
	l.prepare()
	return l.g.n, l.g.n
}

// UGradTo stores the split of ½∂/∂F = KF(VᵀV) − KV into neg and pos.
func (l *KernelLoss) UGradTo(neg, pos, f, v *mat.Dense) {
	l.prepare()
	l.g.mulT(&l.vtv, v, v)
	// neg = K⁺V + (K⁻F)(VᵀV), pos = (K⁺F)(VᵀV) + K⁻V.
	l.g.mulPos(neg, v)
	if !l.g.hasNeg && l.kfFor(f) {
		l.g.mul(pos, &l.kf, &l.vtv)
	} else {
		l.g.mulPos(&l.tmp, f)
		l.g.mul(pos, &l.tmp, &l.vtv)
	}
	if l.g.hasNeg {
		l.g.mulNeg(&l.tmp, v)
		pos.Add(pos, &l.tmp)
		l.g.mulNeg(&l.tmp, f)
		l.tmp2.Reset()
		l.tmp2.Mul(&l.tmp, &l.vtv)
		neg.Add(neg, &l.tmp2)
	}
}

// VGradTo stores the split of ½∂/∂V = V(FᵀKF) − KF into neg and pos.
func (l *KernelLoss) VGradTo(neg, pos, f, v *mat.Dense) {
	l.prepare()
	l.setKF(f)
	l.g.mulT(&l.fkf, f, &l.kf)
	if !l.g.hasNeg {
		neg.Copy(&l.kf)
		l.g.mul(pos, v, &l.fkf)
		return
	}
	// neg = K⁺F + V(FᵀK⁻F), pos = V(FᵀK⁺F) + K⁻F.
	l.g.mulPos(neg, f)
	l.tmp.Reset()
	l.g.mulNeg(&l.tmp, f)
	pos.Copy(&l.tmp)
	l.tmp2.Reset()
	l.tmp2.Mul(f.T(), &l.tmp) // FᵀK⁻F
	var fkp mat.Dense
	fkp.Add(&l.fkf, &l.tmp2) // FᵀK⁺F
	l.tmp.Reset()
	l.tmp.Mul(v, &fkp)
	pos.Add(pos, &l.tmp)
	l.tmp.Reset()
	l.tmp.Mul(v, &l.tmp2)
	neg.Add(neg, &l.tmp)
}

// Value returns tr(K) − 2 tr(VᵀKF) + tr((FᵀKF)(VᵀV)).
func (l *KernelLoss) Value(f, v *mat.Dense) float64 {
	l.prepare()
	l.setKF(f)
	l.g.mulT(&l.fkf, f, &l.kf)
	return l.LastValue(v)
}

// LastValue returns the loss from KF and FᵀKF of the last VGradTo.
func (l *KernelLoss) LastValue(v *mat.Dense) float64 {
	l.g.mulT(&l.vtv, v, v)
	f := l.g.trace - 2*inner(v, &l.kf) + inner(&l.fkf, &l.vtv)
	if f < 0 { // rounding on a near-exact fit
		f = 0
	}
	return f
}

// gram is a kernel matrix over the training samples: dense (N×N) or a
// factor Φ (N×m) with K = ΦΦᵀ.
type gram struct {
	n      int
	k      *mat.Dense
	phi    *mat.Dense
	kp, kn *mat.Dense // K⁺ and K⁻ when a dense K has negative entries
	hasNeg bool
	trace  float64
	diag   []float64
	tmp    mat.Dense
	// split, if set, runs the products in parts (KernelLoss.Split).
	split func(n int, body func(lo, hi int))
	pk    gemm.Packed // mul's right operand, packed once for all parts
}

// set makes g the Gram matrix K (N×N), or the factor Φ (N×m) of K = ΦΦᵀ,
// exactly one of them non-nil, with the products in parts under split (nil:
// one part), dropping what g held before.
func (g *gram) set(k, phi *mat.Dense, split func(n int, body func(lo, hi int))) {
	*g = gram{k: k, phi: phi, split: split}
	if k != nil {
		r, c := k.Dims()
		if r != c {
			panic(fmt.Sprintf("kernel: K is %d×%d, want square", r, c))
		}
		g.n = r
		g.diag = make([]float64, r)
		raw := k.RawMatrix()
		for i := 0; i < r; i++ {
			row := raw.Data[i*raw.Stride : i*raw.Stride+r]
			g.diag[i] = row[i]
			g.trace += row[i]
			for _, x := range row {
				if x < 0 {
					g.hasNeg = true
				}
			}
		}
		if g.hasNeg {
			g.kp, g.kn = mat.NewDense(r, r, nil), mat.NewDense(r, r, nil)
			g.kp.Apply(func(_, _ int, x float64) float64 { return max(x, 0) }, k)
			g.kn.Apply(func(_, _ int, x float64) float64 { return max(-x, 0) }, k)
		}
		return
	}
	r, _ := phi.Dims()
	g.n = r
	g.diag = make([]float64, r)
	raw := phi.RawMatrix()
	for i := 0; i < r; i++ {
		for _, x := range raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols] {
			if x < 0 {
				panic("kernel: KernelLoss factor Phi has a negative entry")
			}
			g.diag[i] += x * x
		}
		g.trace += g.diag[i]
	}
}

// mulTo stores K·b into dst: K·b, or Φ(Φᵀb) for a factor.
func (g *gram) mulTo(dst, b *mat.Dense) {
	if g.k != nil {
		g.mul(dst, g.k, b)
		return
	}
	g.mulT(&g.tmp, g.phi, b) // m×K
	g.mul(dst, g.phi, &g.tmp)
}

// mul stores a·b into dst (a's rows in parts under split; each row of the
// product depends on its row of a alone).
func (g *gram) mul(dst, a, b *mat.Dense) {
	par := g.split != nil
	if !gemm.Serves64(par) {
		dst.Reset()
		dst.Mul(a, b)
		return
	}
	n, _ := a.Dims()
	_, k := b.Dims()
	shape(dst, n, k)
	g.pk.Pack(b.RawMatrix())
	g.parts(n, func(lo, hi int) {
		gemm.MulPacked(rowsOf(dst, lo, hi).RawMatrix(), rowsOf(a, lo, hi).RawMatrix(), &g.pk)
	})
}

// mulT stores aᵀb into dst, for a of N×p and b of N×q (a's columns, the
// rows of aᵀb, in parts under split; each entry is summed over the N rows
// in order whatever the parts). dst must not share storage with a or b.
func (g *gram) mulT(dst, a, b *mat.Dense) {
	par := g.split != nil
	if !gemm.Serves64(par) {
		dst.Reset()
		dst.Mul(a.T(), b)
		return
	}
	n, p := a.Dims()
	_, q := b.Dims()
	shape(dst, p, q)
	g.parts(p, func(lo, hi int) {
		ws := xtaPool.Get().(*gemm.Workspace)
		gemm.MulTransTo(rowsOf(dst, lo, hi), a.Slice(0, n, lo, hi).(*mat.Dense), b, ws, par)
		xtaPool.Put(ws)
	})
}

// parts runs body over [0, n) through split, or as one part.
func (g *gram) parts(n int, body func(lo, hi int)) {
	if g.split == nil {
		if n > 0 {
			body(0, n)
		}
		return
	}
	g.split(n, body)
}

// xtaPool holds the workspaces of mulT's parts.
var xtaPool = sync.Pool{New: func() any { return new(gemm.Workspace) }}

// shape makes dst r×c, keeping its storage when it has that shape.
func shape(dst *mat.Dense, r, c int) {
	if dr, dc := dst.Dims(); !dst.IsEmpty() && (dr != r || dc != c) {
		dst.Reset()
	}
	if dst.IsEmpty() {
		dst.ReuseAs(r, c)
	}
}

// rowsOf returns rows [lo, hi) of m as a view.
func rowsOf(m *mat.Dense, lo, hi int) *mat.Dense {
	_, c := m.Dims()
	return m.Slice(lo, hi, 0, c).(*mat.Dense)
}

// mulPos and mulNeg store K⁺·b and K⁻·b (K⁻ = 0 without negative entries).
func (g *gram) mulPos(dst, b *mat.Dense) {
	if g.hasNeg {
		g.mul(dst, g.kp, b)
		return
	}
	g.mulTo(dst, b)
}

func (g *gram) mulNeg(dst, b *mat.Dense) { g.mul(dst, g.kn, b) }

// rowsTo stores rows [lo, hi) of K into dst ((hi−lo)×N).
func (g *gram) rowsTo(dst *mat.Dense, lo, hi int) {
	if g.k != nil {
		dst.Copy(g.k.Slice(lo, hi, 0, g.n))
		return
	}
	_, m := g.phi.Dims()
	dst.Mul(g.phi.Slice(lo, hi, 0, m), g.phi.T())
}

// inner returns Σ_ij a_ij b_ij for same-shaped a and b.
func inner(a, b *mat.Dense) float64 {
	ar, br := a.RawMatrix(), b.RawMatrix()
	var s float64
	for i := 0; i < ar.Rows; i++ {
		x := ar.Data[i*ar.Stride : i*ar.Stride+ar.Cols]
		y := br.Data[i*br.Stride : i*br.Stride+ar.Cols]
		for j, v := range x {
			s += v * y[j]
		}
	}
	return s
}
