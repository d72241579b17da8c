package model

import (
	"slices"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/gemm"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// sweep is the workspace of one online step's row sweeps (see sweepRows).
type sweep struct {
	local  []int32   // slot → position in the active rows, −1 if inactive
	all    []int     // 0, 1, …, R−1
	v      mat.Dense // R×K codes of the active rows
	xtu    mat.Dense // R×K: x_iᵀU
	loss   fixedBasisLoss
	graph  []GraphTerm  // w·S between active rows, per term
	anchor []AnchorTerm // w·S from active to inactive rows, whose codes stay fixed
	eng    Engine
}

// bindLocal sets local[id] to id's position in rows (local grown to height
// slots, −1 elsewhere) and returns the func that sets those entries back to
// −1, so that each sweep finds its active rows by slot in O(1).
func (w *sweep) bindLocal(rows []int, height int) (unbind func()) {
	if len(w.local) < height {
		w.local = make([]int32, height)
		for i := range w.local {
			w.local[i] = -1
		}
	}
	for p, id := range rows {
		w.local[id] = int32(p)
	}
	return func() {
		for _, id := range rows {
			w.local[id] = -1
		}
	}
}

// sweepTerm is a graph term of the method as a sweep sees it: its weight,
// its column block [lo, hi) (hi zero: all), and the rows of its graph
// (R×Slots or wider) for the active rows.
type sweepTerm struct {
	weight float64
	lo, hi int
	s      *sparse.CSR
	dot    bool // GraphTerm.DotRepulsion
}

// sweepRows runs Sweeps multiplicative updates of the method's V rule on
// the given rows of V (ascending slots), with U and the other rows fixed;
// for GNMF, whose one term's rows of the graph's weights are the rows of s,
//
//	v_i ← v_i ⊙ (x_iᵀU + α (SV)_i) / (v_i UᵀU + α d_i v_i),
//
// all rows at once per sweep, as Engine does with Rows. It is the engine on
// a compact problem: the active rows' samples and codes gathered (R×K), and
// for each term a GraphTerm on the edges between active rows and an
// AnchorTerm on the edges to inactive rows, towards their fixed codes,
// whose products the term computes once (signed and repelling terms split
// their parts alike). Each sweep then reads the active rows only, in cache,
// instead of R random rows of the N×K codes per neighbour (about 4× faster
// at R = 2,000, N = 20,000).
func (o *Online) sweepRows(rows []int, terms []sweepTerm) {
	w := &o.sw
	k, r := o.Rank, len(rows)
	defer w.bindLocal(rows, o.height)()
	w.v.Reset()
	w.v.ReuseAs(r, k)
	for p, id := range rows {
		copy(w.v.RawRowView(p), o.v.RawRowView(id))
	}
	var xr Data
	switch {
	case o.nzServes(r):
		xr = stepRows{o, rows}
		o.xblkRows = nil
		o.mulRowsNZ(&w.xtu, &o.u, rows)
	case o.sparse:
		xr = o.gatherRows(rows)
		w.xtu.Reset()
		if o.usupp != nil {
			// On U's support rows (uc) and the rows' columns there
			// (supportCols): the other terms add +0, so the same bits,
			// from a U that stays in cache.
			o.syncUC()
			o.mulSparseRows(&w.xtu, Rows(o.supportCols(Rows(xr))).(*sparse.CSR), &o.uc)
		} else {
			o.mulSparseRows(&w.xtu, Rows(xr).(*sparse.CSR), &o.u)
		}
	default:
		xr = o.gatherRows(rows)
		o.mulRows(&w.xtu, &o.xblk, &o.u)
	}
	w.loss.x, w.loss.xtu = xr, &w.xtu
	w.loss.utu.Reset()
	if o.usupp != nil {
		o.syncUC() // UᵀU over U's nonzero rows
		mulTransTo(&w.loss.utu, &o.uc, &o.uc, &w.loss.ws)
	} else {
		mulTransTo(&w.loss.utu, &o.u, &o.u, &w.loss.ws)
	}

	// Split each row of each S into its edges between active rows and
	// those to inactive ones; columns stay ascending since rows are. New
	// matrices each step: the terms cache on them.
	w.graph = resizeTerms(w.graph, len(terms))
	w.anchor = resizeTerms(w.anchor, len(terms))
	w.eng.Terms = w.eng.Terms[:0]
	for t, tm := range terms {
		in, out := csrParts{indptr: []int{0}}, csrParts{indptr: []int{0}}
		for p := range rows {
			js, ss := tm.s.Row(p)
			for q, j := range js {
				if l := w.local[j]; l >= 0 {
					in.add(int(l), ss[q])
				} else {
					out.add(j, ss[q])
				}
			}
			in.endRow()
			out.endRow()
		}
		w.graph[t] = GraphTerm{Weight: tm.weight, S: in.csr(r, r), Lo: tm.lo, Hi: tm.hi, DotRepulsion: tm.dot}
		w.anchor[t] = AnchorTerm{Weight: tm.weight, B: out.csr(r, o.height), C: &o.v, Lo: tm.lo, Hi: tm.hi, DotRepulsion: tm.dot}
		w.eng.Terms = append(w.eng.Terms, &w.graph[t], &w.anchor[t])
	}
	for len(w.all) < r {
		w.all = append(w.all, len(w.all))
	}
	// All rows listed: a row-restricted run, which skips the objective.
	w.eng.Loss = &w.loss
	w.eng.FixU, w.eng.Rows, w.eng.MaxIter, w.eng.Tol = true, w.all[:r], o.sweeps(), -1
	if split := o.stepSplit(r); split != nil && gemm.Serves64(false) {
		w.sweepParts(split, o.sweeps())
	} else {
		w.eng.Run(&o.u, &w.v) // errors only on a non-finite objective, never here
	}
	for p, id := range rows {
		copy(o.v.RawRowView(id), w.v.RawRowView(p))
	}
}

// sweepParts runs w.eng's sweeps (Engine.Run with U fixed, every row
// listed, no tolerance: sweeps passes of stepV) with the rows in parts
// (split). Each pass adds every row's gradient parts as stepV does, the
// loss's (XᵀU, and V·UᵀU by gemm.MulTo, whose rows depend on their row of
// V alone where gemm.Serves64(false)) and then each term's in w.eng.Terms'
// order, row by row; then it updates the rows. Each row is so summed in
// the engine's order by the same kernels, and the codes are Engine.Run's,
// bit for bit (TestSweepPartsSame). The terms are the sweep's GraphTerms
// and AnchorTerms, prepared once before the parts.
func (w *sweep) sweepParts(split func(n int, body func(lo, hi int)), sweeps int) {
	r, k := w.v.Dims()
	neg, pos := &w.eng.vNeg, &w.eng.vPos
	for _, m := range []*mat.Dense{neg, pos} {
		if mr, mc := m.Dims(); m.IsEmpty() || mr != r || mc != k {
			m.Reset()
			m.ReuseAs(r, k)
		}
	}
	graphs := make([]graphRows, len(w.graph))
	for range sweeps {
		for t := range w.graph {
			if w.graph[t].Weight != 0 {
				graphs[t] = w.graph[t].gradRows(neg, pos, &w.v)
			}
			if w.anchor[t].Weight != 0 {
				w.anchor[t].prepare()
			}
		}
		split(r, func(lo, hi int) {
			rowsOf(neg, lo, hi).Copy(rowsOf(w.loss.xtu, lo, hi))
			mulTo(rowsOf(pos, lo, hi), rowsOf(&w.v, lo, hi), &w.loss.utu)
			for t := range w.graph {
				if w.graph[t].Weight != 0 {
					g := graphs[t] // a copy: its own rowSum
					for i := lo; i < hi; i++ {
						g.row(i)
					}
				}
				if w.anchor[t].Weight != 0 {
					w.anchor[t].addVGradRange(neg, pos, &w.v, lo, hi)
				}
			}
		})
		split(r, func(lo, hi int) {
			mulUpdate(rowsOf(&w.v, lo, hi), rowsOf(neg, lo, hi), rowsOf(pos, lo, hi), nil)
		})
	}
}

// gatherRows returns the samples of the given slots as Data (R×D rows);
// dense rows go to o.xblk, which updateStats then reuses.
func (o *Online) gatherRows(rows []int) Data {
	if o.sparse {
		m := sparse.Zeros(0, o.dim)
		nnz := 0
		for _, id := range rows {
			nnz += len(o.xsRows[id])
		}
		// Sized once, so that the rows append without regrowing the lists.
		m.Ind, m.Val = slices.Grow(m.Ind, nnz), slices.Grow(m.Val, nnz)
		m.Indptr = slices.Grow(m.Indptr, len(rows))
		for _, id := range rows {
			m.AppendRow(o.xsRows[id], o.xsVals[id])
		}
		return SparseRows(m)
	}
	o.setXblk(rows)
	o.xblkRows = rows
	return DenseRows(&o.xblk)
}

// setXblk copies the dense rows of the given slots into o.xblk (R×D), in
// parts with o.Split for a large step. Its storage, o.xbuf, is kept
// between steps with a quarter of headroom, and not cleared (every entry
// is written), so that a step's R rows do not allocate and fault in fresh
// memory as R creeps up.
func (o *Online) setXblk(rows []int) {
	d := o.dim
	need := len(rows) * d
	if need == 0 {
		o.xblk.Reset()
		return
	}
	if cap(o.xbuf) < need {
		o.xbuf = make([]float64, need+need/4)
	}
	o.xblk = *mat.NewDense(len(rows), d, o.xbuf[:need])
	inParts(o.stepSplit(len(rows)), len(rows), func(lo, hi int) {
		for p := lo; p < hi; p++ {
			copy(o.xbuf[p*d:(p+1)*d], o.xd.RawRowView(rows[p]))
		}
	})
}

// mulSparseRows stores x·b into dst (emptied by the caller), its rows in
// parts (stepSplit): each row of dst depends on its row of x alone, and is
// mulSparseDense's, bit for bit.
func (o *Online) mulSparseRows(dst *mat.Dense, x *sparse.CSR, b *mat.Dense) {
	r, _ := x.Dims()
	split := o.stepSplit(r)
	if split == nil {
		mulSparseDense(dst, x, b)
		return
	}
	_, k := b.Dims()
	dst.ReuseAs(r, k)
	split(r, func(lo, hi int) { mulSparseDenseRows(dst, x, b, lo, hi) })
}

// stepMinRows is the number of a step's gathered rows from which its
// products with them run in parts (Online.Split): below it, starting the
// parts costs more than they save. A variable for the tests.
var stepMinRows = 256

// stepSplit returns the split for a step's work over r gathered rows:
// nil (serial) for fewer than stepMinRows, else StepSplit in a deferred
// step that has one, and Split otherwise.
func (o *Online) stepSplit(r int) func(n int, body func(lo, hi int)) {
	if r < stepMinRows || o.Split == nil {
		return nil
	}
	if o.deferred && o.StepSplit != nil {
		return o.StepSplit
	}
	return o.Split
}

// mulRows sets dst = x·b for dense x (R×D) and b (D×K), with x's rows in
// parts (stepSplit): each row of dst depends on its row of x alone, and
// the kernels sum it in a fixed order, so the parts change no bit when the
// kernels serve both ways (gemm.Serves64).
func (o *Online) mulRows(dst, x, b *mat.Dense) {
	r, _ := x.Dims()
	_, k := b.Dims()
	split := o.stepSplit(r)
	if split == nil {
		dst.Reset()
		mulTo(dst, x, b)
		return
	}
	if dr, dc := dst.Dims(); dst.IsEmpty() || dr != r || dc != k {
		dst.Reset()
		dst.ReuseAs(r, k)
	}
	split(r, func(lo, hi int) { gemm.MulTo(rowsOf(dst, lo, hi), rowsOf(x, lo, hi), b, true) })
}

// mulTransCols sets dst = xᵀa for dense x (R×D) and a (R×K), dst D×K,
// with x's columns (dst's rows) in parts (stepSplit): each entry is summed
// over the R rows in increasing order either way (gemm.MulXTA), so the
// parts change no bit when the kernels serve both ways.
func (o *Online) mulTransCols(dst, x, a *mat.Dense) {
	r, d := x.Dims()
	_, k := a.Dims()
	split := o.stepSplit(r)
	if split == nil {
		dst.Reset()
		mulTransTo(dst, x, a, &o.statsWS)
		return
	}
	if dr, dc := dst.Dims(); dst.IsEmpty() || dr != d || dc != k {
		dst.Reset()
		dst.ReuseAs(d, k)
	}
	split(d, func(lo, hi int) {
		ws := xtaPool.Get().(*gemm.Workspace)
		gemm.MulTransTo(rowsOf(dst, lo, hi), x.Slice(0, r, lo, hi).(*mat.Dense), a, ws, true)
		xtaPool.Put(ws)
	})
}

// xtaPool holds the workspaces of mulTransCols's parts.
var xtaPool = sync.Pool{New: func() any { return new(gemm.Workspace) }}

// csrParts collects a CSR matrix row by row, columns ascending; indptr
// starts as {0}.
type csrParts struct {
	indptr, ind []int
	val         []float64
}

func (c *csrParts) add(j int, v float64) { c.ind, c.val = append(c.ind, j), append(c.val, v) }

func (c *csrParts) endRow() { c.indptr = append(c.indptr, len(c.ind)) }

func (c *csrParts) csr(r, cols int) *sparse.CSR {
	return sparse.NewCSR(r, cols, c.indptr, c.ind, c.val)
}

// resizeTerms returns ts with length n, reusing its memory.
func resizeTerms[T any](ts []T, n int) []T {
	if cap(ts) < n {
		return make([]T, n)
	}
	return ts[:n]
}

// sweepNGE is sweepRows for NGE: Sweeps passes of NGE's V step (one
// M-matrix solve per column, NGE.solveRows) on the given rows, with U and
// the other rows fixed, on the method's terms over the window.
func (o *Online) sweepNGE(rows []int, terms []Term) {
	w := &o.sw
	defer w.bindLocal(rows, o.height)()
	xr := o.gatherRows(rows)
	if o.sparse {
		w.xtu.Reset()
		o.mulSparseRows(&w.xtu, Rows(xr).(*sparse.CSR), &o.u)
	} else {
		o.mulRows(&w.xtu, &o.xblk, &o.u)
	}
	var utu mat.Dense
	utu.Mul(o.u.T(), &o.u)
	o.nge().solveRows(&o.v, rows, w.local, &w.xtu, &utu, ngeBlocks(terms), o.q, o.sweeps())
}

// reorderNGE is NGE's step 4 over the window: the d columns with the
// smallest v_cᵀ(G₁ − G₂)v_c move to V¹, and U, V and the statistics B
// (columns) and A (rows and columns) are permuted alike, so that the
// statistics stay those of the codes.
func (o *Online) reorderNGE(terms []Term) {
	m := o.nge()
	m.d = o.q
	blocks := ngeBlocks(terms)
	m.blocks = [2]*mMatrix{newMMatrix(o.height, blocks[0]), newMMatrix(o.height, blocks[1])}
	perm := m.reorderPerm(&o.v)
	if perm == nil {
		return
	}
	permuteCols(&o.u, perm)
	o.ucOK = false
	permuteCols(&o.v, perm)
	bm, _ := o.statsRows()
	permuteCols(bm, perm)
	permuteCols(&o.a, perm)
	var t mat.Dense
	t.CloneFrom(&o.a)
	for c, p := range perm {
		copy(o.a.RawRowView(c), t.RawRowView(p))
	}
}
