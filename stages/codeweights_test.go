package stages

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/sparse"
)

// TestCodeScaled checks the codes' factor on a small graph worked by hand:
// four nodes on a path 0–1–2–3 plus the edge 0–2, symmetric weights, codes
// in two dimensions with node 3 without a code (a node the batch added).
// Each edge between coded nodes must weigh w·cos^q, an edge to node 3 the
// mean of those factors, and the result must stay symmetric (the solver's
// precondition).
func TestCodeScaled(t *testing.T) {
	w := sparse.NewCSR(4, 4,
		[]int{0, 2, 4, 7, 8},
		[]int{1, 2, 0, 2, 0, 1, 3, 2},
		[]float64{0.5, 0.25, 0.5, 1, 0.25, 1, 0.8, 0.8})
	v := mat.NewDense(4, 2, []float64{
		1, 0,
		3, 4, // cos with node 0: 0.6
		0, 2, // cos with 0: 0, with 1: 0.8
		0, 0, // no code
	})
	const q = 2
	var c codeScaled
	c.set(w, v, []int{0, 1, 2, 3}, q)
	f01, f02, f12 := 0.6*0.6, minSpreadWeight*minSpreadWeight, 0.8*0.8
	mean := (2*f01 + 2*f02 + 2*f12) / 6
	want := map[[2]int]float64{
		{0, 1}: 0.5 * f01, {0, 2}: 0.25 * f02,
		{1, 0}: 0.5 * f01, {1, 2}: 1 * f12,
		{2, 0}: 0.25 * f02, {2, 1}: 1 * f12, {2, 3}: 0.8 * mean,
		{3, 2}: 0.8 * mean,
	}
	if r, cc := c.Dims(); r != 4 || cc != 4 {
		t.Fatalf("Dims %d×%d, want 4×4", r, cc)
	}
	got := map[[2]int]float64{}
	for i := range 4 {
		ind, val := c.Row(i)
		for e, j := range ind {
			got[[2]int{i, j}] = val[e]
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d: %v", len(got), len(want), got)
	}
	for k, x := range want {
		if g, ok := got[k]; !ok || math.Abs(g-x) > 1e-12 {
			t.Errorf("w%v = %v, want %v", k, g, x)
		}
		if got[k] != got[[2]int{k[1], k[0]}] {
			t.Errorf("w%v = %v, w%v = %v: not symmetric", k, got[k], [2]int{k[1], k[0]}, got[[2]int{k[1], k[0]}])
		}
	}
	// A node that is not live has an empty row, whatever base holds.
	c.set(w, v, []int{0, 1, 2}, q)
	if ind, _ := c.Row(3); len(ind) != 0 {
		t.Errorf("row of a node not live: %v, want empty", ind)
	}
}
