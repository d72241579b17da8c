package graph

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/sparse"
)

func edgesOf(m *sparse.CSR) map[[2]int]float64 {
	out := map[[2]int]float64{}
	r, _ := m.Dims()
	for i := 0; i < r; i++ {
		ind, val := m.Row(i)
		for p, j := range ind {
			out[[2]int{i, j}] = val[p]
		}
	}
	return out
}

// wantEdges returns the symmetric edge map of undirected pairs with weight v.
func wantEdges(v float64, pairs ...[2]int) map[[2]int]float64 {
	out := map[[2]int]float64{}
	for _, p := range pairs {
		out[p] = v
		out[[2]int{p[1], p[0]}] = v
	}
	return out
}

func equalEdges(t *testing.T, name string, got *sparse.CSR, want map[[2]int]float64) {
	t.Helper()
	g := edgesOf(got)
	if len(g) != len(want) {
		t.Errorf("%s: %v, want %v", name, g, want)
		return
	}
	for k, v := range want {
		if g[k] != v {
			t.Errorf("%s: %v, want %v", name, g, want)
			return
		}
	}
}

// TestLabelGraphsByHand checks the label graphs on six points of a line,
// worked out by hand (see the comments).
func TestLabelGraphsByHand(t *testing.T) {
	// positions 0, 1, 3, 6, 10, 2.5; classes A A B B A, node 5 unlabeled.
	x := mat.NewDense(6, 1, []float64{0, 1, 3, 6, 10, 2.5})
	g, err := KNN{K: 2, IntraK: 1, InterK: 1, PenaltyPairs: 2}.Dense(x)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.SetLabels([]int{0, 1, 2, 3, 4}, []int{0, 0, 1, 1, 0}); err != nil {
		t.Fatal(err)
	}
	ww, wb := g.IntraInter(Weighting{})
	// Nearest same class: 0→1, 1→0, 4→1, 2→3, 3→2.
	equalEdges(t, "W_w", ww, wantEdges(1, [2]int{0, 1}, [2]int{1, 4}, [2]int{2, 3}))
	// Nearest other class: 0→2, 1→2, 4→3, 2→1, 3→4.
	equalEdges(t, "W_b", wb, wantEdges(1, [2]int{0, 2}, [2]int{1, 2}, [2]int{3, 4}))
	want := wantEdges(1, [2]int{0, 1}, [2]int{1, 4}, [2]int{2, 3})
	for k, v := range wantEdges(-1, [2]int{0, 2}, [2]int{1, 2}, [2]int{3, 4}) {
		want[k] = v
	}
	equalEdges(t, "W¹", g.Signed(Weighting{}), want)
	in, pen := g.MFA(Weighting{})
	equalEdges(t, "intrinsic", in, wantEdges(1, [2]int{0, 1}, [2]int{1, 4}, [2]int{2, 3}))
	// Class A's 2 shortest pairs: (1,2) d=2, (0,2) d=3; class B's: (2,1), (2,0).
	equalEdges(t, "penalty", pen, wantEdges(1, [2]int{1, 2}, [2]int{0, 2}))
	// With 3 pairs, class A adds (4,3) d=4 and class B adds (3,4): one more edge.
	g3, _ := KNN{K: 2, IntraK: 1, PenaltyPairs: 3}.Dense(x)
	g3.SetLabels([]int{0, 1, 2, 3, 4}, []int{0, 0, 1, 1, 0})
	_, pen3 := g3.MFA(Weighting{})
	equalEdges(t, "penalty k2=3", pen3, wantEdges(1, [2]int{1, 2}, [2]int{0, 2}, [2]int{3, 4}))
}

func TestLateLabels(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	const n = 120
	x := tieData(n, 5, rng)
	labels := make([]int, n)
	for i := range labels {
		labels[i] = rng.IntN(3)
		if rng.IntN(3) == 0 {
			labels[i] = -1
		}
	}
	cfg := KNN{K: 4, IntraK: 3, InterK: 2, PenaltyPairs: 5, BlockSize: 16}
	upfront, err := cfg.Dense(x)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := upfront.SetLabels(seq(n), labels); err != nil {
		t.Fatal(err)
	}
	// Late: samples arrive in batches, labels later, in shuffled order, some
	// first wrong and then corrected, some set and then withdrawn.
	late, err := cfg.NewDense(5)
	if err != nil {
		t.Fatal(err)
	}
	for lo := 0; lo < n; lo += 10 {
		if _, err := late.InsertDense(rowsOf(x, seq(lo + 10)[lo:])); err != nil {
			t.Fatal(err)
		}
		if lo == 50 {
			for i := 0; i < 30; i++ {
				late.SetLabel(i, (labels[i]+2)%3) // wrong, fixed below
			}
			late.SetLabel(55, 1)
		}
	}
	for _, i := range rng.Perm(n) {
		if _, err := late.SetLabel(i, labels[i]); err != nil {
			t.Fatal(err)
		}
	}
	ww1, wb1 := upfront.IntraInter(Weighting{Scheme: HeatKernel})
	ww2, wb2 := late.IntraInter(Weighting{Scheme: HeatKernel})
	s1, s2 := upfront.Signed(Weighting{}), late.Signed(Weighting{})
	i1, p1 := upfront.MFA(Weighting{})
	i2, p2 := late.MFA(Weighting{})
	for _, c := range []struct {
		name string
		a, b *sparse.CSR
	}{{"W_w", ww1, ww2}, {"W_b", wb1, wb2}, {"W¹", s1, s2}, {"intrinsic", i1, i2}, {"penalty", p1, p2}} {
		if c.a.NNZ() == 0 {
			t.Errorf("%s is empty", c.name)
		}
		if !mat.Equal(c.a.ToDense(), c.b.ToDense()) {
			t.Errorf("%s: late labels differ from labels known up front", c.name)
		}
	}
	// Unlabeled nodes carry no label edges.
	for i, l := range labels {
		if l < 0 {
			if ind, _ := s2.Row(i); len(ind) != 0 {
				t.Fatalf("unlabeled node %d has label edges %v", i, ind)
			}
		}
	}
	// Removing labeled nodes equals a fresh build without them.
	gone := []int{}
	for i, l := range labels {
		if l >= 0 && len(gone) < 10 {
			gone = append(gone, i)
		}
	}
	if _, err := late.Remove(gone...); err != nil {
		t.Fatal(err)
	}
	var keep, keepLabels []int
	for i := 0; i < n; i++ {
		if !containsInt(gone, i) {
			keep = append(keep, i)
			keepLabels = append(keepLabels, labels[i])
		}
	}
	fresh, _ := cfg.Dense(rowsOf(x, keep))
	fresh.SetLabels(seq(len(keep)), keepLabels)
	a, b := fresh.Signed(Weighting{}), late.Signed(Weighting{})
	for p, i := range keep {
		for q, j := range keep {
			if a.At(p, q) != b.At(i, j) {
				t.Fatalf("after removal: W¹(%d,%d) = %v, fresh %v", i, j, b.At(i, j), a.At(p, q))
			}
		}
	}
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestFromPairs(t *testing.T) {
	m, err := FromPairs(4, [][2]int{{0, 1}, {1, 0}, {2, 3}})
	if err != nil {
		t.Fatal(err)
	}
	equalEdges(t, "must", m, wantEdges(1, [2]int{0, 1}, [2]int{2, 3}))
	s, err := FromConstraints(4, [][2]int{{0, 1}}, [][2]int{{1, 2}, {3, 0}})
	if err != nil {
		t.Fatal(err)
	}
	want := wantEdges(1, [2]int{0, 1})
	for k, v := range wantEdges(-1, [2]int{1, 2}, [2]int{0, 3}) {
		want[k] = v
	}
	equalEdges(t, "signed", s, want)
	for _, bad := range [][][2]int{{{0, 0}}, {{0, 4}}, {{-1, 2}}} {
		if _, err := FromPairs(4, bad); err == nil {
			t.Errorf("pairs %v: no error", bad)
		}
	}
	if _, err := FromConstraints(4, [][2]int{{0, 1}}, [][2]int{{1, 0}}); err == nil {
		t.Error("conflicting constraints: no error")
	}
}

// TestLabelsOnly checks that a LabelsOnly graph stores and clears labels
// like a full one, with the same neighbour lists, and refuses label graphs.
func TestLabelsOnly(t *testing.T) {
	x := mat.NewDense(6, 1, []float64{0, 1, 2, 10, 11, 12})
	full, err := KNN{K: 2}.Dense(x)
	if err != nil {
		t.Fatal(err)
	}
	lean, err := KNN{K: 2, LabelsOnly: true}.Dense(x)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []*Graph{full, lean} {
		if _, err := g.SetLabels([]int{0, 4}, []int{1, 2}); err != nil {
			t.Fatal(err)
		}
		if _, err := g.Remove(4); err != nil {
			t.Fatal(err)
		}
	}
	for id := 0; id < 6; id++ {
		if id == 4 {
			continue
		}
		a, _ := full.Neighbors(id)
		b, _ := lean.Neighbors(id)
		if full.Label(id) != lean.Label(id) || len(a) != len(b) {
			t.Errorf("node %d: labels %d/%d, lists %v/%v", id, full.Label(id), lean.Label(id), a, b)
		}
	}
	if lean.Label(0) != 1 {
		t.Errorf("label of node 0 is %d, want 1", lean.Label(0))
	}
	defer func() {
		if recover() == nil {
			t.Error("IntraInter on a LabelsOnly graph did not panic")
		}
	}()
	lean.IntraInter(Weighting{})
}
