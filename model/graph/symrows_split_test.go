package graph

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/nmfstream/nmfstream/datasets"
	"github.com/nmfstream/nmfstream/internal/splittest"
	"github.com/nmfstream/nmfstream/pipeline"
)

// TestWeightRowsSplit checks that WeightRows in parts (SetSplit, at least
// weightRowsSplitMin rows) gives the serial matrix bit for bit, with
// pipeline.Split and with splittest.Reverse's uneven parts run last first,
// for every slot of a digits graph with free slots, in a scrambled order
// with repeats, under several weightings; and that its rows are Weights'.
func TestWeightRowsSplit(t *testing.T) {
	x, _ := datasets.Digits()
	g, err := KNN{K: 5}.NewDense(64)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.InsertDense(x); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Remove(3, 500, 501, 1700); err != nil {
		t.Fatal(err)
	}
	ids := seq(g.Slots())
	ids = append(ids, ids[:200]...) // repeats
	rand.New(rand.NewPCG(1, 1)).Shuffle(len(ids), func(a, b int) { ids[a], ids[b] = ids[b], ids[a] })
	if len(ids) < weightRowsSplitMin {
		t.Fatalf("%d rows, fewer than weightRowsSplitMin", len(ids))
	}
	for _, w := range []Weighting{{}, {Scheme: HeatKernel, HeatT: 0.7, Sym: Mean}, {Scheme: HeatKernel, Sym: Mutual}, {Scheme: CosineSimilarity}, {Scheme: DotProduct}} {
		g.SetSplit(nil)
		want := g.WeightRows(w, ids)
		all := g.Weights(w)
		for r, id := range ids {
			wi, wv := all.Row(id)
			gi, gv := want.Row(r)
			if !slices.Equal(wi, gi) || !slices.Equal(wv, gv) {
				t.Fatalf("%+v: row of node %d is %v %v, Weights has %v %v", w, id, gi, gv, wi, wv)
			}
		}
		for name, split := range map[string]func(int, func(int, int)){"pipeline.Split(2)": pipeline.Split(2), "splittest.Reverse": splittest.Reverse} {
			g.SetSplit(split)
			got := g.WeightRows(w, ids)
			if !slices.Equal(got.Indptr, want.Indptr) || !slices.Equal(got.Ind, want.Ind) || !slices.Equal(got.Val, want.Val) {
				t.Errorf("%+v, %s: WeightRows in parts differs from the serial one", w, name)
			}
		}
	}
}
