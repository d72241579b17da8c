package model

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/vec"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// LossKind chooses the reconstruction loss of the factorization methods
// (Common.Loss).
type LossKind int

const (
	// LossFrobenius is ‖X − UVᵀ‖²_F (Frobenius), the default.
	LossFrobenius LossKind = iota
	// LossKL is the generalized Kullback–Leibler divergence D(X‖UVᵀ)
	// (KL), suited to counts and other non-negative data whose error
	// grows with the entry, such as term frequencies.
	LossKL
)

// String returns "frobenius" or "kl", the names ParseLoss accepts.
func (k LossKind) String() string {
	switch k {
	case LossFrobenius:
		return "frobenius"
	case LossKL:
		return "kl"
	}
	return fmt.Sprintf("LossKind(%d)", int(k))
}

// ParseLoss returns the LossKind called name: "frobenius" (or "" or
// "fro") or "kl". Another name is an error listing the valid ones.
func ParseLoss(name string) (LossKind, error) {
	switch name {
	case "", "frobenius", "fro":
		return LossFrobenius, nil
	case "kl":
		return LossKL, nil
	}
	return 0, fmt.Errorf("model: unknown loss %q (want frobenius or kl)", name)
}

// NewLoss returns the loss of kind k on x: a *Frobenius or a *KL. It
// returns an error for an unknown kind.
func NewLoss(k LossKind, x Data) (Loss, error) {
	switch k {
	case LossFrobenius:
		return NewFrobenius(x), nil
	case LossKL:
		return NewKL(x), nil
	}
	return nil, fmt.Errorf("model: unknown loss %v", k)
}

// KL is the generalized Kullback–Leibler divergence
//
//	D(X‖UVᵀ) = Σ_ij x_ij log(x_ij / (UVᵀ)_ij) − x_ij + (UVᵀ)_ij
//
// on data X (dense or sparse), with 0·log 0 = 0. Lee and Seung,
// "Algorithms for non-negative matrix factorization", NIPS 2001, minimize
// it by
//
//	U ← U ⊙ ((X ⊘ UVᵀ)V) / (1 1ᵀV),   V ← V ⊙ ((X ⊘ UVᵀ)ᵀU) / (1 1ᵀU),
//
// which is the engine's W ← W ⊙ neg/pos with the gradient parts
// neg_U = (X ⊘ UVᵀ)V, pos_U = 1 1ᵀV (every row the column sums of V),
// neg_V = (X ⊘ UVᵀ)ᵀU, pos_V = 1 1ᵀU. Under those updates alone the
// divergence never increases.
//
// Scale: like every Loss, KL stores half of its gradient parts, so that
// the engine's objective is Value plus the terms' values and a graph term
// Weight·tr(VᵀLV) means the same as with Frobenius. GNMF with KL then
// minimizes D(X‖UVᵀ) + α tr(VᵀLV), the GNMF-KL objective of Cai, He, Han,
// Huang, "Graph Regularized Nonnegative Matrix Factorization for Data
// Representation", IEEE TPAMI 33(8), 2011, §3.2, with λ = α; its V update
// here is the multiplicative one,
//
//	V ← V ⊙ ((X ⊘ UVᵀ)ᵀU + 2αSV) / (1 1ᵀU + 2αDV),
//
// rather than Cai's per-column linear solve. It is not covered by Lee and
// Seung's proof as it stands: with their auxiliary function for D and the
// bound −ab ≤ −a₀b₀(1 + log(ab/(a₀b₀))) for the graph's off-diagonal part,
// an entry multiplied by s = neg/pos changes the auxiliary function by
// v·[P₁(s − 1 − s log s) + P₂(s²/2 − 1/2 − s log s)], P₁ = ½(1ᵀU)_k and
// P₂ = α(DV)_jk the two shares of pos. The first part is never positive
// and the second is not when s ≤ 1, so the objective cannot grow through
// entries that shrink, nor through growing ones while P₁(s log s − s + 1)
// ≥ P₂(s²/2 − 1/2 − s log s) (second order in s − 1 on the left, third on
// the right). The tests check the objective on seeded problems up to
// α = 1000, and the engine stops a run that diverges.
//
// The divergence scales as D(cX‖cY) = c·D(X‖Y) where the Frobenius loss
// scales by c², so a graph weight tuned for one loss is not the weight for
// the other.
//
// Only the entries of UVᵀ at X's non-zeros are computed for sparse X
// (O(nnz·K) per gradient, never the dense N×D product): the zeros of X
// contribute (UVᵀ)_ij to the divergence, and Σ_ij (UVᵀ)_ij = Σ_k (Σ_i u_ik)
// (Σ_j v_jk). For dense X, UVᵀ is formed (N×D, the size of X) by one
// matrix product. (UVᵀ)_ij is floored at eps where x_ij > 0, so that the
// ratios stay finite when U and V have zeros.
//
// A KL is not safe for concurrent use; it keeps workspaces between calls.
type KL struct {
	// X is the data. It must be set and must not change while the loss is
	// in use (the transpose of sparse X is cached).
	X Data

	xt         *sparse.CSR // Xᵀ (D×N) of sparse X, built on first use
	y          mat.Dense   // dense X: UVᵀ stored as N×D (VUᵀ), then X ⊘ that
	sums       []float64   // column sums of U or V (K)
	split      func(n int, body func(lo, hi int))
	rowU, rowV mat.Dense // gathered rows for VGradRowsTo
}

var _ RowsLoss = (*KL)(nil)

// NewKL returns the generalized KL divergence loss on x.
func NewKL(x Data) *KL { return &KL{X: x} }

func (l *KL) setSplit(split func(n int, body func(lo, hi int))) { l.split = split }

// Dims returns D and N of X.
func (l *KL) Dims() (d, n int) { return l.X.Dims() }

// colSums stores ½·(column sums of w) into l.sums and returns it.
func (l *KL) colSums(w *mat.Dense) []float64 {
	r, k := w.Dims()
	if cap(l.sums) < k {
		l.sums = make([]float64, k)
	}
	s := l.sums[:k]
	clear(s)
	raw := w.RawMatrix()
	for i := 0; i < r; i++ {
		for c, x := range raw.Data[i*raw.Stride : i*raw.Stride+k] {
			s[c] += x
		}
	}
	for c := range s {
		s[c] *= 0.5
	}
	return s
}

// fillRows sets every row of dst (r×k, allocated if empty) to s.
func fillRows(dst *mat.Dense, r int, s []float64) {
	if dst.IsEmpty() {
		dst.ReuseAs(r, len(s))
	}
	raw := dst.RawMatrix()
	for i := 0; i < r; i++ {
		copy(raw.Data[i*raw.Stride:i*raw.Stride+len(s)], s)
	}
}

// transposed returns Xᵀ (D×N) of sparse X, built once.
func (l *KL) transposed(x *sparse.CSR) *sparse.CSR {
	if l.xt == nil {
		l.xt = transposeCSR(x)
	}
	return l.xt
}

// transposeCSR returns the transpose of x as a new CSR (counting sort:
// the column indices of every row come out increasing).
func transposeCSR(x *sparse.CSR) *sparse.CSR {
	r, c := x.Dims()
	indptr := make([]int, c+1)
	for _, j := range x.Ind {
		indptr[j+1]++
	}
	for j := 0; j < c; j++ {
		indptr[j+1] += indptr[j]
	}
	next := append([]int(nil), indptr[:c]...)
	ind := make([]int, len(x.Ind))
	val := make([]float64, len(x.Ind))
	for i := 0; i < r; i++ {
		ri, rv := x.Row(i)
		for p, j := range ri {
			q := next[j]
			ind[q], val[q] = i, rv[p]
			next[j]++
		}
	}
	return sparse.NewCSR(c, r, indptr, ind, val)
}

// ratioRowsTo adds ½ Σ_p (x_p / max(a_i·b_{ind_p}, eps)) b_{ind_p} into row
// i of dst for the rows i in [lo, hi) of the sparse matrix m (rows of m
// index rows of a, its columns rows of b): the negative gradient part of
// the factor a, for m = X (a = V, b = U) or m = Xᵀ (a = U, b = V).
func ratioRowsTo(dst *mat.Dense, m *sparse.CSR, a, b *mat.Dense, lo, hi int) {
	ar, br, dr := a.RawMatrix(), b.RawMatrix(), dst.RawMatrix()
	k := ar.Cols
	for i := lo; i < hi; i++ {
		out := dr.Data[i*dr.Stride : i*dr.Stride+k]
		clear(out)
		ai := ar.Data[i*ar.Stride : i*ar.Stride+k]
		ind, val := m.Row(i)
		for p, j := range ind {
			bj := br.Data[j*br.Stride : j*br.Stride+k]
			vec.Axpy(0.5*val[p]/max(dotK(ai, bj), eps), bj, out)
		}
	}
}

// ratioTo stores, for dense X, X ⊘ max(UVᵀ, eps) as N×D into l.y (zero
// where X is zero), computed row block by row block.
func (l *KL) ratioTo(x, u, v *mat.Dense) {
	n, d := x.Dims()
	y := reuse(&l.y, n, d)
	if y.IsEmpty() {
		y.ReuseAs(n, d)
	}
	inParts(l.split, n, func(lo, hi int) {
		yb := rowsOf(y, lo, hi)
		yb.Mul(rowsOf(v, lo, hi), u.T())
		xr, yr := rowsOf(x, lo, hi).RawMatrix(), yb.RawMatrix()
		for i := 0; i < hi-lo; i++ {
			xi := xr.Data[i*xr.Stride : i*xr.Stride+d]
			yi := yr.Data[i*yr.Stride : i*yr.Stride+d]
			for j, xv := range xi {
				if xv == 0 {
					yi[j] = 0
				} else {
					yi[j] = xv / max(yi[j], eps)
				}
			}
		}
	})
}

// UGradTo stores ½(X ⊘ UVᵀ)V into neg and ½·1 1ᵀV into pos (both D×K).
func (l *KL) UGradTo(neg, pos, u, v *mat.Dense) {
	d, _ := l.X.Dims()
	_, k := u.Dims()
	if neg.IsEmpty() {
		neg.ReuseAs(d, k)
	}
	switch x := Rows(l.X).(type) {
	case *sparse.CSR:
		xt := l.transposed(x)
		inParts(l.split, d, func(lo, hi int) { ratioRowsTo(neg, xt, u, v, lo, hi) })
	case *mat.Dense:
		l.ratioTo(x, u, v)
		neg.Mul(l.y.T(), v)
		neg.Scale(0.5, neg)
	default:
		panic(fmt.Sprintf("model: KL on unsupported data %T", l.X))
	}
	fillRows(pos, d, l.colSums(v))
}

// VGradTo stores ½(X ⊘ UVᵀ)ᵀU into neg and ½·1 1ᵀU into pos (both N×K).
func (l *KL) VGradTo(neg, pos, u, v *mat.Dense) {
	_, n := l.X.Dims()
	_, k := u.Dims()
	if neg.IsEmpty() {
		neg.ReuseAs(n, k)
	}
	switch x := Rows(l.X).(type) {
	case *sparse.CSR:
		inParts(l.split, n, func(lo, hi int) { ratioRowsTo(neg, x, v, u, lo, hi) })
	case *mat.Dense:
		l.ratioTo(x, u, v)
		inParts(l.split, n, func(lo, hi int) {
			nb := rowsOf(neg, lo, hi)
			nb.Mul(rowsOf(&l.y, lo, hi), u)
			nb.Scale(0.5, nb)
		})
	default:
		panic(fmt.Sprintf("model: KL on unsupported data %T", l.X))
	}
	fillRows(pos, n, l.colSums(u))
}

// VGradRowsTo stores the gradient parts of the given rows of V into the
// same rows of neg and pos (N×K, allocated), leaving other rows untouched.
func (l *KL) VGradRowsTo(neg, pos, u, v *mat.Dense, rows []int) {
	_, n := l.X.Dims()
	if nr, _ := neg.Dims(); nr != n {
		panic(mat.ErrShape)
	}
	if len(rows) == 0 {
		return
	}
	s := l.colSums(u)
	switch x := Rows(l.X).(type) {
	case *sparse.CSR:
		for _, i := range rows {
			ratioRowsTo(neg, x, v, u, i, i+1)
			copy(pos.RawRowView(i), s)
		}
	case *mat.Dense:
		k := len(s)
		ur := u.RawMatrix()
		for _, i := range rows {
			vi := v.RawRowView(i)
			xi := x.RawRowView(i)
			out := neg.RawRowView(i)
			clear(out)
			for j, xv := range xi {
				if xv == 0 {
					continue
				}
				uj := ur.Data[j*ur.Stride : j*ur.Stride+k]
				vec.Axpy(0.5*xv/max(dotK(uj, vi), eps), uj, out)
			}
			copy(pos.RawRowView(i), s)
		}
	default:
		panic(fmt.Sprintf("model: KL on unsupported data %T", l.X))
	}
}

// Value returns D(X‖UVᵀ), with (UVᵀ)_ij floored at eps where x_ij > 0 (as
// in the gradients).
func (l *KL) Value(u, v *mat.Dense) float64 {
	_, k := u.Dims()
	su := make([]float64, k)
	sv := make([]float64, k)
	colSumsTo(su, u)
	colSumsTo(sv, v)
	var f float64 // Σ_ij (UVᵀ)_ij − x_ij + x_ij log(x_ij/(UVᵀ)_ij)
	for c := range su {
		f += su[c] * sv[c]
	}
	term := func(x, y float64) float64 { return x*math.Log(x/max(y, eps)) - x }
	switch x := Rows(l.X).(type) {
	case *sparse.CSR:
		n, _ := x.Dims()
		ur, vr := u.RawMatrix(), v.RawMatrix()
		for i := 0; i < n; i++ {
			vi := vr.Data[i*vr.Stride : i*vr.Stride+k]
			ind, val := x.Row(i)
			for p, j := range ind {
				if val[p] == 0 {
					continue
				}
				f += term(val[p], dotK(ur.Data[j*ur.Stride:j*ur.Stride+k], vi))
			}
		}
	case *mat.Dense:
		n, d := x.Dims()
		// One row of VUᵀ at a time: Value is called once per iteration,
		// and a row keeps it from holding a second N×D matrix.
		row := mat.NewDense(1, d, nil)
		for i := 0; i < n; i++ {
			row.Mul(v.Slice(i, i+1, 0, k), u.T())
			yi := row.RawRowView(0)
			for j, xv := range x.RawRowView(i) {
				if xv != 0 {
					f += term(xv, yi[j])
				}
			}
		}
	default:
		panic(fmt.Sprintf("model: KL on unsupported data %T", l.X))
	}
	return f
}

// dotK returns Σ a_c b_c over a's length (b at least as long): one entry
// of UVᵀ. Four partial sums keep the adds independent.
func dotK(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	c := 0
	for ; c+4 <= len(a); c += 4 {
		s0 += a[c] * b[c]
		s1 += a[c+1] * b[c+1]
		s2 += a[c+2] * b[c+2]
		s3 += a[c+3] * b[c+3]
	}
	for ; c < len(a); c++ {
		s0 += a[c] * b[c]
	}
	return (s0 + s1) + (s2 + s3)
}

// colSumsTo stores the column sums of w into dst.
func colSumsTo(dst []float64, w *mat.Dense) {
	clear(dst)
	raw := w.RawMatrix()
	for i := 0; i < raw.Rows; i++ {
		for c, x := range raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols] {
			dst[c] += x
		}
	}
}
