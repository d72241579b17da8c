package model

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// This file holds the label-aware graphs of DGNMF, SSKNMF, N²S²L and NGE:
// intra- and inter-class k-NN graphs, the signed labeled graph, and Marginal
// Fisher Analysis' intrinsic and penalty graphs (Yan et al., "Graph
// embedding and extensions", IEEE TPAMI 29(1), 2007). They only join
// labeled samples, so they are built from exact distances among the l
// labeled samples, in blocks of labelBlock rows (l×labelBlock floats of
// workspace). The k-NN graph over all samples comes from package graph.
//
// All graphs are N×N, symmetric, with 0-1 weights and "or" symmetrization
// (i ~ j if i is among j's neighbours or j among i's), as in the papers.

// labelBlock is the number of query rows per distance block.
const labelBlock = 256

// ErrNoLabels is returned by the supervised methods (DGNMF, NGE) when no
// sample is labeled.
var ErrNoLabels = errors.New("model: no labeled samples")

// labelSet describes the labeled samples of a training set.
type labelSet struct {
	n       int   // number of samples
	ids     []int // sample indices of labeled samples, ascending
	y       []int // their classes, parallel to ids
	classes int   // number of distinct classes
	count   map[int]int
}

// parseLabels checks labels (−1 = unlabeled) for n samples and gathers the
// labeled ones. nil labels mean all unlabeled.
func parseLabels(labels []int, n int) (labelSet, error) {
	ls := labelSet{n: n, count: map[int]int{}}
	if err := checkLabels(labels, n); err != nil {
		return ls, err
	}
	for i, c := range labels {
		if c < 0 {
			continue
		}
		ls.ids = append(ls.ids, i)
		ls.y = append(ls.y, c)
		ls.count[c]++
	}
	ls.classes = len(ls.count)
	return ls, nil
}

// labeledDists calls fn(a, d) for each labeled sample a (a position in
// ls.ids), with d[b] the squared Euclidean distance between labeled samples
// a and b. d is reused between calls.
func labeledDists(x Data, ls labelSet, fn func(a int, d []float64)) error {
	rows := Rows(x)
	l := len(ls.ids)
	if l == 0 {
		return nil
	}
	var (
		p      *mat.Dense  // dense labeled rows (l×D)
		ps     *sparse.CSR // sparse labeled rows
		sq     = make([]float64, l)
		gram   mat.Dense
		dist   = make([]float64, l)
		_, dim = x.Dims()
	)
	switch r := rows.(type) {
	case *mat.Dense:
		p = mat.NewDense(l, dim, nil)
		for a, i := range ls.ids {
			p.SetRow(a, r.RawRowView(i))
		}
		for a := range sq {
			row := p.RawRowView(a)
			sq[a] = dot(row, row)
		}
	case *sparse.CSR:
		ps = sparse.Zeros(0, dim)
		for _, i := range ls.ids {
			ind, val := r.Row(i)
			ps.AppendRow(ind, val)
		}
		ps.RowSqNorms(sq)
	default:
		return fmt.Errorf("model: label graphs need DenseRows or SparseRows data, got %T", x)
	}
	for lo := 0; lo < l; lo += labelBlock {
		hi := min(lo+labelBlock, l)
		gram.Reset()
		if p != nil {
			gram.Mul(p, p.Slice(lo, hi, 0, dim).T()) // l×b
		} else {
			q := mat.NewDense(hi-lo, dim, nil)
			for a := lo; a < hi; a++ {
				ind, val := ps.Row(a)
				for t, j := range ind {
					q.Set(a-lo, j, val[t])
				}
			}
			ps.MulDenseTo(&gram, q.T()) // l×b
		}
		for a := lo; a < hi; a++ {
			for b := 0; b < l; b++ {
				d := sq[a] + sq[b] - 2*gram.At(b, a-lo)
				if d < 0 || a == b { // rounding
					d = 0
				}
				dist[b] = d
			}
			fn(a, dist)
		}
	}
	return nil
}

func dot(a, b []float64) float64 {
	var s float64
	for i, x := range a {
		s += x * b[i]
	}
	return s
}

// nearest returns the positions of the k smallest d[b] with keep(b),
// nearest first, ties broken by the smaller position. k < 0 means all.
func nearest(d []float64, k int, keep func(b int) bool, buf []int) []int {
	buf = buf[:0]
	for b := range d {
		if keep(b) {
			buf = append(buf, b)
		}
	}
	slices.SortFunc(buf, func(a, b int) int {
		if c := cmp.Compare(d[a], d[b]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	if k >= 0 && len(buf) > k {
		buf = buf[:k]
	}
	return buf
}

// pairSet collects undirected edges with a weight, then builds the N×N
// symmetric CSR. An edge added twice keeps the last weight.
type pairSet struct {
	n int
	w map[[2]int]float64
}

func newPairSet(n int) *pairSet { return &pairSet{n: n, w: map[[2]int]float64{}} }

func (s *pairSet) add(i, j int, w float64) {
	if i == j {
		return
	}
	if i > j {
		i, j = j, i
	}
	s.w[[2]int{i, j}] = w
}

func (s *pairSet) csr() *sparse.CSR {
	b := sparse.NewBuilder(s.n, s.n)
	for p, w := range s.w {
		b.Add(p[0], p[1], w)
		b.Add(p[1], p[0], w)
	}
	return b.CSR()
}

// intraInterGraphs returns the intra-class k-NN graph W_w (each labeled
// sample joined to its kIntra nearest same-class labeled samples) and the
// inter-class k-NN graph W_b (its kInter nearest labeled samples of other
// classes), both N×N with 0-1 weights and "or" symmetrization (An, thesis
// §2.2.1). kIntra < 0 joins all same-class labeled samples. Unlabeled
// samples have no edges.
func intraInterGraphs(x Data, ls labelSet, kIntra, kInter int) (ww, wb *sparse.CSR, err error) {
	sw, sb := newPairSet(ls.n), newPairSet(ls.n)
	var buf []int
	err = labeledDists(x, ls, func(a int, d []float64) {
		buf = nearest(d, kIntra, func(b int) bool { return b != a && ls.y[b] == ls.y[a] }, buf)
		for _, b := range buf {
			sw.add(ls.ids[a], ls.ids[b], 1)
		}
		buf = nearest(d, kInter, func(b int) bool { return ls.y[b] != ls.y[a] }, buf)
		for _, b := range buf {
			sb.add(ls.ids[a], ls.ids[b], 1)
		}
	})
	if err != nil {
		return nil, nil, err
	}
	return sw.csr(), sb.csr(), nil
}

// signedLabelGraph returns SSKNMF's W¹: +1 between intra-class k-NN pairs,
// −1 between inter-class k-NN pairs of labeled samples (An, thesis §2.3).
// The two edge sets are disjoint since a pair is either same-class or not.
func signedLabelGraph(x Data, ls labelSet, kIntra, kInter int) (*sparse.CSR, error) {
	s := newPairSet(ls.n)
	var buf []int
	err := labeledDists(x, ls, func(a int, d []float64) {
		buf = nearest(d, kIntra, func(b int) bool { return b != a && ls.y[b] == ls.y[a] }, buf)
		for _, b := range buf {
			s.add(ls.ids[a], ls.ids[b], 1)
		}
		buf = nearest(d, kInter, func(b int) bool { return ls.y[b] != ls.y[a] }, buf)
		for _, b := range buf {
			s.add(ls.ids[a], ls.ids[b], -1)
		}
	})
	if err != nil {
		return nil, err
	}
	return s.csr(), nil
}

// mfaGraphs returns Marginal Fisher Analysis' intrinsic graph S (each
// labeled sample joined to its k1 nearest same-class labeled samples; k1 < 0
// means all of them, the "n_c − 1" of N²S²L's experiments) and penalty graph
// Sᵖ (for each class c, the k2 shortest pairs (i, j) with i in c and j
// labeled in another class), both N×N, 0-1, symmetric (Yan et al. 2007,
// eq. 13–14).
func mfaGraphs(x Data, ls labelSet, k1, k2 int) (s, sp *sparse.CSR, err error) {
	si, spn := newPairSet(ls.n), newPairSet(ls.n)
	type pair struct {
		d    float64
		a, b int
	}
	cross := map[int][]pair{} // class → its between-class pairs
	var buf []int
	err = labeledDists(x, ls, func(a int, d []float64) {
		buf = nearest(d, k1, func(b int) bool { return b != a && ls.y[b] == ls.y[a] }, buf)
		for _, b := range buf {
			si.add(ls.ids[a], ls.ids[b], 1)
		}
		// Keep only each sample's k2 nearest foreign samples: the k2
		// shortest pairs of a class are among them.
		buf = nearest(d, k2, func(b int) bool { return ls.y[b] != ls.y[a] }, buf)
		c := ls.y[a]
		for _, b := range buf {
			cross[c] = append(cross[c], pair{d[b], a, b})
		}
	})
	if err != nil {
		return nil, nil, err
	}
	for _, ps := range cross {
		slices.SortFunc(ps, func(p, q pair) int {
			if c := cmp.Compare(p.d, q.d); c != 0 {
				return c
			}
			if c := cmp.Compare(p.a, q.a); c != 0 {
				return c
			}
			return cmp.Compare(p.b, q.b)
		})
		for _, p := range ps[:min(k2, len(ps))] {
			spn.add(ls.ids[p.a], ls.ids[p.b], 1)
		}
	}
	return si.csr(), spn.csr(), nil
}

// knnGraph returns the k-NN graph over all samples of x, 0-1 weights, "or"
// symmetrized, from package graph's exact search.
func knnGraph(x Data, k int) (*sparse.CSR, error) {
	_, n := x.Dims()
	if k >= n {
		return nil, fmt.Errorf("model: %d neighbours for %d samples", k, n)
	}
	var (
		g   *graph.Graph
		err error
	)
	switch r := Rows(x).(type) {
	case *mat.Dense:
		g, err = graph.KNN{K: k}.Dense(r)
	case *sparse.CSR:
		g, err = graph.KNN{K: k}.Sparse(r)
	default:
		return nil, fmt.Errorf("model: k-NN graph needs DenseRows or SparseRows data, got %T", x)
	}
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	s := newPairSet(n)
	for i := 0; i < n; i++ {
		ids, _ := g.Neighbors(i)
		for _, j := range ids {
			s.add(i, j, 1)
		}
	}
	return s.csr(), nil
}
