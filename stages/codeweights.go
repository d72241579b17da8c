package stages

import (
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/vec"
)

// codeScaled is a batch's spreading weights with each edge's weight
// multiplied by the cosine of its two ends' codes to a power q:
// w_ij · cos(v_i, v_j)^q. It is how PredictGraph's default reads the
// factorization (CodesAuto): the k-NN graph of the samples decides who is
// joined, and the codes of the method learned (GNMF, SSKNMF, …) how much
// each edge says. Both factors are symmetric, so the product is, as the
// solver needs (harmonic.go). The codes are those before the batch's step
// (model.Online.LastCodes), so that the spreading runs beside the step; a
// node without one (added by the batch) gives its edges the mean factor of
// the edges whose ends both have codes. The rows are rebuilt every batch,
// since the step moves the codes; it owns them until the next set.
type codeScaled struct {
	ptr []int
	ind []int
	val []float64
	fac []float64 // by entry: the codes' factor, or −1 where an end has no code
	inv []float64 // by slot: 1/‖v_i‖, 0 for a node without a code
}

// Row returns row i.
func (c *codeScaled) Row(i int) ([]int, []float64) {
	if i+1 >= len(c.ptr) {
		return nil, nil
	}
	lo, hi := c.ptr[i], c.ptr[i+1]
	return c.ind[lo:hi], c.val[lo:hi]
}

// Dims returns the matrix's size, that of the weights it scales.
func (c *codeScaled) Dims() (int, int) { n := len(c.ptr) - 1; return n, n }

// set makes c the weights base with each edge (i, j) scaled by
// cos(v_i, v_j)^q, v the codes by slot (model.Online.LastCodes: rows past
// its end, and zero rows, are nodes without a code) and live the nodes
// whose rows base holds, ascending. A cosine below minSpreadWeight (codes
// with no common column) counts as minSpreadWeight, so that no edge of the
// graph is dropped. It costs O(edges·K) and reads base and v only.
func (c *codeScaled) set(base rowSource, v *mat.Dense, live []int, q float64) {
	n, _ := base.Dims()
	rows, _ := v.Dims()
	c.inv = slices.Grow(c.inv[:0], n)[:n]
	clear(c.inv)
	for _, i := range live {
		if i < n && i < rows {
			if s := norm(v.RawRowView(i)); s > 0 {
				c.inv[i] = 1 / s
			}
		}
	}
	c.ptr = slices.Grow(c.ptr[:0], n+1)[:n+1]
	c.ptr[0] = 0
	c.ind, c.val, c.fac = c.ind[:0], c.val[:0], c.fac[:0]
	sum, cnt := 0.0, 0
	next := 0
	for _, i := range live {
		if i >= n {
			break
		}
		for ; next < i; next++ {
			c.ptr[next+1] = len(c.ind)
		}
		ind, val := base.Row(i)
		c.ind, c.val = append(c.ind, ind...), append(c.val, val...)
		for _, j := range ind {
			f := -1.0
			if c.inv[i] > 0 && c.inv[j] > 0 {
				cos := vec.Dot(v.RawRowView(i), v.RawRowView(j)) * c.inv[i] * c.inv[j]
				f = pow(max(cos, minSpreadWeight), q)
				sum += f
				cnt++
			}
			c.fac = append(c.fac, f)
		}
		c.ptr[i+1] = len(c.ind)
		next = i + 1
	}
	for ; next < n; next++ {
		c.ptr[next+1] = len(c.ind)
	}
	mean := 1.0
	if cnt > 0 {
		mean = sum / float64(cnt)
	}
	for e, f := range c.fac {
		if f < 0 {
			f = mean
		}
		c.val[e] *= f
	}
}

// Learner.SpreadCodes's defaults, q of the codes' factor on PredictGraph's
// edge weights. On images the edges already weigh cos(x_i, x_j)^20, and a
// large q costs accuracy (q = 20 and 40 lose up to 2.2 points on the
// shuffled digits); q = 4 moves the digits and MNIST streams by less than
// a sample in a thousand while the method shapes the predictions. On
// documents the edges are binary, and the codes' factor is what grades
// them: q = 40 gains up to 0.8 point on the Brown streams and loses 0.2
// on one of the mails (BENCHMARKS.md, "The codes on the spreading's edges").
const (
	defaultSpreadCodesDense  = 4
	defaultSpreadCodesSparse = 40
)
