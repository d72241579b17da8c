package graph

import (
	"math"
	"slices"

	"github.com/nmfstream/nmfstream/model/sparse"
)

// symCache keeps, for WeightRows, the reverse of the visible k-NN lists:
// rev[i] holds the slots whose list holds i, as of the last sync. Nodes
// whose lists may have changed since (every node a mutation marks, and the
// removed slots) wait in dirty; a sync compares their lists with the copy
// in out and patches rev, so it costs O(k) per changed node instead of
// O(N·k) for the whole matrix.
type symCache struct {
	on    bool
	out   [][]int32 // per slot: its visible list at the last sync
	rev   [][]int32 // per slot: the slots whose list (in out) holds it
	dirty []int
	mark  []bool
}

// noteDirty records nodes whose visible lists may have changed.
func (g *Graph) noteDirty(ids []int) {
	c := &g.sym
	if !c.on {
		return
	}
	for _, i := range ids {
		for len(c.mark) <= i {
			c.mark = append(c.mark, false)
		}
		if !c.mark[i] {
			c.mark[i] = true
			c.dirty = append(c.dirty, i)
		}
	}
}

// syncSym brings the reverse lists up to date, building them on first use.
func (g *Graph) syncSym() {
	c := &g.sym
	n := len(g.live)
	for len(c.out) < n {
		c.out = append(c.out, nil)
		c.rev = append(c.rev, nil)
	}
	if !c.on {
		c.on = true
		for p, l := range g.live {
			if !l {
				continue
			}
			nb, _ := g.knn.visRow(p)
			c.out[p] = append(c.out[p][:0], nb...)
			for _, i := range nb {
				c.rev[i] = append(c.rev[i], int32(p))
			}
		}
		return
	}
	for _, d := range c.dirty {
		c.mark[d] = false
		var nb []int32
		if g.live[d] {
			nb, _ = g.knn.visRow(d)
		}
		old := c.out[d]
		for _, i := range old {
			if !slices.Contains(nb, i) {
				r := c.rev[i]
				at := slices.Index(r, int32(d))
				r[at] = r[len(r)-1]
				c.rev[i] = r[:len(r)-1]
			}
		}
		for _, i := range nb {
			if !slices.Contains(old, i) {
				c.rev[i] = append(c.rev[i], int32(d))
			}
		}
		c.out[d] = append(old[:0], nb...)
	}
	c.dirty = c.dirty[:0]
}

// WeightRows returns the rows ids of Weights(w) as a len(ids)×Slots()
// matrix, in the order of ids, without building the whole matrix: after
// the first call, which indexes the graph in O(N·k), a call costs O(k) per
// node changed since the last one plus O(k²) per row. Rows of free slots
// are empty. With a heat kernel and HeatT zero, t is the mean over the
// whole graph as Weights computes it, at O(N·k). It panics if w is invalid
// or an id is out of range.
func (g *Graph) WeightRows(w Weighting, ids []int) *sparse.CSR {
	if err := w.check(); err != nil {
		panic(err)
	}
	g.syncSym()
	t2 := 1.0
	if w.Scheme == HeatKernel {
		t := w.HeatT
		if t == 0 {
			var s float64
			var m int
			for p, l := range g.live {
				if l {
					_, key := g.knn.visRow(p)
					for _, k := range key {
						s += math.Sqrt(g.sqDist(k))
					}
					m += len(key)
				}
			}
			if m > 0 {
				t = s / float64(m)
			}
		}
		t2 = 2 * t * t
		if t2 == 0 {
			t2 = 1
		}
	}
	if g.split == nil || len(ids) < weightRowsSplitMin {
		var p weightRowsPart
		p.rows(g, w, t2, ids)
		return sparse.NewCSR(len(ids), len(g.live), p.indptr, p.ind, p.val)
	}
	// In parts at once (SetSplit): each row's entries depend on the graph
	// alone, which no part writes, and the parts' rows are joined in order,
	// so the matrix is the serial one.
	parts := make([]weightRowsPart, weightRowsParts)
	g.split(weightRowsParts, func(lo, hi int) {
		for q := lo; q < hi; q++ {
			parts[q].rows(g, w, t2, ids[q*len(ids)/weightRowsParts:(q+1)*len(ids)/weightRowsParts])
		}
	})
	var nnz int
	for _, p := range parts {
		nnz += len(p.ind)
	}
	indptr := make([]int, 1, len(ids)+1)
	ind, val := make([]int, 0, nnz), make([]float64, 0, nnz)
	for _, p := range parts {
		for _, e := range p.indptr[1:] {
			indptr = append(indptr, len(ind)+e)
		}
		ind, val = append(ind, p.ind...), append(val, p.val...)
	}
	return sparse.NewCSR(len(ids), len(g.live), indptr, ind, val)
}

// weightRowsSplitMin is the number of rows from which WeightRows runs in
// parts (a step's rows on MNIST are about 2,000); weightRowsParts is the
// number of parts, fixed so that the work does not depend on the Split.
const (
	weightRowsSplitMin = 512
	weightRowsParts    = 4
)

// weightRowsPart is the CSR arrays of a run of WeightRows' rows.
type weightRowsPart struct {
	indptr []int
	ind    []int
	val    []float64
}

// rows appends to p the rows ids of the weights w (t2: the heat kernel's
// 2t²), as WeightRows returns them. It reads g only.
func (p *weightRowsPart) rows(g *Graph, w Weighting, t2 float64, ids []int) {
	type half struct {
		c      int32
		wo, wi float64
		ho, hi bool
	}
	var row []half
	indptr := make([]int, 1, len(ids)+1)
	var ind []int
	var val []float64
	for _, id := range ids {
		row = row[:0]
		if g.Live(id) {
			nb, key := g.knn.visRow(id)
			for p, j := range nb {
				row = append(row, half{c: j, wo: g.edgeWeight(w, t2, id, int(j), key[p]), ho: true})
			}
			for _, j := range g.sym.rev[id] {
				// The weight of j's edge to id, read from j's list.
				jn, jk := g.knn.visRow(int(j))
				wi := g.edgeWeight(w, t2, int(j), id, jk[slices.Index(jn, int32(id))])
				if q := slices.IndexFunc(row, func(h half) bool { return h.c == j }); q >= 0 {
					row[q].wi, row[q].hi = wi, true
				} else {
					row = append(row, half{c: j, wi: wi, hi: true})
				}
			}
			for a := 1; a < len(row); a++ { // insertion sort: rows are short
				for b := a; b > 0 && row[b].c < row[b-1].c; b-- {
					row[b], row[b-1] = row[b-1], row[b]
				}
			}
		}
		for _, h := range row {
			var v float64
			switch w.Sym {
			case Max:
				v = max(h.wo, h.wi)
			case Mean:
				v = (h.wo + h.wi) / 2
			case Mutual:
				if !(h.ho && h.hi) {
					continue
				}
				v = min(h.wo, h.wi)
			}
			if v == 0 {
				continue
			}
			ind = append(ind, int(h.c))
			val = append(val, v)
		}
		indptr = append(indptr, len(ind))
	}
	p.indptr, p.ind, p.val = indptr, ind, val
}
