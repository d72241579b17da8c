package model

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// ErrNotFitted is the panic value of accessors called before a successful Fit.
var ErrNotFitted = errors.New("model: not fitted")

// ErrTooLarge is wrapped by the errors of models refusing data whose
// dimension would make their factors exceed a memory limit
// (Online.MaxBasisBytes).
var ErrTooLarge = errors.New("model: too large")

// CheckFinite returns nil if every entry of m is finite, and otherwise an
// error wrapping ErrDiverged that names what m is ("SSKNMF codes") and
// the first non-finite entry. Fits check what they return with it, and
// writers check what they write.
func CheckFinite(what string, m mat.Matrix) error {
	r, c := m.Dims()
	if d, ok := m.(*mat.Dense); ok {
		raw := d.RawMatrix()
		for i := 0; i < r; i++ {
			for j, x := range raw.Data[i*raw.Stride : i*raw.Stride+c] {
				if math.IsNaN(x) || math.IsInf(x, 0) {
					return fmt.Errorf("model: %s: %w: entry (%d, %d) is %g", what, ErrDiverged, i, j, x)
				}
			}
		}
		return nil
	}
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			if x := m.At(i, j); math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("model: %s: %w: entry (%d, %d) is %g", what, ErrDiverged, i, j, x)
			}
		}
	}
	return nil
}
