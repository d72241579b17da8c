package graph

import (
	"fmt"
	"math"
	"slices"

	"github.com/nmfstream/nmfstream/model/sparse"
)

// Scheme is how an edge between neighbours i and j is weighted.
type Scheme int

const (
	// Binary gives every edge weight 1 (Cai et al.'s "0-1 weighting").
	Binary Scheme = iota
	// HeatKernel gives exp(−d²/(2t²)), d the Euclidean distance between the
	// rows (for the Cosine metric, between the rows scaled to unit norm:
	// d² = 2 − 2cos), t = Weighting.HeatT.
	HeatKernel
	// DotProduct gives xᵢᵀxⱼ of the rows as given.
	DotProduct
	// CosineSimilarity gives xᵢᵀxⱼ/(‖xᵢ‖‖xⱼ‖).
	CosineSimilarity
)

// Symmetrize is how the directed k-NN weights W are made symmetric.
type Symmetrize int

const (
	// Max gives S = max(W, Wᵀ): i and j are joined if either is among the
	// other's neighbours. It is the rule of Cai et al.'s code and of the
	// papers' "xᵢ ∈ N(xⱼ) or xⱼ ∈ N(xᵢ)".
	Max Symmetrize = iota
	// Mean gives S = (W + Wᵀ)/2.
	Mean
	// Mutual joins i and j only if each is among the other's neighbours,
	// with weight min(Wᵢⱼ, Wⱼᵢ).
	Mutual
)

// Weighting chooses edge weights and symmetrization. The zero value is
// binary weights symmetrized by Max.
type Weighting struct {
	// Scheme is the edge weight. The zero value is Binary.
	Scheme Scheme
	// HeatT is the heat-kernel width t > 0. If zero, t is the mean distance
	// between neighbours over the directed pairs of the graph being built,
	// the sparse analogue of the default of Cai et al.'s code (the mean
	// pairwise distance). Ignored by the other schemes.
	HeatT float64
	// Sym is the symmetrization. The zero value is Max.
	Sym Symmetrize
}

func (w Weighting) check() error {
	if w.Scheme < Binary || w.Scheme > CosineSimilarity {
		return fmt.Errorf("graph: unknown weighting scheme %d", int(w.Scheme))
	}
	if w.Sym < Max || w.Sym > Mutual {
		return fmt.Errorf("graph: unknown symmetrization %d", int(w.Sym))
	}
	if w.HeatT < 0 || math.IsNaN(w.HeatT) || math.IsInf(w.HeatT, 0) {
		return fmt.Errorf("graph: invalid heat kernel width %g", w.HeatT)
	}
	return nil
}

// edge is a directed weighted edge.
type edge struct {
	i, j int32
	w    float64
}

// sqDist turns a canonical key into the squared Euclidean distance used by
// the heat kernel.
func (g *Graph) sqDist(key float64) float64 {
	if g.st.cosine {
		// Rounding can put the cosine of near-parallel rows just above 1.
		return max(0, 2-2*cosOf(key))
	}
	return key
}

// edgeWeight returns the weight of the pair (i, j) whose canonical squared
// distance is key. It is symmetric in i and j bit for bit.
func (g *Graph) edgeWeight(w Weighting, t2 float64, i, j int, key float64) float64 {
	switch w.Scheme {
	case HeatKernel:
		return math.Exp(-g.sqDist(key) / t2)
	case DotProduct:
		return g.st.canonDot(i, j)
	case CosineSimilarity:
		if g.st.cosine {
			return cosOf(key)
		}
		if !g.st.isSparse {
			// key is the squared distance of the stored rows, whose squared
			// norms the store keeps: ‖a−b‖² = ‖a‖² + ‖b‖² − 2aᵀb, so the
			// cosine costs O(1) instead of a product over the dimension.
			den := math.Sqrt(g.st.sq[i] * g.st.sq[j])
			if den == 0 {
				return 0
			}
			return min(1, max(-1, (g.st.sq[i]+g.st.sq[j]-key)/(2*den)))
		}
		d := g.st.canonDot(i, j)
		if den := g.st.raw[i] * g.st.raw[j]; den > 0 {
			return d / den
		}
		return 0
	}
	return 1
}

// directed collects the directed edges (i, j) for j among the first limit
// entries of i's list in ls, for the live nodes i.
func (g *Graph) directed(ls *lists, limit int, w Weighting) []edge {
	es := make([]edge, 0, g.nlive*limit)
	for i, l := range g.live {
		if !l {
			continue
		}
		nb, key := ls.row(i)
		if len(nb) > limit {
			nb, key = nb[:limit], key[:limit]
		}
		for p := range nb {
			es = append(es, edge{int32(i), nb[p], key[p]}) // w holds the key for now
		}
	}
	t2 := 1.0
	if w.Scheme == HeatKernel {
		t := w.HeatT
		if t == 0 {
			var s float64
			for _, e := range es {
				s += math.Sqrt(g.sqDist(e.w))
			}
			if len(es) > 0 {
				t = s / float64(len(es))
			}
		}
		t2 = 2 * t * t
		if t2 == 0 {
			t2 = 1 // all neighbours coincide: every weight is exp(0) = 1
		}
	}
	for p := range es {
		e := &es[p]
		e.w = g.edgeWeight(w, t2, int(e.i), int(e.j), e.w)
	}
	return es
}

// symmetric turns directed edges into the symmetric n×n matrix chosen by sym.
// Each edge gives two half-edges, one in each endpoint's row; they are
// bucketed by row (counting sort) and each short row is sorted by column.
func symmetric(n int, es []edge, sym Symmetrize) *sparse.CSR {
	type half struct {
		c   int32
		out bool // from the row's own list
		w   float64
	}
	start := make([]int, n+1)
	for _, e := range es {
		start[e.i+1]++
		start[e.j+1]++
	}
	for i := 1; i <= n; i++ {
		start[i] += start[i-1]
	}
	hs := make([]half, 2*len(es))
	next := slices.Clone(start[:n])
	for _, e := range es {
		hs[next[e.i]] = half{e.j, true, e.w}
		next[e.i]++
		hs[next[e.j]] = half{e.i, false, e.w}
		next[e.j]++
	}
	indptr := make([]int, n+1)
	ind := make([]int, 0, len(hs))
	val := make([]float64, 0, len(hs))
	for r := 0; r < n; r++ {
		row := hs[start[r]:start[r+1]]
		for a := 1; a < len(row); a++ { // insertion sort: rows are short
			for b := a; b > 0 && row[b].c < row[b-1].c; b-- {
				row[b], row[b-1] = row[b-1], row[b]
			}
		}
		for p := 0; p < len(row); {
			c := row[p].c
			var wo, wi float64 // W_rc and W_cr
			var ho, hi bool
			for ; p < len(row) && row[p].c == c; p++ {
				if row[p].out {
					wo, ho = row[p].w, true
				} else {
					wi, hi = row[p].w, true
				}
			}
			var v float64
			switch sym {
			case Max:
				v = max(wo, wi) // a missing direction counts as 0
			case Mean:
				v = (wo + wi) / 2
			case Mutual:
				if !(ho && hi) {
					continue
				}
				v = min(wo, wi)
			}
			if v == 0 {
				continue
			}
			ind = append(ind, int(c))
			val = append(val, v)
		}
		indptr[r+1] = len(ind)
	}
	return sparse.NewCSR(n, n, indptr, ind, val)
}

// Weights returns the symmetric Slots()×Slots() weight matrix S of the k-NN
// graph, weighted and symmetrized as w says. Rows of free slots are empty.
// It panics if w is invalid (a programming error).
func (g *Graph) Weights(w Weighting) *sparse.CSR {
	if err := w.check(); err != nil {
		panic(err)
	}
	return symmetric(len(g.live), g.directed(&g.knn, g.knn.vis, w), w.Sym)
}
