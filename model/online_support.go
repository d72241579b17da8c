package model

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/sparse"
)

// The rows of U that are zero stay zero: a multiplicative U step sets
// u_i ← u_i ⊙ neg_i / max(pos_i, eps), and the terms' U parts (frozenUTerm)
// scale a row by itself, so 0 stays 0 whatever B and A hold; normalizing
// scales it. On sparse data (documents, D = 10⁴–10⁶ columns) most of U is
// such rows, the columns no sample of the first fit had: the first fit's
// first update zeroes them (B = XV has a zero row there). The U step, the
// normalization and the sweeps' UᵀU then run on the other rows only
// (Online.usupp), O(r·K²) instead of O(D·K²) per step. Each row's result
// is the one the whole matrix gives: U·A and the update are row by row, and
// the sums over rows (UᵀU, the column norms) add the same nonzero terms in
// the same order, the zero rows' +0 left out (on internal/gemm's kernels;
// BLAS may block the sums differently).

// supportMaxShare is the share of U's rows in use below which the U step
// runs on those rows only; above it, the whole of U (a gather and a
// scatter of r×K would cost more than the zero rows do). A variable for the
// tests.
var supportMaxShare = 0.5

// findSupport sets o.usupp to the rows of U with a nonzero entry, or nil
// when they are more than supportMaxShare of the rows (or none: a zero U).
// It costs O(D·K): the first fit, Restore and Refit call it, each after
// setting the whole B (o.b), which it moves to bc when there is a support
// (keepStatsRows); the steps keep the set, a superset of U's support ever
// after (rows only leave it).
func (o *Online) findSupport() {
	defer o.supportPos()
	o.ucOK = false
	o.usupp = o.usupp[:0]
	d, _ := o.u.Dims()
	for i := range d {
		for _, x := range o.u.RawRowView(i) {
			if x != 0 {
				o.usupp = append(o.usupp, i)
				break
			}
		}
	}
	if len(o.usupp) == 0 || float64(len(o.usupp)) > supportMaxShare*float64(d) {
		o.usupp = nil
		return
	}
	o.keepStatsRows()
}

// keepStatsRows moves B (o.b, D×K, just computed or restored) to bc, its
// rows of U's support in the support's order, and drops o.b: the
// statistics then keep and update those rows only (statsRows). The U step
// reads no other row of B (a zero row of U stays zero whatever its row of
// B), so U and V are the same bits as with every row kept; on documents
// it spares the statistics' updates, their scaling and 8·D·K bytes the
// columns no sample of the first fit had (most of the 2¹⁶ hashed ones).
func (o *Online) keepStatsRows() {
	if o.usupp == nil || o.b.IsEmpty() {
		return
	}
	gatherRowsTo(&o.bc, &o.b, o.usupp)
	o.b = mat.Dense{}
}

// statsRows returns the matrix that holds B's kept rows and, when they are
// U's support's (bc), each column's row there (o.upos: −1 for a column
// whose row is not kept); else B itself and nil.
func (o *Online) statsRows() (*mat.Dense, []int) {
	if o.usupp != nil {
		return &o.bc, o.upos
	}
	return &o.b, nil
}

// fullB returns B (D×K): o.b = XV, or a new matrix with bc's rows (XV's)
// on U's support and zeros on U's other rows, which the statistics do not
// keep.
func (o *Online) fullB() *mat.Dense {
	if o.usupp == nil {
		return &o.b
	}
	_, k := o.bc.Dims()
	b := mat.NewDense(o.dim, k, nil)
	scatterRows(b, &o.bc, o.usupp)
	return b
}

// gatherRowsTo sets dst (len(rows)×K) to the given rows of m.
func gatherRowsTo(dst, m *mat.Dense, rows []int) {
	_, k := m.Dims()
	if r, c := dst.Dims(); dst.IsEmpty() || r != len(rows) || c != k {
		dst.Reset()
		dst.ReuseAs(len(rows), k)
	}
	for p, i := range rows {
		copy(dst.RawRowView(p), m.RawRowView(i))
	}
}

// scatterRows sets the given rows of m to the rows of src, in order.
func scatterRows(m, src *mat.Dense, rows []int) {
	for p, i := range rows {
		copy(m.RawRowView(i), src.RawRowView(p))
	}
}

// supportPos sets o.upos, the position of each row of U in o.usupp (−1
// outside it), when there is a support.
func (o *Online) supportPos() {
	if o.usupp == nil {
		o.upos = nil
		return
	}
	o.upos = make([]int, o.dim)
	for i := range o.upos {
		o.upos[i] = -1
	}
	for p, i := range o.usupp {
		o.upos[i] = p
	}
}

// supportCols returns the columns of the batch's rows (Rows of its Data)
// in U's support (o.usupp), in order: x·U then equals the result on the
// support's rows of U bit for bit (the other columns meet zero rows, +0 in
// every sum), so the new samples' projection runs on those rows only.
func (o *Online) supportCols(rows mat.Matrix) Data {
	switch r := rows.(type) {
	case *sparse.CSR:
		n, _ := r.Dims()
		// At most r's entries: sized once, not grown row by row.
		indptr := make([]int, 1, n+1)
		ind := make([]int, 0, r.NNZ())
		val := make([]float64, 0, r.NNZ())
		for i := range n {
			ri, rv := r.Row(i)
			for p, c := range ri {
				if q := o.upos[c]; q >= 0 {
					ind, val = append(ind, q), append(val, rv[p])
				}
			}
			indptr = append(indptr, len(ind))
		}
		return SparseRows(sparse.NewCSR(n, len(o.usupp), indptr, ind, val))
	case *mat.Dense:
		n, _ := r.Dims()
		m := mat.NewDense(n, len(o.usupp), nil)
		for i := range n {
			row, dst := r.RawRowView(i), m.RawRowView(i)
			for p, c := range o.usupp {
				dst[p] = row[c]
			}
		}
		return DenseRows(m)
	}
	panic(fmt.Sprintf("model: online: supportCols of %T", rows)) // PartialFit admits only these two
}
