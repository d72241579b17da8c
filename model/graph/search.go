package graph

import (
	"math"
	"slices"
	"sync"

	"github.com/nmfstream/nmfstream/internal/vec"
)

// cand is a candidate neighbour with its approximate key.
type cand struct {
	key float64
	id  int32
}

// qstate is the per-query state of one search: a bounded max-heap of the k
// best candidates by approximate key, plus the "side" candidates whose
// approximate key is within the rounding margin of the heap's worst, which
// refinement must also look at.
type qstate struct {
	k    int
	heap []cand // q*k…, max-heap on (key, id)
	n    []int32
	thr  []float64 // accept threshold: heap max + 2δ, +Inf until the heap is full
	del  []float64 // 2δ per query
	cnt  []int     // candidates seen per query
	side [][]cand

	// Ties: with bind, a side list that outgrows its bound is compacted to
	// the exact k best so far (compact). If the k-th of those is at
	// squared distance 0 (Euclidean: k exact duplicates of the query),
	// no later candidate with a larger id can enter (keys are ≥ 0, ties go
	// to the smaller id), so push drops those at once: duplicates cost
	// O(1) each instead of an exact distance.
	qs     []int                  // query slot of each index, from bind
	canon  func(q, r int) float64 // the store's exact key, nil before bind
	euclid bool                   // keys are squared distances, ≥ 0
	zero   []bool                 // the exact k best so far are all at key 0
	zeroID []int32                // then, the largest id among them
	cbuf   []cand                 // compact's workspace
}

// bind lets st compact its side lists with g's exact keys, for queries
// whose slots are qs (index a is slot qs[a]). Call it after reset.
func (st *qstate) bind(qs []int, g *Graph) {
	st.qs, st.canon, st.euclid = qs, g.st.canon, !g.st.cosine
}

func (st *qstate) reset(nq, k int) {
	st.k = k
	st.heap = slices.Grow(st.heap[:0], nq*k)[:nq*k]
	st.n = slices.Grow(st.n[:0], nq)[:nq]
	st.thr = slices.Grow(st.thr[:0], nq)[:nq]
	st.del = slices.Grow(st.del[:0], nq)[:nq]
	st.cnt = slices.Grow(st.cnt[:0], nq)[:nq]
	clear(st.n)
	clear(st.cnt)
	for a := range st.thr {
		st.thr[a] = math.Inf(1)
	}
	for len(st.side) < nq {
		st.side = append(st.side, nil)
	}
	for a := 0; a < nq; a++ {
		st.side[a] = st.side[a][:0]
	}
	st.zero = slices.Grow(st.zero[:0], nq)[:nq]
	st.zeroID = slices.Grow(st.zeroID[:0], nq)[:nq]
	clear(st.zero)
	st.canon = nil
}

// absorb adds to query sa the candidates that part p holds for its query
// a (its heap and its side list), as far as they pass sa's threshold, and
// p's count of candidates seen.
func (st *qstate) absorb(sa int, p *qstate, a int) {
	st.cnt[sa] += p.cnt[a]
	for _, c := range p.heap[a*p.k : a*p.k+int(p.n[a])] {
		if c.key <= st.thr[sa] {
			st.push(sa, c)
		}
	}
	for _, c := range p.side[a] {
		if c.key <= st.thr[sa] {
			st.push(sa, c)
		}
	}
}

func candLess(x, y cand) bool { return less(x.key, int(x.id), y.key, int(y.id)) }

// push offers candidate c to query a. The caller has checked c.key ≤ thr[a].
func (st *qstate) push(a int, c cand) {
	if st.zero[a] && c.id > st.zeroID[a] {
		return // see qstate: it cannot rank before the k found
	}
	k := st.k
	h := st.heap[a*k : a*k+k]
	n := int(st.n[a])
	if n < k {
		// sift up
		i := n
		h[i] = c
		for i > 0 {
			p := (i - 1) / 2
			if !candLess(h[p], h[i]) {
				break
			}
			h[p], h[i] = h[i], h[p]
			i = p
		}
		n++
		st.n[a] = int32(n)
		if n == k {
			st.thr[a] = h[0].key + st.del[a]
		}
		return
	}
	if !candLess(c, h[0]) {
		st.addSide(a, c)
		return
	}
	out := h[0]
	h[0] = c
	// sift down
	i := 0
	for {
		l := 2*i + 1
		if l >= k {
			break
		}
		m := l
		if r := l + 1; r < k && candLess(h[l], h[r]) {
			m = r
		}
		if !candLess(h[i], h[m]) {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	st.thr[a] = h[0].key + st.del[a]
	st.addSide(a, out)
}

func (st *qstate) addSide(a int, c cand) {
	if c.key > st.thr[a] {
		return
	}
	s := append(st.side[a], c)
	if len(s) > 4*st.k+16 {
		// prune what can no longer qualify; thr only decreases.
		t := st.thr[a]
		s = slices.DeleteFunc(s, func(x cand) bool { return x.key > t })
	}
	st.side[a] = s
	if len(s) > 4*st.k+16 && st.canon != nil {
		// Many candidates within the rounding margin of each other: ties.
		st.compact(a)
	}
}

// compact replaces query a's heap and side list by the exact k best of
// them (by canonical key, then id), which is all the final list can take
// from them, and sets zero[a] when those are all at key 0.
func (st *qstate) compact(a int) {
	k := st.k
	h := st.heap[a*k : a*k+k]
	buf := append(st.cbuf[:0], h[:st.n[a]]...)
	buf = append(buf, st.side[a]...)
	q := st.qs[a]
	for i := range buf {
		buf[i].key = st.canon(q, int(buf[i].id))
	}
	slices.SortFunc(buf, func(x, y cand) int {
		if candLess(x, y) {
			return -1
		}
		if candLess(y, x) {
			return 1
		}
		return 0
	})
	buf = buf[:min(len(buf), k)]
	// Descending order is a valid max-heap.
	n := len(buf)
	for i := range buf {
		h[i] = buf[n-1-i]
	}
	st.n[a] = int32(n)
	st.side[a] = st.side[a][:0]
	st.cbuf = buf[:0]
	if n == k {
		st.thr[a] = h[0].key + st.del[a]
		if st.euclid && h[0].key == 0 {
			st.zero[a], st.zeroID[a] = true, h[0].id
		}
	}
}

// refine computes the exact k best neighbours of query slot q (state a)
// by canonical key and writes them into ls. It returns whether q's list
// changed, and reports ids entering or leaving the list through touch.
func (g *Graph) refine(ls *lists, st *qstate, a, q int, buf []cand, touch func(int)) []cand {
	k := st.k
	buf = buf[:0]
	buf = append(buf, st.heap[a*k:a*k+int(st.n[a])]...)
	t := st.thr[a]
	for _, c := range st.side[a] {
		if c.key <= t {
			buf = append(buf, c)
		}
	}
	for i := range buf {
		buf[i].key = g.st.canon(q, int(buf[i].id))
	}
	slices.SortFunc(buf, func(x, y cand) int {
		if candLess(x, y) {
			return -1
		}
		if candLess(y, x) {
			return 1
		}
		return 0
	})
	if len(buf) > ls.k {
		buf = buf[:ls.k]
	}
	if touch != nil {
		// Only the visible part makes edges. Marking exactly the nodes
		// whose edges change keeps Changed independent of the route that
		// reached the lists (a search here, slack elsewhere).
		old, _ := ls.visRow(q)
		vis := buf[:min(len(buf), ls.vis)]
		in := func(id int32) bool {
			return slices.ContainsFunc(vis, func(c cand) bool { return c.id == id })
		}
		same := len(old) == len(vis)
		for _, o := range old {
			if !in(o) {
				touch(int(o))
				same = false
			}
		}
		for _, c := range vis {
			if !slices.Contains(old, c.id) {
				touch(int(c.id))
				same = false
			}
		}
		if !same {
			touch(q)
		}
	}
	base := q * ls.k
	for i, c := range buf {
		ls.nbr[base+i] = c.id
		ls.key[base+i] = c.key
	}
	ls.n[q] = int32(len(buf))
	ls.cut[q] = st.cnt[a] > len(buf)
	return buf
}

// search recomputes exactly the lists of the query slots qs (ascending)
// against the candidate slots refs (ascending), keeping candidates r ≠ q with
// keep(q, r) (nil keeps all). If sym, qs and refs are the same set: only
// blocks on or above the diagonal are computed and both sides are updated,
// which halves the work. If old is non-nil, candidates r with old[r] (nodes
// already in the graph) also get q offered to their own lists, which is the
// reverse update of an incremental insertion. touch, if non-nil, is called
// with every node whose list or whose in-edges changed.
func (g *Graph) search(ls *lists, qs, refs []int, sym bool, keep func(q, r int) bool, old []bool, touch func(int)) {
	if len(qs) == 0 {
		return
	}
	k := ls.k
	bs := g.blockSize
	st := &g.qs
	st.reset(len(qs), k)
	st.bind(qs, g)
	for a, q := range qs {
		st.del[a] = 2 * g.st.delta(q)
	}
	if len(refs) > 0 {
		g.scan(ls, st, qs, refs, sym, keep, old, touch, bs)
	}
	var buf []cand
	for a, q := range qs {
		buf = g.refine(ls, st, a, q, buf, touch)
	}
}

func (g *Graph) scan(ls *lists, st *qstate, qs, refs []int, sym bool, keep func(q, r int) bool, old []bool, touch func(int), bs int) {
	need := bs * bs
	if cap(g.dotBuf) < need {
		g.dotBuf = make([]float64, need)
	}
	// rthr[r] bounds the approximate key at which old node r's list can
	// take a newcomer q (before q's own margin is added): most pairs fail
	// it, and the test costs one load instead of reverse's work.
	// New nodes get −Inf, so that one comparison screens them out too.
	if old != nil {
		g.rthr = slices.Grow(g.rthr[:0], len(g.live))[:len(g.live)]
		for _, r := range refs {
			if old[r] {
				g.rthr[r] = g.revThr(ls, r)
			} else {
				g.rthr[r] = math.Inf(-1)
			}
		}
	}
	bound := !sym && keep == nil && !g.st.cosine && !g.st.isSparse && g.useBound(qs, refs)
	if g.split != nil && !sym && keep == nil && !g.st.cosine {
		g.scanSplit(ls, st, qs, refs, old != nil, touch, bs, bound)
		return
	}
	if g.split != nil && sym && keep == nil && old == nil && touch == nil {
		g.scanSymSplit(ls, st, qs, bs)
		return
	}
	if bound {
		step := boundChunk(len(qs), len(refs))
		for i0 := 0; i0 < len(qs); i0 += step {
			qb := qs[i0:min(i0+step, len(qs))]
			g.boundPrep(qb, refs, ls.k, nil)
			g.scanBound(ls, st, i0, qb, refs, 0, len(refs), &g.bw, old != nil, touch)
		}
		return
	}
	for i0 := 0; i0 < len(qs); i0 += bs {
		qb := qs[i0:min(i0+bs, len(qs))]
		j0 := 0
		if sym {
			j0 = i0
		}
		for ; j0 < len(refs); j0 += bs {
			rb := refs[j0:min(j0+bs, len(refs))]
			dot := g.dotBuf[:len(qb)*len(rb)]
			g.st.dots(dot, qb, rb)
			if !sym && keep == nil && !g.st.cosine {
				g.scanEuclid(ls, st, i0, qb, rb, dot, old != nil, touch)
				continue
			}
			g.scanBlock(ls, st, i0, j0, qb, rb, dot, sym, keep, old, touch)
		}
	}
}

// scanBlock is scan's general loop over one block of queries qb (slots
// i0… of st) against one block of candidates rb (slots j0… when sym).
func (g *Graph) scanBlock(ls *lists, st *qstate, i0, j0 int, qb, rb []int, dot []float64, sym bool, keep func(q, r int) bool, old []bool, touch func(int)) {
	sq := g.st.sq
	nr := len(rb)
	diag := sym && i0 == j0
	for a, q := range qb {
		sa := i0 + a
		row := dot[a*nr : (a+1)*nr]
		sqq := sq[q]
		var dq float64
		if old != nil {
			dq = g.st.delta(q)
		}
		bstart := 0
		if diag {
			bstart = a + 1
		}
		for b := bstart; b < nr; b++ {
			r := rb[b]
			if r == q {
				continue
			}
			if keep != nil && !keep(q, r) {
				continue
			}
			st.cnt[sa]++
			key := g.st.approxKey(sqq, sq[r], row[b])
			if key <= st.thr[sa] {
				st.push(sa, cand{key, int32(r)})
			}
			if sym {
				sb := j0 + b
				st.cnt[sb]++
				if key <= st.thr[sb] {
					st.push(sb, cand{key, int32(q)})
				}
			} else if old != nil && old[r] && key <= g.rthr[r]+dq {
				g.reverse(ls, r, q, key, touch)
				g.rthr[r] = g.revThr(ls, r)
			}
		}
	}
}

// scanSymSplit is scan's symmetric pass (a batch build: every query
// against every other, each pair once) with the pairs of blocks on and
// above the diagonal cut into parts by g.split. A pair updates both its
// queries' candidates, so each part keeps candidates for every query; the
// parts' candidates are then pushed into st in part order, as scanSplit
// does, and refine narrows them to the serial lists.
func (g *Graph) scanSymSplit(ls *lists, st *qstate, qs []int, bs int) {
	nb := (len(qs) + bs - 1) / bs
	npairs := nb * (nb + 1) / 2
	// pair returns the blocks (I, J ≥ I) of pair number t, row by row.
	pair := func(t int) (int, int) {
		i := 0
		for t >= nb-i {
			t -= nb - i
			i++
		}
		return i, i + t
	}
	k := st.k
	var mu sync.Mutex
	var used []*scanPart
	g.split(npairs, func(lo, hi int) {
		p := &scanPart{bufs: dotBufs{part: true}}
		p.st.reset(len(qs), k)
		p.st.bind(qs, g)
		copy(p.st.del, st.del)
		for t := lo; t < hi; t++ {
			bi, bj := pair(t)
			i0, j0 := bi*bs, bj*bs
			qb, rb := qs[i0:min(i0+bs, len(qs))], qs[j0:min(j0+bs, len(qs))]
			p.dot = slices.Grow(p.dot[:0], len(qb)*len(rb))[:len(qb)*len(rb)]
			if g.st.isSparse {
				g.st.sparseDots(p.dot, qb, rb, &p.bufs)
			} else {
				g.st.denseDots(p.dot, qb, rb, &p.bufs)
			}
			g.scanBlock(ls, &p.st, i0, j0, qb, rb, p.dot, true, nil, nil, nil)
		}
		p.first = lo
		mu.Lock()
		used = append(used, p)
		mu.Unlock()
	})
	slices.SortFunc(used, func(a, b *scanPart) int { return a.first - b.first })
	for _, p := range used {
		for sa := range qs {
			st.absorb(sa, &p.st, sa)
		}
	}
}

// scanPart is the state of one part of scanSplit: its own candidates for
// the queries of a block, distances, BLAS workspace and touched nodes.
type scanPart struct {
	st      qstate
	dot     []float64
	bufs    dotBufs
	touched []int
	bw      boundWork // scanBound's
	first   int       // scanSymSplit: the first pair of the part
}

// scanSplit is scan's Euclidean insertion path with the reference blocks
// cut into parts by g.split. Each part keeps its own candidates per query
// and offers the queries to its own old nodes (the reverse update touches
// only the offered node's list and rthr entry, and each old node is in one
// part, where it meets the queries in the serial order). The parts'
// candidates are then pushed into st in part order and touched nodes
// replayed: st ends with the same k best and a superset of the margin
// candidates, which refine narrows to the same lists, so the graph equals
// the serial one.
func (g *Graph) scanSplit(ls *lists, st *qstate, qs, refs []int, reverse bool, touch func(int), bs int, bound bool) {
	nb := (len(refs) + bs - 1) / bs
	for len(g.parts) < nb {
		g.parts = append(g.parts, nil)
		g.partUsed = append(g.partUsed, false)
	}
	clear(g.parts[nb:]) // from a larger window
	k := st.k
	step := bs
	if bound {
		step = boundChunk(len(qs), len(refs))
	}
	for i0 := 0; i0 < len(qs); i0 += step {
		qb := qs[i0:min(i0+step, len(qs))]
		if bound {
			g.boundPrep(qb, refs, ls.k, g.split)
		}
		g.split(nb, func(lo, hi int) {
			p := g.parts[lo]
			if p == nil {
				p = &scanPart{bufs: dotBufs{part: true}, bw: boundWork{part: true}}
				g.parts[lo] = p
			}
			p.st.reset(len(qb), k)
			p.st.bind(qb, g)
			copy(p.st.del, st.del[i0:i0+len(qb)])
			p.touched = p.touched[:0]
			var tch func(int)
			if touch != nil {
				tch = func(i int) { p.touched = append(p.touched, i) }
			}
			if bound {
				g.scanBound(ls, &p.st, 0, qb, refs, lo*bs, min(hi*bs, len(refs)), &p.bw, reverse, tch)
			} else {
				for j := lo; j < hi; j++ {
					rb := refs[j*bs : min((j+1)*bs, len(refs))]
					if g.st.fast32 && contiguous(qb) && contiguous(rb) {
						g.scanEuclid32(ls, &p.st, qb, rb, g.st.rawDots32(qb, rb, &p.bufs), reverse, tch)
						continue
					}
					p.dot = slices.Grow(p.dot[:0], len(qb)*len(rb))[:len(qb)*len(rb)]
					if g.st.isSparse {
						g.st.sparseDots(p.dot, qb, rb, &p.bufs)
					} else {
						g.st.denseDots(p.dot, qb, rb, &p.bufs)
					}
					g.scanEuclid(ls, &p.st, 0, qb, rb, p.dot, reverse, tch)
				}
			}
			g.partUsed[lo] = true
		})
		for lo, used := range g.partUsed[:nb] {
			if !used {
				// Keep the workspaces of this cut only: the cut moves as
				// the window grows, and a part holds a block of distances.
				g.parts[lo] = nil
				continue
			}
			g.partUsed[lo] = false
			p := g.parts[lo]
			for a := range qb {
				st.absorb(i0+a, &p.st, a)
			}
			for _, i := range p.touched {
				touch(i)
			}
		}
	}
}

// scanEuclid is the inner loop of scan for the common case of an insertion
// (or re-search) under the Euclidean metric: no symmetric pass, no filter.
// It does what the general loop does, with the per-candidate branches
// hoisted: the squared-distance key, the query's threshold kept in a
// register until a push lowers it, and the reverse screen against rthr
// (−Inf for new nodes) when reverse is set.
func (g *Graph) scanEuclid(ls *lists, st *qstate, i0 int, qb, rb []int, dot []float64, reverse bool, touch func(int)) {
	sq := g.st.sq
	nr := len(rb)
	for a, q := range qb {
		sa := i0 + a
		row := dot[a*nr : (a+1)*nr]
		sqq := sq[q]
		var dq float64
		if reverse {
			dq = g.st.delta(q)
		}
		thr := st.thr[sa]
		seen := 0
		for b, r := range rb {
			if r == q {
				continue
			}
			seen++
			key := sqq + sq[r] - 2*row[b]
			if key <= thr {
				st.push(sa, cand{key, int32(r)})
				thr = st.thr[sa]
			}
			if reverse && key <= g.rthr[r]+dq {
				g.reverse(ls, r, q, key, touch)
				g.rthr[r] = g.revThr(ls, r)
			}
		}
		st.cnt[sa] += seen
	}
}

// scanEuclid32 is scanEuclid for a block of contiguous candidate slots rb
// whose inner products with the queries qb (st's slots 0…) are dot, in
// float32 (store.rawDots32): it reads them as they are instead of a
// float64 copy, and the candidates' norms and reverse thresholds as runs.
// Every key, push and reverse offer is scanEuclid's, in the same order:
// float64(dot) is the value scanEuclid reads, so the keys are the same to
// the bit.
func (g *Graph) scanEuclid32(ls *lists, st *qstate, qb, rb []int, dot []float32, reverse bool, touch func(int)) {
	nr := len(rb)
	r0 := rb[0]
	sqr := g.st.sq[r0 : r0+nr : r0+nr]
	var rthr []float64
	if reverse {
		rthr = g.rthr[r0 : r0+nr : r0+nr]
	}
	for a, q := range qb {
		row := dot[a*nr : (a+1)*nr : (a+1)*nr]
		sqq := g.st.sq[q]
		var dq float64
		if reverse {
			dq = g.st.delta(q)
		}
		thr := st.thr[a]
		self := q - r0 // q's own position in rb, if any: skipped
		// vec.Screen32 passes over the b that the first test below would
		// pass over (most of them), with the same keys and bounds; it reads
		// rthr past b, which the body writes at b only.
		for b := vec.Screen32(0, row, sqr, sqq, thr, rthr, dq); b < nr; b = vec.Screen32(b+1, row, sqr, sqq, thr, rthr, dq) {
			key := sqq + sqr[b] - 2*float64(row[b])
			if reverse {
				if key > thr && key > rthr[b]+dq {
					continue
				}
			} else if key > thr {
				continue
			}
			if b == self {
				continue
			}
			if key <= thr {
				st.push(a, cand{key, int32(r0 + b)})
				thr = st.thr[a]
			}
			if reverse && key <= rthr[b]+dq {
				g.reverse(ls, r0+b, q, key, touch)
				g.rthr[r0+b] = g.revThr(ls, r0+b)
			}
		}
		if self >= 0 && self < nr {
			st.cnt[a] += nr - 1
		} else {
			st.cnt[a] += nr
		}
	}
}

// revThr returns the approximate key above which no newcomer can enter
// p's list, less the newcomer's own margin: +Inf for an unbounded list,
// and for a full list not yet cut, so that reverse sees the first
// newcomer left out of it and cuts the list (a screened-out newcomer
// would otherwise leave the list marked complete, and a later deletion
// would not search for it). reverse decides exactly; this only screens.
func (g *Graph) revThr(ls *lists, p int) float64 {
	wk, _, bounded := ls.worst(p)
	if !bounded || !ls.cut[p] {
		return math.Inf(1)
	}
	return wk + g.st.delta(p)
}

// reverse offers new node q to old node p's list, given their approximate key.
func (g *Graph) reverse(ls *lists, p, q int, approx float64, touch func(int)) {
	wk, wid, bounded := ls.worst(p)
	if bounded {
		if approx > wk+g.st.delta(p)+g.st.delta(q) {
			ls.cut[p] = true
			return
		}
	}
	if bounded && wk == 0 && !g.st.cosine && q > wid {
		// p has k neighbours at distance 0: q cannot rank before them.
		ls.cut[p] = true
		return
	}
	key := g.st.canon(p, q)
	if bounded && !less(key, q, wk, wid) {
		ls.cut[p] = true
		return
	}
	pos, out := ls.offer(p, q, key)
	if touch != nil && pos < ls.vis {
		touch(p)
		touch(q)
		if out >= 0 {
			touch(out)
		}
	}
}
