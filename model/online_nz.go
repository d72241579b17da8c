package model

import (
	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/gemm"
)

// The step's two products with its gathered dense rows, x·U for the sweeps
// (sweepRows) and xᵀ·ΔV for the statistics (updateStats), run through the
// rows' nonzeros (gemm.RowNZ) where the dense kernels would have run them:
// the same chains of fused multiply-adds less the terms of zero entries,
// so the same bits (internal/gemm/nz.go), in about half the time on
// MNIST's rows, a fifth of whose pixels are nonzero. Each slot's nonzeros
// are listed once, when a step first reads its row after a sample was
// stored in it.

// stepNonzeros says whether the step's dense products run through the
// rows' nonzeros. A variable for the tests, which compare both ways.
var stepNonzeros = true

// maxNonzeroShare is the largest share of nonzero entries among the
// stream's stored dense rows at which the step's products run through the
// nonzeros: denser rows would gain little time and their lists, 12 bytes a
// nonzero, would add up to one and a half times the window's own memory.
const maxNonzeroShare = 0.5

// nzRows holds the nonzeros of the window's dense rows by slot, and the
// workspace of the products through them.
type nzRows struct {
	idx [][]int32   // by slot: the positions of its row's nonzeros, ascending
	val [][]float64 // by slot: their values
	ok  []bool      // by slot: idx and val list its current row
	// xᵀ·ΔV's workspace: the step's rows by column (column t's rows, as
	// positions in the step, at cidx[cptr[t]:cptr[t+1]], ascending).
	cptr []int
	cidx []int32
	cval []float64
	at   []int // byColumns's counts and places of its runs

	// entries and nonzeros count the entries, and the nonzero ones, of
	// every dense row stored so far.
	entries, nonzeros int64
}

// nzServes reports whether a step's dense product over r gathered rows
// runs through the nonzeros: when the dense product would run through the
// kernels (gemm.Serves64, serially or in parts as stepSplit says), whose
// bits RowNZ repeats.
func (o *Online) nzServes(r int) bool {
	z := &o.nz
	return stepNonzeros && !o.sparse && float64(z.nonzeros) <= maxNonzeroShare*float64(z.entries) &&
		gemm.Serves64(o.stepSplit(r) != nil)
}

// dropNonzeros marks the listed slots' nonzeros stale (new rows stored)
// and counts their entries.
func (o *Online) dropNonzeros(ids []int) {
	for _, id := range ids {
		if id < len(o.nz.ok) {
			o.nz.ok[id] = false
		}
	}
	o.countNonzeros(ids)
}

// countNonzeros adds the entries of the listed slots' dense rows, and the
// nonzero ones, to the stream's counts (nzRows.entries, nonzeros).
func (o *Online) countNonzeros(ids []int) {
	if o.sparse {
		return
	}
	z := &o.nz
	for _, id := range ids {
		row := o.xd.RawRowView(id)
		z.entries += int64(len(row))
		for _, x := range row {
			if x != 0 {
				z.nonzeros++
			}
		}
	}
}

// nonzeros lists the nonzeros of the slots' rows that are stale.
func (o *Online) nonzeros(rows []int) {
	z := &o.nz
	for len(z.ok) < o.height {
		z.ok, z.idx, z.val = append(z.ok, false), append(z.idx, nil), append(z.val, nil)
	}
	for _, id := range rows {
		if !z.ok[id] {
			z.idx[id], z.val[id] = gemm.Nonzeros(z.idx[id][:0], z.val[id][:0], o.xd.RawRowView(id))
			z.ok[id] = true
		}
	}
}

// mulRowsNZ sets dst (R×K) = x·u for the dense rows x of the given
// slots and u (D×K), in parts (stepSplit): mulRows's bits on the gathered
// rows (see above).
func (o *Online) mulRowsNZ(dst, u0 *mat.Dense, rows []int) {
	o.nonzeros(rows)
	_, k := u0.Dims()
	resizeDense(dst, len(rows), k)
	u := u0.RawMatrix()
	body := func(lo, hi int) {
		for p := lo; p < hi; p++ {
			id := rows[p]
			gemm.RowNZ(dst.RawRowView(p), o.nz.val[id], o.nz.idx[id], u.Data, u.Stride, k)
		}
	}
	if split := o.stepSplit(len(rows)); split != nil {
		split(len(rows), body)
	} else {
		body(0, len(rows))
	}
}

// mulTransNZ sets dst (D×K) = xᵀ·a for the dense rows x of the given
// slots and a (R×K), in parts over D (stepSplit): mulTransCols's bits on
// the gathered rows, each entry summed over the rows in increasing order
// (see above).
func (o *Online) mulTransNZ(dst, a *mat.Dense, rows []int) {
	o.nonzeros(rows)
	z, d := &o.nz, o.dim
	_, k := a.Dims()
	split := o.stepSplit(len(rows))
	z.byColumns(rows, d, split)
	resizeDense(dst, d, k)
	ar := a.RawMatrix()
	body := func(lo, hi int) {
		for t := lo; t < hi; t++ {
			s, e := z.cptr[t], z.cptr[t+1]
			gemm.RowNZ(dst.RawRowView(t), z.cval[s:e], z.cidx[s:e], ar.Data, ar.Stride, k)
		}
	}
	if split != nil {
		split(d, body)
	} else {
		body(0, d)
	}
}

// nzSortParts is the number of runs of the step's rows that byColumns
// counts and places, at once with a split: fixed, so that the work does
// not depend on the split.
const nzSortParts = 4

// byColumns lists the nonzeros of the given slots' rows (listed by
// nonzeros) by column into cptr, cidx and cval: column t's entries at
// [cptr[t], cptr[t+1]), as positions in rows, ascending. It is a counting
// sort by column over nzSortParts runs of the rows, in parts of split when
// it is set: each run's entries are counted, then placed after those of
// the runs before it, so the lists are the same either way.
func (z *nzRows) byColumns(rows []int, d int, split func(n int, body func(lo, hi int))) {
	nnz := 0
	for _, id := range rows {
		nnz += len(z.idx[id])
	}
	cidx := append(z.cidx[:0], make([]int32, nnz)...)
	cval := append(z.cval[:0], make([]float64, nnz)...)
	// Run q's count of column t, then its first place, at at[q*d+t].
	at := append(z.at[:0], make([]int, nzSortParts*d)...)
	run := func(q int) (lo, hi int) { return q * len(rows) / nzSortParts, (q + 1) * len(rows) / nzSortParts }
	inParts(split, nzSortParts, func(q0, q1 int) {
		for q := q0; q < q1; q++ {
			cnt := at[q*d : (q+1)*d]
			lo, hi := run(q)
			for _, id := range rows[lo:hi] {
				for _, t := range z.idx[id] {
					cnt[t]++
				}
			}
		}
	})
	cptr := append(z.cptr[:0], make([]int, d+1)...)
	for t := range d {
		c := cptr[t]
		for q := range nzSortParts {
			n := at[q*d+t]
			at[q*d+t] = c
			c += n
		}
		cptr[t+1] = c
	}
	inParts(split, nzSortParts, func(q0, q1 int) {
		for q := q0; q < q1; q++ {
			next := at[q*d : (q+1)*d]
			lo, hi := run(q)
			for p := lo; p < hi; p++ {
				iv := z.idx[rows[p]]
				vv := z.val[rows[p]][:len(iv)]
				for e, t := range iv {
					c := next[t]
					cidx[c], cval[c] = int32(p), vv[e]
					next[t] = c + 1
				}
			}
		}
	})
	z.cptr, z.cidx, z.cval, z.at = cptr, cidx, cval, at
}

// resizeDense makes dst r×c, keeping its storage when it has that shape.
func resizeDense(dst *mat.Dense, r, c int) {
	if dr, dc := dst.Dims(); dst.IsEmpty() || dr != r || dc != c {
		dst.Reset()
		dst.ReuseAs(r, c)
	}
}

// stepRows is the dense rows of a step's slots as Data (D×R), read through
// their nonzeros instead of gathered: the sweeps' loss holds it for its
// shape; its products are the step's (mulRowsNZ, mulTransNZ) where they
// serve, the gathered rows' otherwise.
type stepRows struct {
	o    *Online
	rows []int
}

var _ Data = stepRows{}

func (s stepRows) Dims() (d, n int) { return s.o.dim, len(s.rows) }

func (s stepRows) MulTo(dst *mat.Dense, v mat.Matrix) {
	if vd, ok := v.(*mat.Dense); ok && s.o.nzServes(len(s.rows)) {
		s.o.mulTransNZ(dst, vd, s.rows)
		return
	}
	s.gathered().MulTo(dst, v)
}

func (s stepRows) TMulTo(dst *mat.Dense, u mat.Matrix) {
	if ud, ok := u.(*mat.Dense); ok && s.o.nzServes(len(s.rows)) {
		s.o.mulRowsNZ(dst, ud, s.rows)
		return
	}
	s.gathered().TMulTo(dst, u)
}

func (s stepRows) SqNorm() float64 { return s.gathered().SqNorm() }

// gathered returns a copy of the rows as DenseRows.
func (s stepRows) gathered() Data {
	x := mat.NewDense(max(len(s.rows), 1), s.o.dim, nil)
	for p, id := range s.rows {
		x.SetRow(p, s.o.xd.RawRowView(id))
	}
	if len(s.rows) == 0 {
		return DenseRows(&mat.Dense{})
	}
	return DenseRows(x)
}
