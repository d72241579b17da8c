package model

import (
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// ageOrder tracks node ages the way a caller of State does.
type ageOrder struct {
	seq  []int
	next int
}

func (a *ageOrder) add(ids []int) {
	for _, id := range ids {
		for len(a.seq) <= id {
			a.seq = append(a.seq, 0)
		}
		a.seq[id] = a.next
		a.next++
	}
}

func (a *ageOrder) order(g *graph.Graph) []int {
	ids := g.IDs()
	slices.SortFunc(ids, func(i, j int) int { return a.seq[i] - a.seq[j] })
	return ids
}

// TestOnlineRestoreExact checks that a model restored from State continues
// bit for bit like the original: same ids, lists, codes and basis, also
// after the window has wrapped (ids reused out of age order) and after
// more evictions following the restore.
func TestOnlineRestoreExact(t *testing.T) {
	t.Run("full", func(t *testing.T) { testOnlineRestoreExact(t, 0, 0, "") })
	// With SearchDim the graph lives in a random projection that the state
	// must carry.
	t.Run("search-dim", func(t *testing.T) { testOnlineRestoreExact(t, 16, 0, "") })
	// With SearchBasis it lives in the span of a basis fitted at 500
	// samples (a wrapped window, restored after it) and again at 2,000:
	// the state carries the basis and the schedule, and the restored model
	// refits and rebuilds as the original does.
	t.Run("search-basis", func(t *testing.T) { testOnlineRestoreExact(t, 0, 6, "") })
	// Label methods: labels set between steps, whose label-graph changes
	// the next step sweeps, must survive the checkpoint; NGE also reorders
	// columns.
	t.Run("ssknmf", func(t *testing.T) { testOnlineRestoreExact(t, 0, 0, methodSSKNMF) })
	t.Run("ssknmf-search-basis", func(t *testing.T) { testOnlineRestoreExact(t, 0, 6, methodSSKNMF) })
	t.Run("nge", func(t *testing.T) { testOnlineRestoreExact(t, 0, 0, methodNGE) })
}

func testOnlineRestoreExact(t *testing.T, searchDim, searchBasis int, method string) {
	train, _, _, _, _ := digitsSplit(t, 10)
	n, d := train.Dims()
	if searchBasis > 0 {
		// Past 2,000 samples, the second basis: the digits twice over.
		twice := mat.NewDense(2*n, d, nil)
		twice.Slice(0, n, 0, d).(*mat.Dense).Copy(train)
		twice.Slice(n, 2*n, 0, d).(*mat.Dense).Copy(train)
		train, n = twice, 2*n
	}
	cfg := func() *Online {
		return &Online{Rank: 8, Method: method, Q: 3, Graph: graph.KNN{K: 5, Window: 250}, Sweeps: 5, Refresh: 20, SearchDim: searchDim, SearchBasis: searchBasis}
	}
	orig := cfg()
	var ages ageOrder
	sizes := []int{37, 13, 50, 7}
	lo, step := 0, 0
	batch := func() *mat.Dense {
		bs := sizes[step%len(sizes)]
		step++
		hi := min(lo+bs, n)
		x := mat.DenseCopyOf(train.Slice(lo, hi, 0, d))
		lo = hi
		return x
	}
	for lo < 600 {
		ids, err := orig.PartialFit(DenseRows(batch()))
		if err != nil {
			t.Fatal(err)
		}
		ages.add(ids)
		if method != "" {
			for p, id := range ids {
				if p%4 == 0 {
					if err := orig.SetLabel(id, id%5); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
	orig.KNN().SetLabel(ages.order(orig.KNN())[3], 4)
	st, err := orig.State(ages.order(orig.KNN()))
	if err != nil {
		t.Fatal(err)
	}
	if slices.IsSorted(st.Order) {
		t.Fatal("test does not exercise a wrapped window: age order is slot order")
	}
	re := cfg()
	if err := re.Restore(st); err != nil {
		t.Fatal(err)
	}
	// ForkState's copy of the graph restores the same model without the
	// rebuild: the copy keeps the original's slot generations, which the
	// rebuild, removing and inserting again, does not.
	fs, err := orig.ForkState(ages.order(orig.KNN()))
	if err != nil {
		t.Fatal(err)
	}
	fk := cfg()
	if err := fk.Restore(fs); err != nil {
		t.Fatal(err)
	}
	var sameAs func(when string, re *Online)
	rebuilt := false
	for _, id := range orig.KNN().IDs() {
		if fk.KNN().Gen(id) != orig.KNN().Gen(id) {
			t.Fatalf("node %d: generation %d after ForkState's restore, %d in the original: the graph was rebuilt", id, fk.KNN().Gen(id), orig.KNN().Gen(id))
		}
		rebuilt = rebuilt || re.KNN().Gen(id) != orig.KNN().Gen(id)
	}
	if !rebuilt && searchBasis == 0 {
		// (With a search basis the rebuild keeps every generation on this
		// stream, so there the check above says nothing.)
		t.Fatal("State's restore kept every generation: the check above tells nothing")
	}
	same := func(when string) {
		t.Helper()
		sameAs(when, re)
		sameAs(when+" (ForkState)", fk)
	}
	sameAs = func(when string, re *Online) {
		t.Helper()
		g, h := orig.KNN(), re.KNN()
		if !slices.Equal(g.IDs(), h.IDs()) || g.Slots() != h.Slots() {
			t.Fatalf("%s: live ids differ", when)
		}
		for _, id := range g.IDs() {
			a, da := g.Neighbors(id)
			b, db := h.Neighbors(id)
			if !slices.Equal(a, b) || !slices.Equal(da, db) || g.Label(id) != h.Label(id) {
				t.Fatalf("%s: node %d: lists or labels differ", when, id)
			}
		}
		// Exact equality: the restored model must replay the same arithmetic.
		if !mat.Equal(orig.Basis(), re.Basis()) || !mat.Equal(orig.Codes(), re.Codes()) {
			t.Fatalf("%s: factors differ", when)
		}
	}
	same("after restore")
	if searchBasis > 0 && (orig.KNN().Dim() != searchBasis || re.next != orig.next) {
		t.Fatalf("the graph searches %d dimensions (want %d), schedule %d and %d", orig.KNN().Dim(), searchBasis, orig.next, re.next)
	}
	for lo < n {
		x := batch()
		a, err := orig.PartialFit(DenseRows(x))
		if err != nil {
			t.Fatal(err)
		}
		b, err := re.PartialFit(DenseRows(mat.DenseCopyOf(x)))
		if err != nil {
			t.Fatal(err)
		}
		c, err := fk.PartialFit(DenseRows(mat.DenseCopyOf(x)))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a, b) || !slices.Equal(a, c) {
			t.Fatalf("ids differ after restore: %v vs %v and %v", a, b, c)
		}
	}
	same("at the end")
	if searchBasis > 0 && orig.next != 8000 {
		t.Fatalf("schedule at %d after %d samples: the second basis was not fitted", orig.next, n)
	}
}

// TestOnlineRestoreSparseHoles restores a sparse model whose graph has a
// free slot, before the first fit.
func TestOnlineRestoreSparseHoles(t *testing.T) {
	m := sparse.Zeros(0, 6)
	for i := 0; i < 12; i++ {
		a, b := i%6, (i+1)%6
		m.AppendRow([]int{min(a, b), max(a, b)}, []float64{1 + float64(i), 2})
	}
	o := &Online{Rank: 2, Graph: graph.KNN{K: 2}, InitSize: 50}
	if _, err := o.PartialFit(SparseRows(m)); err != nil {
		t.Fatal(err)
	}
	// Free a slot by hand to exercise the placeholder path of the rebuild.
	if _, err := o.KNN().Remove(4); err != nil {
		t.Fatal(err)
	}
	o.xsRows[4], o.xsVals[4] = nil, nil
	st, err := o.State(nil)
	if err != nil {
		t.Fatal(err)
	}
	re := &Online{Rank: 2, Graph: graph.KNN{K: 2}, InitSize: 50}
	if err := re.Restore(st); err != nil {
		t.Fatal(err)
	}
	if re.KNN().Live(4) || re.KNN().Len() != 11 || re.KNN().Slots() != 12 {
		t.Fatalf("restored graph: live(4)=%v len %d slots %d", re.KNN().Live(4), re.KNN().Len(), re.KNN().Slots())
	}
	for _, id := range o.KNN().IDs() {
		a, _ := o.KNN().Neighbors(id)
		b, _ := re.KNN().Neighbors(id)
		if !slices.Equal(a, b) {
			t.Fatalf("node %d: %v vs %v", id, a, b)
		}
	}
	// The next insertion reuses the free slot in both.
	x := sparse.Zeros(0, 6)
	x.AppendRow([]int{0}, []float64{3})
	a, _ := o.PartialFit(SparseRows(x))
	b, _ := re.PartialFit(SparseRows(x))
	if !slices.Equal(a, b) || a[0] != 4 {
		t.Fatalf("ids %v and %v, want [4]", a, b)
	}
}

// TestOnlineStateYoungWindow: a window not yet full holds more code rows
// (Height) than slots. State keeps the slots' rows only; Restore from it,
// and from a state whose V carries every row (the form before 2026-11-29),
// continues bit for bit as the original.
func TestOnlineStateYoungWindow(t *testing.T) {
	train, _, _, _, _ := digitsSplit(t, 10)
	_, d := train.Dims()
	cfg := func() *Online {
		return &Online{Rank: 6, Graph: graph.KNN{K: 5, Window: 400}, Sweeps: 3}
	}
	rows := func(lo, hi int) Data { return DenseRows(mat.DenseCopyOf(train.Slice(lo, hi, 0, d))) }
	orig := cfg()
	for lo := 0; lo < 150; lo += 50 {
		if _, err := orig.PartialFit(rows(lo, lo+50)); err != nil {
			t.Fatal(err)
		}
	}
	st, err := orig.State(nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Slots >= st.Height || len(st.V) != st.Slots*st.K {
		t.Fatalf("state of %d slots, height %d: V has %d entries, want Slots×K = %d", st.Slots, st.Height, len(st.V), st.Slots*st.K)
	}
	padded := *st
	padded.V = make([]float64, st.Height*st.K)
	copy(padded.V, st.V)
	models := []*Online{orig, cfg(), cfg()}
	for i, s := range []*OnlineState{st, &padded} {
		if err := models[i+1].Restore(s); err != nil {
			t.Fatal(err)
		}
	}
	for lo := 150; lo < 350; lo += 40 {
		for _, m := range models {
			if _, err := m.PartialFit(rows(lo, lo+40)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i, m := range models[1:] {
		if !mat.Equal(orig.Basis(), m.Basis()) || !mat.Equal(orig.Codes(), m.Codes()) {
			t.Fatalf("restore %d: factors differ from the original's", i)
		}
	}
	bad := *st
	bad.V = bad.V[:len(bad.V)-1]
	if err := cfg().Restore(&bad); err == nil {
		t.Fatal("a V of neither Slots×K nor Height×K entries was restored")
	}
}
