package classify

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/graph"
)

// Metric is the dissimilarity used by the neighbour-based classifiers:
// graph.Metric, the one distance type of nmfstream. Euclidean (the zero
// value) is ‖a − b‖; Cosine is 1 − a·b/(‖a‖‖b‖), and here a zero row has
// cosine distance 1 to every row.
type Metric = graph.Metric

// The metrics, as in package graph.
const (
	Euclidean = graph.Euclidean
	Cosine    = graph.Cosine
)

// Block sizes of the exact search. A tile of queryBlock×refBlock inner
// products (2 MiB) stays in cache-friendly territory while letting one
// matrix product do the work of many per-pair loops.
const (
	queryBlock = 256
	refBlock   = 1024
)

// knnIndex is an exact, blocked k-nearest-neighbour search over the rows of
// a reference matrix R (n×D). Squared Euclidean distances are computed as
// ‖q‖² + ‖r‖² − 2 q·r with one matrix product per tile of query and
// reference rows; cosine distances as 1 − q̂·r̂ on unit rows.
type knnIndex struct {
	metric Metric
	ref    mat.Dense // n×D reference rows (unit rows for Cosine)
	sq     []float64 // ‖r‖² per reference row (Euclidean only)

	q    mat.Dense // query workspace (unit rows for Cosine)
	qsq  []float64
	bad  []bool // query rows with a non-finite entry
	tile mat.Dense
}

// reset stores a copy of x's rows as the reference set.
func (ix *knnIndex) reset(x mat.Matrix, metric Metric) {
	ix.metric = metric
	n, d := x.Dims()
	ix.ref.Reset()
	ix.ref.ReuseAs(n, d)
	ix.ref.Copy(x)
	ix.sq = prepareRows(&ix.ref, metric, ix.sq)
}

// prepareRows normalizes the rows of a to unit length for Cosine, or
// returns their squared norms for Euclidean (in sq, reused if big enough).
func prepareRows(a *mat.Dense, metric Metric, sq []float64) []float64 {
	n, _ := a.Dims()
	if cap(sq) < n {
		sq = make([]float64, n)
	}
	sq = sq[:n]
	for i := range n {
		row := a.RawRowView(i)
		var s float64
		for _, v := range row {
			s += v * v
		}
		sq[i] = s
		if metric == Cosine && s > 0 {
			inv := 1 / math.Sqrt(s)
			for j := range row {
				row[j] *= inv
			}
			sq[i] = 1
		}
	}
	return sq
}

// search writes, for each row i of x, the indices of its k nearest
// reference rows into idx[i*k:(i+1)*k] and their dissimilarities into
// dist[i*k:(i+1)*k], nearest first; ties go to the smaller index. For
// Euclidean, dist holds squared distances. If self is true, x must be the
// reference set itself and row i is not its own neighbour. Rows of x with a
// non-finite entry get index −1 and distance +Inf throughout.
func (ix *knnIndex) search(idx []int, dist []float64, x mat.Matrix, k int, self bool) {
	nq, d := x.Dims()
	nr, _ := ix.ref.Dims()
	if len(idx) != nq*k || len(dist) != nq*k {
		panic("classify: internal: wrong neighbour buffer length")
	}
	for i := range idx {
		idx[i] = -1
		dist[i] = math.Inf(1)
	}
	if nq == 0 || nr == 0 || k == 0 {
		return
	}
	for q0 := 0; q0 < nq; q0 += queryBlock {
		q1 := min(q0+queryBlock, nq)
		bq := q1 - q0
		// Copy the query block so that Cosine can normalize it in place and
		// so that any mat.Matrix is accepted.
		ix.q.Reset()
		ix.q.ReuseAs(bq, d)
		ix.q.Copy(sliceRows(x, q0, q1))
		ix.qsq = prepareRows(&ix.q, ix.metric, ix.qsq)
		if cap(ix.bad) < bq {
			ix.bad = make([]bool, queryBlock)
		}
		bad := ix.bad[:bq]
		clear(bad)
		for i := range bq {
			for _, v := range ix.q.RawRowView(i) {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					bad[i] = true
					break
				}
			}
		}
		for r0 := 0; r0 < nr; r0 += refBlock {
			r1 := min(r0+refBlock, nr)
			ix.tile.Reset()
			ix.tile.ReuseAs(bq, r1-r0)
			ix.tile.Mul(&ix.q, ix.ref.Slice(r0, r1, 0, d).T())
			for i := range bq {
				if bad[i] {
					continue
				}
				gi := q0 + i
				bi := idx[gi*k : (gi+1)*k]
				bd := dist[gi*k : (gi+1)*k]
				row := ix.tile.RawRowView(i)
				for j, g := range row {
					gj := r0 + j
					if self && gj == gi {
						continue
					}
					var dd float64
					if ix.metric == Cosine {
						dd = 1 - g
					} else {
						dd = ix.qsq[i] + ix.sq[gj] - 2*g
					}
					if dd < 0 {
						dd = 0 // rounding in ‖q‖² + ‖r‖² − 2q·r
					}
					if dd < bd[k-1] {
						insert(bi, bd, gj, dd)
					}
				}
			}
		}
	}
}

// insert puts (j, d) into the sorted lists idx, dist, dropping the last
// entry. Equal distances keep their earlier (smaller-index) entries first.
func insert(idx []int, dist []float64, j int, d float64) {
	p := len(dist) - 1
	for p > 0 && dist[p-1] > d {
		dist[p] = dist[p-1]
		idx[p] = idx[p-1]
		p--
	}
	dist[p] = d
	idx[p] = j
}

// sliceRows returns rows [i0, i1) of x as a matrix, a view when possible.
func sliceRows(x mat.Matrix, i0, i1 int) mat.Matrix {
	_, c := x.Dims()
	if s, ok := x.(interface {
		Slice(i, k, j, l int) mat.Matrix
	}); ok {
		return s.Slice(i0, i1, 0, c)
	}
	return rowRange{x, i0, i1}
}

// rowRange is a read-only view of rows [i0, i1) of a mat.Matrix.
type rowRange struct {
	m      mat.Matrix
	i0, i1 int
}

func (r rowRange) Dims() (int, int)    { _, c := r.m.Dims(); return r.i1 - r.i0, c }
func (r rowRange) At(i, j int) float64 { return r.m.At(r.i0+i, j) }
func (r rowRange) T() mat.Matrix       { return mat.Transpose{Matrix: r} }
