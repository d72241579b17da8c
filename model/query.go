package model

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/gemm"
	"github.com/nmfstream/nmfstream/internal/vec"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// DefaultQueryBlock is Query's number of queries per block when its
// BlockSize is zero.
const DefaultQueryBlock = 256

// Query finds, for new samples, their k nearest training samples and
// weights the edges as the training graph was weighted. It is the
// out-of-sample half of graph-aware projection.
//
// The search is exact and blocked: one matrix product per block of
// queries against all training samples, then a top-k selection per row.
// With sparse queries and sparse training samples the products run
// through the training samples' transpose instead, which the Query holds
// from its first such query on (as many stored entries as Train).
// A Query is not safe for concurrent use.
type Query struct {
	// Train holds the M training samples. It must be set.
	Train Data
	// K is the number of neighbours. If zero, it defaults to 5.
	K int
	// Metric is the distance, Euclidean or Cosine.
	Metric graph.Metric
	// Weighting gives the edge weights; for HeatKernel, HeatT must be set.
	Weighting graph.Weighting
	// BlockSize is the number of queries per block. If zero,
	// DefaultQueryBlock. A Query holds the products of a block with every
	// training sample: 8·BlockSize·M bytes.
	BlockSize int

	trainSq []float64
	prod    mat.Dense
	inv     *sparse.CSR       // a sparse Train's transpose (sparseProducts)
	abt     gemm.ABTWorkspace // products' packed operand
}

// Weights returns the N×M weights between x's samples and the training
// samples: each row holds the weights of that sample's K nearest
// training samples (ties to the smaller index).
func (q *Query) Weights(x Data) (*sparse.CSR, error) {
	d, n := x.Dims()
	td, m := q.Train.Dims()
	if d != td {
		return nil, fmt.Errorf("model: query has %d features, training data %d", d, td)
	}
	k := q.K
	if k == 0 {
		k = 5
	}
	if k > m {
		k = m
	}
	w := q.Weighting
	if w.Scheme == graph.HeatKernel && w.HeatT <= 0 {
		return nil, fmt.Errorf("model: query: heat-kernel weights need HeatT > 0")
	}
	if q.trainSq == nil {
		q.trainSq = rowSqNorms(q.Train)
	}
	querySq := rowSqNorms(x)
	bs := q.BlockSize
	if bs == 0 {
		bs = DefaultQueryBlock
	}
	out := sparse.Zeros(0, m)
	type cand struct {
		j   int
		d   float64 // squared Euclidean distance, or 1 − cos
		dot float64
	}
	// top holds the k best candidates so far, best first: a bounded
	// insertion keeps the selection O(M·k) per query instead of sorting M.
	top := make([]cand, 0, k)
	ind := make([]int, k)
	val := make([]float64, k)
	for lo := 0; lo < n; lo += bs {
		hi := min(lo+bs, n)
		q.products(x, lo, hi) // (hi−lo)×M inner products
		pr := q.prod.RawMatrix()
		for r := 0; r < hi-lo; r++ {
			row := pr.Data[r*pr.Stride : r*pr.Stride+m]
			qs := querySq[lo+r]
			top = top[:0]
			for j, dot := range row {
				var dist float64
				if q.Metric == graph.Cosine {
					dist = 1 - dot/math.Sqrt(max(qs*q.trainSq[j], 1e-300))
				} else {
					dist = max(qs+q.trainSq[j]-2*dot, 0)
				}
				// Candidates come in increasing j, so a tie never displaces
				// an earlier one: ties go to the smaller index.
				if len(top) == k && dist >= top[k-1].d {
					continue
				}
				if len(top) < k {
					top = append(top, cand{})
				}
				p := len(top) - 1
				for ; p > 0 && top[p-1].d > dist; p-- {
					top[p] = top[p-1]
				}
				top[p] = cand{j, dist, dot}
			}
			slices.SortFunc(top, func(a, b cand) int { return a.j - b.j })
			for p, c := range top {
				ind[p] = c.j
				switch w.Scheme {
				case graph.Binary:
					val[p] = 1
				case graph.HeatKernel:
					d2 := c.d
					if q.Metric == graph.Cosine {
						d2 = 2 * c.d // ‖a/‖a‖ − b/‖b‖‖² = 2(1 − cos)
					}
					val[p] = math.Exp(-d2 / (2 * w.HeatT * w.HeatT))
				case graph.DotProduct:
					val[p] = c.dot
				case graph.CosineSimilarity:
					val[p] = c.dot / math.Sqrt(max(qs*q.trainSq[c.j], 1e-300))
				}
			}
			out.AppendRow(ind, val)
		}
	}
	return out, nil
}

// products stores the inner products of x's samples [lo, hi) with every
// training sample into q.prod ((hi−lo)×M).
func (q *Query) products(x Data, lo, hi int) {
	_, m := q.Train.Dims()
	q.prod.Reset()
	q.prod.ReuseAs(hi-lo, m)
	switch xr := Rows(x).(type) {
	case *mat.Dense:
		switch tr := Rows(q.Train).(type) {
		case *mat.Dense:
			gemm.ABT(q.prod.RawMatrix(), xr.Slice(lo, hi, 0, xr.RawMatrix().Cols).(*mat.Dense).RawMatrix(), tr.RawMatrix(), &q.abt, false)
			return
		case *sparse.CSR:
			var t mat.Dense
			tr.MulDenseTo(&t, xr.Slice(lo, hi, 0, xr.RawMatrix().Cols).T()) // M×b
			q.prod.Copy(t.T())
			return
		}
	case *sparse.CSR:
		if tr, ok := Rows(q.Train).(*sparse.CSR); ok {
			q.sparseProducts(xr, tr, lo, hi)
			return
		}
		_, d := xr.Dims()
		blk := mat.NewDense(d, hi-lo, nil) // the query block, densified and transposed
		for i := lo; i < hi; i++ {
			ind, val := xr.Row(i)
			for p, j := range ind {
				blk.Set(j, i-lo, val[p])
			}
		}
		var t mat.Dense
		t.Mul(Rows(q.Train).(*mat.Dense), blk)
		q.prod.Copy(t.T())
		return
	}
	panic(fmt.Sprintf("model: query on unsupported data %T", x))
}

// sparseProducts stores the inner products of the sparse queries [lo, hi)
// of x with the sparse training samples tr into q.prod, through tr's
// transpose (q.inv, built on the first call): a query visits only the
// training samples that hold one of its features, where a product with
// the densified block would visit every stored entry of tr for each
// query. Each product adds the shared features' terms in increasing
// feature order, as tr.MulDenseTo does for a dense query, so the two
// agree bit for bit.
func (q *Query) sparseProducts(x, tr *sparse.CSR, lo, hi int) {
	if q.inv == nil {
		q.inv = transposeCSR(tr)
	}
	raw := q.prod.RawMatrix()
	for i := lo; i < hi; i++ {
		out := raw.Data[(i-lo)*raw.Stride : (i-lo)*raw.Stride+raw.Cols]
		clear(out)
		ind, val := x.Row(i)
		for p, j := range ind {
			v := val[p]
			ti, tv := q.inv.Row(j)
			for r, t := range ti {
				out[t] += tv[r] * v
			}
		}
	}
}

// rowSqNorms returns the squared norm of each sample of x.
func rowSqNorms(x Data) []float64 {
	switch r := Rows(x).(type) {
	case *mat.Dense:
		n, _ := r.Dims()
		out := make([]float64, n)
		for i := range out {
			v := r.RawRowView(i)
			out[i] = vec.Dot(v, v)
		}
		return out
	case *sparse.CSR:
		return r.RowSqNorms(nil)
	}
	panic(fmt.Sprintf("model: unsupported data %T", x))
}
