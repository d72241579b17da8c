package stages

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/gemm"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// CodeUse says what Learner's predictor reads of the factorization's codes:
// the switch behind the ablations of docs/DESIGN.md §7 (raw only, codes
// only, the default), so that what the codes add to the predictions is a
// measured number.
type CodeUse int

const (
	// CodesAuto (the default): PredictGraph spreads the labels over the
	// k-NN graph of the raw samples, each edge weighed by the samples'
	// cosine and by their codes' (Learner.SpreadCodes: level on the image
	// streams over draws of the labels, up to +0.8 point on the document
	// streams, BENCHMARKS.md "The codes on the spreading's edges"; spreading
	// over the codes instead, or mixing a code-space vote or a linear model
	// of the codes into it, each cost accuracy, "What the codes add"), and
	// predicts by the code-space vote (PredictNearest) the samples that no
	// label reaches in that graph. PredictNearest, PredictWalk and
	// PredictPropagate read the codes alone.
	CodesAuto CodeUse = iota
	// CodesOff predicts from the raw samples alone: PredictGraph as
	// CodesAuto without the codes' factor on its edges, and a sample that
	// no label reaches is given the class with the most labels in the
	// window. PredictNearest, PredictWalk and
	// PredictPropagate, which classify codes, are refused with it.
	CodesOff
	// CodesOnly predicts from the codes alone: PredictGraph spreads the
	// labels over a graph of the codes (each sample joined, on arrival, to
	// its nearest samples by the cosine of the codes, weighted by that
	// cosine to the SpreadPower), and its linear expert on documents reads
	// the codes instead of the TF-IDF rows.
	CodesOnly
)

// String returns the command line's name of u: "auto", "off" or "only".
func (u CodeUse) String() string {
	switch u {
	case CodesAuto:
		return "auto"
	case CodesOff:
		return "off"
	case CodesOnly:
		return "only"
	}
	return fmt.Sprintf("CodeUse(%d)", int(u))
}

// ParseCodeUse parses "auto" (or ""), "off" or "only".
func ParseCodeUse(s string) (CodeUse, error) {
	switch s {
	case "", "auto":
		return CodesAuto, nil
	case "off":
		return CodesOff, nil
	case "only":
		return CodesOnly, nil
	}
	return 0, fmt.Errorf("stages: unknown code use %q (want auto, off or only)", s)
}

// defaultSpreadPower is p of the spreading's edge weights cos(xᵢ, xⱼ)^p
// when Learner.SpreadPower is zero. Binary weights give a far neighbour the
// say of a near one; the power makes a neighbour's weight fall off with the
// angle between the samples, as a heat kernel on the sphere would
// (cos^p ≈ exp(−p(1 − cos))). Measured on the digits streams (seeds 1–3)
// and MNIST 15k, p = 10, 20, 40 against binary weights: MNIST +1.4, +1.5,
// +0.7 points, the digits +0.3 to +1.4 (BENCHMARKS.md, "Edge weights of the
// spreading"). On sparse rows (documents) the default stays binary
// weights: the cosines of TF-IDF neighbours are small and spread out, and
// p = 20 moved the four document streams by −0.3 to +0.4 points.
const defaultSpreadPower = 20

// spreadWeights returns the weights of the graph g that PredictGraph
// spreads the labels over: the cosine of the stored rows of each edge to
// the power p, or g's weights under w if p is negative. The k-NN graph
// keeps the squared distances and norms, so a weight costs O(1).
func spreadWeights(g *graph.Graph, w graph.Weighting, p float64) *sparse.CSR {
	if p < 0 {
		return g.Weights(w)
	}
	return cosinePow(g.Weights, w.Sym, p)
}

// cosinePow returns the cosine weights that weights gives (the rows of a
// graph's edges under a Weighting) raised to the power p, then symmetrized
// by sym. The cosine of an edge is the same from either end, so Max and
// Mutual give it whole and commute with the power; Mean halves an edge
// that one end only found, and that half must be of the powered weight
// (cos^p / 2), not of the cosine ((cos / 2)^p): the rows are read under
// Max for the cosine and under Mean for the share.
func cosinePow(weights func(graph.Weighting) *sparse.CSR, sym graph.Symmetrize, p float64) *sparse.CSR {
	cos := graph.Weighting{Scheme: graph.CosineSimilarity, Sym: sym}
	var share *sparse.CSR
	if sym == graph.Mean {
		share = weights(cos)
		cos.Sym = graph.Max
	}
	s := weights(cos)
	for i, c := range s.Val {
		// A floor keeps an edge between orthogonal rows (cos ≤ 0, possible
		// only for data with negative entries or empty rows) in the graph.
		v := pow(max(c, minSpreadWeight), p)
		if share != nil && c > 0 {
			v *= share.Val[i] / c // 1 or ½: Max and Mean join the same pairs
		}
		s.Val[i] = v
	}
	return s
}

// pow returns x^p, by repeated squaring for a whole p up to 64 (the
// default's case: math.Pow costs more than the rest of a weight).
func pow(x, p float64) float64 {
	n := int(p)
	if float64(n) != p || n < 0 || n > 64 {
		return math.Pow(x, p)
	}
	r := 1.0
	for ; n > 0; n >>= 1 {
		if n&1 == 1 {
			r *= x
		}
		x *= x
	}
	return r
}

// defaultCodeNeighbors is k of CodesOnly's code graph when the k-NN graph's
// K is zero (its default, 5).
const defaultCodeNeighbors = 5

// minSpreadWeight is the smallest cosine spreadWeights raises to the power:
// an edge of the k-NN graph keeps a positive weight.
const minSpreadWeight = 1e-3

// codeEdge is an edge of the code graph to a node slot, valid while the
// slot's generation is gen (graph.Graph.Gen): a slot freed and reused
// holds another sample.
type codeEdge struct {
	to  int32
	gen uint32
}

// codeGraph joins each sample to its k nearest samples by the cosine of
// their codes, found when the sample arrives among the window's codes of
// that moment; CodesOnly spreads the labels over it. Edges to a slot that
// was freed since are dropped when next read. It costs O(N·K) per new
// sample (one product of the batch's codes with the window's), and holds
// about 2·k edges per node.
type codeGraph struct {
	k   int
	out [][]codeEdge // by slot: the code neighbours found at arrival
	in  [][]codeEdge // by slot: the nodes that found this one
	gen []uint32     // by slot: the generation its lists belong to

	q, ref, sim *mat.Dense // workspaces of add
	ws          gemm.ABTWorkspace
	live        []int
	acc         []float64 // workspaces of weights
	seen        []bool
	order       []int
}

// add finds the code neighbours of the new nodes ids of g among its live
// nodes, with v the codes (Slots×K).
func (cg *codeGraph) add(g *graph.Graph, v *mat.Dense, ids []int) {
	if cg.k <= 0 || len(ids) == 0 {
		return
	}
	n := g.Slots()
	for len(cg.out) < n {
		cg.out = append(cg.out, nil)
		cg.in = append(cg.in, nil)
		cg.gen = append(cg.gen, 0)
	}
	for _, i := range ids {
		cg.out[i], cg.in[i], cg.gen[i] = cg.out[i][:0], cg.in[i][:0], g.Gen(i)
	}
	cg.live = cg.live[:0]
	for i := range n {
		if g.Live(i) {
			cg.live = append(cg.live, i)
		}
	}
	if len(cg.live) < 2 {
		return
	}
	_, k := v.Dims()
	cg.q = reuseDense(cg.q, len(ids), k)
	cg.ref = reuseDense(cg.ref, len(cg.live), k)
	unitRows(cg.q, v, ids)
	unitRows(cg.ref, v, cg.live)
	cg.sim = reuseDense(cg.sim, len(ids), len(cg.live))
	gemm.ABT(cg.sim.RawMatrix(), cg.q.RawMatrix(), cg.ref.RawMatrix(), &cg.ws, false)
	top := make([]distItem, 0, cg.k+1)
	for p, i := range ids {
		top = top[:0]
		for r, s := range cg.sim.RawRowView(p) {
			if j := cg.live[r]; j != i {
				top = keepNearest(top, cg.k, j, -s) // by −cosine
			}
		}
		for _, it := range top {
			cg.out[i] = append(cg.out[i], codeEdge{int32(it.id), cg.gen[it.id]})
			cg.in[it.id] = append(cg.in[it.id], codeEdge{int32(i), cg.gen[i]})
		}
	}
}

// weights returns the symmetric weights of the code graph over g's live
// nodes: the cosine of the current codes v of each edge to the power p
// (binary weights if p is negative), the two ends' lists averaged as
// spreadWeighting averages the samples' graph (an edge one end only found
// weighs half). It prunes the edges to freed slots.
func (cg *codeGraph) weights(g *graph.Graph, v *mat.Dense, p float64) *sparse.CSR {
	n := g.Slots()
	valid := func(e codeEdge) bool {
		j := int(e.to)
		return g.Live(j) && g.Gen(j) == e.gen && j < len(cg.gen) && cg.gen[j] == e.gen
	}
	if len(cg.acc) < n {
		cg.acc = make([]float64, n)
		cg.seen = make([]bool, n)
	}
	indptr := make([]int, 1, n+1)
	var ind []int
	var val []float64
	for i := range n {
		if i >= len(cg.out) || !g.Live(i) || cg.gen[i] != g.Gen(i) {
			indptr = append(indptr, len(ind))
			continue
		}
		order := cg.order[:0]
		keep := func(list []codeEdge) []codeEdge {
			kept := list[:0]
			for _, e := range list {
				if !valid(e) {
					continue
				}
				kept = append(kept, e)
				j := int(e.to)
				cg.acc[j]++ // the lists that hold the edge: 1 or 2
				if !cg.seen[j] {
					cg.seen[j] = true
					order = append(order, j)
				}
			}
			return kept
		}
		cg.out[i] = keep(cg.out[i])
		cg.in[i] = keep(cg.in[i])
		slices.Sort(order)
		vi := v.RawRowView(i)
		for _, j := range order {
			w := 1.0
			if p >= 0 {
				w = pow(max(cosine(vi, v.RawRowView(j)), minSpreadWeight), p)
			}
			ind = append(ind, j)
			val = append(val, w*cg.acc[j]/2) // the two lists averaged, as spreadWeighting
			cg.seen[j], cg.acc[j] = false, 0
		}
		cg.order = order
		indptr = append(indptr, len(ind))
	}
	return sparse.NewCSR(n, n, indptr, ind, val)
}

// cosine returns aᵀb/(‖a‖‖b‖), zero if either is zero.
func cosine(a, b []float64) float64 {
	var ab, aa, bb float64
	for t, x := range a {
		ab += x * b[t]
		aa += x * x
		bb += b[t] * b[t]
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return ab / math.Sqrt(aa*bb)
}

// reuseDense returns an r×c matrix on m's memory if it is large enough.
func reuseDense(m *mat.Dense, r, c int) *mat.Dense {
	if m == nil || cap(m.RawMatrix().Data) < r*c {
		return mat.NewDense(r, c, nil)
	}
	return mat.NewDense(r, c, m.RawMatrix().Data[:r*c])
}

// unitRows copies the rows rows of v into dst, each scaled to unit norm
// (zero rows stay zero).
func unitRows(dst, v *mat.Dense, rows []int) {
	for p, i := range rows {
		d := dst.RawRowView(p)
		copy(d, v.RawRowView(i))
		if s := norm(d); s > 0 {
			for c := range d {
				d[c] /= s
			}
		}
	}
}
