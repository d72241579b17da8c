package distributed

import (
	"math"
	"testing"

	"github.com/nmfstream/nmfstream/model/sparse"
)

// TestSpreadLabelsHarmonic checks the owners' label scores on a path
// 0–1–2–3–4 labeled 0 at one end and 1 at the other, and a sixth row with
// no edge: the labeled rows keep their class, the others take the
// harmonic function (here the linear interpolation between the ends), and
// the row no label reaches has no scores.
func TestSpreadLabelsHarmonic(t *testing.T) {
	edges := [][2]int{{0, 1}, {1, 2}, {2, 3}, {3, 4}}
	adj := make([][]int, 6)
	for _, e := range edges {
		adj[e[0]] = append(adj[e[0]], e[1])
		adj[e[1]] = append(adj[e[1]], e[0])
	}
	indptr := []int{0}
	var ind []int
	var val []float64
	for _, js := range adj {
		for _, j := range js {
			ind, val = append(ind, j), append(val, 1)
		}
		sortPairs(ind[indptr[len(indptr)-1]:], val[indptr[len(indptr)-1]:])
		indptr = append(indptr, len(ind))
	}
	s := sparse.NewCSR(6, 6, indptr, ind, val)
	rows := make([]Sample, 6)
	for i := range rows {
		rows[i].Label = -1
	}
	rows[0].Label, rows[4].Label = 0, 1
	got := spreadLabels(s, rows)
	want := [][]float64{{1, 0}, {0.75, 0.25}, {0.5, 0.5}, {0.25, 0.75}, {0, 1}, nil}
	for i := range want {
		if want[i] == nil {
			if got[i] != nil {
				t.Errorf("row %d, unreached: scores %v", i, got[i])
			}
			continue
		}
		for c := range want[i] {
			// 1e-4: 40 Jacobi iterations on a path of 5 leave about 0.71⁴⁰ ≈ 1e-6.
			if len(got[i]) != 2 || math.Abs(got[i][c]-want[i][c]) > 1e-4 {
				t.Errorf("row %d: scores %v, want %v", i, got[i], want[i])
				break
			}
		}
	}
}
