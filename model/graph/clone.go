package graph

import "slices"

// Clone returns a deep copy of g: the same nodes under the same ids, the
// same lists, labels, window order and stored rows, so that every later
// insertion, removal or label gives the copy what it gives g. It shares
// nothing mutable with g. The copy has no split (SetSplit) and fresh
// workspaces; its reverse lists for WeightRows are built anew on first use,
// as those of a graph built from the same rows are.
func (g *Graph) Clone() *Graph {
	c := &Graph{
		cfg:       g.cfg,
		blockSize: g.blockSize,
		knn:       g.knn.clone(),
		intra:     g.intra.clone(),
		inter:     g.inter.clone(),
		live:      slices.Clone(g.live),
		gen:       slices.Clone(g.gen),
		label:     slices.Clone(g.label),
		free:      slices.Clone(g.free),
		nlive:     g.nlive,
		fifo:      slices.Clone(g.fifo),
		head:      g.head,
		mark:      make([]bool, len(g.live)), // a per-slot workspace, all false between calls
	}
	g.st.cloneTo(&c.st)
	return c
}

// clone returns a deep copy of the lists.
func (l *lists) clone() lists {
	return lists{k: l.k, vis: l.vis, nbr: slices.Clone(l.nbr), key: slices.Clone(l.key), n: slices.Clone(l.n), cut: slices.Clone(l.cut)}
}

// cloneTo sets c, a zero store, to a deep copy of the stored rows, their
// norms and the bounded search's state; the workspaces are fresh.
func (s *store) cloneTo(c *store) {
	*c = store{
		isSparse:  s.isSparse,
		dim:       s.dim,
		cosine:    s.cosine,
		data:      slices.Clone(s.data),
		sq:        slices.Clone(s.sq),
		raw:       slices.Clone(s.raw),
		maxNm:     s.maxNm,
		fast32:    s.fast32,
		data32:    slices.Clone(s.data32),
		keep32:    s.keep32,
		decided32: s.decided32,
	}
	s.bd.cloneTo(&c.bd)
	if s.ind != nil {
		c.ind = make([][]int, len(s.ind))
		c.val = make([][]float64, len(s.val))
		for i := range s.ind {
			c.ind[i] = slices.Clone(s.ind[i])
			c.val[i] = slices.Clone(s.val[i])
		}
	}
}

// cloneTo sets c, a zero bounds, to a deep copy of b's state (the basis,
// the rows' coordinates and the counters); the workspaces are fresh.
func (b *bounds) cloneTo(c *bounds) {
	c.m, c.basis, c.proj, c.pn2, c.rho = b.m, slices.Clone(b.basis), slices.Clone(b.proj), slices.Clone(b.pn2), slices.Clone(b.rho)
	c.slack, c.since, c.pending, c.off = b.slack, b.since, slices.Clone(b.pending), b.off
	c.checked.Store(b.checked.Load())
	c.dotted.Store(b.dotted.Load())
}
