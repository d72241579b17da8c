package graph

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/mem"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// Graph is an exact directed k-nearest-neighbour graph over a set of nodes
// that can grow and shrink. It stores the data rows it needs to search, the
// neighbour list of every node (ids and distances, nearest first, ties
// broken by the smaller id), and optional class labels, from which it
// keeps the intra- and inter-class neighbour lists of the labeled nodes.
// Symmetric weight matrices are built on demand by Weights, IntraInter,
// Signed and MFA.
//
// # Node ids
//
// A node's id is the index of its slot. The ids of live nodes never change.
// Removing a node frees its slot, and a later insertion reuses the smallest
// free slot, so ids stay below the largest number of nodes ever live at once
// and a windowed stream uses flat memory. Gen(id) counts how many times the
// slot has been freed: callers that keep ids across removals pair them with
// Gen to detect reuse. Matrices built from a graph are Slots()×Slots(); the
// rows and columns of free slots are empty.
//
// A Graph is not safe for concurrent mutation.
type Graph struct {
	cfg       KNN
	blockSize int
	st        store

	knn   lists // k-NN lists over all live nodes
	intra lists // same-class lists of labeled nodes (IntraK)
	inter lists // different-class lists of labeled nodes (max(InterK, PenaltyPairs))

	live  []bool
	gen   []uint32
	label []int
	free  []int // free slots, ascending
	nlive int

	fifo []slotGen // insertion order, for the window
	head int

	split func(n int, body func(lo, hi int)) // see SetSplit

	// workspace
	qs       qstate
	dotBuf   []float64
	bw       boundWork   // scanBound's, serial
	parts    []*scanPart // by first block, see scanSplit
	partUsed []bool
	rthr     []float64 // per slot, see scan
	mark     []bool
	marked   []int
	sym      symCache // reverse lists for WeightRows, once it is used
	// Per-insertion buffers of the window's size, kept so that a large
	// window does not allocate (and fault in) them again every batch:
	// refsBuf holds liveIDs' slots for finishInsert and removeSlots (each
	// done with it before the other starts), oldBuf and goneBuf their
	// per-slot flags.
	refsBuf []int
	oldBuf  []bool
	goneBuf []bool
}

type slotGen struct {
	slot int
	gen  uint32
}

// Change reports what an Insert, Remove or SetLabel did.
type Change struct {
	// Added holds the ids given to the inserted rows, in input order.
	Added []int
	// Removed holds the ids of removed nodes (by Remove or the window).
	Removed []int
	// Changed holds, ascending, every live node whose row of a symmetric
	// weight matrix may have changed: nodes whose own neighbour list changed,
	// nodes that entered or left some list, and the added nodes. For
	// SetLabel it refers to the label graphs. Callers update these nodes'
	// codes.
	Changed []int
}

// SetSplit lets insertions into g search in parts at once. split(n, body)
// must call body on disjoint, non-empty ranges [lo, hi) covering [0, n),
// possibly on several goroutines, and return once every call has
// returned; cutting the same n the same way every time lets the parts
// keep their workspaces (by lo).
// The Euclidean search of dense insertions then scans the window's
// blocks in those parts, each with its own candidates, merged in order:
// the graph is the same as with nil (the default: one part, on the
// caller's goroutine). pipeline.Split provides one.
func (g *Graph) SetSplit(split func(n int, body func(lo, hi int))) { g.split = split }

// Config returns the graph's configuration with defaults filled in.
func (g *Graph) Config() KNN { return g.cfg }

// Len returns the number of live nodes.
func (g *Graph) Len() int { return g.nlive }

// Slots returns one more than the largest id ever used: the order of the
// matrices built from g.
func (g *Graph) Slots() int { return len(g.live) }

// Dim returns the dimension of the stored rows.
func (g *Graph) Dim() int { return g.st.dim }

// Live reports whether id is a live node.
func (g *Graph) Live(id int) bool { return id >= 0 && id < len(g.live) && g.live[id] }

// Norm returns the Euclidean norm of the row stored at slot id as it was
// given (before any cosine scaling), or 0 for a free slot.
func (g *Graph) Norm(id int) float64 {
	if !g.Live(id) {
		return 0
	}
	return g.st.raw[id]
}

// Gen returns the number of times slot id has been freed.
func (g *Graph) Gen(id int) uint32 { return g.gen[id] }

// IDs returns the live node ids in ascending order, in a new slice.
func (g *Graph) IDs() []int {
	ids := make([]int, 0, g.nlive)
	for i, l := range g.live {
		if l {
			ids = append(ids, i)
		}
	}
	return ids
}

// Neighbors returns the neighbours of node id, nearest first, and their
// distances (Euclidean distance, or 1 − cos for Cosine), in new slices.
// It panics if id is not live.
func (g *Graph) Neighbors(id int) (ids []int, dist []float64) {
	if !g.Live(id) {
		panic(fmt.Sprintf("graph: Neighbors: node %d is not live", id))
	}
	nb, key := g.knn.visRow(id)
	ids = make([]int, len(nb))
	dist = make([]float64, len(nb))
	for i := range nb {
		ids[i] = int(nb[i])
		dist[i] = g.dist(key[i])
	}
	return ids, dist
}

// AppendNeighbors appends the neighbours of node id, nearest first, to dst
// and returns it: Neighbors without the distances or an allocation when
// dst has room. It panics if id is not live.
func (g *Graph) AppendNeighbors(dst []int, id int) []int {
	if !g.Live(id) {
		panic(fmt.Sprintf("graph: AppendNeighbors: node %d is not live", id))
	}
	nb, _ := g.knn.visRow(id)
	for _, j := range nb {
		dst = append(dst, int(j))
	}
	return dst
}

// dist turns a canonical key into the metric's distance.
func (g *Graph) dist(key float64) float64 {
	if g.st.cosine {
		return 1 - cosOf(key)
	}
	return math.Sqrt(key)
}

// cosOf inverts the cosine key −sgn(c)·c².
func cosOf(key float64) float64 {
	if key <= 0 {
		return math.Sqrt(-key)
	}
	return -math.Sqrt(key)
}

func (g *Graph) touch(i int) {
	if !g.mark[i] {
		g.mark[i] = true
		g.marked = append(g.marked, i)
	}
}

// takeMarked returns the marked live nodes ascending and clears the marks.
func (g *Graph) takeMarked() []int {
	g.noteDirty(g.marked)
	out := make([]int, 0, len(g.marked))
	for _, i := range g.marked {
		g.mark[i] = false
		if g.live[i] {
			out = append(out, i)
		}
	}
	g.marked = g.marked[:0]
	slices.Sort(out)
	return out
}

// alloc assigns a slot to a new node.
func (g *Graph) alloc() int {
	var s int
	if len(g.free) > 0 {
		s = g.free[0]
		g.free = g.free[1:]
	} else {
		s = len(g.live)
		g.live = append(g.live, false)
		g.gen = append(g.gen, 0)
		g.label = append(g.label, -1)
		g.mark = append(g.mark, false)
		g.st.growTo(s + 1)
		g.knn.grow(s + 1)
		g.intra.grow(s + 1)
		g.inter.grow(s + 1)
	}
	g.live[s] = true
	g.label[s] = -1
	g.knn.clear(s)
	g.intra.clear(s)
	g.inter.clear(s)
	g.nlive++
	g.fifo = append(g.fifo, slotGen{s, g.gen[s]})
	return s
}

// reserve makes room for n more slots without repeated reallocation.
func (g *Graph) reserve(n int) {
	n -= len(g.free)
	if n <= 0 {
		return
	}
	g.live = slices.Grow(g.live, n)
	g.gen = slices.Grow(g.gen, n)
	g.label = slices.Grow(g.label, n)
	g.mark = slices.Grow(g.mark, n)
	g.st.sq = slices.Grow(g.st.sq, n)
	g.st.raw = slices.Grow(g.st.raw, n)
	if g.st.isSparse {
		g.st.ind = slices.Grow(g.st.ind, n)
		g.st.val = slices.Grow(g.st.val, n)
	} else {
		if !g.st.borrowed {
			g.st.data = growData(g.st.data, n*g.st.dim, g.cfg.Window*g.st.dim)
		}
		if g.st.keep32 {
			g.st.data32 = growData(g.st.data32, n*g.st.dim, g.cfg.Window*g.st.dim)
		}
	}
	for _, l := range []*lists{&g.knn, &g.intra, &g.inter} {
		l.n = slices.Grow(l.n, n)
		l.cut = slices.Grow(l.cut, n)
		l.nbr = slices.Grow(l.nbr, n*l.k)
		l.key = slices.Grow(l.key, n*l.k)
	}
}

// presizeValues bounds the window (slots × D values) whose row storage
// growData allocates whole at the first insertion: fresh memory from the
// operating system costs nothing until a row is written, while doubling
// copies every row once more and faults in twice the memory. Larger
// windows grow by doubling.
const presizeValues = 1 << 25

// growData returns s with room for n more values, at least doubling its
// capacity when it must grow (slices.Grow grows a slice this large by a
// quarter, so a store filled a batch at a time was copied over and over),
// but never beyond limit values when limit (a window's slots × D) holds
// them, and limit at once when it is at most presizeValues.
func growData[T float32 | float64](s []T, n, limit int) []T {
	need := len(s) + n
	if need <= cap(s) {
		return s
	}
	c := max(need, 2*cap(s))
	whole := false
	if limit >= need {
		c = min(c, limit)
		if limit <= presizeValues {
			// The whole window at once, never copied again.
			c, whole = limit, true
		}
	}
	t := make([]T, len(s), c)
	if whole {
		// The window fills it row by row: map its pages in at once
		// rather than one fault at a time. (A doubled store's spare
		// half may never be written: it is left to fault in.)
		mem.Populate(t)
	}
	copy(t, s)
	return t
}

// liveIDs returns the live slots ascending, reusing buf.
func (g *Graph) liveIDs(buf []int) []int {
	buf = buf[:0]
	for i, l := range g.live {
		if l {
			buf = append(buf, i)
		}
	}
	return buf
}

// addDense validates and stores the rows of x, returning their ids. On a
// validation error nothing is stored.
func (g *Graph) addDense(x mat.Matrix) ([]int, error) { return g.addDenseBorrow(x, false) }

// addDenseBorrow is addDense that, if borrow is set, may read x's rows in
// place (a batch build, whose caller promises not to modify x: see
// KNN.Dense).
func (g *Graph) addDenseBorrow(x mat.Matrix, borrow bool) ([]int, error) {
	if g.st.isSparse {
		return nil, fmt.Errorf("graph: dense rows inserted into a sparse graph")
	}
	n, d := x.Dims()
	if d != g.st.dim {
		return nil, fmt.Errorf("graph: rows have %d columns, want %d", d, g.st.dim)
	}
	row := make([]float64, d)
	norms := make([]float64, n)
	getRow := func(i int) []float64 {
		if xd, ok := x.(mat.RawRowViewer); ok {
			return xd.RawRowView(i)
		}
		mat.Row(row, i, x)
		return row
	}
	for i := 0; i < n; i++ {
		nm, err := g.st.checkRow(i, nil, getRow(i))
		if err != nil {
			return nil, err
		}
		norms[i] = nm
	}
	// A batch build into an empty graph reads x's rows in place, when they
	// lie one after the other: the graph's own copy, the size of x, would
	// be dropped unused by a batch fit (GNMF keeps only the weights). The
	// first write (an insertion or removal) copies them (store.own).
	if xd, ok := x.(*mat.Dense); borrow && ok && len(g.live) == 0 && !g.st.keep32 && n > 0 && xd.RawMatrix().Stride == d {
		g.st.data, g.st.borrowed = xd.RawMatrix().Data[:n*d:n*d], true
	} else {
		borrow = false
	}
	g.reserve(n)
	ids := make([]int, n)
	for i := 0; i < n; i++ {
		s := g.alloc()
		if borrow {
			g.st.finish(s, norms[i]) // slot s = i: its row is x's row i
		} else {
			g.st.setDense(s, getRow(i), norms[i])
		}
		ids[i] = s
	}
	return ids, nil
}

func (g *Graph) addSparse(x *sparse.CSR) ([]int, error) {
	if !g.st.isSparse {
		return nil, fmt.Errorf("graph: sparse rows inserted into a dense graph")
	}
	n, d := x.Dims()
	if d < g.st.dim {
		return nil, fmt.Errorf("graph: rows have %d columns, want at least %d", d, g.st.dim)
	}
	norms := make([]float64, n)
	for i := 0; i < n; i++ {
		ind, val := x.Row(i)
		nm, err := g.st.checkRow(i, ind, val)
		if err != nil {
			return nil, err
		}
		norms[i] = nm
	}
	g.st.dim = d
	g.reserve(n)
	ids := make([]int, n)
	for i := 0; i < n; i++ {
		s := g.alloc()
		ind, val := x.Row(i)
		g.st.setSparse(s, ind, val, norms[i])
		ids[i] = s
	}
	return ids, nil
}

// InsertDense adds the rows of x (one sample per row) to a dense graph and
// updates the neighbour lists exactly: each new node gets its k nearest
// among all live nodes, and an old node's list takes in a new node that
// ranks before its current k-th neighbour. Inserting rows one at a time or
// all at once gives the same lists as a batch build. With a Window, the
// oldest nodes are removed first. On an error nothing changes.
func (g *Graph) InsertDense(x mat.Matrix) (Change, error) {
	n, _ := x.Dims()
	if err := g.makeRoom(n); err != nil {
		return Change{}, err
	}
	// Validate before evicting, so that a bad batch changes nothing.
	if _, d := x.Dims(); d != g.st.dim || g.st.isSparse {
		_, err := g.addDense(x) // returns the error
		return Change{}, err
	}
	if err := g.checkDense(x); err != nil {
		return Change{}, err
	}
	removed := g.evict(n)
	ids, err := g.addDense(x)
	if err != nil {
		return Change{}, err // unreachable: rows were checked
	}
	return g.finishInsert(ids, removed), nil
}

// InsertSparse adds the rows of x to a sparse graph, as InsertDense does.
// x may have more columns than earlier rows (a growing vocabulary).
func (g *Graph) InsertSparse(x *sparse.CSR) (Change, error) {
	n, d := x.Dims()
	if err := g.makeRoom(n); err != nil {
		return Change{}, err
	}
	if !g.st.isSparse || d < g.st.dim {
		_, err := g.addSparse(x)
		return Change{}, err
	}
	for i := 0; i < n; i++ {
		ind, val := x.Row(i)
		if _, err := g.st.checkRow(i, ind, val); err != nil {
			return Change{}, err
		}
	}
	removed := g.evict(n)
	ids, err := g.addSparse(x)
	if err != nil {
		return Change{}, err
	}
	return g.finishInsert(ids, removed), nil
}

func (g *Graph) checkDense(x mat.Matrix) error {
	n, d := x.Dims()
	row := make([]float64, d)
	for i := 0; i < n; i++ {
		mat.Row(row, i, x)
		if _, err := g.st.checkRow(i, nil, row); err != nil {
			return err
		}
	}
	return nil
}

func (g *Graph) makeRoom(n int) error {
	if w := g.cfg.Window; w > 0 && n > w {
		return fmt.Errorf("graph: batch of %d exceeds the window of %d", n, w)
	}
	return nil
}

// evict removes the oldest nodes so that n more fit in the window.
func (g *Graph) evict(n int) []int {
	w := g.cfg.Window
	if w == 0 || g.nlive+n <= w {
		return nil
	}
	var out []int
	for g.nlive-len(out)+n > w {
		sg := g.fifo[g.head]
		g.head++
		if g.live[sg.slot] && g.gen[sg.slot] == sg.gen {
			out = append(out, sg.slot)
		}
	}
	if g.head > len(g.fifo)/2 {
		g.fifo = append(g.fifo[:0], g.fifo[g.head:]...)
		g.head = 0
	}
	g.removeSlots(out)
	return out
}

// Evicting returns the slots that inserting n samples now would remove
// from a full window, in the order of that insertion's Change.Removed,
// without changing anything: the caller can read their rows (DenseRows)
// before the insertion writes new samples over them. It returns nil
// without a Window, when n more samples fit, or when n exceeds the window
// (such an insertion fails and removes nothing).
func (g *Graph) Evicting(n int) []int {
	w := g.cfg.Window
	if w == 0 || n > w || g.nlive+n <= w {
		return nil
	}
	var out []int
	for h := g.head; g.nlive-len(out)+n > w; h++ {
		sg := g.fifo[h]
		if g.live[sg.slot] && g.gen[sg.slot] == sg.gen {
			out = append(out, sg.slot)
		}
	}
	return out
}

// Order returns the live nodes from the oldest to the newest (their
// insertion order, the order in which a window removes them), in a new
// slice.
func (g *Graph) Order() []int {
	out := make([]int, 0, g.nlive)
	for _, sg := range g.fifo[g.head:] {
		if g.live[sg.slot] && g.gen[sg.slot] == sg.gen {
			out = append(out, sg.slot)
		}
	}
	return out
}

// min32Nodes is the number of live nodes from which an incrementally grown
// graph decides on float32 dots (store.enable32): enough rows to judge the
// data's spread, and below it the dots are cheap anyway.
var min32Nodes = 256 // a variable for the tests

func (g *Graph) finishInsert(ids, removed []int) Change {
	g.oldBuf = slices.Grow(g.oldBuf[:0], len(g.live))[:len(g.live)]
	old := g.oldBuf
	copy(old, g.live)
	for _, s := range ids {
		old[s] = false
		g.touch(s)
	}
	qs := slices.Clone(ids)
	slices.Sort(qs)
	g.refsBuf = g.liveIDs(g.refsBuf)
	refs := g.refsBuf
	if g.nlive >= min32Nodes {
		g.st.enable32(refs)
	}
	g.search(&g.knn, qs, refs, false, nil, old, g.touch)
	return Change{Added: ids, Removed: removed, Changed: g.takeMarked()}
}

// Remove deletes the given live nodes. Every live node that had a removed
// node as a neighbour is searched again exactly, so the lists equal those of
// a fresh build on the remaining nodes. It returns an error, and changes
// nothing, if an id is not live or repeated.
func (g *Graph) Remove(ids ...int) (Change, error) {
	seen := make(map[int]bool, len(ids))
	for _, id := range ids {
		if !g.Live(id) {
			return Change{}, fmt.Errorf("graph: remove: node %d is not live", id)
		}
		if seen[id] {
			return Change{}, fmt.Errorf("graph: remove: node %d repeated", id)
		}
		seen[id] = true
	}
	out := slices.Clone(ids)
	g.removeSlots(out)
	return Change{Removed: out, Changed: g.takeMarked()}, nil
}

// removeSlots removes live slots and repairs the lists that held them.
// It marks the nodes it changes.
func (g *Graph) removeSlots(ids []int) {
	if len(ids) == 0 {
		return
	}
	// Labels go first so the label lists are repaired too.
	var unl []int
	for _, id := range ids {
		if g.label[id] >= 0 {
			unl = append(unl, id)
		}
	}
	g.unlabel(unl)
	g.noteDirty(ids)
	g.goneBuf = slices.Grow(g.goneBuf[:0], len(g.live))[:len(g.live)]
	gone := g.goneBuf
	clear(gone)
	for _, id := range ids {
		gone[id] = true
		g.live[id] = false
		g.nlive--
		for _, j := range g.knnRow(id) {
			g.touch(j)
		}
		g.knn.clear(id)
		g.st.clearSlot(id)
		g.gen[id]++
		i, _ := slices.BinarySearch(g.free, id)
		g.free = slices.Insert(g.free, i, id)
	}
	affected := g.drop(&g.knn, gone, nil)
	g.refsBuf = g.liveIDs(g.refsBuf)
	g.search(&g.knn, affected, g.refsBuf, false, nil, nil, g.touch)
}

func (g *Graph) knnRow(id int) []int {
	nb, _ := g.knn.visRow(id)
	out := make([]int, len(nb))
	for i, x := range nb {
		out[i] = int(x)
	}
	return out
}

// drop deletes the nodes with gone set from the lists in ls of the live
// nodes among cands (nil: all live), marking the nodes whose edges change,
// and returns (ascending) those whose lists must be searched again: lists
// left with fewer than the visible number of entries while candidates were
// left out of them. With slack entries, most lists need no search.
func (g *Graph) drop(ls *lists, gone []bool, cands []int) []int {
	var out []int
	check := func(p int) {
		if ls.drop(p, gone, g.touch) {
			out = append(out, p)
		}
	}
	if cands == nil {
		for p, l := range g.live {
			if l {
				check(p)
			}
		}
	} else {
		for _, p := range cands {
			check(p)
		}
	}
	return out
}
