package model

import (
	"fmt"
	"slices"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/vec"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// GraphTerm is the graph regularizer Weight·tr(V_bᵀ L V_b) with L = D_S − S,
// on the block b = [Lo, Hi) of V's columns. Since tr(VᵀLV) = ½ Σ_ij S_ij
// ‖v_i − v_j‖², a positive Weight pulls neighbours' codes together and a
// negative Weight pushes them apart (an inter-class or penalty graph).
//
// S may hold negative entries (the signed labeled graph of SSKNMF): the
// gradient Weight·(D_S − S)V is split as (D⁺ + S⁻)V − (D⁻ + S⁺)V, where
// S = S⁺ − S⁻ and D± = diag(S±·1), and each part goes to the side of the
// multiplicative update that keeps it non-negative.
//
// A repelling edge (Weight·S_ij < 0) contributes −|Weight·S_ij|·½‖v_i − v_j‖²,
// which grows without bound as the codes grow: with enough repulsion the
// objective is unbounded below. DotRepulsion bounds it (see there).
//
// The degrees are computed on first use; call Reset after changing S in place.
type GraphTerm struct {
	// Label names the term in Stats. If empty, "graph" is used.
	Label string
	// Weight multiplies the term (α or β in the papers). Its sign says
	// whether the graph attracts (+) or repels (−).
	Weight float64
	// S is the N×N symmetric weight matrix.
	S *sparse.CSR
	// Lo and Hi select V's columns [Lo, Hi). Hi == 0 means all columns.
	Lo, Hi int
	// DotRepulsion, if true, writes each repelling edge as the inner
	// product |Weight·S_ij|·v_iᵀv_j instead of −|Weight·S_ij|·½‖v_i − v_j‖²:
	// the degree part of the repelling edges, −|Weight|·D_rep·‖v_i‖², which
	// rewards large codes, is dropped. For V ≥ 0 the repelling part is then
	// non-negative, so the term is bounded below by 0, and repelled samples
	// are pushed onto disjoint columns of V rather than apart in scale. The
	// sign of Weight must not change while DotRepulsion is set. The zero
	// value keeps the Laplacian form.
	DotRepulsion bool

	s              *sparse.CSR // S the degrees were computed for
	dot            bool        // DotRepulsion the degrees were computed for
	degPos, degNeg []float64
	signed         bool // S has a negative entry
	tiles          sTiles
	bySign         sBySign
	split          func(n int, body func(lo, hi int)) // see Engine.Split
}

// sTiles holds S's entries tiled for a cache-blocked product S·V over all
// rows: the objective's path, and the gradient's where vec.SumRows runs in
// plain Go (no AVX-512; see sBySign). The entries between a block of rows
// and a block of columns come together, so that the rows of the result
// and of V that one tile touches lie within tileBytes each, where CSR
// order would read rows of V from all over it. The gradient's sums per row
// keep their order (columns ascending), so it equals the CSR loop's bit
// for bit; the objective sums in another order. BENCHMARKS.md ("Graph
// term kernels") gives the speeds.
type sTiles struct {
	s     *sparse.CSR // S the tiles were built for
	m     int         // columns of V the blocks were sized for
	b     int         // rows (and columns) per block
	ent   []sEntry    // by row block, then column block, then CSR order
	start []int       // ent[start[r]:start[r+1]] is row block r
}

type sEntry struct {
	i, j int32
	s    float64
}

// tileBytes bounds the slice of V, and of the result, that one tile
// touches: 128 KiB, the fastest of 32 KiB to 512 KiB with 2 MiB of L2 per
// core (BENCHMARKS.md, "Graph term kernels").
const tileBytes = 128 << 10

// build tiles s for products with m columns of V, row-block by row-block,
// and within each by column block, entries in CSR order.
func (t *sTiles) build(s *sparse.CSR, m int) {
	n, _ := s.Dims()
	b := max(tileBytes/(8*m), 64)
	nb := (n + b - 1) / b
	for nb*nb > 4*n { // very large n: keep the tile counts O(n)
		b *= 2
		nb = (n + b - 1) / b
	}
	count := make([]int, nb*nb+1)
	for i := range n {
		ind, _ := s.Row(i)
		for _, j := range ind {
			count[(i/b)*nb+j/b+1]++
		}
	}
	for q := 1; q < len(count); q++ {
		count[q] += count[q-1]
	}
	t.ent = make([]sEntry, count[len(count)-1])
	t.start = make([]int, nb+1)
	for r := range t.start {
		t.start[r] = count[r*nb]
	}
	t.b = b
	next := slices.Clone(count[:nb*nb])
	for i := range n {
		ind, val := s.Row(i)
		for p, j := range ind {
			q := (i/b)*nb + j/b
			t.ent[next[q]] = sEntry{int32(i), int32(j), val[p]}
			next[q]++
		}
	}
	t.s, t.m = s, m
}

// sBySign holds S's entries for vec.SumRows, split by sign (the negative
// ones negated), each part in CSR order: a row's sums into either side of
// the update keep the CSR loop's order, bit for bit. With AVX-512, SumRows
// keeps a row of the result in registers over its entries and prefetches
// the rows of V it reads, which is faster than the tiles on all rows and
// than the CSR loop on listed rows (BENCHMARKS.md, "Graph term kernels").
type sBySign struct {
	s        *sparse.CSR // S the entries were split for
	pos, neg *vec.Rows
}

// build splits s's entries by sign.
func (b *sBySign) build(s *sparse.CSR) {
	n, _ := s.Dims()
	posPtr, negPtr := make([]int32, 1, n+1), make([]int32, 1, n+1)
	var posIdx, negIdx []int32
	var posVal, negVal []float64
	for i := range n {
		ind, val := s.Row(i)
		for q, j := range ind {
			if val[q] >= 0 {
				posIdx, posVal = append(posIdx, int32(j)), append(posVal, val[q])
			} else {
				negIdx, negVal = append(negIdx, int32(j)), append(negVal, -val[q])
			}
		}
		posPtr, negPtr = append(posPtr, int32(len(posIdx))), append(negPtr, int32(len(negIdx)))
	}
	b.pos = vec.NewRows(n, posPtr, posIdx, posVal)
	b.neg = vec.NewRows(n, negPtr, negIdx, negVal)
	b.s = s
}

// sumRowsBlock is the number of rows per unit of work that Split shares
// out in the product through vec.SumRows.
const sumRowsBlock = 256

var _ RowsTerm = (*GraphTerm)(nil)

// Name returns Label, or "graph".
func (t *GraphTerm) Name() string {
	if t.Label == "" {
		return "graph"
	}
	return t.Label
}

func (t *GraphTerm) setSplit(split func(n int, body func(lo, hi int))) { t.split = split }

// Reset drops the cached degrees; call it after modifying S in place.
func (t *GraphTerm) Reset() { t.s = nil }

func (t *GraphTerm) prepare(v *mat.Dense) (lo, hi int) {
	n, k := v.Dims()
	if r, c := t.S.Dims(); r != n || c != n {
		panic(fmt.Sprintf("model: GraphTerm %q: S is %d×%d, V has %d rows", t.Name(), r, c, n))
	}
	lo, hi = t.Lo, t.Hi
	if hi == 0 {
		hi = k
	}
	if lo < 0 || lo >= hi || hi > k {
		panic(fmt.Sprintf("model: GraphTerm %q: bad column block [%d, %d) for K = %d", t.Name(), lo, hi, k))
	}
	if t.s != t.S || len(t.degPos) != n || t.dot != t.DotRepulsion {
		t.degPos = resize(t.degPos, n)
		t.degNeg = resize(t.degNeg, n)
		t.signed = false
		for i := 0; i < n; i++ {
			var p, q float64
			_, val := t.S.Row(i)
			for _, s := range val {
				if s > 0 {
					p += s
				} else {
					q -= s
					t.signed = t.signed || s < 0
				}
			}
			if t.DotRepulsion {
				// Drop the degree of the repelling edges: those of S⁻
				// for an attracting Weight, of S⁺ for a repelling one.
				if t.Weight < 0 {
					p = 0
				} else {
					q = 0
				}
			}
			t.degPos[i], t.degNeg[i] = p, q
		}
		t.s, t.dot = t.S, t.DotRepulsion
	}
	return lo, hi
}

// width is the number of V's columns the term covers, for V with k columns.
func (t *GraphTerm) width(k int) int {
	if t.Hi == 0 {
		return k - t.Lo
	}
	return t.Hi - t.Lo
}

// tiled reports whether products over all n rows of V's m columns go
// through the tiles (V larger than two tiles), building them if needed.
func (t *GraphTerm) tiled(n, m int) bool {
	if n*m*8 <= 2*tileBytes {
		return false
	}
	if t.tiles.s != t.S || t.tiles.m != m {
		t.tiles.build(t.S, m)
	}
	return true
}

// AddVGrad adds the term's gradient parts at V to neg and pos.
func (t *GraphTerm) AddVGrad(neg, pos, v *mat.Dense) { t.AddVGradRows(neg, pos, v, nil) }

// AddVGradRows adds the term's gradient parts for the given rows of V (all
// if rows is nil) to the same rows of neg and pos.
func (t *GraphTerm) AddVGradRows(neg, pos, v *mat.Dense, rows []int) {
	if t.Weight == 0 {
		return
	}
	g := t.gradRows(neg, pos, v)
	if rows != nil {
		for _, i := range rows {
			g.row(i)
		}
		return
	}
	nr, m, w := g.vr.Rows, g.m, g.w
	vr, ar, rr, lo := g.vr, g.ar, g.rr, g.lo
	if vec.Fast {
		b := &t.bySign
		vs := vr.Data[lo:]
		// Rows are independent: Split may cut them anywhere.
		inParts(t.split, (nr+sumRowsBlock-1)/sumRowsBlock, func(b0, b1 int) {
			i0, i1 := b0*sumRowsBlock, min(b1*sumRowsBlock, nr)
			for i := i0; i < i1; i++ {
				g.degrees(i)
			}
			vec.SumRows(ar.Data[i0*ar.Stride+lo:], ar.Stride, m, w, b.pos, i0, i1, vs, vr.Stride)
			if t.signed {
				vec.SumRows(rr.Data[i0*rr.Stride+lo:], rr.Stride, m, w, b.neg, i0, i1, vs, vr.Stride)
			}
		})
		return
	}
	if t.tiled(nr, m) {
		// Row blocks are independent: Split may run them in parts, each
		// row summed in the serial order.
		tl := &t.tiles
		inParts(t.split, len(tl.start)-1, func(rb0, rb1 int) {
			for i := rb0 * tl.b; i < min(rb1*tl.b, nr); i++ {
				g.degrees(i)
			}
			// The rows of V come from anywhere in V: ask for the row of
			// the entry 8 ahead while this one is summed (the split
			// iteration 0.0773 s against 0.0804, mean of four alternating
			// runs of BenchmarkGNMFIterSplit20000x784 with OpenBLAS).
			ents := tl.ent[tl.start[rb0]:tl.start[rb1]]
			for q, e := range ents {
				if q+8 < len(ents) {
					j := int(ents[q+8].j)
					vec.Prefetch(vr.Data[j*vr.Stride+lo : j*vr.Stride+lo+m])
				}
				s := w * e.s
				vj := vr.Data[int(e.j)*vr.Stride+lo : int(e.j)*vr.Stride+lo+m]
				if s >= 0 {
					vec.Axpy(s, vj, ar.Data[int(e.i)*ar.Stride+lo:int(e.i)*ar.Stride+lo+m])
				} else {
					vec.Axpy(-s, vj, rr.Data[int(e.i)*rr.Stride+lo:int(e.i)*rr.Stride+lo+m])
				}
			}
		})
		return
	}
	for i := range nr {
		g.row(i)
	}
}

// graphRows is a GraphTerm's gradient on V row by row (gradRows): row(i)
// adds row i's parts to neg and pos. Copies of one graphRows may add
// disjoint rows at once, each with its own rowSum.
type graphRows struct {
	t          *GraphTerm
	w          float64 // |Weight|
	lo, m      int     // the term's columns [lo, lo+m)
	vr, ar, rr blas64.General
	g          rowSum
}

// gradRows prepares the term for V (degrees; vec.Fast's rows by sign) and
// returns its row-by-row gradient into neg and pos: attract collects
// Weight·(D⁻ + S⁺)V, repel Weight·(D⁺ + S⁻)V, up to the sign of Weight.
// It is not safe for concurrent use; the graphRows it returns is, by copy.
func (t *GraphTerm) gradRows(neg, pos, v *mat.Dense) graphRows {
	lo, hi := t.prepare(v)
	w := t.Weight
	attract, repel := neg, pos
	if w < 0 {
		attract, repel, w = pos, neg, -w
	}
	if vec.Fast && t.bySign.s != t.S {
		t.bySign.build(t.S)
	}
	return graphRows{t: t, w: w, lo: lo, m: hi - lo, vr: v.RawMatrix(), ar: attract.RawMatrix(), rr: repel.RawMatrix()}
}

// degrees adds row i's degree terms, which every path adds before the
// row's entries.
func (g *graphRows) degrees(i int) {
	t, lo, m := g.t, g.lo, g.m
	vi := g.vr.Data[i*g.vr.Stride+lo : i*g.vr.Stride+lo+m]
	vec.Axpy(g.w*t.degPos[i], vi, g.rr.Data[i*g.rr.Stride+lo:i*g.rr.Stride+lo+m])
	if t.signed {
		vec.Axpy(g.w*t.degNeg[i], vi, g.ar.Data[i*g.ar.Stride+lo:i*g.ar.Stride+lo+m])
	}
}

// row adds row i's gradient parts: its degrees, then its edges in S's
// order.
func (g *graphRows) row(i int) {
	t, lo, m, w := g.t, g.lo, g.m, g.w
	vr, ar, rr := g.vr, g.ar, g.rr
	g.degrees(i)
	if vec.Fast {
		b := &t.bySign
		vs := vr.Data[lo:]
		vec.SumRows(ar.Data[i*ar.Stride+lo:], ar.Stride, m, w, b.pos, i, i+1, vs, vr.Stride)
		if t.signed {
			vec.SumRows(rr.Data[i*rr.Stride+lo:], rr.Stride, m, w, b.neg, i, i+1, vs, vr.Stride)
		}
		return
	}
	ai := ar.Data[i*ar.Stride+lo : i*ar.Stride+lo+m]
	ri := rr.Data[i*rr.Stride+lo : i*rr.Stride+lo+m]
	ind, val := t.S.Row(i)
	g.g.dst = ai
	for p, j := range ind {
		s := w * val[p]
		vj := vr.Data[j*vr.Stride+lo : j*vr.Stride+lo+m]
		if s >= 0 {
			g.g.add(s, vj)
		} else {
			vec.Axpy(-s, vj, ri)
		}
	}
	g.g.flush()
}

// rowSum adds s·x to dst for a run of (s, x), four at a time through
// vec.Axpy4, in the order given: the same sum, bit for bit, as one Axpy
// per term.
type rowSum struct {
	dst []float64
	a   [4]float64
	x   [4][]float64
	n   int
}

func (g *rowSum) add(s float64, x []float64) {
	g.a[g.n], g.x[g.n] = s, x
	if g.n++; g.n == 4 {
		vec.Axpy4(g.dst, &g.a, g.x[0], g.x[1], g.x[2], g.x[3])
		g.n = 0
	}
}

func (g *rowSum) flush() {
	for q := range g.n {
		vec.Axpy(g.a[q], g.x[q], g.dst)
	}
	g.n = 0
}

// Value returns Weight·tr(V_bᵀ L V_b).
func (t *GraphTerm) Value(v *mat.Dense) float64 {
	if t.Weight == 0 {
		return 0
	}
	lo, hi := t.prepare(v)
	vr := v.RawMatrix()
	var f float64
	if m := hi - lo; t.tiled(vr.Rows, m) {
		var b gonum.Implementation
		for i := range vr.Rows {
			vi := vr.Data[i*vr.Stride+lo : i*vr.Stride+hi]
			f += (t.degPos[i] - t.degNeg[i]) * b.Ddot(m, vi, 1, vi, 1)
		}
		for _, e := range t.tiles.ent {
			vi := vr.Data[int(e.i)*vr.Stride+lo : int(e.i)*vr.Stride+hi]
			vj := vr.Data[int(e.j)*vr.Stride+lo : int(e.j)*vr.Stride+hi]
			f -= e.s * b.Ddot(m, vi, 1, vj, 1)
		}
		return t.Weight * f
	}
	for i := 0; i < vr.Rows; i++ {
		vi := vr.Data[i*vr.Stride+lo : i*vr.Stride+hi]
		var sq float64
		for _, x := range vi {
			sq += x * x
		}
		f += (t.degPos[i] - t.degNeg[i]) * sq
		ind, val := t.S.Row(i)
		for p, j := range ind {
			vj := vr.Data[j*vr.Stride+lo : j*vr.Stride+hi]
			var dot float64
			for c, x := range vi {
				dot += x * vj[c]
			}
			f -= val[p] * dot
		}
	}
	return t.Weight * f
}

// AnchorTerm is Weight·Σ_i Σ_j B_ij ‖v_i,b − c_j,b‖² on the block b = [Lo, Hi)
// of V's columns: it pulls each row v_i of V towards fixed codes c_j (rows
// of C). It is the graph term of out-of-sample projection, where a new
// sample joins the graph of the training samples whose codes stay fixed,
// and of an online sweep, where the edges from the rows being updated to
// the others become anchors.
//
// B may hold negative entries and Weight may be negative (the signed and
// repelling label graphs of SSKNMF and DGNMF): as in GraphTerm, the
// gradient Weight·(diag(B·1)V − BC) is split with B = B⁺ − B⁻ into
// Weight·(D⁺V + B⁻C) and Weight·(B⁺C + D⁻V), each part going to the side
// of the multiplicative update that keeps it non-negative.
type AnchorTerm struct {
	// Weight multiplies the term. Its sign says whether the anchors
	// attract (+) or repel (−).
	Weight float64
	// B holds the weights between V's rows and C's rows (N×M).
	B *sparse.CSR
	// C holds the fixed codes (M×K).
	C *mat.Dense
	// Lo and Hi select V's (and C's) columns [Lo, Hi). Hi == 0 means all
	// columns.
	Lo, Hi int
	// DotRepulsion writes each repelling entry as GraphTerm.DotRepulsion
	// does: its degree part is dropped, so that the term matches a
	// GraphTerm with DotRepulsion on the same edges.
	DotRepulsion bool

	b           *sparse.CSR
	deg, degNeg []float64 // B⁺·1 and B⁻·1
	signed      bool      // B has a negative entry
	bc, bcNeg   mat.Dense // B⁺·C and B⁻·C
	constSq     float64   // Σ_ij B_ij ‖c_j‖², the part of Value that V does not change
}

var _ Term = (*AnchorTerm)(nil)

// Name returns "anchor".
func (t *AnchorTerm) Name() string { return "anchor" }

// block returns the columns [lo, hi) of the term for V with k columns.
func (t *AnchorTerm) block(k int) (lo, hi int) {
	lo, hi = t.Lo, t.Hi
	if hi == 0 {
		hi = k
	}
	if lo < 0 || lo >= hi || hi > k {
		panic(fmt.Sprintf("model: AnchorTerm: bad column block [%d, %d) for K = %d", lo, hi, k))
	}
	return lo, hi
}

func (t *AnchorTerm) prepare() {
	if t.b == t.B {
		return
	}
	n, m := t.B.Dims()
	cr, k := t.C.Dims()
	if cr != m {
		panic(fmt.Sprintf("model: AnchorTerm: B is %d×%d but C has %d rows", n, m, cr))
	}
	lo, hi := t.block(k)
	t.deg = resize(t.deg, n)
	t.degNeg = resize(t.degNeg, n)
	t.signed = false
	for i := range t.deg {
		_, val := t.B.Row(i)
		var s, q float64
		for _, x := range val {
			if x >= 0 {
				s += x
			} else {
				q -= x
				t.signed = true
			}
		}
		if t.DotRepulsion {
			// The repelling entries' degree: B⁻'s for an attracting
			// Weight, B⁺'s for a repelling one.
			if t.Weight < 0 {
				s = 0
			} else {
				q = 0
			}
		}
		t.deg[i], t.degNeg[i] = s, q
	}
	c := t.C
	if lo != 0 || hi != k {
		c = t.C.Slice(0, cr, lo, hi).(*mat.Dense)
	}
	t.bc.Reset()
	t.bcNeg.Reset()
	if !t.signed {
		t.B.MulDenseTo(&t.bc, c)
	} else {
		pos, neg := splitSign(t.B)
		pos.MulDenseTo(&t.bc, c)
		neg.MulDenseTo(&t.bcNeg, c)
	}
	// Per stored entry rather than per row of C: C may be the codes of a
	// whole window of which B reaches a few rows.
	t.constSq = 0
	for i := range n {
		ind, val := t.B.Row(i)
		for p, j := range ind {
			if t.DotRepulsion && (val[p] < 0) == (t.Weight > 0) {
				continue // a repelling entry has no ‖c_j‖² part
			}
			cj := t.C.RawRowView(j)[lo:hi]
			t.constSq += val[p] * floats.Dot(cj, cj)
		}
	}
	t.b = t.B
}

// splitSign returns B⁺ and B⁻ (both ≥ 0) with B = B⁺ − B⁻.
func splitSign(b *sparse.CSR) (pos, neg *sparse.CSR) {
	n, m := b.Dims()
	pos, neg = sparse.Zeros(0, m), sparse.Zeros(0, m)
	var pi, ni []int
	var pv, nv []float64
	for i := range n {
		pi, ni, pv, nv = pi[:0], ni[:0], pv[:0], nv[:0]
		ind, val := b.Row(i)
		for q, j := range ind {
			if val[q] >= 0 {
				pi, pv = append(pi, j), append(pv, val[q])
			} else {
				ni, nv = append(ni, j), append(nv, -val[q])
			}
		}
		pos.AppendRow(pi, pv)
		neg.AppendRow(ni, nv)
	}
	return pos, neg
}

// AddVGrad adds Weight·(B⁺C + D⁻V) to neg and Weight·(D⁺V + B⁻C) to pos on
// the term's columns, with the two sides swapped for a negative Weight.
func (t *AnchorTerm) AddVGrad(neg, pos, v *mat.Dense) {
	if t.Weight == 0 {
		return
	}
	t.prepare()
	t.addVGradRange(neg, pos, v, 0, v.RawMatrix().Rows)
}

// addVGradRange is AddVGrad on rows [r0, r1) of V, neg and pos, after
// prepare: calls on disjoint ranges may run at once.
func (t *AnchorTerm) addVGradRange(neg, pos, v *mat.Dense, r0, r1 int) {
	w := t.Weight
	if w < 0 {
		neg, pos, w = pos, neg, -w
	}
	lo, hi := t.block(v.RawMatrix().Cols)
	vr, nr, pr, br := v.RawMatrix(), neg.RawMatrix(), pos.RawMatrix(), t.bc.RawMatrix()
	m := hi - lo
	for i := r0; i < r1; i++ {
		d := w * t.deg[i]
		vi := vr.Data[i*vr.Stride+lo : i*vr.Stride+lo+m]
		ni := nr.Data[i*nr.Stride+lo : i*nr.Stride+lo+m]
		pi := pr.Data[i*pr.Stride+lo : i*pr.Stride+lo+m]
		bi := br.Data[i*br.Stride : i*br.Stride+m]
		// The loops pi[c] += d·v_ic, ni[c] += w·b_ic (then, signed,
		// ni[c] += e·v_ic, pi[c] += w·bn_ic) in vec.Axpy's vectors, which
		// round as they do.
		vec.Axpy(d, vi, pi)
		vec.Axpy(w, bi, ni)
		if t.signed {
			e := w * t.degNeg[i]
			vec.Axpy(e, vi, ni)
			vec.Axpy(w, t.bcNeg.RawRowView(i), pi)
		}
	}
}

// Value returns Weight·Σ_ij B_ij ‖v_i,b − c_j,b‖².
func (t *AnchorTerm) Value(v *mat.Dense) float64 {
	if t.Weight == 0 {
		return 0
	}
	t.prepare()
	lo, hi := t.block(v.RawMatrix().Cols)
	vr, br := v.RawMatrix(), t.bc.RawMatrix()
	var f float64
	for i := 0; i < vr.Rows; i++ {
		vi := vr.Data[i*vr.Stride+lo : i*vr.Stride+hi]
		bi := br.Data[i*br.Stride : i*br.Stride+hi-lo]
		var sq, dot float64
		for c, x := range vi {
			sq += x * x
			dot += x * bi[c]
		}
		if t.signed {
			for c, x := range t.bcNeg.RawRowView(i) {
				dot -= vi[c] * x
			}
		}
		f += (t.deg[i]-t.degNeg[i])*sq - 2*dot
	}
	return t.Weight * (f + t.constSq)
}

func resize(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}
