package stages

import (
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/classify"
	"github.com/nmfstream/nmfstream/model/graph"
)

// walker finds labeled nodes near a node in code space by a best-first
// search of the k-NN graph: the search of one layer of HNSW (Malkov and
// Yashunin, "Efficient and robust approximate nearest neighbor search using
// Hierarchical Navigable Small World graphs", IEEE TPAMI 42(4), 2020),
// started from the node's own neighbours. The graph links samples that are
// near in the input (or search) space, and GNMF pulls the codes of linked
// samples together, so a short walk reaches the code-space neighbourhood
// without reading the whole window: its cost depends on ef and k, not on
// the window size.
type walker struct {
	ef     int      // size of the result set (HNSW's ef)
	seen   []uint32 // per slot: stamp of the last query that reached it
	stamp  uint32
	nb     []int
	cand   distHeap // frontier, nearest first
	res    distHeap // the ef nearest reached, farthest first
	lab    distHeap // the kk nearest labeled reached, farthest first
	qnorm  float64
	metric classify.Metric
}

type distItem struct {
	d  float64
	id int
}

// keepNearest offers node j at distance d to top, the k ≥ 1 nearest so far
// sorted by distance, nearest first (an offer that ties the farthest of k
// is not taken), and returns top.
func keepNearest(top []distItem, k, j int, d float64) []distItem {
	if len(top) == k && d >= top[len(top)-1].d {
		return top
	}
	pos := len(top)
	if len(top) < k {
		top = append(top, distItem{})
	} else {
		pos--
	}
	for pos > 0 && top[pos-1].d > d {
		top[pos] = top[pos-1]
		pos--
	}
	top[pos] = distItem{id: j, d: d}
	return top
}

// distHeap is a binary heap of distItems, a min-heap or (max) a max-heap
// by d, ties broken by id so that results do not depend on visiting order.
// It is typed, unlike container/heap, so that pushes do not allocate.
type distHeap struct {
	items []distItem
	max   bool
}

func (h *distHeap) Len() int { return len(h.items) }

// before reports whether item a belongs above item b.
func (h *distHeap) before(a, b distItem) bool {
	if a.d != b.d {
		return (a.d < b.d) != h.max
	}
	return (a.id < b.id) != h.max
}

func (h *distHeap) push(x distItem) {
	h.items = append(h.items, x)
	i := len(h.items) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h.before(h.items[i], h.items[p]) {
			break
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

func (h *distHeap) pop() distItem {
	top := h.items[0]
	n := len(h.items) - 1
	h.items[0] = h.items[n]
	h.items = h.items[:n]
	for i := 0; ; {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && h.before(h.items[c+1], h.items[c]) {
			c++
		}
		if !h.before(h.items[c], h.items[i]) {
			break
		}
		h.items[i], h.items[c] = h.items[c], h.items[i]
		i = c
	}
	return top
}

// worse reports whether an item (d, id) ranks after the top of a max-heap.
func (h *distHeap) worse(d float64, id int) bool {
	t := h.items[0]
	return d > t.d || d == t.d && id > t.id
}

// dist is the code-space distance between rows a and b: squared Euclidean,
// or the cosine distance, with qnorm = ‖a‖.
func (w *walker) dist(a, b []float64) float64 {
	if w.metric == classify.Cosine {
		var dot, nb float64
		for j, x := range a {
			dot += x * b[j]
			nb += b[j] * b[j]
		}
		if w.qnorm == 0 || nb == 0 {
			return 1
		}
		return 1 - dot/(w.qnorm*math.Sqrt(nb))
	}
	var s float64
	for j, x := range a {
		d := x - b[j]
		s += d * d
	}
	return s
}

// nearest returns up to kk labeled nodes near q in code space, nearest
// first, with class(id) ≥ 0 marking the labeled nodes; ids are appended
// to dst.
func (w *walker) nearest(dst []distItem, g *graph.Graph, v *mat.Dense, q, kk int, class func(int) int) []distItem {
	if len(w.seen) < g.Slots() {
		w.seen = append(w.seen, make([]uint32, g.Slots()-len(w.seen))...)
	}
	w.stamp++
	if w.stamp == 0 { // wrapped: clear old stamps
		clear(w.seen)
		w.stamp = 1
	}
	w.cand.items, w.res.items, w.lab.items = w.cand.items[:0], w.res.items[:0], w.lab.items[:0]
	w.cand.max, w.res.max, w.lab.max = false, true, true
	qv := v.RawRowView(q)
	w.qnorm = 0
	if w.metric == classify.Cosine {
		w.qnorm = math.Sqrt(floats.Dot(qv, qv))
	}
	w.seen[q] = w.stamp
	visit := func(id int) {
		if w.seen[id] == w.stamp {
			return
		}
		w.seen[id] = w.stamp
		d := w.dist(qv, v.RawRowView(id))
		if w.res.Len() < w.ef || !w.res.worse(d, id) {
			w.cand.push(distItem{d, id})
			w.res.push(distItem{d, id})
			if w.res.Len() > w.ef {
				w.res.pop()
			}
		}
		if class(id) >= 0 && (w.lab.Len() < kk || !w.lab.worse(d, id)) {
			w.lab.push(distItem{d, id})
			if w.lab.Len() > kk {
				w.lab.pop()
			}
		}
	}
	w.nb = g.AppendNeighbors(w.nb[:0], q)
	for _, id := range w.nb {
		visit(id)
	}
	for w.cand.Len() > 0 {
		c := w.cand.pop()
		if w.res.Len() >= w.ef && w.res.worse(c.d, c.id) {
			break // the frontier is farther than every result: done
		}
		w.nb = g.AppendNeighbors(w.nb[:0], c.id)
		for _, id := range w.nb {
			visit(id)
		}
	}
	n := len(dst)
	for w.lab.Len() > 0 {
		dst = append(dst, w.lab.pop())
	}
	// Popped farthest first: reverse to nearest first.
	for a, b := n, len(dst)-1; a < b; a, b = a+1, b-1 {
		dst[a], dst[b] = dst[b], dst[a]
	}
	return dst
}
