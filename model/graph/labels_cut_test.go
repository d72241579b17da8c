package graph

import (
	"fmt"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/datasets"
)

// TestLabelListsWindowExact streams the digits through a window of 250 in
// uneven batches, labels every fourth sample on arrival (five classes, so
// that a class holds about as many labeled samples as IntraK), and checks
// after every insertion and every label that each labeled node's intra- and
// inter-class lists are the brute-force nearest (canonical keys, ties to the
// smaller id), and that a list holding fewer entries than it has candidates
// is cut. A full list whose newcomer was screened out before the reverse
// update used to stay marked complete; an eviction then left it short of a
// neighbour, and a model restored from a checkpoint (whose lists are built
// afresh) no longer agreed with the original.
func TestLabelListsWindowExact(t *testing.T) {
	xd, _ := datasets.Digits()
	const n, w = 1200, 250
	_, d := xd.Dims()
	x := xd.Slice(0, n, 0, d).(*mat.Dense)
	for _, c := range []KNN{{K: 5, IntraK: 10, InterK: 1, PenaltyPairs: 1, Window: w}, {K: 5, IntraK: 8, InterK: 3, Window: w}} {
		g, err := c.NewDense(d)
		if err != nil {
			t.Fatal(err)
		}
		check := func(what string) {
			t.Helper()
			for _, l := range []struct {
				name string
				ls   *lists
				k    int
				keep func(q, r int) bool
			}{{"intra", &g.intra, c.IntraK, g.sameLabel}, {"inter", &g.inter, g.inter.k, g.diffLabel}} {
				for _, q := range g.IDs() {
					if g.Label(q) < 0 {
						continue
					}
					var cands []int
					for _, r := range g.IDs() {
						if r != q && g.Label(r) >= 0 && l.keep(q, r) {
							cands = append(cands, r)
						}
					}
					slices.SortFunc(cands, func(a, b int) int {
						if less(g.st.canon(q, a), a, g.st.canon(q, b), b) {
							return -1
						}
						return 1
					})
					want := cands[:min(len(cands), l.k)]
					nb, _ := l.ls.row(q)
					got := make([]int, len(nb))
					for i, z := range nb {
						got[i] = int(z)
					}
					if !slices.Equal(got, want) {
						t.Fatalf("%v, %s: %s list of node %d: %v, want %v", c, what, l.name, q, got, want)
					}
					if len(cands) > len(got) && !l.ls.cut[q] {
						t.Fatalf("%v, %s: %s list of node %d holds %d of %d candidates and is not cut", c, what, l.name, q, len(got), len(cands))
					}
				}
			}
		}
		sizes := []int{37, 13, 50, 7}
		for lo, step := 0, 0; lo < n; step++ {
			hi := min(lo+sizes[step%len(sizes)], n)
			ch, err := g.InsertDense(x.Slice(lo, hi, 0, d))
			if err != nil {
				t.Fatal(err)
			}
			check(fmt.Sprintf("after inserting samples %d–%d", lo, hi-1))
			for p, id := range ch.Added {
				if p%4 == 0 {
					if _, err := g.SetLabel(id, id%5); err != nil {
						t.Fatal(err)
					}
					check(fmt.Sprintf("after labeling node %d", id))
				}
			}
			lo = hi
		}
	}
}
