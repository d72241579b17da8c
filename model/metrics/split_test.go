package metrics

import (
	"slices"
	"testing"
)

// TestPoolLabels checks the pool labels against the split's lists: labeled
// rows keep their class, the others get −1, positions index Train.
func TestPoolLabels(t *testing.T) {
	y := []int{0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 2, 2, 2, 2}
	s := SplitIndices{Train: []int{0, 1, 3, 4, 10, 12}, Test: []int{2, 5, 6, 7, 8, 9, 11, 13}, Labeled: []int{1, 4, 12}}
	labels, labeled := s.PoolLabels(y)
	if want := []int{-1, 1, -1, 0, -1, 2}; !slices.Equal(labels, want) {
		t.Errorf("labels %v, want %v", labels, want)
	}
	if want := []int{1, 3, 5}; !slices.Equal(labeled, want) {
		t.Errorf("labeled positions %v, want %v", labeled, want)
	}
}
