package pipeline

import (
	"slices"
	"sync"
	"testing"
)

// TestSplit checks that the parts of a call cover [0, n) exactly once, that
// the same n is cut the same way every time, and that no part is still
// running when Split returns (run it with -race).
func TestSplit(t *testing.T) {
	for _, workers := range []int{0, 1, 2, 3, 8} {
		split := Split(workers)
		for _, n := range []int{0, 1, 2, 5, 7, 100} {
			var first [][2]int
			for round := range 2 {
				var mu sync.Mutex
				var parts [][2]int
				seen := make([]int, n)
				split(n, func(lo, hi int) {
					for i := lo; i < hi; i++ {
						seen[i]++ // disjoint parts: no race
					}
					mu.Lock()
					parts = append(parts, [2]int{lo, hi})
					mu.Unlock()
				})
				for i, c := range seen {
					if c != 1 {
						t.Fatalf("workers %d, n %d: index %d visited %d times", workers, n, i, c)
					}
				}
				slices.SortFunc(parts, func(a, b [2]int) int { return a[0] - b[0] })
				if len(parts) > max(workers, 1) {
					t.Errorf("workers %d, n %d: %d parts", workers, n, len(parts))
				}
				if round == 0 {
					first = parts
				} else if !slices.Equal(parts, first) {
					t.Errorf("workers %d, n %d: cut %v, then %v", workers, n, first, parts)
				}
			}
		}
	}
}
