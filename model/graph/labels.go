package graph

import (
	"github.com/nmfstream/nmfstream/model/sparse"

	"fmt"
	"slices"
)

// Label returns the label of node id, or −1 if it is unlabeled.
func (g *Graph) Label(id int) int { return g.label[id] }

// SetLabel sets the class of a live node: label ≥ 0 is a class, −1 removes
// the label. A label may arrive long after its sample (a late label); the
// intra- and inter-class lists are updated exactly, so the label graphs
// equal those of a graph that knew the label from the start. Changed lists
// the nodes whose rows of the label graphs may have changed.
func (g *Graph) SetLabel(id, label int) (Change, error) {
	return g.SetLabels([]int{id}, []int{label})
}

// SetLabels sets the labels of several live nodes at once, as SetLabel
// does, sharing the distance computations. ids must not repeat.
func (g *Graph) SetLabels(ids, labels []int) (Change, error) {
	if len(ids) != len(labels) {
		return Change{}, fmt.Errorf("graph: %d ids but %d labels", len(ids), len(labels))
	}
	seen := make(map[int]bool, len(ids))
	for i, id := range ids {
		if !g.Live(id) {
			return Change{}, fmt.Errorf("graph: set label: node %d is not live", id)
		}
		if seen[id] {
			return Change{}, fmt.Errorf("graph: set label: node %d repeated", id)
		}
		seen[id] = true
		if labels[i] < -1 {
			return Change{}, fmt.Errorf("graph: set label: invalid label %d for node %d", labels[i], id)
		}
	}
	if g.cfg.LabelsOnly {
		for i, id := range ids {
			g.label[id] = labels[i]
		}
		return Change{}, nil
	}
	var drop, add []int
	for i, id := range ids {
		if g.label[id] == labels[i] {
			continue
		}
		if g.label[id] >= 0 {
			drop = append(drop, id)
		}
		if labels[i] >= 0 {
			add = append(add, id)
		}
	}
	g.unlabel(drop)
	for i, id := range ids {
		if labels[i] >= 0 {
			g.label[id] = labels[i]
		}
	}
	g.labelSearch(add)
	return Change{Changed: g.takeMarked()}, nil
}

func (g *Graph) sameLabel(q, r int) bool { return g.label[q] == g.label[r] }
func (g *Graph) diffLabel(q, r int) bool { return g.label[q] != g.label[r] }

// labeledIDs returns the live labeled nodes ascending.
func (g *Graph) labeledIDs() []int {
	var out []int
	for i, l := range g.live {
		if l && g.label[i] >= 0 {
			out = append(out, i)
		}
	}
	return out
}

// unlabel removes the labels of ids (all labeled) and repairs the label
// lists that held them.
func (g *Graph) unlabel(ids []int) {
	if len(ids) == 0 {
		return
	}
	if g.cfg.LabelsOnly {
		for _, id := range ids {
			g.label[id] = -1
		}
		return
	}
	gone := make([]bool, len(g.live))
	for _, id := range ids {
		gone[id] = true
		for _, ls := range []*lists{&g.intra, &g.inter} {
			nb, _ := ls.row(id)
			for _, j := range nb {
				g.touch(int(j))
			}
			ls.clear(id)
		}
		g.touch(id)
		g.label[id] = -1
	}
	refs := g.labeledIDs()
	g.search(&g.intra, g.drop(&g.intra, gone, refs), refs, false, g.sameLabel, nil, g.touch)
	g.search(&g.inter, g.drop(&g.inter, gone, refs), refs, false, g.diffLabel, nil, g.touch)
}

// labelSearch computes the label lists of newly labeled nodes ids and
// offers them to the lists of the other labeled nodes.
func (g *Graph) labelSearch(ids []int) {
	if len(ids) == 0 {
		return
	}
	qs := slices.Clone(ids)
	slices.Sort(qs)
	refs := g.labeledIDs()
	for _, q := range qs {
		g.touch(q)
	}
	if len(refs) == len(qs) {
		// Nobody was labeled before: a symmetric batch search.
		g.search(&g.intra, qs, refs, true, g.sameLabel, nil, g.touch)
		g.search(&g.inter, qs, refs, true, g.diffLabel, nil, g.touch)
		return
	}
	old := make([]bool, len(g.live))
	for _, r := range refs {
		old[r] = true
	}
	for _, q := range qs {
		old[q] = false
	}
	g.search(&g.intra, qs, refs, false, g.sameLabel, old, g.touch)
	g.search(&g.inter, qs, refs, false, g.diffLabel, old, g.touch)
}

// IntraInter returns the intra-class k-NN graph W_w (each labeled node
// joined to its IntraK nearest labeled nodes of the same class) and the
// inter-class k-NN graph W_b (its InterK nearest labeled nodes of other
// classes), both Slots()×Slots(), weighted and symmetrized as w says
// (binary and Max in the thesis). Unlabeled nodes have empty rows.
// It panics if w is invalid.
//
// Reference: knmf thesis §2.2.1 (KNMF/DGNMF).
func (g *Graph) IntraInter(w Weighting) (ww, wb *sparse.CSR) {
	g.needLabelLists()
	if err := w.check(); err != nil {
		panic(err)
	}
	n := len(g.live)
	ww = symmetric(n, g.directed(&g.intra, g.cfg.IntraK, w), w.Sym)
	wb = symmetric(n, g.directed(&g.inter, g.cfg.InterK, w), w.Sym)
	return ww, wb
}

// Signed returns SSKNMF's labeled graph W¹ = W_w − W_b: +w between
// intra-class neighbours, −w between inter-class neighbours, 0 elsewhere
// (the two never share an edge, as one joins equal labels and the other
// different ones). Reference: knmf thesis §2.3.
func (g *Graph) Signed(w Weighting) *sparse.CSR {
	g.needLabelLists()
	ww, wb := g.IntraInter(w)
	return addScaled(ww, wb, -1)
}

// MFA returns the intrinsic and penalty graphs of Marginal Fisher Analysis
// as NGE and N²S²L use them (Yan et al., TPAMI 2007). The intrinsic graph
// joins each labeled node to its k₁ = IntraK nearest same-class nodes
// (xᵢ ∈ N⁺ₖ₁(xⱼ) or xⱼ ∈ N⁺ₖ₁(xᵢ)): it equals W_w. The penalty graph joins,
// for every class c, the k₂ = PenaltyPairs shortest pairs (i, j) with i in c
// and j in another class; a pair chosen by either class is an edge. Ties
// between pairs go to the smaller (i, j). Weights follow w (binary in the
// papers); w.Sym applies to the intrinsic graph only.
func (g *Graph) MFA(w Weighting) (intrinsic, penalty *sparse.CSR) {
	g.needLabelLists()
	if err := w.check(); err != nil {
		panic(err)
	}
	n := len(g.live)
	intrinsic = symmetric(n, g.directed(&g.intra, g.cfg.IntraK, w), w.Sym)
	// The k₂ shortest pairs of class c are among the union over i in c of
	// i's k₂ nearest other-class nodes: a pair (i, j) outside i's list has
	// k₂ shorter pairs (i, ·) before it. So the inter lists, kept with
	// max(InterK, k₂) entries, suffice.
	k2 := g.cfg.PenaltyPairs
	es := g.directed(&g.inter, k2, w)
	type pair struct {
		key  float64
		i, j int32
		w    float64
	}
	byClass := map[int][]pair{}
	p := 0
	for i, l := range g.live {
		if !l {
			continue
		}
		nb, key := g.inter.row(i)
		if len(nb) > k2 {
			nb, key = nb[:k2], key[:k2]
		}
		for q := range nb {
			e := es[p]
			p++
			byClass[g.label[i]] = append(byClass[g.label[i]], pair{key[q], int32(i), nb[q], e.w})
		}
	}
	var chosen []edge
	for _, ps := range byClass {
		slices.SortFunc(ps, func(a, b pair) int {
			switch {
			case a.key < b.key:
				return -1
			case a.key > b.key:
				return 1
			case a.i != b.i:
				return int(a.i - b.i)
			}
			return int(a.j - b.j)
		})
		for _, q := range ps[:min(k2, len(ps))] {
			chosen = append(chosen, edge{q.i, q.j, q.w})
		}
	}
	return intrinsic, symmetric(n, chosen, Max)
}

// needLabelLists panics if g keeps no label-aware lists (KNN.LabelsOnly):
// asking such a graph for label graphs is a programming error.
func (g *Graph) needLabelLists() {
	if g.cfg.LabelsOnly {
		panic("graph: label graphs requested from a graph built with LabelsOnly")
	}
}
