package graph

import (
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/sparse"
)

// TestCloneFollowsTheOriginal clones a windowed graph halfway through a
// stream (dense and sparse rows, labels, the window turning over) and
// feeds the original and the copy the same insertions and labels: every
// change they report, every list, label and intra/inter weight is the
// same, and the copy's own changes leave the original as it was.
func TestCloneFollowsTheOriginal(t *testing.T) {
	for _, isSparse := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(3, 5))
		const d = 12
		batch := func(n int) (*mat.Dense, *sparse.CSR) {
			x := mat.NewDense(n, d, nil)
			s := sparse.Zeros(0, d)
			for i := range n {
				var ind []int
				var val []float64
				for j := range d {
					if rng.IntN(3) == 0 {
						v := rng.Float64()
						x.Set(i, j, v)
						ind, val = append(ind, j), append(val, v)
					}
				}
				s.AppendRow(ind, val)
			}
			return x, s
		}
		c := KNN{K: 4, Window: 60, IntraK: 2}
		var g *Graph
		var err error
		if isSparse {
			g, err = c.NewSparse(d)
		} else {
			g, err = c.NewDense(d)
		}
		if err != nil {
			t.Fatal(err)
		}
		insert := func(g *Graph, x *mat.Dense, s *sparse.CSR) Change {
			var ch Change
			var err error
			if isSparse {
				ch, err = g.InsertSparse(s)
			} else {
				ch, err = g.InsertDense(x)
			}
			if err != nil {
				t.Fatal(err)
			}
			return ch
		}
		label := func(g *Graph, ids []int) Change {
			var lab []int
			for _, id := range ids {
				lab = append(lab, id%3)
			}
			ch, err := g.SetLabels(ids, lab)
			if err != nil {
				t.Fatal(err)
			}
			return ch
		}
		for range 5 {
			x, s := batch(15)
			ch := insert(g, x, s)
			label(g, ch.Added[:3])
		}
		cp := g.Clone()
		for step := range 6 {
			x, s := batch(15)
			a, b := insert(g, x, s), insert(cp, x, s)
			if !sameChange(a, b) {
				t.Fatalf("sparse %v, step %d: insertion changes %+v (original) and %+v (copy)", isSparse, step, a, b)
			}
			a, b = label(g, a.Added[:3]), label(cp, b.Added[:3])
			if !sameChange(a, b) {
				t.Fatalf("sparse %v, step %d: label changes differ", isSparse, step)
			}
			if !slices.Equal(g.IDs(), cp.IDs()) {
				t.Fatalf("sparse %v, step %d: ids differ", isSparse, step)
			}
			for _, id := range g.IDs() {
				n1, d1 := g.Neighbors(id)
				n2, d2 := cp.Neighbors(id)
				if !slices.Equal(n1, n2) || !slices.Equal(d1, d2) || g.Gen(id) != cp.Gen(id) {
					t.Fatalf("sparse %v, step %d: node %d: lists %v %v and %v %v", isSparse, step, id, n1, d1, n2, d2)
				}
			}
			w1, b1 := g.IntraInter(Weighting{})
			w2, b2 := cp.IntraInter(Weighting{})
			if !sameCSR(w1, w2) || !sameCSR(b1, b2) {
				t.Fatalf("sparse %v, step %d: intra/inter graphs differ", isSparse, step)
			}
		}
		// A copy's changes do not reach what it was copied from.
		lists := func(g *Graph) [][]int {
			var out [][]int
			for _, id := range g.IDs() {
				n, _ := g.Neighbors(id)
				out = append(out, append([]int{id}, n...))
			}
			return out
		}
		was, rows := lists(cp), slices.Clone(cp.DenseRows(0))
		cp2 := cp.Clone()
		x, s := batch(30)
		insert(cp2, x, s)
		if !slices.EqualFunc(lists(cp), was, slices.Equal[[]int]) || !slices.Equal(cp.DenseRows(0), rows) {
			t.Fatalf("sparse %v: insertions into a copy changed the graph it was copied from", isSparse)
		}
		if slices.EqualFunc(lists(cp2), was, slices.Equal[[]int]) {
			t.Fatalf("sparse %v: 30 insertions changed no list", isSparse)
		}
	}
}

func sameChange(a, b Change) bool {
	return slices.Equal(a.Added, b.Added) && slices.Equal(a.Removed, b.Removed) && slices.Equal(a.Changed, b.Changed)
}

func sameCSR(a, b *sparse.CSR) bool {
	ar, ac := a.Dims()
	br, bc := b.Dims()
	return ar == br && ac == bc && slices.Equal(a.Indptr, b.Indptr) && slices.Equal(a.Ind, b.Ind) && slices.Equal(a.Val, b.Val)
}
