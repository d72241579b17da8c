package stages

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/vec"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// maxMetricDim is the largest dimension of the dense rows on which
// SpreadMetric applies: its graph is rebuilt every batch, O(N²·D).
const maxMetricDim = 256

// metricShrink is α of SpreadMetric's Fisher directions: the window's
// covariance Σ is shrunk to (1 − α)Σ + α·tr(Σ)/D·I before the
// discriminant problem is solved, so that a few labels per class give
// directions close to those of the class means' scatter.
const metricShrink = 0.5

// metricGraph is the graph PredictGraph spreads over with
// Learner.SpreadMetric: the window's samples joined to their k nearest
// (Euclidean) under the metric of metricRows, the lists symmetrized by
// union, each edge weighted as spreadWeights weighs the samples' own graph
// (the cosine of the two samples to the power p). It is rebuilt every
// batch from the window's rows and labels, so it holds no state a
// checkpoint would need.
type metricGraph struct {
	cg   codeGraph  // the lists (out, in) and the weights
	z, x *mat.Dense // Slots×(D+r) rows under the metric, Slots×D samples
}

// metricWeights returns the weights of the metric graph of this batch
// (g's live nodes, p the spreading's power), or nil where SpreadMetric
// does not apply: SpreadMetric zero, sparse rows, rows of more than
// maxMetricDim features, or fewer than two classes labeled in the window.
func (l *Learner) metricWeights(g *graph.Graph, p float64) *sparse.CSR {
	if l.SpreadMetric <= 0 || l.Model.Sparse() {
		return nil
	}
	live := g.IDs()
	if len(live) < 2 {
		return nil
	}
	x0, _, _ := l.Model.Row(live[0])
	d := len(x0)
	if d == 0 || d > maxMetricDim {
		return nil
	}
	w, lam, mu := l.fisher(live, d)
	if w == nil {
		return nil
	}
	mg := &l.mg
	n, r := g.Slots(), len(lam)
	mg.z = reuseDense(mg.z, n, d+r)
	mg.x = reuseDense(mg.x, n, d)
	var xx, sl float64
	for _, i := range live {
		x, _, _ := l.Model.Row(i)
		copy(mg.x.RawRowView(i), x)
		xx += vec.Dot(x, x)
	}
	for _, v := range lam {
		sl += v
	}
	// The Fisher block's squared length averages SpreadMetric times the
	// samples' mean squared length; direction j weighs λⱼ/Σλ of it.
	scale := make([]float64, r)
	for j := range r {
		if sl > 0 {
			scale[j] = math.Sqrt(l.SpreadMetric * xx / float64(len(live)) * lam[j] / sl)
		}
	}
	xc := make([]float64, d)
	for _, i := range live {
		x := mg.x.RawRowView(i)
		zi := mg.z.RawRowView(i)
		copy(zi, x)
		for t := range d {
			xc[t] = x[t] - mu[t]
		}
		for j := range r {
			zi[d+j] = 0
			for t, v := range xc {
				zi[d+j] += v * w.At(t, j)
			}
			zi[d+j] *= scale[j]
		}
	}
	k := l.Model.Graph.K
	if k == 0 {
		k = defaultCodeNeighbors
	}
	return mg.graph(g, live, k, p)
}

// graph returns the weights of the k-NN graph of the live nodes under z
// (search), each edge weighted by the cosine of the two samples (x's rows)
// to the power p.
func (mg *metricGraph) graph(g *graph.Graph, live []int, k int, p float64) *sparse.CSR {
	mg.cg.k = k
	mg.search(g, live)
	return mg.cg.weights(g, mg.x, p)
}

// search sets the lists of the live nodes to their k nearest live nodes by
// the Euclidean distance of z's rows (ties to the lower slot).
func (mg *metricGraph) search(g *graph.Graph, live []int) {
	cg := &mg.cg
	n := g.Slots()
	for len(cg.out) < n {
		cg.out, cg.in, cg.gen = append(cg.out, nil), append(cg.in, nil), append(cg.gen, 0)
	}
	for _, i := range live {
		cg.out[i], cg.in[i], cg.gen[i] = cg.out[i][:0], cg.in[i][:0], g.Gen(i)
	}
	top := make([]distItem, 0, cg.k+1)
	for _, i := range live {
		zi := mg.z.RawRowView(i)
		top = top[:0]
		for _, j := range live {
			if j == i {
				continue
			}
			dd := 0.0
			for t, v := range mg.z.RawRowView(j) {
				e := zi[t] - v
				dd += e * e
			}
			top = keepNearest(top, cg.k, j, dd)
		}
		for _, it := range top {
			cg.out[i] = append(cg.out[i], codeEdge{int32(it.id), cg.gen[it.id]})
			cg.in[it.id] = append(cg.in[it.id], codeEdge{int32(i), cg.gen[i]})
		}
	}
}

// meanRow returns the mean of the live nodes' rows (dense, d features).
func (l *Learner) meanRow(live []int, d int) []float64 {
	mu := make([]float64, d)
	for _, i := range live {
		x, _, _ := l.Model.Row(i)
		for t, v := range x {
			mu[t] += v
		}
	}
	for t := range mu {
		mu[t] /= float64(len(live))
	}
	return mu
}

// fisher returns the Fisher discriminant directions of the window's
// labeled nodes, W (d×r, r = classes − 1, at most d) with Wᵀ Σₛ W = I for
// Σₛ the live nodes' covariance shrunk by metricShrink, and their ratios
// λ (between-class variance of the class means over Σₛ, ≥ 0), largest
// first, and the live nodes' mean row μ. It returns nil, nil, nil with
// fewer than two classes labeled.
func (l *Learner) fisher(live []int, d int) (w *mat.Dense, lam, mu []float64) {
	means := map[int][]float64{}
	var order []int
	count := map[int]int{}
	for _, i := range live {
		c := l.nodes[i].class
		if c < 0 {
			continue
		}
		if means[c] == nil {
			means[c] = make([]float64, d)
			order = append(order, c)
		}
		x, _, _ := l.Model.Row(i)
		for t, v := range x {
			means[c][t] += v
		}
		count[c]++
	}
	if len(order) < 2 {
		return nil, nil, nil
	}
	mu = l.meanRow(live, d)
	sigma := mat.NewSymDense(d, nil)
	xc := mat.NewVecDense(d, nil)
	for _, i := range live {
		x, _, _ := l.Model.Row(i)
		for t, v := range x {
			xc.SetVec(t, v-mu[t])
		}
		sigma.SymRankOne(sigma, 1/float64(len(live)), xc)
	}
	var tr float64
	for t := range d {
		tr += sigma.At(t, t)
	}
	for a := range d {
		for b := a; b < d; b++ {
			v := (1 - metricShrink) * sigma.At(a, b)
			if a == b {
				v += metricShrink * tr / float64(d)
			}
			sigma.SetSym(a, b, v)
		}
	}
	ml := make([]float64, d)
	for _, c := range order {
		for t := range d {
			means[c][t] /= float64(count[c])
			ml[t] += means[c][t] / float64(len(order))
		}
	}
	sb := mat.NewSymDense(d, nil)
	for _, c := range order {
		for t := range d {
			xc.SetVec(t, means[c][t]-ml[t])
		}
		sb.SymRankOne(sb, 1/float64(len(order)), xc)
	}
	// Σₛ^(−1/2) from its eigendecomposition; then the eigenvectors of
	// Σₛ^(−1/2) S_b Σₛ^(−1/2), mapped back.
	var es mat.EigenSym
	if !es.Factorize(sigma, true) {
		return nil, nil, nil
	}
	ev := es.Values(nil)
	var q mat.Dense
	es.VectorsTo(&q)
	qs := mat.DenseCopyOf(&q)
	for t, e := range ev {
		s := 0.0
		if e > 0 {
			s = 1 / math.Sqrt(e)
		}
		for a := range d {
			qs.Set(a, t, qs.At(a, t)*s)
		}
	}
	var isq, m1, m2 mat.Dense
	isq.Mul(qs, q.T())
	m1.Mul(&isq, sb)
	m2.Mul(&m1, &isq)
	ms := mat.NewSymDense(d, nil)
	for a := range d {
		for b := a; b < d; b++ {
			ms.SetSym(a, b, (m2.At(a, b)+m2.At(b, a))/2)
		}
	}
	if !es.Factorize(ms, true) {
		return nil, nil, nil
	}
	ev = es.Values(nil)
	var v mat.Dense
	es.VectorsTo(&v)
	r := min(len(order)-1, d)
	w = mat.NewDense(d, r, nil)
	lam = make([]float64, r)
	for j := range r {
		col := d - 1 - j // the values ascend
		lam[j] = max(ev[col], 0)
		var wj mat.VecDense
		wj.MulVec(&isq, v.ColView(col))
		w.SetCol(j, wj.RawVector().Data)
	}
	return w, lam, mu
}
