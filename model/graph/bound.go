package graph

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/nmfstream/nmfstream/internal/gemm"
	"github.com/nmfstream/nmfstream/internal/vec"
)

// Bounded search: the insertion's Euclidean scan of a dense window skips
// the pairs that a lower bound on their squared distance proves can enter
// neither list (the query's, and, for an insertion, the old node's), and
// computes the inner product of the others only. The lists stay exactly
// those of the full scan (docs/DESIGN.md §3: the k-NN graph is exact).
//
// The bound: for P with orthonormal rows (m of them, here the window's
// leading principal directions) and the residual norms ρ(x) = ‖x − PᵀPx‖,
//
//	‖q − r‖² = ‖Pq − Pr‖² + ‖(q − r)⊥‖² ≥ ‖Pq − Pr‖² + (ρ(q) − ρ(r))²,
//
// which costs m multiply-adds per pair instead of D. Whatever P is, the
// bound holds; the better P fits the window, the more pairs it skips.

// boundMinRefs is the window from which the bound is used: below it the
// full scan is cheap. A variable for the tests.
var boundMinRefs = 2048

const (
	// boundDims is m, the number of principal directions of the bound, at
	// most a quarter of the dimension (boundMinDim at least).
	boundDims   = 64
	boundMinDim = 32
	// boundSample is the number of rows the principal directions are
	// estimated from.
	boundSample = 2048
	// boundMaxShare is the share of pairs needing an inner product above
	// which the bound does not pay (a scan of the survivors one by one
	// runs at a few times less than the blocked products): the store then
	// scans in full until the next basis.
	boundMaxShare = 0.25
)

// boundDotBlock is the number of candidate rows whose kept inner products
// scanBound computes together, query by query: 64 MNIST rows in float32
// are 200 KB, which stay in L2 while the queries read them.
const boundDotBlock = 64

// boundPrepBlock is the number of candidates whose bounds boundPrep forms
// at once: their products with 100 queries (200 KB in float32) stay in L2
// between the kernel that writes them and the loop that reads them.
const boundPrepBlock = 512

// bounds is the state of the bounded search of a dense Euclidean store.
type bounds struct {
	m     int       // directions; 0 before the first basis
	basis []float64 // m×dim, orthonormal rows
	proj  []float32 // slot*m + j: the row's coordinate on direction j, rounded to float32
	pn2   []float64 // per slot, the squared norm of the rounded coordinates
	rho   []float64 // per slot, ρ(x)
	// slack is the relative error allowed for in a bound: a bound b of a
	// pair (q, r) is used as b − slack·(‖q‖² + ‖r‖²).
	slack float64

	since   int          // rows stored since the basis was made
	pending []int        // slots stored since their coordinates were set
	off     bool         // the bound did not pay; scan in full until the next basis
	checked atomic.Int64 // pairs screened since the basis was made
	dotted  atomic.Int64 // of those, pairs whose inner product was computed

	// boundPrep's results and workspace
	lbm    []float64 // candidate c, query a: c*len(qb) + a
	aq, rq []float64 // per query of the chunk: the bound's query term, ρ
	up     []float64 // per query of the chunk
	dq     []float64 // per query of the chunk, its margin δ
	pq, pr []float32
	parts  []*boundWork // by first block
	best   []boundPos   // the k smallest bounds of a query, merged from the parts
	used   []*boundWork // the parts of the last boundPrep, by first block
	coords []float64    // projectRows' workspace
	rows   []float64
	abt    gemm.ABTWorkspace
}

// boundWork is the per-part workspace of boundPrep and scanBound.
type boundWork struct {
	part  bool      // the scan runs in parts, one per core (gemm's inParts)
	keep  [][]int32 // per query, its kept candidates by position in refs
	pos   []int     // per query, the next of its kept candidates to compute
	dq    []float64 // per query, its margin δ
	c32   []float32
	abt32 gemm.ABTWorkspace32
	first int        // boundPrep: the part's first block
	best  []boundPos // boundPrep: per query, the part's k smallest bounds (a*k…), ascending
	nbest []int      // how many of them
	lbk   []float64  // per query, the largest of them once there are k, else +Inf
}

// useBound reports whether a non-symmetric Euclidean scan of qs against
// refs should run bounded, making or renewing the basis first when the
// window calls for it. Below 2·boundMinDim dimensions the bound's dim/4
// directions skip too few pairs to pay: with the 40-dimensional rows of
// model.Online's search basis the MNIST stream took 1.22× the CPU time
// bounded (10 directions) that it takes in full.
func (g *Graph) useBound(qs, refs []int) bool {
	s := &g.st
	if s.isSparse || s.cosine || s.dim < 2*boundMinDim || len(refs) < boundMinRefs {
		return false
	}
	b := &s.bd
	if b.m == 0 || b.since >= len(refs) {
		s.makeBasis(refs, qs)
	} else {
		s.projectRows(b.pending)
		b.pending = b.pending[:0]
	}
	if c := b.checked.Load(); c > int64(len(refs))*int64(len(qs)) && float64(b.dotted.Load()) > boundMaxShare*float64(c) {
		b.off = true
	}
	return !b.off
}

// makeBasis sets the bound's directions to the leading principal directions
// of (a sample of) the rows refs, by subspace iteration from a seeded random
// start, and projects the rows refs and qs.
func (s *store) makeBasis(refs, qs []int) {
	b := &s.bd
	m, d := min(boundDims, s.dim/4), s.dim
	// Sample evenly over the window.
	ns := min(boundSample, len(refs))
	x := make([]float64, ns*d)
	mean := make([]float64, d)
	for i := 0; i < ns; i++ {
		row := s.denseRow(refs[i*len(refs)/ns])
		copy(x[i*d:(i+1)*d], row)
		for l, v := range row {
			mean[l] += v
		}
	}
	for l := range mean {
		mean[l] /= float64(ns)
	}
	for i := 0; i < ns; i++ {
		r := x[i*d : (i+1)*d]
		for l := range r {
			r[l] -= mean[l]
		}
	}
	rng := rand.New(rand.NewPCG(1, uint64(d)))
	z := make([]float64, m*d) // m×d, rows orthonormalized
	for i := range z {
		z[i] = rng.NormFloat64()
	}
	orthonormalize(z, m, d)
	// One step of the power method on xᵀx: y = x·zᵀ, z = yᵀ·x, both as
	// products a·bᵀ through the kernels (x transposed once).
	xt := make([]float64, d*ns)
	for i := 0; i < ns; i++ {
		for l, v := range x[i*d : (i+1)*d] {
			xt[l*ns+i] = v
		}
	}
	y := make([]float64, ns*m)
	yt := make([]float64, m*ns)
	var ws gemm.ABTWorkspace
	for it := 0; it < 3; it++ {
		gemm.ABT(blas64.General{Rows: ns, Cols: m, Stride: m, Data: y},
			blas64.General{Rows: ns, Cols: d, Stride: d, Data: x},
			blas64.General{Rows: m, Cols: d, Stride: d, Data: z}, &ws, false)
		for i := 0; i < ns; i++ {
			for j, v := range y[i*m : (i+1)*m] {
				yt[j*ns+i] = v
			}
		}
		gemm.ABT(blas64.General{Rows: m, Cols: d, Stride: d, Data: z},
			blas64.General{Rows: m, Cols: ns, Stride: ns, Data: yt},
			blas64.General{Rows: d, Cols: ns, Stride: ns, Data: xt}, &ws, false)
		orthonormalize(z, m, d)
	}
	b.m, b.basis = m, z
	b.since, b.off = 0, false
	b.checked.Store(0)
	b.dotted.Store(0)
	// The bound is computed from coordinates rounded to float32, p̃ = Px + e
	// with ‖e‖ ≤ 2⁻²⁴‖x‖: ‖Pq − Pr‖² ≥ ‖p̃q − p̃r‖² − 2⁻²²(‖q‖² + ‖r‖²)
	// (the difference is at most 2‖p̃q − p̃r‖(‖e_q‖ + ‖e_r‖) + (‖e_q‖ +
	// ‖e_r‖)²), and their inner product in float32 is within (m + 2)·2⁻²⁴
	// ·(‖q‖² + ‖r‖²)/2 of exact, doubled in the bound. ρ² = ‖x‖² − ‖Px‖²,
	// with ‖Px‖² in float64 within 2√m·γₙ‖x‖² (n = dim + 8), is off by
	// e = 2√m·γₙ‖x‖² at most and ρ by √e; the term (ρ(q) − ρ(r))² then by
	// at most 8√(2√m·γₙ)(‖q‖² + ‖r‖²). P's departure from orthonormality
	// (Gram-Schmidt twice: a few unit roundoffs times m) adds little.
	// Twice the sum is the slack.
	const u, u32 = 0x1p-53, 0x1p-24
	n := float64(d + 8)
	gn := n * u / (1 - n*u)
	fm := float64(m)
	b.slack = 2 * (8*math.Sqrt(2*math.Sqrt(fm)*gn) + 16*gn + fm*64*u + 4*u32 + (fm+2)*u32)
	b.proj = b.proj[:0]
	b.pn2, b.rho = b.pn2[:0], b.rho[:0]
	b.pending = b.pending[:0]
	s.projectRows(refs)
	s.projectRows(qs)
}

// projectRows sets the bound's coordinates of the stored rows ids, with
// the products in blocks through the kernels.
func (s *store) projectRows(ids []int) {
	b := &s.bd
	m, d := b.m, s.dim
	if len(ids) == 0 {
		return
	}
	if need := (slices.Max(ids) + 1); len(b.pn2) < need {
		b.proj = append(b.proj, make([]float32, need*m-len(b.proj))...)
		b.pn2 = append(b.pn2, make([]float64, need-len(b.pn2))...)
		b.rho = append(b.rho, make([]float64, need-len(b.rho))...)
	}
	const chunk = 256
	for i0 := 0; i0 < len(ids); i0 += chunk {
		part := ids[i0:min(i0+chunk, len(ids))]
		n := len(part)
		b.coords = slices.Grow(b.coords[:0], n*m)[:n*m]
		gemm.ABT(blas64.General{Rows: n, Cols: m, Stride: m, Data: b.coords},
			blas64.General{Rows: n, Cols: d, Stride: d, Data: s.gather(&b.rows, part)},
			blas64.General{Rows: m, Cols: d, Stride: d, Data: b.basis},
			&b.abt, false)
		for a, slot := range part {
			var pn2, pr2 float64
			p := b.proj[slot*m : (slot+1)*m]
			for j, c := range b.coords[a*m : (a+1)*m] {
				pn2 += c * c
				p[j] = float32(c)
				pr2 += float64(p[j]) * float64(p[j])
			}
			b.pn2[slot] = pr2
			b.rho[slot] = math.Sqrt(max(0, s.sq[slot]-pn2))
		}
	}
}

// orthonormalize makes the m rows of z (m×d) orthonormal by modified
// Gram-Schmidt, run twice ("twice is enough": orthonormal to a few unit
// roundoffs). A row that vanishes is replaced by a unit coordinate vector
// orthogonal to the others.
func orthonormalize(z []float64, m, d int) {
	for pass := 0; pass < 2; pass++ {
		for i := 0; i < m; i++ {
			zi := z[i*d : (i+1)*d]
			for j := 0; j < i; j++ {
				zj := z[j*d : (j+1)*d]
				c := dot64(zi, zj)
				for l := range zi {
					zi[l] -= c * zj[l]
				}
			}
			nm := math.Sqrt(dot64(zi, zi))
			if !(nm > 1e-8) {
				// Degenerate: data of rank below m. Any unit vector
				// orthogonal to the rows before keeps P orthonormal.
				for l := 0; l < d; l++ {
					clear(zi)
					zi[l] = 1
					for j := 0; j < i; j++ {
						zj := z[j*d : (j+1)*d]
						c := dot64(zi, zj)
						for t := range zi {
							zi[t] -= c * zj[t]
						}
					}
					if nm = math.Sqrt(dot64(zi, zi)); nm > 0.5 {
						break
					}
				}
			}
			for l := range zi {
				zi[l] /= nm
			}
		}
	}
}

func dot64(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	l := 0
	for ; l+4 <= len(a); l += 4 {
		s0 += a[l] * b[l]
		s1 += a[l+1] * b[l+1]
		s2 += a[l+2] * b[l+2]
		s3 += a[l+3] * b[l+3]
	}
	for ; l < len(a); l++ {
		s0 += a[l] * b[l]
	}
	return (s0 + s1) + (s2 + s3)
}

// boundCells bounds the pairs whose bounds are held at once (8 bytes
// each): queries are taken in chunks of boundCells/len(refs).
const boundCells = 1 << 22

// boundChunk is the number of queries scanBounded takes at once.
func boundChunk(nq, nr int) int { return max(1, min(nq, boundCells/max(nr, 1))) }

// boundPrep computes, for the queries qb against every candidate refs, the
// usable lower bounds (the bound less the slack and the query's margin δ)
// into lbm (len(refs)×len(qb), by candidate) and each query's cap up[a]:
// the largest canonical key among the ls.k candidates with the smallest
// bounds (+Inf with fewer candidates). Since k candidates have keys at
// most up[a], a candidate whose key exceeds up[a] cannot be among query
// a's k nearest. The products run in parts with split (nil: serially).
func (g *Graph) boundPrep(qb, refs []int, k int, split func(n int, body func(lo, hi int))) {
	s := &g.st
	b := &s.bd
	m := b.m
	nq, nr := len(qb), len(refs)
	b.lbm = slices.Grow(b.lbm[:0], nq*nr)[:nq*nr]
	b.up = slices.Grow(b.up[:0], nq)[:nq]
	pq := b.gather(&b.pq, qb)
	pr := b.gather(&b.pr, refs)
	b.dq = slices.Grow(b.dq[:0], nq)[:nq]
	dq := b.dq
	for a, q := range qb {
		dq[a] = s.delta(q)
	}
	bs := g.blockSize
	nb := (nr + bs - 1) / bs
	// The bound of pair (a, c) less the slack and δ, split into a query
	// term, a candidate term and the two that mix them:
	// lb = aq[a] + (pn2[r] − slack·sq[r]) − 2·p̃q·p̃r + (ρ(q) − ρ(r))²,
	// aq[a] = pn2[q] − slack·sq[q] − δ(q). The sums' order differs from
	// the bound's formula by a few float64 roundings, which the slack
	// (about 1e-6 relative) dwarfs.
	b.aq = slices.Grow(b.aq[:0], nq)[:nq]
	b.rq = slices.Grow(b.rq[:0], nq)[:nq]
	for a, q := range qb {
		b.aq[a] = b.pn2[q] - b.slack*s.sq[q] - dq[a]
		b.rq[a] = b.rho[q]
	}
	body := func(lo, hi int, w *boundWork) {
		c0, c1 := lo*bs, min(hi*bs, nr)
		// The part's k smallest bounds per query, kept sorted, with the
		// largest in lbk (+Inf until k are found): a new candidate rarely
		// passes it, so the test of a bound is one comparison while the
		// bound's row is still in cache.
		w.best = slices.Grow(w.best[:0], nq*k)[:nq*k]
		w.nbest = slices.Grow(w.nbest[:0], nq)[:nq]
		w.lbk = slices.Grow(w.lbk[:0], nq)[:nq]
		clear(w.nbest)
		for a := range w.lbk {
			w.lbk[a] = math.Inf(1)
		}
		sq, pn2, rho, slack := s.sq, b.pn2, b.rho, b.slack
		aq, rq := b.aq[:nq], b.rq[:nq]
		lbk := w.lbk[:nq]
		// Candidates in blocks of boundPrepBlock: the block's products
		// (candidates × queries, the larger set streaming through the
		// kernels, no transpose) stay in cache while its bounds are
		// formed.
		for cb := c0; cb < c1; cb += boundPrepBlock {
			ce := min(cb+boundPrepBlock, c1)
			w.c32 = slices.Grow(w.c32[:0], (ce-cb)*nq)[:(ce-cb)*nq]
			gemm.ABT32(blas32.General{Rows: ce - cb, Cols: nq, Stride: nq, Data: w.c32},
				blas32.General{Rows: ce - cb, Cols: m, Stride: m, Data: pr[cb*m : ce*m]},
				blas32.General{Rows: nq, Cols: m, Stride: m, Data: pq},
				&w.abt32, w.part)
			for c, r := range refs[cb:ce] {
				bc, rr := pn2[r]-slack*sq[r], rho[r]
				row := b.lbm[(cb+c)*nq : (cb+c+1)*nq]
				pd := w.c32[c*nq : (c+1)*nq]
				row, pd = row[:nq], pd[:nq]
				for a := range row {
					dr := rq[a] - rr
					lb := aq[a] + bc - 2*float64(pd[a]) + dr*dr
					row[a] = lb
					if lb < lbk[a] && qb[a] != r {
						w.addBest(a, k, boundPos{lb, int32(cb + c)})
					}
				}
			}
		}
		w.first = lo
	}
	b.used = b.used[:0]
	if split == nil {
		body(0, nb, &g.bw)
		b.used = append(b.used, &g.bw)
	} else {
		for len(b.parts) < nb {
			b.parts = append(b.parts, nil)
		}
		var mu sync.Mutex
		split(nb, func(lo, hi int) {
			w := b.parts[lo]
			if w == nil {
				w = &boundWork{part: true}
				b.parts[lo] = w
			}
			body(lo, hi, w)
			mu.Lock()
			b.used = append(b.used, w)
			mu.Unlock()
		})
		slices.SortFunc(b.used, func(x, y *boundWork) int { return x.first - y.first })
	}
	// The caps: each query's k smallest bounds over the parts' (ties to
	// the earlier candidate, so the cut into parts changes nothing).
	best := slices.Grow(b.best[:0], k)[:k]
	for a, q := range qb {
		n := 0
		for _, w := range b.used {
			for _, p := range w.best[a*k : a*k+w.nbest[a]] {
				if n == k && !p.less(best[k-1]) {
					continue
				}
				if n < k {
					n++
				}
				i := n - 1
				for i > 0 && p.less(best[i-1]) {
					best[i] = best[i-1]
					i--
				}
				best[i] = p
			}
		}
		up := math.Inf(1)
		if n == k {
			up = math.Inf(-1)
			// The approximate key is within δ of the canonical one.
			for _, p := range best {
				up = max(up, s.fastKey(q, refs[p.c])+dq[a])
			}
		}
		b.up[a] = up
	}
	b.best = best
}

// addBest offers candidate p to query a's k smallest bounds in w (sorted
// ascending), whose largest it is below, and updates lbk[a].
func (w *boundWork) addBest(a, k int, p boundPos) {
	l := w.best[a*k : a*k+k]
	n := w.nbest[a]
	if n < k {
		n++
		w.nbest[a] = n
	}
	i := n - 1
	for i > 0 && l[i-1].lb > p.lb {
		l[i] = l[i-1]
		i--
	}
	l[i] = p
	if n == k {
		w.lbk[a] = l[k-1].lb
	}
}

// boundPos is a candidate by position, with its bound.
type boundPos struct {
	lb float64
	c  int32
}

// less orders by bound, then position.
func (p boundPos) less(o boundPos) bool { return p.lb < o.lb || (p.lb == o.lb && p.c < o.c) }

// fastDot is the inner product of stored dense rows i and j, within delta
// of canonDot: in float32 with fast32 (vec.Dot32 in place), else in
// float64.
func (s *store) fastDot(i, j int) float64 {
	d := s.dim
	if s.fast32 {
		return float64(vec.Dot32(s.data32[i*d:(i+1)*d], s.data32[j*d:(j+1)*d]))
	}
	return dot64(s.denseRow(i), s.denseRow(j))
}

// fastKey is the approximate Euclidean key of stored dense rows i and j.
func (s *store) fastKey(i, j int) float64 { return s.sq[i] + s.sq[j] - 2*s.fastDot(i, j) }

// gather returns the coordinates of the slots ids as a row-major block, a
// view when the slots are consecutive.
func (b *bounds) gather(buf *[]float32, ids []int) []float32 {
	m := b.m
	if contiguous(ids) {
		return b.proj[ids[0]*m : (ids[len(ids)-1]+1)*m]
	}
	*buf = slices.Grow((*buf)[:0], len(ids)*m)[:len(ids)*m]
	for a, i := range ids {
		copy((*buf)[a*m:(a+1)*m], b.proj[i*m:(i+1)*m])
	}
	return *buf
}

// scanBound is scanEuclid for the queries qb (slots sa0… of st; the
// bounds of boundPrep) against the candidates refs[c0:c1], with the pairs
// that cannot enter a list skipped. A pair is kept when its usable bound
// is at most the query's cap, or (with reverse) the old node's threshold
// at the start: every pair the full scan would push or offer and that can
// end in a list is kept (thresholds only fall), so the lists after
// refinement are the full scan's. The kept pairs are then taken by blocks
// of boundDotBlock candidates, query by query within a block, their inner
// products computed in place (vec.Dot32 on the float32 rows, or in
// float64), and offered as the full scan offers them: each query meets its
// candidates, and each old node the queries, in the full scan's order.
func (g *Graph) scanBound(ls *lists, st *qstate, sa0 int, qb, refs []int, c0, c1 int, w *boundWork, reverse bool, touch func(int)) {
	s := &g.st
	b := &s.bd
	nq := len(qb)
	for len(w.keep) < nq {
		w.keep = append(w.keep, nil)
	}
	for a := range qb {
		w.keep[a] = w.keep[a][:0]
		st.cnt[sa0+a] += c1 - c0
	}
	for c := c0; c < c1; c++ {
		r := refs[c]
		rt := math.Inf(-1)
		if reverse {
			rt = g.rthr[r]
		}
		for a, lb := range b.lbm[c*nq : (c+1)*nq] {
			if qb[a] == r {
				st.cnt[sa0+a]--
				continue
			}
			if lb <= b.up[a] || lb <= rt+b.dq[a] {
				w.keep[a] = append(w.keep[a], int32(c))
			}
		}
	}
	// Candidates in blocks of boundDotBlock rows, each block's kept pairs
	// query by query: the block's float32 rows stay in cache while every
	// query that kept one of them reads it, instead of each query reading
	// its kept rows from memory in turn. Each query still meets its
	// candidates in ascending order and each old node the queries in
	// ascending order, as in the full scan.
	w.pos = slices.Grow(w.pos[:0], nq)[:nq]
	clear(w.pos)
	w.dq = slices.Grow(w.dq[:0], nq)[:nq]
	var dotted int
	for a, q := range qb {
		dotted += len(w.keep[a])
		w.dq[a] = s.delta(q)
	}
	for cb := c0; cb < c1; cb += boundDotBlock {
		ce := int32(min(cb+boundDotBlock, c1))
		for a, q := range qb {
			keep, i := w.keep[a], w.pos[a]
			if i == len(keep) || keep[i] >= ce {
				continue
			}
			sa := sa0 + a
			dq := w.dq[a]
			sqq := s.sq[q]
			thr := st.thr[sa]
			for ; i < len(keep) && keep[i] < ce; i++ {
				r := refs[keep[i]]
				key := sqq + s.sq[r] - 2*s.fastDot(q, r)
				if key <= thr {
					st.push(sa, cand{key, int32(r)})
					thr = st.thr[sa]
				}
				if reverse && key <= g.rthr[r]+dq {
					g.reverse(ls, r, q, key, touch)
					g.rthr[r] = g.revThr(ls, r)
				}
			}
			w.pos[a] = i
		}
	}
	b.checked.Add(int64(nq * (c1 - c0)))
	b.dotted.Add(int64(dotted))
}
