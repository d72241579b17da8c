package model

import (
	"fmt"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/gemm"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// Frobenius is the loss ‖X − UVᵀ‖²_F on data X (dense or sparse).
//
// Its gradient parts are XV and U(VᵀV) for U, XᵀU and V(UᵀU) for V. Its value
// is computed as ‖X‖² − 2 tr(VᵀXᵀU) + tr((UᵀU)(VᵀV)), reusing XᵀU from the
// V update, so an iteration costs two products with X.
type Frobenius struct {
	// X is the data. It must be set.
	X Data
	// FixedU tells VGradRowsTo that U does not change between its calls
	// (an Engine run with FixU, such as an online sweep), so that it
	// computes x_iᵀU and UᵀU once and reuses them while the rows are the
	// same.
	FixedU bool
	// Float32 runs the two products with dense X, XV and XᵀU, in float32
	// on the gemm kernels where they serve (gemm.Serves32): X is copied
	// once to float32, row-major and transposed (half its float64 size
	// each), U and V are rounded to float32 for each product, and the
	// products' entries, summed in float32, come back as float64 (relative
	// error about 1e-6 against the float64 products, to which the updates
	// are insensitive: TestFloat32Fit). Everything else, the small products,
	// the updates and the objective, stays float64. Row-restricted (online)
	// updates ignore it. Sparse X ignores it.
	Float32 bool

	xtu, utu, vtv mat.Dense // cached products of the last VGradTo
	xtuT          bool      // xtu holds (XᵀU)ᵀ (K×N) instead of XᵀU
	ut, kd        mat.Dense // Uᵀ (K×D) and VᵀX (K×D) for dense X
	blk, out      mat.Dense // gathered rows for VGradRowsTo
	outRows       []int     // rows that out holds, when FixedU
	vblk, pblk    mat.Dense // gathered rows of V and of V(UᵀU)

	split              func(n int, body func(lo, hi int)) // see Engine.Split
	kdParts, gramParts []mat.Dense                        // row chunks' VᵀX (or XᵀV) and VᵀV under split

	// With the gemm kernels (see fastDense): U and UᵀU packed for x·U
	// and V(UᵀU), and one workspace per row chunk for xᵀ·V and VᵀV.
	upk, gpk   gemm.Packed
	xtv, vtvWS [splitChunks]gemm.Workspace
	utuWS      gemm.Workspace

	f32 frob32 // the float32 copies and scratch, with Float32
}

// useGemm reports whether the gemm kernels serve the products with X and
// V better than BLAS (gemm.Serves64, in parts under Split).
func (l *Frobenius) useGemm() bool { return gemm.Serves64(l.split != nil) }

// mulTo sets dst = a·b, for a of n×d and b of d×k, serially, by the
// product backend (gemm.MulTo). dst must not share storage with a or b.
func mulTo(dst, a *mat.Dense, b mat.Matrix) { gemm.MulTo(dst, a, b, false) }

// mulTransTo sets dst = aᵀb, for a of n×p and b of n×q, serially, by the
// product backend (gemm.MulTransTo).
func mulTransTo(dst, a, b *mat.Dense, ws *gemm.Workspace) { gemm.MulTransTo(dst, a, b, ws, false) }

// fastDense returns the rows of X when they are dense and useGemm holds.
func (l *Frobenius) fastDense() (*mat.Dense, bool) {
	if !l.useGemm() {
		return nil, false
	}
	x, ok := Rows(l.X).(*mat.Dense)
	return x, ok
}

func (l *Frobenius) setSplit(split func(n int, body func(lo, hi int))) { l.split = split }

// chunkSumsTo stores aᵀb into dst as the sum, in order, of chunksOf(n)
// products over row chunks, computed in parts by l.split: through the
// gemm kernels where they serve (each chunk with its workspace in ws),
// else BLAS.
func (l *Frobenius) chunkSumsTo(dst *mat.Dense, parts *[]mat.Dense, a, b *mat.Dense, ws *[splitChunks]gemm.Workspace) {
	n, r := a.Dims()
	_, c := b.Dims()
	if len(*parts) < splitChunks {
		*parts = make([]mat.Dense, splitChunks)
	}
	nc := chunksOf(n)
	par := l.split != nil
	if nc == 1 {
		gemm.MulTransTo(reuse(dst, r, c), a, b, &ws[0], par)
		return
	}
	ps := (*parts)[:nc]
	inParts(l.split, nc, func(lo, hi int) {
		for ch := lo; ch < hi; ch++ {
			p := reuse(&ps[ch], r, c)
			r0, r1 := chunk(ch, nc, n)
			if r0 == r1 {
				if p.IsEmpty() {
					p.ReuseAs(r, c)
				}
				p.Zero()
				continue
			}
			gemm.MulTransTo(p, rowsOf(a, r0, r1), rowsOf(b, r0, r1), &ws[ch], par)
		}
	})
	if reuse(dst, r, c).IsEmpty() {
		dst.ReuseAs(r, c)
	}
	sumChunksTo(dst, ps)
}

var (
	_ FastLoss = (*Frobenius)(nil)
	_ RowsLoss = (*Frobenius)(nil)
)

// NewFrobenius returns the Frobenius loss on x.
func NewFrobenius(x Data) *Frobenius { return &Frobenius{X: x} }

// Dims returns D and N of X.
func (l *Frobenius) Dims() (d, n int) { return l.X.Dims() }

// UGradTo stores XV into neg and U(VᵀV) into pos.
func (l *Frobenius) UGradTo(neg, pos, u, v *mat.Dense) {
	_, k := v.Dims()
	if x, ok := l.fast32(); ok {
		l.xv32To(neg, x, v)
	} else if x, ok := l.fastDense(); ok {
		if l.split != nil {
			l.chunkSumsTo(neg, &l.kdParts, x, v, &l.xtv)
		} else {
			gemm.MulTransTo(neg, x, v, &l.xtv[0], false)
		}
	} else if x, ok := Rows(l.X).(*mat.Dense); ok {
		// (XV)ᵀ = VᵀX as a K×D product: BLAS (OpenBLAS above all) runs
		// the N·D·K product about twice as fast with K as the row count
		// of the row-major result as with D×K.
		_, d := x.Dims()
		kd := reuse(&l.kd, k, d)
		if l.split != nil {
			l.chunkSumsTo(kd, &l.kdParts, v, x, &l.xtv)
		} else {
			kd.Mul(v.T(), x)
		}
		if neg.IsEmpty() {
			neg.ReuseAs(d, k)
		}
		transposeTo(neg, kd)
	} else {
		l.X.MulTo(neg, v)
	}
	l.vtvTo(v)
	// The small products too go through gemm under Split, so that a split
	// iteration makes no BLAS call (with OpenBLAS, its pool's threads
	// would otherwise wake beside the parts).
	gemm.MulTo(pos, u, &l.vtv, l.split != nil)
}

// vtvTo stores VᵀV into l.vtv: in row chunks under split, through the
// gemm kernels where they serve.
func (l *Frobenius) vtvTo(v *mat.Dense) {
	if l.split != nil {
		l.chunkSumsTo(&l.vtv, &l.gramParts, v, v, &l.vtvWS)
	} else {
		mulTransTo(&l.vtv, v, v, &l.vtvWS[0])
	}
}

// VGradTo stores XᵀU into neg and V(UᵀU) into pos.
func (l *Frobenius) VGradTo(neg, pos, u, v *mat.Dense) {
	_, k := u.Dims()
	_, n := l.X.Dims()
	if neg.IsEmpty() {
		neg.ReuseAs(n, k)
	}
	if pos.IsEmpty() {
		pos.ReuseAs(n, k)
	}
	dense := l.xtuTo(u)
	if !dense {
		l.X.TMulTo(neg, u)
		r, c := neg.Dims()
		if x := reuse(&l.xtu, r, c); x.IsEmpty() {
			x.CloneFrom(neg)
		} else {
			x.Copy(neg)
		}
	}
	gemm.MulTransTo(&l.utu, u, u, &l.utuWS, l.split != nil)
	fast := l.useGemm()
	if fast {
		l.gpk.Pack(l.utu.RawMatrix())
	}
	inParts(l.split, n, func(lo, hi int) {
		switch {
		case dense && l.xtuT:
			transposeTo(rowsOf(neg, lo, hi), l.xtu.Slice(0, k, lo, hi).(*mat.Dense))
		case dense:
			rowsOf(neg, lo, hi).Copy(rowsOf(&l.xtu, lo, hi))
		}
		if fast {
			gemm.MulPacked(rowsOf(pos, lo, hi).RawMatrix(), rowsOf(v, lo, hi).RawMatrix(), &l.gpk)
		} else {
			rowsOf(pos, lo, hi).Mul(rowsOf(v, lo, hi), &l.utu)
		}
	})
}

// xtuTo stores XᵀU into l.xtu when X is dense and reports whether it did;
// other data are left to the caller. With the gemm kernels it is x·U
// (N×K, l.xtuT false). With BLAS it is (XᵀU)ᵀ = UᵀXᵀ (K×N, l.xtuT true):
// as in UGradTo, K is the row count of the result, the shape BLAS runs
// fastest; Uᵀ is copied to K×D first so that both operands are read
// row-major.
func (l *Frobenius) xtuTo(u *mat.Dense) bool {
	x, ok := Rows(l.X).(*mat.Dense)
	if !ok {
		l.xtuT = false
		return false
	}
	if x32, ok := l.fast32(); ok {
		l.xtu32To(x32, u)
		return true
	}
	n, d := x.Dims()
	_, k := u.Dims()
	if _, fast := l.fastDense(); fast {
		l.upk.Pack(u.RawMatrix())
		xtu := reuse(&l.xtu, n, k)
		if xtu.IsEmpty() {
			xtu.ReuseAs(n, k)
		}
		inParts(l.split, n, func(lo, hi int) {
			gemm.MulPacked(rowsOf(xtu, lo, hi).RawMatrix(), rowsOf(x, lo, hi).RawMatrix(), &l.upk)
		})
		l.xtuT = false
		return true
	}
	ut := reuse(&l.ut, k, d)
	if ut.IsEmpty() {
		ut.ReuseAs(k, d)
	}
	transposeTo(ut, u)
	xtu := reuse(&l.xtu, k, n)
	if l.split == nil {
		xtu.Mul(ut, x.T())
	} else {
		if xtu.IsEmpty() {
			xtu.ReuseAs(k, n)
		}
		l.split(n, func(lo, hi int) {
			xtu.Slice(0, k, lo, hi).(*mat.Dense).Mul(ut, rowsOf(x, lo, hi).T())
		})
	}
	l.xtuT = true
	return true
}

// Value returns ‖X − UVᵀ‖²_F.
func (l *Frobenius) Value(u, v *mat.Dense) float64 {
	_, n := l.X.Dims()
	_, k := u.Dims()
	if !l.xtuTo(u) {
		l.X.TMulTo(reuse(&l.xtu, n, k), u)
	}
	gemm.MulTransTo(&l.utu, u, u, &l.utuWS, l.split != nil)
	return l.LastValue(v)
}

// transposeTo stores srcᵀ into dst, which must have the transposed shape.
func transposeTo(dst, src *mat.Dense) {
	sr, dr := src.RawMatrix(), dst.RawMatrix()
	if sr.Rows != dr.Cols || sr.Cols != dr.Rows {
		panic(mat.ErrShape)
	}
	// Blocks of 32 source columns keep the 32 destination rows being
	// written, and the source rows being read, in cache.
	const blk = 32
	for j0 := 0; j0 < sr.Cols; j0 += blk {
		j1 := min(j0+blk, sr.Cols)
		for i := 0; i < sr.Rows; i++ {
			row := sr.Data[i*sr.Stride+j0 : i*sr.Stride+j1]
			for j, x := range row {
				dr.Data[(j0+j)*dr.Stride+i] = x
			}
		}
	}
}

// reuse returns m ready to receive an r×c result: kept if it already has
// that shape (no allocation on the hot path), emptied otherwise.
func reuse(m *mat.Dense, r, c int) *mat.Dense {
	if mr, mc := m.Dims(); m.IsEmpty() || mr != r || mc != c {
		m.Reset()
	}
	return m
}

// LastValue returns ‖X − UVᵀ‖²_F using XᵀU and UᵀU from the last VGradTo.
func (l *Frobenius) LastValue(v *mat.Dense) float64 {
	l.vtvTo(v)
	var vxu float64 // tr(VᵀXᵀU)
	if l.xtuT {
		vxu = innerT(v, &l.xtu)
	} else {
		vxu = inner(v, &l.xtu)
	}
	f := l.X.SqNorm() - 2*vxu + inner(&l.utu, &l.vtv)
	if f < 0 { // rounding on a near-exact fit
		f = 0
	}
	return f
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

// innerT returns Σ_ij a_ij b_ji for a (r×c) and b (c×r).
func innerT(a, b *mat.Dense) float64 {
	ar, br := a.RawMatrix(), b.RawMatrix()
	if ar.Rows != br.Cols || ar.Cols != br.Rows {
		panic(mat.ErrShape)
	}
	var s float64
	const blk = 256 // rows of a per block: a's block stays in cache across b's rows
	for i0 := 0; i0 < ar.Rows; i0 += blk {
		i1 := min(i0+blk, ar.Rows)
		for j := 0; j < ar.Cols; j++ {
			y := br.Data[j*br.Stride+i0 : j*br.Stride+i1]
			for i, w := range y {
				s += ar.Data[(i0+i)*ar.Stride+j] * w
			}
		}
	}
	return s
}

// VGradRowsTo stores x_iᵀU into row i of neg and v_i(UᵀU) into row i of
// pos for the given rows i, gathering those samples into one product.
func (l *Frobenius) VGradRowsTo(neg, pos, u, v *mat.Dense, rows []int) {
	d, n := l.X.Dims()
	_, k := u.Dims()
	if nr, _ := neg.Dims(); nr != n {
		panic(mat.ErrShape)
	}
	if len(rows) == 0 {
		return
	}
	if !l.FixedU || !slices.Equal(rows, l.outRows) {
		l.utu.Reset()
		l.utu.Mul(u.T(), u)
		l.rowProducts(u, rows, d, k)
		if l.FixedU {
			l.outRows = append(l.outRows[:0], rows...)
		}
	}
	// pos rows = v_i(UᵀU): gather the rows and make it one product.
	l.vblk.Reset()
	l.vblk.ReuseAs(len(rows), k)
	for r, i := range rows {
		copy(l.vblk.RawRowView(r), v.RawRowView(i))
	}
	l.pblk.Reset()
	mulTo(&l.pblk, &l.vblk, &l.utu)
	for r, i := range rows {
		copy(neg.RawRowView(i), l.out.RawRowView(r))
		copy(pos.RawRowView(i), l.pblk.RawRowView(r))
	}
}

// rowProducts stores x_iᵀU for the given rows into l.out.
func (l *Frobenius) rowProducts(u *mat.Dense, rows []int, d, k int) {
	l.out.Reset()
	l.out.ReuseAs(len(rows), k)
	switch x := Rows(l.X).(type) {
	case *mat.Dense:
		l.blk.Reset()
		l.blk.ReuseAs(len(rows), d)
		for r, i := range rows {
			copy(l.blk.RawRowView(r), x.RawRowView(i))
		}
		gemm.MulTo(&l.out, &l.blk, u, l.split != nil)
	case *sparse.CSR:
		ur := u.RawMatrix()
		for r, i := range rows {
			o := l.out.RawRowView(r)
			for j := range o {
				o[j] = 0
			}
			ind, val := x.Row(i)
			for p, c := range ind {
				for j, uv := range ur.Data[c*ur.Stride : c*ur.Stride+k] {
					o[j] += val[p] * uv
				}
			}
		}
	default:
		panic(fmt.Sprintf("model: VGradRowsTo on unsupported data %T", l.X))
	}
}
