package classify

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestEmbeddingByHand checks EmbeddingOf and EmbeddingLOO on codes whose
// answers can be read off: two tight groups far apart.
func TestEmbeddingByHand(t *testing.T) {
	v := mat.NewDense(6, 2, []float64{
		1, 0, 1.1, 0, 0.9, 0.1, // class 0
		0, 1, 0, 1.2, 0.1, 0.9, // class 1
	})
	y := []int{0, 0, 0, 1, 1, 1}
	e := EmbeddingLOO(v, y)
	if e.NN1 != 1 || math.Abs(e.NMI-1) > 1e-12 || e.N != 6 {
		t.Errorf("separated groups: got %+v, want 1-NN 1, NMI 1, N 6", e)
	}
	// The classes cut across the groups. By hand, nearest other code:
	// row 0 → 1 (0.1, wrong), 1 → 0 (wrong), 2 → 0 (0.14, right),
	// 3 → 5 (0.14, right), 4 → 3 (0.2, wrong), 5 → 3 (right): 3 of 6. The
	// clusters are the groups, 2:1 against each class: NMI ≈ 0.08.
	y2 := []int{0, 1, 0, 1, 0, 1}
	e2 := EmbeddingLOO(v, y2)
	if e2.NN1 != 0.5 || !(e2.NMI < 0.1) {
		t.Errorf("classes across the groups: got %+v, want 1-NN 0.5 and NMI < 0.1", e2)
	}
	// Unlabeled rows (−1) are left out.
	e3 := EmbeddingLOO(v, []int{0, 0, -1, 1, 1, -1})
	if e3.N != 4 || e3.NN1 != 1 {
		t.Errorf("with unlabeled rows: got %+v, want N 4, 1-NN 1", e3)
	}
	// Queries against references.
	q := mat.NewDense(2, 2, []float64{0.95, 0.05, 0.05, 0.95})
	e4 := EmbeddingOf(q, []int{0, 1}, v, y)
	if e4.NN1 != 1 || e4.N != 2 {
		t.Errorf("queries: got %+v, want 1-NN 1 over 2", e4)
	}
	e5 := EmbeddingOf(q, []int{1, 0}, v, y)
	if e5.NN1 != 0 {
		t.Errorf("queries with swapped classes: 1-NN %v, want 0", e5.NN1)
	}
	if e := EmbeddingLOO(v, []int{0, 0, 0, 0, 0, 0}); !math.IsNaN(e.NMI) {
		t.Errorf("one class: NMI %v, want NaN", e.NMI)
	}
}
