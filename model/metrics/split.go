package metrics

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// SplitIndices is the result of Split: row indices into the labels given to
// it, each list in increasing order. Train is Labeled ∪ Unlabeled; Test is
// disjoint from Train, and together they cover every row.
type SplitIndices struct {
	Train     []int // the training pool
	Test      []int // held out, never seen in training
	Labeled   []int // L per class, drawn from Train
	Unlabeled []int // the rest of Train
}

// Split draws the evaluation split of docs/DESIGN.md §7 from the labels y
// (length n, classes ≥ 0; −1 marks rows with no known label). It is
// stratified: for each class with n_c rows, round(testFrac·n_c) of them go
// to Test and the others to the training pool, of which l are Labeled and
// the rest Unlabeled. Rows with y = −1 cannot be scored and always go to
// Unlabeled. The same seed gives the same split: src is used through
// rand.New; if src is nil, rand.NewPCG(1, 1) is used.
//
// It returns an error if testFrac is outside [0, 1), l is negative, or some
// class keeps fewer than l+1 rows in its pool (so that at least one
// unlabeled row per class is left; there is no fallback).
func Split(y []int, testFrac float64, l int, src rand.Source) (SplitIndices, error) {
	var s SplitIndices
	if !(testFrac >= 0 && testFrac < 1) {
		return s, fmt.Errorf("metrics: test fraction %v outside [0, 1)", testFrac)
	}
	if l < 0 {
		return s, fmt.Errorf("metrics: negative labels per class %d", l)
	}
	if src == nil {
		src = rand.NewPCG(1, 1)
	}
	r := rand.New(src)
	byClass := map[int][]int{}
	for i, c := range y {
		switch {
		case c == -1:
			s.Unlabeled = append(s.Unlabeled, i)
		case c < -1:
			return s, fmt.Errorf("metrics: label %d of row %d is below −1", c, i)
		default:
			byClass[c] = append(byClass[c], i)
		}
	}
	classes := make([]int, 0, len(byClass))
	for c := range byClass {
		classes = append(classes, c)
	}
	slices.Sort(classes) // map order is random; the draw must not be
	for _, c := range classes {
		rows := byClass[c]
		r.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
		nt := int(math.Round(testFrac * float64(len(rows))))
		if pool := len(rows) - nt; pool < l+1 {
			return SplitIndices{}, fmt.Errorf("metrics: class %d has %d rows in the training pool, need at least %d", c, pool, l+1)
		}
		s.Test = append(s.Test, rows[:nt]...)
		s.Labeled = append(s.Labeled, rows[nt:nt+l]...)
		s.Unlabeled = append(s.Unlabeled, rows[nt+l:]...)
	}
	slices.Sort(s.Test)
	slices.Sort(s.Labeled)
	slices.Sort(s.Unlabeled)
	s.Train = append(append(make([]int, 0, len(s.Labeled)+len(s.Unlabeled)), s.Labeled...), s.Unlabeled...)
	slices.Sort(s.Train)
	return s, nil
}

// PoolLabels returns the labels a semi-supervised method sees for the
// training pool: for each row of s.Train in order, y of that row if it is
// in s.Labeled and −1 otherwise, and the positions in s.Train of the
// labeled rows.
func (s SplitIndices) PoolLabels(y []int) (labels, labeled []int) {
	isLabeled := make(map[int]bool, len(s.Labeled))
	for _, i := range s.Labeled {
		isLabeled[i] = true
	}
	labels = make([]int, len(s.Train))
	for r, i := range s.Train {
		labels[r] = -1
		if isLabeled[i] {
			labels[r] = y[i]
			labeled = append(labeled, r)
		}
	}
	return labels, labeled
}

// TakeRows returns the rows idx of m (for example a SplitIndices list) as a
// new len(idx)×c matrix, or an empty matrix if idx is empty.
func TakeRows(m *mat.Dense, idx []int) *mat.Dense {
	if len(idx) == 0 {
		return &mat.Dense{}
	}
	_, c := m.Dims()
	out := mat.NewDense(len(idx), c, nil)
	for r, i := range idx {
		copy(out.RawRowView(r), m.RawRowView(i))
	}
	return out
}

// Take returns y[idx[0]], y[idx[1]], … in a new slice.
func Take[T any](y []T, idx []int) []T {
	out := make([]T, len(idx))
	for r, i := range idx {
		out[r] = y[i]
	}
	return out
}
