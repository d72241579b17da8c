package model

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/vec"
	"github.com/nmfstream/nmfstream/model/sparse"
	"github.com/nmfstream/nmfstream/record"
)

// Data is the D×N data matrix X, one column per sample, entries ≥ 0.
//
// Implementations store samples as rows (DenseRows, SparseRows) so that a
// sample is contiguous in memory; the methods speak in the X of docs/DESIGN.md §1.
type Data interface {
	// Dims returns the number of features D and samples N.
	Dims() (d, n int)
	// MulTo stores X·V (D×K) into dst. V is N×K. dst must be empty or D×K.
	MulTo(dst *mat.Dense, v mat.Matrix)
	// TMulTo stores Xᵀ·U (N×K) into dst. U is D×K. dst must be empty or N×K.
	TMulTo(dst *mat.Dense, u mat.Matrix)
	// SqNorm returns ‖X‖²_F.
	SqNorm() float64
}

// DenseRows returns x (N×D, one sample per row) as Data. x is not copied.
func DenseRows(x *mat.Dense) Data { return &denseData{x: x} }

// SparseRows returns x (N×D, one sample per row, e.g. TF-IDF) as Data.
// x is not copied.
func SparseRows(x *sparse.CSR) Data { return &sparseData{x: x} }

type denseData struct {
	x    *mat.Dense
	norm float64 // cached ‖X‖²; NaN until computed
	done bool
}

func (a *denseData) Dims() (d, n int) { n, d = a.x.Dims(); return d, n }

func (a *denseData) MulTo(dst *mat.Dense, v mat.Matrix) { dst.Mul(a.x.T(), v) }

func (a *denseData) TMulTo(dst *mat.Dense, u mat.Matrix) { mulTo(dst, a.x, u) }

func (a *denseData) SqNorm() float64 {
	if !a.done {
		f := mat.Norm(a.x, 2) // Frobenius norm for matrices
		a.norm, a.done = f*f, true
	}
	return a.norm
}

type sparseData struct {
	x    *sparse.CSR
	norm float64
	done bool
}

func (a *sparseData) Dims() (d, n int) { n, d = a.x.Dims(); return d, n }

func (a *sparseData) MulTo(dst *mat.Dense, v mat.Matrix) { a.x.TMulDenseTo(dst, v) }

func (a *sparseData) TMulTo(dst *mat.Dense, u mat.Matrix) { mulSparseDense(dst, a.x, u) }

// mulSparseDense stores x·b into dst (r×k for x r×c and b c×k; dst empty
// or r×k) as sparse.CSR.MulDenseTo does, each row's sum of b's rows on
// vec.Axpy: the same products and sums in the same order, bit for bit. It
// panics on a shape mismatch.
func mulSparseDense(dst *mat.Dense, x *sparse.CSR, b mat.Matrix) {
	r, c := x.Dims()
	br, k := b.Dims()
	if br != c {
		panic(mat.ErrShape)
	}
	if dst.IsEmpty() {
		dst.ReuseAs(r, k)
	} else if dr, dc := dst.Dims(); dr != r || dc != k {
		panic(mat.ErrShape)
	}
	bd, ok := b.(*mat.Dense)
	if !ok {
		bd = mat.DenseCopyOf(b)
	}
	mulSparseDenseRows(dst, x, bd, 0, r)
}

// mulSparseDenseRows stores rows [lo, hi) of x·b into the same rows of
// dst, which mulSparseDense has shaped: calls on disjoint rows may run at
// once.
func mulSparseDenseRows(dst *mat.Dense, x *sparse.CSR, b *mat.Dense, lo, hi int) {
	_, k := b.Dims()
	braw, draw := b.RawMatrix(), dst.RawMatrix()
	for i := lo; i < hi; i++ {
		out := draw.Data[i*draw.Stride : i*draw.Stride+k]
		clear(out)
		for p := x.Indptr[i]; p < x.Indptr[i+1]; p++ {
			t := x.Ind[p]
			vec.Axpy(x.Val[p], braw.Data[t*braw.Stride:t*braw.Stride+k], out)
		}
	}
}

func (a *sparseData) SqNorm() float64 {
	if !a.done {
		a.norm, a.done = a.x.SqNorm(), true
	}
	return a.norm
}

// Rows returns the underlying sample-per-row matrix of x: a *mat.Dense for
// DenseRows, a *sparse.CSR for SparseRows, and nil otherwise.
func Rows(x Data) mat.Matrix {
	switch a := x.(type) {
	case *denseData:
		return a.x
	case *sparseData:
		return a.x
	}
	return nil
}

// RowNorms returns the Euclidean norms of x's samples (DenseRows or
// SparseRows; nil for another Data), each the square root of the plain sum
// of its squared entries, as the k-NN graph sums them (graph.Graph.Norm).
func RowNorms(x Data) []float64 {
	var nm []float64
	switch r := Rows(x).(type) {
	case *mat.Dense:
		n, _ := r.Dims()
		nm = make([]float64, n)
		for i := range nm {
			nm[i] = sumSquares(r.RawRowView(i))
		}
	case *sparse.CSR:
		n, _ := r.Dims()
		nm = make([]float64, n)
		for i := range nm {
			_, val := r.Row(i)
			nm[i] = sumSquares(val)
		}
	}
	for i, v := range nm {
		nm[i] = math.Sqrt(v)
	}
	return nm
}

func sumSquares(v []float64) float64 {
	var ss float64
	for _, x := range v {
		ss += x * x
	}
	return ss
}

// DefaultMaxNormRatio is the norm bound's default (NormRatio): six orders
// of magnitude above the typical norm, far beyond any stream of
// BENCHMARKS.md (the digits' and MNIST's norms lie within 0.39–1.76 times
// their geometric mean, TF-IDF rows have norm 1), so that only records of
// another scale are refused.
const DefaultMaxNormRatio = 1e6

// NormRatio returns the norm bound that a setting r gives: r, or
// DefaultMaxNormRatio for 0; a negative r means no bound (the commands'
// --max-norm-ratio, stages.Featurize.MaxNormRatio).
func NormRatio(r float64) float64 {
	if r == 0 {
		return DefaultMaxNormRatio
	}
	return r
}

// NormOutlierError is the reason a record of norm norm is refused, typical
// being the others' typical norm as NormOutliers gives it and among whose
// it is ("the window's", "the file's").
func NormOutlierError(norm, typical, ratio float64, among string) error {
	return fmt.Errorf("its norm %.3g is %.3g times %s typical norm %.3g, over the limit of %g (--max-norm-ratio): a corrupt record, or features of another scale", norm, norm/typical, among, typical, ratio)
}

// NormOutliers returns the positions of the norms above ratio times the
// typical norm of the others, and that typical norm for each: the
// geometric mean of the other nonzero norms, with the n whose ln-norms sum
// to logSum (online, the window's). A zero norm is never an outlier, and a
// norm with no other to compare with neither. A record of another scale
// than the others (a corrupt image with a pixel of 10³⁰) would set the
// basis alone and, through the graph's edges, its neighbours' codes; the
// commands reject such records (--max-norm-ratio).
func NormOutliers(norms []float64, ratio, logSum float64, n int) (out []int, typical []float64) {
	for _, v := range norms {
		if v > 0 {
			logSum += math.Log(v)
			n++
		}
	}
	if n < 2 {
		return nil, nil
	}
	for i, v := range norms {
		if v <= 0 {
			continue
		}
		ln := math.Log(v)
		if t := math.Exp((logSum - ln) / float64(n-1)); ln > math.Log(ratio)+math.Log(t) {
			out, typical = append(out, i), append(typical, t)
		}
	}
	return out, typical
}

// Validate checks that x is non-empty and that every entry is finite,
// non-negative and at most record.MaxValue. The error names the first
// offending sample and feature.
func Validate(x Data) error {
	d, n := x.Dims()
	if d == 0 || n == 0 {
		return fmt.Errorf("model: empty data (%d features × %d samples)", d, n)
	}
	switch a := x.(type) {
	case *denseData:
		raw := a.x.RawMatrix()
		for i := 0; i < raw.Rows; i++ {
			row := raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols]
			if j := firstBad(row); j >= 0 {
				return checkEntry(row[j], i, j)
			}
		}
	case *sparseData:
		for i := 0; i < n; i++ {
			ind, val := a.x.Row(i)
			if p := firstBad(val); p >= 0 {
				return checkEntry(val[p], i, ind[p])
			}
		}
	}
	return nil
}

// firstBad returns the index of the first entry of row that is not
// non-negative and at most record.MaxValue (the entries checkEntry
// refuses), or -1.
func firstBad(row []float64) int {
	for j, v := range row {
		// False for NaN, +Inf, values above MaxValue and negative values;
		// −0 passes, as in checkEntry.
		if !(v >= 0 && v <= record.MaxValue) {
			return j
		}
	}
	return -1
}

func checkEntry(v float64, i, j int) error {
	switch {
	case math.IsNaN(v):
		return fmt.Errorf("model: NaN at sample %d, feature %d", i, j)
	case math.IsInf(v, 0):
		return fmt.Errorf("model: infinite entry at sample %d, feature %d", i, j)
	case v < 0:
		return fmt.Errorf("model: negative entry %g at sample %d, feature %d", v, i, j)
	case v > record.MaxValue:
		return fmt.Errorf("model: entry %g at sample %d, feature %d is above %g (record.MaxValue): scale the features down", v, i, j, record.MaxValue)
	}
	return nil
}
