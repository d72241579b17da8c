package classify

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// ErrNoLabels is returned by Fit when no sample has a label (all are −1).
var ErrNoLabels = errors.New("classify: no labeled samples")

// ErrNotFitted is the panic value of prediction methods called before a
// successful Fit: calling them is a mistake visible in the caller's code.
var ErrNotFitted = errors.New("classify: not fitted")

// checkFinite returns an error naming the first non-finite entry of x.
func checkFinite(x mat.Matrix) error {
	r, c := x.Dims()
	if d, ok := x.(*mat.Dense); ok {
		for i := range r {
			for j, v := range d.RawRowView(i) {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return fmt.Errorf("classify: non-finite entry %v at (%d, %d)", v, i, j)
				}
			}
		}
		return nil
	}
	for i := range r {
		for j := range c {
			if v := x.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("classify: non-finite entry %v at (%d, %d)", v, i, j)
			}
		}
	}
	return nil
}

// checkLabels validates y against x's n rows and returns the number of
// classes C = 1 + max(y) and the number of labeled rows. Labels must be in
// [0, C) or −1 (unlabeled).
func checkLabels(n int, y []int) (classes, labeled int, err error) {
	if len(y) != n {
		return 0, 0, fmt.Errorf("classify: %d labels for %d samples", len(y), n)
	}
	for i, v := range y {
		switch {
		case v == -1:
		case v < -1:
			return 0, 0, fmt.Errorf("classify: label %d of sample %d is below −1", v, i)
		default:
			labeled++
			classes = max(classes, v+1)
		}
	}
	if labeled == 0 {
		return 0, 0, ErrNoLabels
	}
	return classes, labeled, nil
}

// labeledRows copies the labeled rows of x into dst (resized) and their
// labels into the returned slice (reusing lab).
func labeledRows(dst *mat.Dense, lab []int, x mat.Matrix, y []int, labeled int) []int {
	_, d := x.Dims()
	dst.Reset()
	dst.ReuseAs(labeled, d)
	lab = lab[:0]
	k := 0
	for i, v := range y {
		if v < 0 {
			continue
		}
		row := dst.RawRowView(k)
		if xd, ok := x.(*mat.Dense); ok {
			copy(row, xd.RawRowView(i))
		} else {
			for j := range row {
				row[j] = x.At(i, j)
			}
		}
		lab = append(lab, v)
		k++
	}
	return lab
}

// checkDims panics if x does not have d columns (a shape mistake in the
// caller's code, as in gonum).
func checkDims(x mat.Matrix, d int) {
	if _, c := x.Dims(); c != d {
		panic(fmt.Sprintf("classify: %d features, fitted on %d: %v", c, d, mat.ErrShape))
	}
}

// intsTo returns dst if it has length n, allocates if dst is nil, and
// panics otherwise.
func intsTo(dst []int, n int) []int {
	if dst == nil {
		return make([]int, n)
	}
	if len(dst) != n {
		panic(fmt.Sprintf("classify: dst length %d, want %d", len(dst), n))
	}
	return dst
}

// floatsTo is intsTo for []float64.
func floatsTo(dst []float64, n int) []float64 {
	if dst == nil {
		return make([]float64, n)
	}
	if len(dst) != n {
		panic(fmt.Sprintf("classify: dst length %d, want %d", len(dst), n))
	}
	return dst
}
