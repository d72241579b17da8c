package stages

import (
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/datasets"
	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// sameRows fails unless every row of r equals the row of s bit for bit.
func sameRows(t *testing.T, step int, r *weightRows, s *sparse.CSR) {
	t.Helper()
	n, _ := s.Dims()
	if rn, _ := r.Dims(); rn != n {
		t.Fatalf("step %d: %d rows kept, the graph has %d slots", step, rn, n)
	}
	for i := range n {
		wi, wv := s.Row(i)
		gi, gv := r.Row(i)
		if len(gi) != len(wi) {
			t.Fatalf("step %d: row %d has %d entries, spreadWeights %d", step, i, len(gi), len(wi))
		}
		for p := range wi {
			if gi[p] != wi[p] || gv[p] != wv[p] {
				t.Fatalf("step %d: row %d entry %d is (%d, %v), spreadWeights (%d, %v)", step, i, p, gi[p], gv[p], wi[p], wv[p])
			}
		}
	}
}

// TestWeightRowsFollowTheGraph streams the digits through a window of 300
// samples (so that every batch evicts) and checks, after every batch, that
// the rows kept between batches equal spreadWeights rebuilt whole: cosine
// powers (the images' default) and binary weights (the documents'), across
// a checkpoint round trip of the model, and when a batch's edits are
// skipped (more than the graph's slots: every row recomputed); and that
// the rows divided by their degrees from the kept rows (normRows, only
// those refreshed since its last call divided anew) equal those divided
// from spreadWeights.
func TestWeightRowsFollowTheGraph(t *testing.T) {
	x, _ := datasets.Digits()
	n, d := x.Dims()
	for _, c := range []struct {
		p   float64
		sym graph.Symmetrize
	}{{20, graph.Max}, {-1, graph.Max}, {20, graph.Mean}, {-1, graph.Mean}} {
		p := c.p
		o := &model.Online{Rank: 8, Graph: graph.KNN{K: 5, Window: 300}}
		var r weightRows
		var nr normRows
		step := 0
		for lo := 0; lo < n; lo += 37 {
			hi := min(lo+37, n)
			if _, err := o.PartialFit(model.DenseRows(x.Slice(lo, hi, 0, d).(*mat.Dense))); err != nil {
				t.Fatal(err)
			}
			step++
			if step == 20 { // a checkpoint round trip: the restored model's edits say "every row"
				o = restored(t, o, o.State)
				if _, all := o.TakeGraphEdits(); !all {
					t.Fatal("a restored model's first TakeGraphEdits does not say every row")
				}
				r.valid = false
			}
			if step == 25 { // a fork after a batch whose edits were not taken (step 24): the fork keeps them and r stays valid
				o = restored(t, o, o.ForkState)
			}
			if step%7 == 3 {
				continue // this batch's edits wait for the next refresh
			}
			g := o.KNN()
			w := o.Weighting
			w.Sym = c.sym
			r.refresh(o, g, w, p)
			want := spreadWeights(g, w, p)
			sameRows(t, step, &r, want)
			if step%5 == 1 {
				continue // these rows wait for the next division
			}
			// The rows divided by their degrees, from the kept rows (only
			// those refreshed since the last division) and anew.
			nr.set(&r)
			if !sameDivided(&nr, want) {
				t.Fatalf("step %d: the rows divided from the kept rows differ from those divided anew", step)
			}
		}
	}
}

// restored returns a model like o restored from the state that state
// (o.State or o.ForkState) gives.
func restored(t *testing.T, o *model.Online, state func([]int) (*model.OnlineState, error)) *model.Online {
	t.Helper()
	st, err := state(nil)
	if err != nil {
		t.Fatal(err)
	}
	back := &model.Online{Rank: o.Rank, Graph: o.Graph}
	if err := back.Restore(st); err != nil {
		t.Fatal(err)
	}
	return back
}

// TestTakeGraphEdits checks what TakeGraphEdits promises: every row at its
// first call and after the insertion that makes the graph, then the nodes
// of the insertions since, nothing after a call with no insertion between.
func TestTakeGraphEdits(t *testing.T) {
	x, _ := datasets.Digits()
	_, d := x.Dims()
	o := &model.Online{Rank: 4, Graph: graph.KNN{K: 3}}
	if _, all := o.TakeGraphEdits(); !all {
		t.Fatal("first call on an empty model: want every row")
	}
	if _, err := o.PartialFit(model.DenseRows(x.Slice(0, 50, 0, d).(*mat.Dense))); err != nil {
		t.Fatal(err)
	}
	if _, all := o.TakeGraphEdits(); !all {
		t.Fatal("after the first insertion made the graph: want every row")
	}
	ids, err := o.PartialFit(model.DenseRows(x.Slice(50, 80, 0, d).(*mat.Dense)))
	if err != nil {
		t.Fatal(err)
	}
	nodes, all := o.TakeGraphEdits()
	if all {
		t.Fatal("after a second insertion: want its nodes, got every row")
	}
	seen := map[int]bool{}
	for _, id := range nodes {
		seen[id] = true
	}
	for _, id := range ids {
		if !seen[id] {
			t.Fatalf("inserted node %d missing from the edits %v", id, nodes)
		}
	}
	if nodes, all := o.TakeGraphEdits(); all || len(nodes) != 0 {
		t.Fatalf("no insertion since the last call: got %v, all %v", nodes, all)
	}
}

// TestWeightRowsChangedBounded refreshes the kept rows after every batch of
// a stream through a small window without dividing them (as when the
// spreading reads other weights): the list of rows refreshed since stays
// within twice the graph's slots, and the rows divided at the end equal
// those divided anew.
func TestWeightRowsChangedBounded(t *testing.T) {
	x, _ := datasets.Digits()
	n, d := x.Dims()
	o := &model.Online{Rank: 8, Graph: graph.KNN{K: 5, Window: 100}}
	var r weightRows
	var nr normRows
	for lo := 0; lo < n; lo += 37 {
		hi := min(lo+37, n)
		if _, err := o.PartialFit(model.DenseRows(x.Slice(lo, hi, 0, d).(*mat.Dense))); err != nil {
			t.Fatal(err)
		}
		g := o.KNN()
		r.refresh(o, g, o.Weighting, 20)
		if lo == 0 {
			nr.set(&r) // taken once
		}
		if len(r.changed) > 2*g.Slots() {
			t.Fatalf("at sample %d: %d rows listed as refreshed, %d slots", lo, len(r.changed), g.Slots())
		}
	}
	nr.set(&r)
	if !sameDivided(&nr, spreadWeights(o.KNN(), o.Weighting, 20)) {
		t.Fatal("the rows divided at the end differ from those divided anew")
	}
}

// sameDivided reports whether nr holds, bit for bit, the rows of w divided
// by their degrees anew, and those degrees (normRows.set on w).
func sameDivided(nr *normRows, w *sparse.CSR) bool {
	var fresh normRows
	fresh.set(w)
	return slices.Equal(nr.ptr, fresh.ptr) && slices.Equal(nr.ind, fresh.ind) && slices.Equal(nr.a, fresh.a) &&
		slices.Equal(nr.deg, fresh.deg)
}
