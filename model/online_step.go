package model

import (
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/sparse"
)

// sweep is the workspace of one online step's row sweeps (see sweepRows).
type sweep struct {
	local []int32    // slot → position in the active rows, −1 if inactive
	v     mat.Dense  // R×K codes of the active rows
	ext   mat.Dense  // R×K: x_iᵀU + α Σ_{j inactive} s_ij v_j, fixed during the sweeps
	num   mat.Dense  // R×K numerators
	den   mat.Dense  // R×K denominators
	utu   mat.Dense  // K×K
	deg   []float64  // α·(row sums of S)
	inner sparse.CSR // R×R: α·s_ij between active rows
}

// sweepRows runs Sweeps multiplicative updates of GNMF's V rule on the
// given rows of V (ascending slots), with U and the other rows fixed:
//
//	v_i ← v_i ⊙ (x_iᵀU + α (SV)_i) / (v_i UᵀU + α d_i v_i),
//
// all rows at once per sweep, as Engine does with Rows. The rows are
// gathered into compact R×K matrices first: the products with inactive
// neighbours do not change during the sweeps and are summed once, so each
// sweep reads only the active rows, in cache, instead of R random rows of
// the N×K codes per neighbour (about 4× faster at R = 2,000, N = 20,000).
func (o *Online) sweepRows(rows []int, s *sparse.CSR) {
	w := &o.sw
	k, r := o.Rank, len(rows)
	alpha := o.alpha()
	if len(w.local) < o.height {
		w.local = make([]int32, o.height)
		for i := range w.local {
			w.local[i] = -1
		}
	}
	for p, id := range rows {
		w.local[id] = int32(p)
	}
	defer func() {
		for _, id := range rows {
			w.local[id] = -1
		}
	}()
	for _, m := range []*mat.Dense{&w.v, &w.ext, &w.num, &w.den} {
		m.Reset()
		m.ReuseAs(r, k)
	}
	for p, id := range rows {
		copy(w.v.RawRowView(p), o.v.RawRowView(id))
	}
	o.rowProductsTo(&w.ext, rows)
	w.utu.Reset()
	w.utu.Mul(o.u.T(), &o.u)

	// Split each row of αS into its active part (w.inner) and the constant
	// sum over inactive neighbours (into ext), with the degrees.
	w.deg = slices.Grow(w.deg[:0], r)[:r]
	ind := w.inner.Indptr[:0]
	ind = append(ind, 0)
	cols, vals := w.inner.Ind[:0], w.inner.Val[:0]
	vr := o.v.RawMatrix()
	for p, id := range rows {
		e := w.ext.RawRowView(p)
		js, ss := s.Row(id)
		var d float64
		for q, j := range js {
			a := alpha * ss[q]
			d += a
			if l := w.local[j]; l >= 0 {
				cols = append(cols, int(l))
				vals = append(vals, a)
				continue
			}
			for c, x := range vr.Data[j*vr.Stride : j*vr.Stride+k] {
				e[c] += a * x
			}
		}
		w.deg[p] = d
		ind = append(ind, len(cols))
	}
	w.inner = *sparse.NewCSR(r, r, ind, cols, vals)

	v, num, den := w.v.RawMatrix(), w.num.RawMatrix(), w.den.RawMatrix()
	for it := 0; it < o.sweeps(); it++ {
		w.den.Mul(&w.v, &w.utu)
		for p := 0; p < r; p++ {
			vp := v.Data[p*v.Stride : p*v.Stride+k]
			np := num.Data[p*num.Stride : p*num.Stride+k]
			dp := den.Data[p*den.Stride : p*den.Stride+k]
			copy(np, w.ext.RawRowView(p))
			js, as := w.inner.Row(p)
			for q, j := range js {
				a := as[q]
				for c, x := range v.Data[j*v.Stride : j*v.Stride+k] {
					np[c] += a * x
				}
			}
			d := w.deg[p]
			for c, x := range vp {
				dp[c] += d * x
			}
		}
		mulUpdate(&w.v, &w.num, &w.den, nil)
	}
	for p, id := range rows {
		copy(o.v.RawRowView(id), w.v.RawRowView(p))
	}
}

// rowProductsTo stores x_iᵀU for the given slots into dst (R×K).
func (o *Online) rowProductsTo(dst *mat.Dense, rows []int) {
	if o.sparse {
		ur := o.u.RawMatrix()
		for p, id := range rows {
			out := dst.RawRowView(p)
			clear(out)
			for q, c := range o.xsRows[id] {
				x := o.xsVals[id][q]
				for j, u := range ur.Data[c*ur.Stride : c*ur.Stride+o.Rank] {
					out[j] += x * u
				}
			}
		}
		return
	}
	o.xblk.Reset()
	o.xblk.ReuseAs(len(rows), o.dim)
	for p, id := range rows {
		copy(o.xblk.RawRowView(p), o.xd.RawRowView(id))
	}
	o.xblkRows = rows // updateStats reuses the gathered rows
	dst.Mul(&o.xblk, &o.u)
}
