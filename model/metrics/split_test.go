package metrics

import (
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
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

// TestTake gathers rows and labels by index, in the order given, repeats
// allowed, and an empty matrix for no index.
func TestTake(t *testing.T) {
	m := mat.NewDense(3, 2, []float64{1, 2, 3, 4, 5, 6})
	got := TakeRows(m, []int{2, 0, 2})
	if want := mat.NewDense(3, 2, []float64{5, 6, 1, 2, 5, 6}); !mat.Equal(got, want) {
		t.Errorf("TakeRows = %v, want %v", mat.Formatted(got), mat.Formatted(want))
	}
	got.Set(0, 0, -1)
	if m.At(2, 0) != 5 {
		t.Error("TakeRows shares storage with its input")
	}
	if !TakeRows(m, nil).IsEmpty() {
		t.Error("TakeRows with no index is not empty")
	}
	if y := Take([]string{"a", "b", "c"}, []int{1, 1, 0}); !slices.Equal(y, []string{"b", "b", "a"}) {
		t.Errorf("Take = %q", y)
	}
}
