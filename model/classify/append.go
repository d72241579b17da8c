package classify

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/sparse"
)

// AppendCodes returns the rows of x with each row's code (the same row of
// codes) appended as K more columns, scaled to Euclidean length w (a zero
// code stays zero): the n×(D+K) rows a linear classifier reads to weigh a
// factorization's codes beside the features. With TF-IDF rows of unit
// length, w is the codes' length relative to the row's. x and codes are
// read only; the result shares nothing with them. It returns an error if
// the row counts differ, w is negative or not finite, or a code is not
// finite.
func AppendCodes(x *sparse.CSR, codes *mat.Dense, w float64) (*sparse.CSR, error) {
	n, d := x.Dims()
	m, k := codes.Dims()
	if m != n {
		return nil, fmt.Errorf("classify: append codes: %d codes for %d rows", m, n)
	}
	if !(w >= 0) || math.IsInf(w, 0) {
		return nil, fmt.Errorf("classify: append codes: weight %g, want finite and ≥ 0", w)
	}
	indptr := make([]int, n+1)
	ind := make([]int, 0, x.NNZ()+n*k)
	val := make([]float64, 0, x.NNZ()+n*k)
	for i := range n {
		ri, rv := x.Row(i)
		ind = append(ind, ri...)
		val = append(val, rv...)
		c := codes.RawRowView(i)
		norm := 0.0
		for _, v := range c {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("classify: append codes: row %d: non-finite code entry %v", i, v)
			}
			norm += v * v
		}
		if norm > 0 && w > 0 {
			s := w / math.Sqrt(norm)
			for j, v := range c {
				if v != 0 {
					ind = append(ind, d+j)
					val = append(val, s*v)
				}
			}
		}
		indptr[i+1] = len(ind)
	}
	return sparse.NewCSR(n, d+k, indptr, ind, val), nil
}
