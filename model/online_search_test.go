package model

import (
	"cmp"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/graph"
)

// TestSearchBasisGraph checks Online.SearchBasis's rebuild on real data
// (the digits, rank 6 of 64 features, a window of 300 that has wrapped): the
// basis's columns are orthonormal; every live sample keeps its slot, the
// window its age order and the nodes their labels; and each node's list is
// exactly its k nearest live nodes by the distance of the samples'
// projections, found here by brute force.
func TestSearchBasisGraph(t *testing.T) {
	train, _, _, _, _ := digitsSplit(t, 10)
	n, d := train.Dims()
	o := &Online{Rank: 8, SearchBasis: 6, Graph: graph.KNN{K: 5, Window: 300}}
	for lo := 0; lo < min(n, 700); lo += 50 {
		ids, err := o.PartialFit(DenseRows(mat.DenseCopyOf(train.Slice(lo, min(lo+50, n), 0, d))))
		if err != nil {
			t.Fatal(err)
		}
		if err := o.SetLabel(ids[0], lo%7); err != nil {
			t.Fatal(err)
		}
	}
	g := o.KNN()
	if g.Dim() != 6 {
		t.Fatalf("the graph searches %d dimensions after 700 samples, want the basis's 6", g.Dim())
	}
	order := g.Order()
	if slices.IsSorted(order) {
		t.Fatal("test does not exercise a wrapped window")
	}
	labels := make([]int, g.Slots())
	for id := range labels {
		labels[id] = -1
		if g.Live(id) {
			labels[id] = g.Label(id)
		}
	}
	slots := g.Slots()
	r, err := o.fitSearchBasis()
	if err != nil {
		t.Fatal(err)
	}
	var gram mat.Dense
	gram.Mul(r.T(), r)
	for i := range 6 {
		for j := range 6 {
			if want := b2f(i == j); math.Abs(gram.At(i, j)-want) > 1e-9 {
				t.Fatalf("basis not orthonormal: (RᵀR)[%d,%d] = %g", i, j, gram.At(i, j))
			}
		}
	}
	if err := o.reembed(r); err != nil {
		t.Fatal(err)
	}
	g = o.KNN()
	if g.Slots() != slots || !slices.Equal(g.Order(), order) {
		t.Fatal("the rebuild moved slots or changed the age order")
	}
	var z mat.Dense
	z.Mul(&o.xd, r)
	for _, id := range order {
		if g.Label(id) != labels[id] {
			t.Fatalf("node %d: label %d, want %d", id, g.Label(id), labels[id])
		}
		type cand struct {
			id int
			d  float64
		}
		var all []cand
		for _, j := range order {
			if j != id {
				var s float64
				for c := range 6 {
					e := z.At(id, c) - z.At(j, c)
					s += e * e
				}
				all = append(all, cand{j, s})
			}
		}
		slices.SortFunc(all, func(a, b cand) int { return cmp.Or(cmp.Compare(a.d, b.d), cmp.Compare(a.id, b.id)) })
		got, dist := g.Neighbors(id)
		for p, j := range got {
			// Equal up to rounding: a near tie may order two nodes the
			// other way.
			if j != all[p].id && math.Abs(dist[p]-math.Sqrt(all[p].d)) > 1e-6 {
				t.Fatalf("node %d: neighbour %d is %d at %g, brute force %d at %g", id, p, j, dist[p], all[p].id, math.Sqrt(all[p].d))
			}
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// TestSearchBasisRule checks that the search stays on the samples when they
// have fewer than 10·SearchBasis features (the digits' 64 at rank 8), and
// that SearchDim and SearchBasis together are refused.
func TestSearchBasisRule(t *testing.T) {
	train, _, _, _, _ := digitsSplit(t, 10)
	x := DenseRows(mat.DenseCopyOf(train.Slice(0, 600, 0, 64)))
	o := &Online{Rank: 8, SearchBasis: 8, Graph: graph.KNN{K: 5}}
	if _, err := o.PartialFit(x); err != nil {
		t.Fatal(err)
	}
	if o.KNN().Dim() != 64 {
		t.Fatalf("the graph searches %d dimensions, want the samples' 64", o.KNN().Dim())
	}
	both := &Online{Rank: 8, SearchBasis: 6, SearchDim: 16}
	if _, err := both.PartialFit(x); err == nil {
		t.Fatal("SearchDim and SearchBasis together were accepted")
	}
}
