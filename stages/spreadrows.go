package stages

import (
	"slices"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// weightRows is a graph's weights kept row by row between batches
// (PredictGraph's spreading reads them every batch): each batch recomputes
// only the rows model.Online.TakeGraphEdits names, about 10–25 per new
// sample on MNIST, where rebuilding the whole Slots×Slots matrix cost a
// tenth of the stream's CPU time (BENCHMARKS.md, "Stream profile"). The rows
// are those of spreadWeights(g, w, p) bit for bit. It owns its rows; they
// are valid until the next refresh.
type weightRows struct {
	ind   [][]int
	val   [][]float64
	w     graph.Weighting // the weighting of the rows held
	p     float64         // and the power
	valid bool            // the rows are those of the graph as of the last refresh
	// The rows refreshed since normRows last took them (takeChanged):
	// every row unless taken is set, else those in changed (with
	// repeats; at most twice the slots, beyond which taken is cleared).
	taken   bool
	changed []int
}

// Row returns row i (empty for a slot out of range or without a node).
func (r *weightRows) Row(i int) ([]int, []float64) {
	if i >= len(r.ind) {
		return nil, nil
	}
	return r.ind[i], r.val[i]
}

// Dims returns the matrix's size, Slots×Slots.
func (r *weightRows) Dims() (int, int) { return len(r.ind), len(r.ind) }

// incremental reports whether the rows of weighting w and power p can be
// kept between batches: every weight but the heat kernel's of automatic
// width depends only on its edge's two rows.
func incremental(w graph.Weighting, p float64) bool {
	return p >= 0 || w.Scheme != graph.HeatKernel || w.HeatT > 0
}

// refresh brings the rows up to date with the model's graph g after the
// model's edits since the last refresh, as spreadWeights(g, w, p) would
// weigh them: every row on the first call or after a change of w or p.
func (r *weightRows) refresh(m *model.Online, g *graph.Graph, w graph.Weighting, p float64) {
	nodes, all := m.TakeGraphEdits()
	if !r.valid || r.w != w || r.p != p {
		all = true
	}
	r.w, r.p, r.valid = w, p, true
	slots := g.Slots()
	for len(r.ind) < slots {
		r.ind, r.val = append(r.ind, nil), append(r.val, nil)
	}
	if all {
		nodes = nodes[:0]
		for i := range slots {
			nodes = append(nodes, i)
		}
		r.taken, r.changed = false, r.changed[:0]
	} else {
		slices.Sort(nodes)
		nodes = slices.Compact(nodes)
		if r.taken {
			r.changed = append(r.changed, nodes...)
			if len(r.changed) > 2*slots {
				// Not taken for a while (the spreading reads other
				// weights): every row again, in bounded memory.
				r.taken, r.changed = false, r.changed[:0]
			}
		}
	}
	live := nodes[:0:0]
	for _, i := range nodes {
		if g.Live(i) {
			live = append(live, i)
		} else if i < slots {
			r.ind[i], r.val[i] = r.ind[i][:0], r.val[i][:0]
		}
	}
	if len(live) == 0 {
		return
	}
	rows := func(w graph.Weighting) *sparse.CSR { return g.WeightRows(w, live) }
	var s *sparse.CSR
	if p >= 0 {
		s = cosinePow(rows, w.Sym, p)
	} else {
		s = rows(w)
	}
	for k, i := range live {
		ind, val := s.Row(k)
		r.ind[i] = append(r.ind[i][:0], ind...)
		r.val[i] = append(r.val[i][:0], val...)
	}
}

// takeChanged returns the rows refreshed since its last call, ascending,
// or all = true when every row must be taken as changed (the first call,
// and after a refresh of every row). The slice is valid until the next
// refresh.
func (r *weightRows) takeChanged() (rows []int, all bool) {
	all = !r.taken
	r.taken = true
	slices.Sort(r.changed)
	rows, r.changed = slices.Compact(r.changed), r.changed[:0]
	if all {
		return nil, true
	}
	return rows, false
}

// clone returns a deep copy of r.
func (r *weightRows) clone() *weightRows {
	c := &weightRows{ind: make([][]int, len(r.ind)), val: make([][]float64, len(r.val)), w: r.w, p: r.p, valid: r.valid}
	for i := range r.ind {
		c.ind[i], c.val[i] = slices.Clone(r.ind[i]), slices.Clone(r.val[i])
	}
	return c
}
