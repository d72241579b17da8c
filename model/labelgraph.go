package model

import (
	"errors"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// This file holds the label-aware graphs of DGNMF, SSKNMF, N²S²L and NGE:
// intra- and inter-class k-NN graphs, the signed labeled graph, and Marginal
// Fisher Analysis' intrinsic and penalty graphs (Yan et al., "Graph
// embedding and extensions", IEEE TPAMI 29(1), 2007). All come from package
// graph, whose builders follow the same papers: IntraInter, Signed and MFA
// on a graph of the labeled samples only (they only join labeled samples),
// and Weights for the k-NN graph over all samples.
//
// All graphs are N×N, symmetric, with 0-1 weights and "or" symmetrization
// (i ~ j if i is among j's neighbours or j among i's), as in the papers.

// labelNeighbors is the default size of DGNMF's and SSKNMF's label lists
// (DGNMF.Neighbors, SSKNMF.LabelNeighbors: the same-class and the
// other-class k), and online of their lists on sparse samples
// (Online.graphConfig).
const labelNeighbors = 5

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

// labelGraph returns a graph.Graph over the labeled samples of x only,
// node a being sample ls.ids[a], with their classes set. cfg gives the
// sizes of the label lists (IntraK, InterK, PenaltyPairs); its K, the plain
// k-NN lists, is not used and set to 1. Building the graph over the l
// labeled samples costs l²D, not the N²D of a graph over all samples.
// It returns nil if fewer than two samples are labeled.
func labelGraph(x Data, ls labelSet, cfg graph.KNN) (*graph.Graph, error) {
	if len(ls.ids) < 2 {
		return nil, nil
	}
	cfg.K = 1
	var (
		g   *graph.Graph
		err error
	)
	switch r := Rows(x).(type) {
	case *mat.Dense:
		_, dim := r.Dims()
		p := mat.NewDense(len(ls.ids), dim, nil)
		for a, i := range ls.ids {
			p.SetRow(a, r.RawRowView(i))
		}
		// Insertion, unlike a batch build, allows l ≤ K.
		if g, err = cfg.NewDense(dim); err == nil {
			_, err = g.InsertDense(p)
		}
	case *sparse.CSR:
		_, dim := r.Dims()
		p := sparse.Zeros(0, dim)
		for _, i := range ls.ids {
			ind, val := r.Row(i)
			p.AppendRow(ind, val)
		}
		if g, err = cfg.NewSparse(dim); err == nil {
			_, err = g.InsertSparse(p)
		}
	default:
		return nil, fmt.Errorf("model: label graphs need DenseRows or SparseRows data, got %T", x)
	}
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	ids := make([]int, len(ls.ids))
	for a := range ids {
		ids[a] = a
	}
	if _, err := g.SetLabels(ids, ls.y); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	return g, nil
}

// embed returns the N×N matrix whose entry (ids[a], ids[b]) is s's entry
// (a, b): a graph over the labeled samples placed among all n samples.
// A nil s gives the empty N×N matrix.
func embed(s *sparse.CSR, ids []int, n int) *sparse.CSR {
	b := sparse.NewBuilder(n, n)
	if s != nil {
		for a, i := range ids {
			ind, val := s.Row(a)
			for p, c := range ind {
				b.Add(i, ids[c], val[p])
			}
		}
	}
	return b.CSR()
}

// maxClassCount returns the size of the largest labeled class.
func (ls labelSet) maxClassCount() int {
	m := 0
	for _, c := range ls.count {
		m = max(m, c)
	}
	return m
}

// intraInterGraphs returns the intra-class k-NN graph W_w (each labeled
// sample joined to its kIntra nearest same-class labeled samples) and the
// inter-class k-NN graph W_b (its kInter nearest labeled samples of other
// classes), both N×N with 0-1 weights and "or" symmetrization (An, thesis
// §2.2.1), from graph.Graph.IntraInter. Unlabeled samples have no edges.
func intraInterGraphs(x Data, ls labelSet, kIntra, kInter int, metric graph.Metric) (ww, wb *sparse.CSR, err error) {
	g, err := labelGraph(x, ls, graph.KNN{IntraK: kIntra, InterK: kInter, Metric: metric})
	if err != nil {
		return nil, nil, err
	}
	if g != nil {
		ww, wb = g.IntraInter(graph.Weighting{})
	}
	return embed(ww, ls.ids, ls.n), embed(wb, ls.ids, ls.n), nil
}

// signedLabelGraph returns SSKNMF's W¹: +1 between intra-class k-NN pairs,
// −1 between inter-class k-NN pairs of labeled samples (An, thesis §2.3),
// from graph.Graph.Signed.
func signedLabelGraph(x Data, ls labelSet, kIntra, kInter int, metric graph.Metric) (*sparse.CSR, error) {
	g, err := labelGraph(x, ls, graph.KNN{IntraK: kIntra, InterK: kInter, Metric: metric})
	if err != nil {
		return nil, err
	}
	var w1 *sparse.CSR
	if g != nil {
		w1 = g.Signed(graph.Weighting{})
	}
	return embed(w1, ls.ids, ls.n), nil
}

// mfaGraphs returns Marginal Fisher Analysis' intrinsic graph S (each
// labeled sample joined to its k1 nearest same-class labeled samples; k1 < 0
// means all of them, the "n_c − 1" of N²S²L's experiments) and penalty graph
// Sᵖ (for each class c, the k2 shortest pairs (i, j) with i in c and j
// labeled in another class), both N×N, 0-1, symmetric (Yan et al. 2007,
// eq. 13–14), from graph.Graph.MFA.
func mfaGraphs(x Data, ls labelSet, k1, k2 int, metric graph.Metric) (s, sp *sparse.CSR, err error) {
	if k1 < 0 {
		k1 = max(ls.maxClassCount()-1, 1)
	}
	g, err := labelGraph(x, ls, graph.KNN{IntraK: k1, PenaltyPairs: k2, Metric: metric})
	if err != nil {
		return nil, nil, err
	}
	if g != nil {
		s, sp = g.MFA(graph.Weighting{})
	}
	return embed(s, ls.ids, ls.n), embed(sp, ls.ids, ls.n), nil
}

// knnGraph returns the k-NN graph over all samples of x, 0-1 weights,
// symmetrized by max(W, Wᵀ), from package graph's exact search, run in
// parts by split if it is set (the same graph either way).
func knnGraph(x Data, k int, metric graph.Metric, split func(n int, body func(lo, hi int))) (*sparse.CSR, error) {
	_, n := x.Dims()
	if k >= n {
		return nil, fmt.Errorf("model: %d neighbours for %d samples", k, n)
	}
	if Rows(x) == nil {
		return nil, fmt.Errorf("model: k-NN graph needs DenseRows or SparseRows data, got %T", x)
	}
	g, err := buildGraph(graph.KNN{K: k, Metric: metric}, x, split)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	return g.Weights(graph.Weighting{}), nil
}
