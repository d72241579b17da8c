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

// CalibratedTo stores into dst, and returns, the calibrated scores of the
// rows of x (m×D): xW divided by the calibration's temperature, plus the
// shift of the estimated priors or of the moved class masses where the
// fit applies one: the scores PredictTo ranks. With Priors they are the
// logarithms of calibrated class probabilities up to a constant per row,
// so that fits of different rows (or features) are on one scale, which is
// what PairPredictScoresTo averages; without Priors the temperature is 1,
// no shift applies, and two fits' scores share only their targets' scale.
// It panics as DecisionTo does.
func (lr *LapRLS) CalibratedTo(dst *mat.Dense, x *sparse.CSR) *mat.Dense {
	dst = lr.DecisionTo(dst, x)
	m, _ := dst.Dims()
	for i := range m {
		row := dst.RawRowView(i)
		for j, v := range row {
			row[j] = lr.calibrated(v, j)
		}
	}
	return dst
}

// calibrated returns the calibrated score of the decision value v of
// class j (CalibratedTo).
func (lr *LapRLS) calibrated(v float64, j int) float64 {
	u := v / lr.temp
	if lr.shift != nil {
		u += lr.shift[j]
	}
	return u
}

// PairPredictScoresTo predicts row i of xa and xb (the same records, read
// by two fits: a on xa, b on xb) as the class of the largest mean of a's
// and b's calibrated scores (CalibratedTo), the normalized product of the
// two fits' probabilities, and stores in score the mean of their scores
// xW of that class (PredictScoresTo's scale). A row with a non-finite
// score is predicted −1 with score NaN. It returns an error if the two
// fits' classes or the two row counts differ; it panics as DecisionTo
// does.
func PairPredictScoresTo(dst []int, score []float64, a *LapRLS, xa *sparse.CSR, b *LapRLS, xb *sparse.CSR) ([]int, []float64, error) {
	m, _ := xa.Dims()
	if mb, _ := xb.Dims(); mb != m {
		return nil, nil, fmt.Errorf("classify: pair: %d rows against %d", m, mb)
	}
	if a.Classes() != b.Classes() {
		return nil, nil, fmt.Errorf("classify: pair: %d classes against %d", a.Classes(), b.Classes())
	}
	dst = intsTo(dst, m)
	score = floatsTo(score, m)
	var da, db mat.Dense
	a.DecisionTo(&da, xa)
	b.DecisionTo(&db, xb)
	for i := range m {
		best, bv := -1, math.Inf(-1)
		rb := db.RawRowView(i)
		for j, v := range da.RawRowView(i) {
			u := a.calibrated(v, j) + b.calibrated(rb[j], j)
			if math.IsNaN(u) || math.IsInf(u, 0) {
				best = -1
				break
			}
			if u > bv {
				best, bv = j, u
			}
		}
		dst[i], score[i] = best, math.NaN()
		if best >= 0 {
			score[i] = (da.At(i, best) + db.At(i, best)) / 2
		}
	}
	return dst, score, nil
}
