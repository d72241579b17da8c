package model

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// ErrNotOnline is returned, wrapped with the method's name, by
// Online.PartialFit for a method that Online cannot learn on a stream.
var ErrNotOnline = errors.New("model: method not supported online")

// Method names that Online learns, as docs/DESIGN.md §6's --method spells them.
const (
	methodNMF    = "nmf"
	methodGNMF   = "gnmf"
	methodDGNMF  = "dgnmf"
	methodSSKNMF = "ssknmf"
	methodN2S2L  = "n2s2l"
	methodNGE    = "nge"
)

// n2s2lIntraK is the default size of N²S²L's same-class lists online. The
// batch default joins all same-class labeled samples, a number that grows
// without bound on a stream; 10 covers that at docs/DESIGN.md §7's ten labels
// per class.
const n2s2lIntraK = 10

// onlineIntraK and onlineInterK are DGNMF's and SSKNMF's default label
// lists online on dense samples: each labeled sample is joined to its 10
// nearest labeled samples of its class and to its 1 nearest of another
// class (Graph's IntraK and InterK, when zero). Their batch types, and
// online on sparse samples (documents), join 5 and 5 (DGNMF.Neighbors,
// SSKNMF.LabelNeighbors). Online, an arriving sample is coded without its
// label, so the label graphs reach it only through U; five repelled
// neighbours per labeled sample push the labeled codes onto columns of
// their own, away from where arriving samples project, and the codes'
// 1-NN falls. Measured on seven image streams; on the mails the shorter
// other-class lists cost the codes' NMI (BENCHMARKS.md, "The label lists
// online").
const (
	onlineIntraK = 10
	onlineInterK = 1
)

// method resolves Method (and a negative Alpha for GNMF) to the name of the
// method learned, or an error naming an unsupported one.
func (o *Online) method() (string, error) {
	switch m := strings.ToLower(o.Method); m {
	case "", methodGNMF:
		if o.Alpha < 0 {
			return methodNMF, nil
		}
		return methodGNMF, nil
	case methodNMF:
		return m, nil
	case methodDGNMF, methodSSKNMF, methodN2S2L, methodNGE:
		if o.Alpha < 0 || (o.Beta < 0 && m != methodNGE) || o.Q < 0 {
			return "", fmt.Errorf("model: online: %s: negative Alpha, Beta or Q", m)
		}
		if o.Q > 0 && o.Q >= o.Rank {
			return "", fmt.Errorf("model: online: %s: q = %d discriminative columns, want q < K = %d", m, o.Q, o.Rank)
		}
		return m, nil
	case "kernel", "multik":
		return "", fmt.Errorf("model: online: %q: %w (its reconstruction is written on the N×N kernel of the window)", m, ErrNotOnline)
	case "dpca":
		return "", fmt.Errorf("model: online: %q: %w (a closed-form eigenproblem over the window, not a factorization)", m, ErrNotOnline)
	default:
		return "", fmt.Errorf("model: online: unknown method %q (want nmf, gnmf, dgnmf, ssknmf, n2s2l or nge)", o.Method)
	}
}

// meth is method without the error: the method name, or "" for an
// unsupported one.
func (o *Online) meth() string {
	m, _ := o.method()
	return m
}

// labelAware reports whether the method has label terms, so that the graph
// keeps label-aware lists and labels mark nodes for the next step.
func labelAware(m string) bool {
	return m == methodDGNMF || m == methodSSKNMF || m == methodN2S2L || m == methodNGE
}

// normalized reports whether the method's terms are written on a
// column-normalized basis (NormalizedGraphTerm), so that U's columns are
// normalized after every U update whatever Scaling says.
func normalized(m string) bool { return labelAware(m) }

// graphConfig is Graph as the method needs it: without label-aware lists
// (LabelsOnly) for NMF and GNMF, which read labels back but use no label
// graph, so that a label costs O(1) instead of a search over the labeled
// nodes; with the label methods' default list sizes otherwise.
func (o *Online) graphConfig() graph.KNN {
	c := o.Graph
	if o.flipped { // ChooseMetric's choice
		c.Metric = graph.Cosine
		if o.Graph.Metric == graph.Cosine {
			c.Metric = graph.Euclidean
		}
	}
	switch o.meth() {
	case methodDGNMF, methodSSKNMF:
		if c.IntraK == 0 {
			c.IntraK = onlineIntraK
			if o.sparse {
				c.IntraK = labelNeighbors
			}
		}
		if c.InterK == 0 && !o.sparse {
			c.InterK = onlineInterK
		}
		if c.PenaltyPairs == 0 {
			// Their graphs have no penalty pairs: keep the inter-class
			// lists at InterK, so that a label searches and marks no more.
			c.PenaltyPairs = 1
		}
	case methodN2S2L:
		if c.IntraK == 0 {
			c.IntraK = n2s2lIntraK
		}
	case methodNGE:
		if c.IntraK == 0 {
			c.IntraK = 3 // NGE.IntrinsicK's default
		}
	default:
		c.LabelsOnly = true
	}
	return c
}

// knnWeight is the weight of the method's k-NN graph term: the α of the
// warm start's graph-aware projection (zero: plain NNLS).
func (o *Online) knnWeight() float64 {
	switch o.meth() {
	case methodGNMF:
		return o.alpha()
	case methodSSKNMF:
		return o.onlineSSKNMFBeta()
	case methodN2S2L:
		return orDefault(o.Beta, 100)
	case methodNGE:
		return max(orDefault(o.Beta, 100), 0)
	}
	return 0
}

// pad returns s (Slots×Slots) with empty rows and columns up to the
// storage height, so that it lines up with the codes.
func (o *Online) pad(s *sparse.CSR) *sparse.CSR {
	n := o.slotRows()
	r, _ := s.Dims()
	if r == n {
		return s
	}
	ind := make([]int, n+1)
	copy(ind, s.Indptr)
	for i := r + 1; i <= n; i++ {
		ind[i] = ind[r]
	}
	return sparse.NewCSR(n, n, ind, s.Ind, s.Val)
}

// windowGraphs holds the graphs of a method over the window, each
// Slots×Slots (or restricted to the live ids, for the first fit); nil when
// the method does not use it.
type windowGraphs struct {
	knn, intra, inter, signed, intrinsic, penalty *sparse.CSR
}

// graphs builds the method's graphs over the window from o.g: the k-NN
// graph with Weighting, the label graphs with 0-1 weights and Max
// symmetrization, as the batch methods build them.
func (o *Online) graphs() windowGraphs {
	var gs windowGraphs
	var lw graph.Weighting // the label graphs' weights in batch (labelgraph.go)
	switch o.meth() {
	case methodGNMF:
		gs.knn = o.g.Weights(o.Weighting)
	case methodDGNMF:
		gs.intra, gs.inter = o.g.IntraInter(lw)
	case methodSSKNMF:
		gs.signed = o.g.Signed(lw)
		gs.knn = o.g.Weights(o.Weighting)
	case methodN2S2L:
		gs.intrinsic, gs.penalty = o.g.MFA(lw)
		gs.knn = o.g.Weights(o.Weighting)
	case methodNGE:
		gs.intrinsic, gs.penalty = o.g.MFA(lw)
		if o.knnWeight() > 0 {
			gs.knn = o.g.Weights(o.Weighting)
		}
	}
	return gs
}

// each applies f to every graph of gs that is set.
func (gs *windowGraphs) each(f func(*sparse.CSR) *sparse.CSR) {
	for _, p := range []**sparse.CSR{&gs.knn, &gs.intra, &gs.inter, &gs.signed, &gs.intrinsic, &gs.penalty} {
		if *p != nil {
			*p = f(*p)
		}
	}
}

// terms returns the method's terms on the graphs gs, composed by the batch
// type's own terms method (same weights, defaults, blocks and labels).
func (o *Online) terms(gs windowGraphs) []Term {
	switch o.meth() {
	case methodGNMF:
		return []Term{&GraphTerm{Weight: o.alpha(), S: gs.knn}}
	case methodDGNMF:
		return (&DGNMF{Alpha: o.Alpha}).terms(gs.intra, gs.inter)
	case methodSSKNMF:
		return (&SSKNMF{Alpha: o.Alpha, Beta: o.onlineSSKNMFBeta()}).terms(gs.signed, gs.knn)
	case methodN2S2L:
		return (&N2S2L{Common: Common{Rank: o.Rank}, Alpha: o.Alpha, Beta: o.Beta}).terms(gs.intrinsic, gs.penalty, gs.knn, o.q)
	case methodNGE:
		terms, _, _ := o.nge().terms(gs.intrinsic, gs.penalty, gs.knn, o.q)
		return terms
	}
	return nil
}

// nge is the NGE whose hyperparameters o's configure.
func (o *Online) nge() *NGE {
	return &NGE{Common: Common{Rank: o.Rank}, Alpha: o.Alpha, Beta: o.Beta, Dim: o.q}
}

// ngeBlocks returns the graph terms of NGE's two column blocks among
// terms (as NGE.terms orders them: intrinsic, penalty, then smoothness if
// any).
func ngeBlocks(terms []Term) (blocks [2][]*GraphTerm) {
	blocks[0] = []*GraphTerm{graphOf(terms[0])}
	blocks[1] = []*GraphTerm{graphOf(terms[1])}
	if len(terms) > 2 {
		blocks[0] = append(blocks[0], graphOf(terms[2]))
		blocks[1] = append(blocks[1], graphOf(terms[2]))
	}
	return blocks
}

// windowTerms returns the method's terms over the whole window, their
// graphs padded to the storage height.
func (o *Online) windowTerms() []Term {
	gs := o.graphs()
	gs.each(o.pad)
	return o.terms(gs)
}

// engineScaling is the normalization of the window's engine runs (first
// fit, Refit): every iteration for the methods on a normalized basis.
func (o *Online) engineScaling() Normalization {
	if normalized(o.meth()) {
		return NormalizeEachIter
	}
	return o.scaling().engine()
}

// graphOf returns the GraphTerm inside a term built by terms.
func graphOf(t Term) *GraphTerm {
	switch t := t.(type) {
	case *GraphTerm:
		return t
	case *NormalizedGraphTerm:
		return &t.GraphTerm
	}
	panic(fmt.Sprintf("model: online: unexpected term %T", t))
}

// pickRows returns the rows ids of s as a len(ids)×cols matrix.
func pickRows(s *sparse.CSR, ids []int, cols int) *sparse.CSR {
	out := sparse.Zeros(0, cols)
	for _, id := range ids {
		ind, val := s.Row(id)
		out.AppendRow(ind, val)
	}
	return out
}

// statsLoss is the Frobenius loss seen through the window's running
// statistics B = XV (D×K) and A = VᵀV (K×K): ½∂/∂U = UA − B, so that the
// online U step is an Engine run with FixV. It has no V gradient: V is
// fixed in that run.
type statsLoss struct {
	o *Online
	// b is B, or its rows of U's support with d their number (Online.usupp:
	// the U step then runs on those rows of U only).
	b *mat.Dense
	d int
}

var _ Loss = (*statsLoss)(nil)

// Dims returns the rows of U the step updates (D, or those of U's support)
// and the storage height (the rows of V).
func (l *statsLoss) Dims() (d, n int) { return l.d, l.o.slotRows() }

// UGradTo stores B (l.b) into neg and U·A into pos.
func (l *statsLoss) UGradTo(neg, pos, u, v *mat.Dense) {
	neg.Copy(l.b)
	l.uPosTo(pos, u)
}

// uPosTo stores U·A into pos and returns B (l.b), for Engine.stepUDiag.
func (l *statsLoss) uPosTo(pos, u *mat.Dense) *mat.Dense {
	mulTo(pos, u, &l.o.a)
	return l.b
}

// VGradTo panics: the statistics hold no gradient for V.
func (l *statsLoss) VGradTo(neg, pos, u, v *mat.Dense) {
	panic("model: online statistics loss asked for a V gradient")
}

// Value returns ‖X‖² − 2⟨U, B⟩ + ⟨UᵀU, A⟩, the loss over the window when
// the statistics are exact (Forget zero).
func (l *statsLoss) Value(u, v *mat.Dense) float64 {
	var utu mat.Dense
	utu.Mul(u.T(), u)
	return max(l.o.Data().SqNorm()-2*inner(u, l.b)+inner(&utu, &l.o.a), 0)
}

// frozenUTerm is a NormalizedGraphTerm whose column quadratic forms
// c±_m = v_mᵀ(D± + S∓)v_m over the window are computed once, at the V it
// is made with: its U gradient U·diag(Weight·c) is then exact for an
// engine run that keeps V fixed (the online U step), at O(DK) per update
// instead of O(nnz(S)·K).
type frozenUTerm struct {
	*NormalizedGraphTerm
	lo, hi int
}

var _ diagUTerm = frozenUTerm{}

func freeze(t *NormalizedGraphTerm, v *mat.Dense) frozenUTerm {
	f := frozenUTerm{NormalizedGraphTerm: t}
	if t.Weight != 0 {
		f.lo, f.hi = t.colQuad(v)
	}
	return f
}

// AddUGrad adds U·diag(Weight·c) for the frozen c.
func (f frozenUTerm) AddUGrad(neg, pos, u, v *mat.Dense) {
	if f.Weight == 0 {
		return
	}
	f.addUParts(neg, pos, u, f.lo, f.hi)
}

// uDiag writes the factors AddUGrad scales U's columns by: those of
// [lo, hi) (uFactors) and zero elsewhere.
func (f frozenUTerm) uDiag(p, q []float64) bool {
	if f.Weight == 0 {
		return false
	}
	clear(p)
	clear(q)
	f.uFactors(p[f.lo:f.hi], q[f.lo:f.hi])
	return true
}

// keepLabelGraphs remembers the label graphs of gs for the next step's
// comparison (labelRowsChanged).
func (o *Online) keepLabelGraphs(gs windowGraphs) {
	gs.knn = nil
	o.lastLG = gs
}

// labelRowsChanged appends to dst the live nodes whose row of a label
// graph in gs differs from the last step's, at O(nnz) per graph. Without
// a last step (after Restore) it appends nothing.
func (o *Online) labelRowsChanged(dst []int, gs windowGraphs) []int {
	pairs := [][2]*sparse.CSR{{o.lastLG.intra, gs.intra}, {o.lastLG.inter, gs.inter}, {o.lastLG.signed, gs.signed},
		{o.lastLG.intrinsic, gs.intrinsic}, {o.lastLG.penalty, gs.penalty}}
	for _, p := range pairs {
		if p[0] == nil || p[1] == nil {
			continue
		}
		r0, _ := p[0].Dims()
		r1, _ := p[1].Dims()
		for id := range r1 {
			if !o.g.Live(id) {
				continue
			}
			if id >= r0 {
				dst = append(dst, id) // a slot new since: swept as a new sample
				continue
			}
			i0, v0 := p[0].Row(id)
			i1, v1 := p[1].Row(id)
			if !slices.Equal(i0, i1) || !slices.Equal(v0, v1) {
				dst = append(dst, id)
			}
		}
	}
	return dst
}
