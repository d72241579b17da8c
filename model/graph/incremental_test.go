package graph

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/splittest"
	"github.com/nmfstream/nmfstream/model/sparse"
	"github.com/nmfstream/nmfstream/pipeline"
)

func rowsOf(x *mat.Dense, rows []int) *mat.Dense {
	_, d := x.Dims()
	out := mat.NewDense(len(rows), d, nil)
	for a, i := range rows {
		out.SetRow(a, x.RawRowView(i))
	}
	return out
}

// sameLists fails unless g (node ids) and ref (ids 0…) have equal lists
// under the id map ids[refNode] = gNode, and equal distances bit for bit.
func sameLists(t *testing.T, g, ref *Graph, ids []int) {
	t.Helper()
	if g.Len() != ref.Len() {
		t.Fatalf("%d nodes, want %d", g.Len(), ref.Len())
	}
	for a, id := range ids {
		got, gd := g.Neighbors(id)
		want, wd := ref.Neighbors(a)
		for p := range want {
			want[p] = ids[want[p]]
		}
		if !slices.Equal(got, want) || !slices.Equal(gd, wd) {
			t.Fatalf("node %d: %v %v, want %v %v", id, got, gd, want, wd)
		}
	}
}

func TestInsertEqualsBatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, m := range []Metric{Euclidean, Cosine} {
		t.Run(m.String(), func(t *testing.T) {
			x := tieData(150, 6, rng)
			cfg := KNN{K: 5, Metric: m, BlockSize: 32}
			batch, err := cfg.Dense(x)
			if err != nil {
				t.Fatal(err)
			}
			// One at a time, from an empty graph.
			one, err := cfg.NewDense(6)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 150; i++ {
				ch, err := one.InsertDense(rowsOf(x, []int{i}))
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(ch.Added, []int{i}) {
					t.Fatalf("added %v, want [%d]", ch.Added, i)
				}
			}
			sameLists(t, one, batch, seq(150))
			// A batch build on a prefix, then uneven batches.
			g, err := cfg.Dense(rowsOf(x, seq(40)))
			if err != nil {
				t.Fatal(err)
			}
			for lo, step := 40, 1; lo < 150; lo, step = lo+step, step*2 {
				hi := min(lo+step, 150)
				if _, err := g.InsertDense(rowsOf(x, seq(hi)[lo:])); err != nil {
					t.Fatal(err)
				}
			}
			sameLists(t, g, batch, seq(150))
		})
	}
}

func TestInsertSparseEqualsBatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	x := sparseData(120, 40, 3, rng)
	cfg := KNN{K: 4, Metric: Cosine, BlockSize: 16}
	batch, err := cfg.Sparse(sparse.FromDense(x))
	if err != nil {
		t.Fatal(err)
	}
	g, err := cfg.NewSparse(0)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 120; i += 7 {
		if _, err := g.InsertSparse(sparse.FromDense(rowsOf(x, seq(min(i+7, 120))[i:]))); err != nil {
			t.Fatal(err)
		}
	}
	sameLists(t, g, batch, seq(120))
}

// TestChangedIsComplete checks that Change.Changed names every node whose
// row of S changed, by diffing S before and after.
func TestChangedIsComplete(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	x := randData(80, 4, rng)
	g, err := KNN{K: 3, Window: 60}.Dense(rowsOf(x, seq(50)))
	if err != nil {
		t.Fatal(err)
	}
	for lo := 50; lo < 80; lo += 5 {
		before := g.Weights(Weighting{}).ToDense()
		ch, err := g.InsertDense(rowsOf(x, seq(lo + 5)[lo:]))
		if err != nil {
			t.Fatal(err)
		}
		after := g.Weights(Weighting{}).ToDense()
		n, _ := after.Dims()
		for i := 0; i < n; i++ {
			if !g.Live(i) {
				continue
			}
			differs := false
			for j := 0; j < n; j++ {
				var b float64
				if bn, _ := before.Dims(); i < bn && j < bn {
					b = before.At(i, j)
				}
				differs = differs || b != after.At(i, j)
			}
			if differs && !slices.Contains(ch.Changed, i) {
				t.Fatalf("row %d of S changed but is not in Changed %v", i, ch.Changed)
			}
		}
		if len(ch.Changed) > 5+3*20 {
			t.Errorf("Changed has %d nodes, too many to be useful", len(ch.Changed))
		}
	}
}

func TestWindowEqualsFreshBuild(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	const n, w = 200, 50
	x := tieData(n, 5, rng)
	for _, m := range []Metric{Euclidean, Cosine} {
		t.Run(m.String(), func(t *testing.T) {
			cfg := KNN{K: 4, Metric: m, Window: w, BlockSize: 16}
			g, err := cfg.NewDense(5)
			if err != nil {
				t.Fatal(err)
			}
			rowOf := map[int]int{} // node id → row of x
			for lo := 0; lo < n; lo += 3 {
				hi := min(lo+3, n)
				ch, err := g.InsertDense(rowsOf(x, seq(hi)[lo:]))
				if err != nil {
					t.Fatal(err)
				}
				for a, id := range ch.Added {
					rowOf[id] = lo + a
				}
				if g.Len() > w {
					t.Fatalf("%d live nodes exceed the window %d", g.Len(), w)
				}
				if g.Slots() > w {
					t.Fatalf("%d slots: memory is not flat", g.Slots())
				}
				if lo%30 != 0 || g.Len() <= cfg.K {
					continue
				}
				// Fresh build on the remaining rows, ordered by id (ids and rows
				// are not in the same order once slots are reused; ties are
				// broken by id, so the reference is built in id order).
				ids := g.IDs()
				rows := make([]int, len(ids))
				for a, id := range ids {
					rows[a] = rowOf[id]
					if want := hi - w + 0; hi > w && rows[a] < want {
						t.Fatalf("row %d should have left the window", rows[a])
					}
				}
				ref, err := KNN{K: 4, Metric: m}.Dense(rowsOf(x, rows))
				if err != nil {
					t.Fatal(err)
				}
				sameLists(t, g, ref, ids)
			}
		})
	}
}

func TestRemoveEqualsFreshBuild(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	x := tieData(120, 4, rng)
	g, err := KNN{K: 6}.Dense(x)
	if err != nil {
		t.Fatal(err)
	}
	gone := []int{3, 50, 51, 7, 119, 0}
	ch, err := g.Remove(gone...)
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.Changed) == 0 {
		t.Error("no node changed")
	}
	var keep []int
	for i := 0; i < 120; i++ {
		if !slices.Contains(gone, i) {
			keep = append(keep, i)
		}
	}
	ref, err := KNN{K: 6}.Dense(rowsOf(x, keep))
	if err != nil {
		t.Fatal(err)
	}
	sameLists(t, g, ref, keep)
	// Slot reuse: the smallest free slot first, generation bumped.
	ch, err = g.InsertDense(rowsOf(x, []int{0}))
	if err != nil {
		t.Fatal(err)
	}
	if ch.Added[0] != 0 || g.Gen(0) != 1 {
		t.Errorf("reinserted at %d gen %d, want 0 gen 1", ch.Added[0], g.Gen(0))
	}
}

// TestSparseVocabularyGrows inserts sparse rows whose vocabulary grows
// along the stream and compares with a batch build over the final width.
func TestSparseVocabularyGrows(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	x := sparseData(90, 30, 3, rng)
	for i := 0; i < 45; i++ { // the first half uses only the first 10 terms
		for j := 10; j < 30; j++ {
			x.Set(i, j, 0)
		}
		x.Set(i, i%10, 1)
	}
	g, err := KNN{K: 3, Metric: Euclidean}.NewSparse(10)
	if err != nil {
		t.Fatal(err)
	}
	first := sparse.FromDense(x.Slice(0, 45, 0, 10))
	if _, err := g.InsertSparse(first); err != nil {
		t.Fatal(err)
	}
	if _, err := g.InsertSparse(sparse.FromDense(x.Slice(45, 90, 0, 30))); err != nil {
		t.Fatal(err)
	}
	if g.Dim() != 30 {
		t.Errorf("dim %d, want 30", g.Dim())
	}
	batch, err := KNN{K: 3}.Sparse(sparse.FromDense(x))
	if err != nil {
		t.Fatal(err)
	}
	sameLists(t, g, batch, seq(90))
	if _, err := g.InsertDense(x.Slice(0, 1, 0, 30)); err == nil {
		t.Error("dense rows into a sparse graph: no error")
	}
}

// TestSlackEqualsFreshBuild streams rows through a window while removing
// random nodes, with several slack sizes, and checks after every step that
// the lists equal a fresh build on the live rows and that Changed holds
// every node whose row of S changed.
func TestSlackEqualsFreshBuild(t *testing.T) {
	const n, w, k = 160, 40, 4
	x := tieData(n, 3, rand.New(rand.NewPCG(3, 3)))
	for _, slack := range []int{-1, 1, 3, 8} {
		t.Run(fmt.Sprint("slack", slack), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(4, 4))
			g, err := KNN{K: k, Window: w, Slack: slack, BlockSize: 8}.NewDense(3)
			if err != nil {
				t.Fatal(err)
			}
			rowOf := map[int]int{}
			for lo := 0; lo < n; lo += 7 {
				hi := min(lo+7, n)
				var before *mat.Dense
				if g.Slots() > 0 {
					before = g.Weights(Weighting{}).ToDense()
				}
				ch, err := g.InsertDense(rowsOf(x, seq(hi)[lo:]))
				if err != nil {
					t.Fatal(err)
				}
				for a, id := range ch.Added {
					rowOf[id] = lo + a
				}
				changed := ch.Changed
				if ids := g.IDs(); len(ids) > 2*k && rng.IntN(2) == 0 {
					// Remove two random live nodes as well.
					rc, err := g.Remove(ids[rng.IntN(len(ids)/2)], ids[len(ids)/2+rng.IntN(len(ids)/2)])
					if err != nil {
						t.Fatal(err)
					}
					changed = append(slices.Clone(changed), rc.Changed...)
				}
				checkChanged(t, g, before, changed)
				sameWeightRows(t, g)
				if g.Len() <= k {
					continue
				}
				ids := g.IDs()
				rows := make([]int, len(ids))
				for a, id := range ids {
					rows[a] = rowOf[id]
				}
				ref, err := KNN{K: k}.Dense(rowsOf(x, rows))
				if err != nil {
					t.Fatal(err)
				}
				sameLists(t, g, ref, ids)
			}
		})
	}
}

// sameWeightRows fails unless WeightRows gives the rows of Weights bit for
// bit, for every slot (in a scrambled order) and several weightings. Called
// after each step of a stream, it checks that the reverse lists follow
// every insertion, removal and eviction.
func sameWeightRows(t *testing.T, g *Graph) {
	t.Helper()
	ids := seq(g.Slots())
	rand.New(rand.NewPCG(uint64(len(ids)), 5)).Shuffle(len(ids), func(a, b int) { ids[a], ids[b] = ids[b], ids[a] })
	for _, w := range []Weighting{{}, {Scheme: HeatKernel, HeatT: 0.7, Sym: Mean}, {Scheme: HeatKernel, Sym: Mutual}, {Scheme: DotProduct}} {
		all := g.Weights(w)
		rows := g.WeightRows(w, ids)
		for r, id := range ids {
			wi, wv := all.Row(id)
			gi, gv := rows.Row(r)
			if !slices.Equal(wi, gi) || !slices.Equal(wv, gv) {
				t.Fatalf("%+v: WeightRows row of node %d is %v %v, Weights has %v %v", w, id, gi, gv, wi, wv)
			}
		}
	}
}

// checkChanged fails if a live node's row of g's weights differs from its
// row in before (the weights earlier) and the node is not in changed.
func checkChanged(t *testing.T, g *Graph, before *mat.Dense, changed []int) {
	t.Helper()
	after := g.Weights(Weighting{}).ToDense()
	n, _ := after.Dims()
	bn := 0
	if before != nil {
		bn, _ = before.Dims()
	}
	for i := 0; i < n; i++ {
		if !g.Live(i) {
			continue
		}
		for j := 0; j < n; j++ {
			var b float64
			if i < bn && j < bn {
				b = before.At(i, j)
			}
			if b != after.At(i, j) && !slices.Contains(changed, i) {
				t.Fatalf("row %d of S changed but is not in Changed %v", i, changed)
			}
		}
	}
}

// nearTies is tieData moved by up to 1e-9: distances that float32 cannot
// order, so that the search's margin candidates decide the lists.
func nearTies(n, d int, rng *rand.Rand) *mat.Dense {
	x := tieData(n, d, rng)
	raw := x.RawMatrix().Data
	for i := range raw {
		raw[i] += 1e-9 * rng.Float64()
	}
	return x
}

// TestSplitEqualsSerial checks that a search split into parts
// (SetSplit) gives the serial graph exactly: the same changes, lists and
// distances after every insertion into a sliding window, on data with
// ties, in float64 and in the float32 search of wide data (with near-ties
// there, the candidates within the float32 margin decide the lists), and
// on sparse rows (each part with its own column lists).
func TestSplitEqualsSerial(t *testing.T) {
	defer func(m int) { min32Nodes = m }(min32Nodes)
	min32Nodes = 16
	rng := rand.New(rand.NewPCG(5, 5))
	for _, c := range []struct {
		name   string
		x      *mat.Dense
		sparse bool
	}{{"ties", tieData(300, 5, rng), false}, {"float32", randData(300, 64, rng), false}, {"float32 near-ties", nearTies(300, 64, rng), false},
		{"sparse", sparseData(300, 200, 20, rng), true}, {"sparse ties", tieData(300, 5, rng), true}} {
		t.Run(c.name, func(t *testing.T) {
			_, d := c.x.Dims()
			cfg := KNN{K: 4, Window: 60, BlockSize: 8}
			newGraph, insert := cfg.NewDense, (*Graph).InsertDense
			if c.sparse {
				newGraph = cfg.NewSparse
				insert = func(g *Graph, x mat.Matrix) (Change, error) { return g.InsertSparse(sparse.FromDense(x.(*mat.Dense))) }
			}
			serial, err := newGraph(d)
			if err != nil {
				t.Fatal(err)
			}
			split, _ := newGraph(d)
			split.SetSplit(splittest.Reverse)
			for lo := 0; lo < 300; lo += 7 {
				rows := rowsOf(c.x, seq(min(lo+7, 300))[lo:])
				want, err := insert(serial, rows)
				if err != nil {
					t.Fatal(err)
				}
				got, err := insert(split, rows)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got.Added, want.Added) || !slices.Equal(got.Removed, want.Removed) || !slices.Equal(got.Changed, want.Changed) {
					t.Fatalf("rows %d…: split change %+v, serial %+v", lo, got, want)
				}
				for _, id := range serial.IDs() {
					gn, gd := split.Neighbors(id)
					wn, wd := serial.Neighbors(id)
					if !slices.Equal(gn, wn) || !slices.Equal(gd, wd) {
						t.Fatalf("rows %d…: node %d: split %v %v, serial %v %v", lo, id, gn, gd, wn, wd)
					}
				}
				sameWeightRows(t, split)
			}
			if !c.sparse && c.name != "ties" && !split.st.fast32 {
				t.Error("the wide data did not take the float32 search")
			}
		})
	}
}

// TestBatchSplitEqualsSerial checks that a batch build whose symmetric
// search runs in parts (KNN.DenseSplit, KNN.SparseSplit) gives the serial
// graph exactly, with parts cut unevenly and run last first
// (splittest.Reverse), on two and three goroutines and in shared pieces,
// under both metrics: dense rows with ties, the float32 search of wide
// rows with near-ties, and sparse rows (TF-IDF-like, with duplicates, and
// small integers with many ties).
func TestBatchSplitEqualsSerial(t *testing.T) {
	defer func(m int) { min32Nodes = m }(min32Nodes)
	min32Nodes = 16
	rng := rand.New(rand.NewPCG(6, 6))
	type build func(c KNN, split func(int, func(int, int))) (*Graph, error)
	dense := func(x *mat.Dense) build {
		return func(c KNN, split func(int, func(int, int))) (*Graph, error) { return c.DenseSplit(x, split) }
	}
	sparseRows := func(x *sparse.CSR) build {
		return func(c KNN, split func(int, func(int, int))) (*Graph, error) { return c.SparseSplit(x, split) }
	}
	for _, c := range []struct {
		name  string
		build build
	}{
		{"ties", dense(tieData(300, 5, rng))}, {"float32", dense(randData(300, 64, rng))}, {"float32 near-ties", dense(nearTies(300, 64, rng))},
		{"sparse tf-idf-like", sparseRows(sparseOf(sparseData(300, 60, 4, rng)))}, {"sparse ties", sparseRows(sparseOf(tieData(300, 5, rng)))},
	} {
		for _, metric := range []Metric{Euclidean, Cosine} {
			cfg := KNN{K: 4, BlockSize: 8, Metric: metric}
			serial, err := c.build(cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			for name, split := range map[string]func(int, func(int, int)){
				"reverse": splittest.Reverse, "2 goroutines": pipeline.Split(2), "3 goroutines": pipeline.Split(3),
				"2 goroutines sharing pieces": pipeline.Share(2),
			} {
				got, err := c.build(cfg, split)
				if err != nil {
					t.Fatal(err)
				}
				for _, id := range serial.IDs() {
					gn, gd := got.Neighbors(id)
					wn, wd := serial.Neighbors(id)
					if !slices.Equal(gn, wn) || !slices.Equal(gd, wd) {
						t.Fatalf("%s, metric %v, %s: node %d: split %v %v, serial %v %v", c.name, metric, name, id, gn, gd, wn, wd)
					}
				}
				sameWeightRows(t, got)
			}
		}
	}
}

// TestBatchBorrowsRows checks that a batch build reads the rows of a
// contiguous *mat.Dense in place, and that the first insertion and the
// first removal copy them instead of writing into the caller's matrix;
// the graph then equals one built from a copy.
func TestBatchBorrowsRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	x := randData(60, 4, rng)
	orig := mat.DenseCopyOf(x)
	for name, change := range map[string]func(g *Graph) error{
		"insert": func(g *Graph) error { _, err := g.InsertDense(randData(3, 4, rng)); return err },
		"remove": func(g *Graph) error { _, err := g.Remove(5, 17); return err },
	} {
		g, err := KNN{K: 3}.Dense(x)
		if err != nil {
			t.Fatal(err)
		}
		if !g.st.borrowed || &g.st.data[0] != &x.RawMatrix().Data[0] {
			t.Fatalf("%s: the batch build copied the rows", name)
		}
		if err := change(g); err != nil {
			t.Fatal(err)
		}
		if g.st.borrowed || &g.st.data[0] == &x.RawMatrix().Data[0] {
			t.Errorf("%s: the graph still reads the caller's rows", name)
		}
		if !mat.Equal(x, orig) {
			t.Fatalf("%s: the caller's matrix changed", name)
		}
		for i := range 60 {
			if g.Live(i) && !slices.Equal(g.st.denseRow(i), orig.RawRowView(i)) {
				t.Fatalf("%s: row %d is %v, want %v", name, i, g.st.denseRow(i), orig.RawRowView(i))
			}
		}
	}
	// An insertion into an empty graph copies: the caller may reuse its
	// buffer.
	g, _ := KNN{K: 3}.NewDense(4)
	if _, err := g.InsertDense(x); err != nil {
		t.Fatal(err)
	}
	if g.st.borrowed {
		t.Error("an insertion borrowed the caller's rows")
	}
}
