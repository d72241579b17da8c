package model

import (
	"errors"
	"fmt"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// OnlineState is the plain-data state of an Online model, for checkpoints:
// everything Restore needs so that the model continues exactly, bit for bit,
// as the one State was taken from. It holds no configuration; the caller
// restores into an Online configured as the original one was.
//
// # Shapes
//
// Slots is the number of graph slots, Height (≥ Slots) the row count of the
// slot-indexed storage. Dense holds Slots×Dim rows by slot, row-major, or
// SparseInd/SparseVal one sparse row per slot; rows of free slots are empty.
// U is Dim×K, A K×K and B Dim×K, all row-major. V holds the codes of the
// slots, Slots×K row-major: the rows from Slots to Height are zero (no
// sample has had them), so State leaves them out and Restore makes them
// again. A V of Height×K, as states before 2026-11-29 hold, restores too.
type OnlineState struct {
	Dim     int
	K       int
	Sparse  bool
	Started bool
	Slots   int
	Height  int
	Cursor  int
	Seen    int
	// Q is N2S2L's and NGE's number of columns of V¹, fixed at the first
	// fit (zero for the other methods).
	Q int
	// Marked lists the nodes that the next step sweeps because their rows
	// of the label graphs changed since the last step (label methods).
	Marked []int

	// Live flags the live slots. Order lists the live slots from the oldest
	// to the newest: the sliding window removes them in that order. Labels
	// holds the graph label of each slot (−1 for none).
	Live   []bool
	Order  []int
	Labels []int

	Dense     []float64
	SparseInd [][]int
	SparseVal [][]float64

	// U, V, A = VᵀV and B = XV, row-major. When most of U's rows are zero
	// (documents: a support, online_support.go), B holds XV on U's nonzero
	// rows and zeros on the others, which no step reads.
	U, V, A, B []float64

	// Projection is the D×SearchDim random projection of the graph's
	// search space, or the D×SearchBasis orthonormal basis of its search
	// span, row-major, or nil. SearchNext is SearchBasis's schedule: the
	// count of samples seen at which the next basis is fitted.
	Projection []float64
	SearchNext int
	// OtherMetric records Online.ChooseMetric's choice: the graph searches
	// by the metric (Euclidean distance or cosine) Graph.Metric does not name.
	OtherMetric bool

	// graph, set by ForkState only, is a copy of the model's k-NN graph,
	// which Restore copies instead of rebuilding the graph. Unexported, so
	// gob and JSON leave it out: an encoded state restores by rebuilding.
	// edits, editsAll and taken are the model's graph edits not yet taken
	// (TakeGraphEdits), which Restore keeps with the copied graph, so that
	// a caller holding the original's weights as of its last take (stages'
	// spreading) refreshes only the rows the original would.
	graph    *graph.Graph
	edits    []int
	editsAll bool
	taken    bool
}

// State returns o's state. order lists the live node ids from the oldest to
// the newest (their insertion order): the graph keeps it privately, so the
// caller that inserted the samples supplies it; nil means ascending ids,
// which is right for a stream that has not yet reused a slot. State copies
// everything; o may go on learning.
func (o *Online) State(order []int) (*OnlineState, error) {
	o.settle()
	s := &OnlineState{K: o.Rank, Started: o.started, Cursor: o.cursor, Seen: o.seen, Height: o.height, Q: o.q}
	if o.g == nil {
		return s, nil
	}
	ids := o.g.IDs()
	if order == nil {
		order = ids
	}
	sorted := slices.Clone(order)
	slices.Sort(sorted)
	if !slices.Equal(sorted, ids) {
		return nil, errors.New("model: online: state order is not a permutation of the live ids")
	}
	s.Dim, s.Sparse, s.Slots = o.dim, o.sparse, o.g.Slots()
	s.Order = slices.Clone(order)
	s.Live = make([]bool, s.Slots)
	s.Labels = make([]int, s.Slots)
	for id := range s.Slots {
		s.Live[id] = o.g.Live(id)
		s.Labels[id] = -1
		if s.Live[id] {
			s.Labels[id] = o.g.Label(id)
		}
	}
	if o.sparse {
		s.SparseInd = make([][]int, s.Slots)
		s.SparseVal = make([][]float64, s.Slots)
		for id := range s.Slots {
			if s.Live[id] {
				s.SparseInd[id] = slices.Clone(o.xsRows[id])
				s.SparseVal[id] = slices.Clone(o.xsVals[id])
			}
		}
	} else {
		s.Dense = make([]float64, s.Slots*s.Dim)
		for id := range s.Slots {
			copy(s.Dense[id*s.Dim:(id+1)*s.Dim], o.xd.RawRowView(id))
		}
	}
	if o.started {
		s.U, s.V, s.A, s.B = flat(&o.u), flat(o.v.Slice(0, s.Slots, 0, o.Rank).(*mat.Dense)), flat(&o.a), flat(o.fullB())
		if labelAware(o.meth()) {
			s.Marked = o.labelRowsChanged(slices.Clone(o.marked), o.graphs())
		}
	}
	if o.r != nil {
		s.Projection = flat(o.r)
	}
	s.SearchNext = o.next
	s.OtherMetric = o.flipped
	return s, nil
}

// flat returns the entries of m row-major, in a new slice.
func flat(m *mat.Dense) []float64 {
	r, c := m.Dims()
	out := make([]float64, 0, r*c)
	for i := range r {
		out = append(out, m.RawRowView(i)...)
	}
	return out
}

// ForkState is State with a copy of o's k-NN graph attached, for models
// restored from it in this process: Restore then copies that graph (its
// lists, rows and labels) instead of rebuilding it, which costs about two
// batch builds of the window, and keeps the graph edits not yet taken
// (TakeGraphEdits). The result is the same model, bit for bit. Restores
// may run at once on one such state; none changes it.
func (o *Online) ForkState(order []int) (*OnlineState, error) {
	s, err := o.State(order)
	if err != nil || o.g == nil {
		return s, err
	}
	s.graph = o.g.Clone()
	s.edits, s.editsAll, s.taken = slices.Clone(o.edits), o.editsAll, o.taken
	return s, nil
}

// Restore replaces o's state with s. o must be configured (Rank, Alpha,
// Graph, Weighting, …) as the model s was taken from; Restore checks what
// it can (Rank, the window). The k-NN graph is rebuilt exactly: the live
// rows keep their ids, the window keeps its age order and the free slots
// stay free, so later insertions and removals give the same ids and lists as
// in the original model. Rebuilding costs about two batch builds of the
// window (Slots²·Dim flops each).
func (o *Online) Restore(s *OnlineState) error {
	o.settle()
	if s.K != o.Rank {
		return fmt.Errorf("model: online: state has rank %d, the model %d", s.K, o.Rank)
	}
	if err := s.check(); err != nil {
		return err
	}
	*o = Online{Rank: o.Rank, Method: o.Method, Alpha: o.Alpha, Beta: o.Beta, Q: o.Q, Graph: o.Graph, Weighting: o.Weighting, Sweeps: o.Sweeps,
		USteps: o.USteps, Refresh: o.Refresh, Revisit: o.Revisit, Scaling: o.Scaling, Forget: o.Forget, InitSize: o.InitSize,
		InitIter: o.InitIter, SearchDim: o.SearchDim, SearchBasis: o.SearchBasis, SearchFit: o.SearchFit, SearchBases: o.SearchBases,
		Src: o.Src, Split: o.Split, MaxBasisBytes: o.MaxBasisBytes, KeepLastCodes: o.KeepLastCodes, ChooseMetric: o.ChooseMetric}
	o.started, o.cursor, o.seen, o.q, o.next = s.Started, s.Cursor, s.Seen, s.Q, s.SearchNext
	o.flipped = s.OtherMetric
	if s.Slots == 0 {
		return nil
	}
	if w := o.Graph.Window; w > 0 && len(s.Order) > w {
		return fmt.Errorf("model: online: state has %d live samples, the window is %d", len(s.Order), w)
	}
	if err := o.checkBasis(s.Dim); err != nil {
		return err
	}
	o.dim, o.sparse, o.height = s.Dim, s.Sparse, s.Height
	var r *mat.Dense
	if s.Projection != nil {
		k := max(o.SearchDim, o.SearchBasis)
		if k <= 0 || len(s.Projection) != s.Dim*k {
			return fmt.Errorf("model: online: state searches in %d dimensions, the model's SearchDim is %d and SearchBasis %d", len(s.Projection)/s.Dim, o.SearchDim, o.SearchBasis)
		}
		r = mat.NewDense(s.Dim, k, slices.Clone(s.Projection))
	}
	if err := o.newGraph(s.Dim, s.Sparse, r); err != nil {
		return fmt.Errorf("model: online: restore: %w", err)
	}
	if s.graph != nil && s.graph.Config() == o.g.Config() && s.graph.Dim() == o.g.Dim() {
		o.g = s.graph.Clone() // ForkState's: the graph rebuildGraph would give
		o.edits, o.editsAll, o.taken = slices.Clone(s.edits), s.editsAll, s.taken
	} else if err := o.rebuildGraph(s); err != nil {
		return fmt.Errorf("model: online: restore: %w", err)
	}
	o.nz = nzRows{} // the rows below are new: their nonzeros are listed afresh
	if s.Sparse {
		o.xsRows = make([][]int, s.Height)
		o.xsVals = make([][]float64, s.Height)
		for id := range s.Slots {
			o.xsRows[id] = slices.Clone(s.SparseInd[id])
			o.xsVals[id] = slices.Clone(s.SparseVal[id])
		}
	} else if o.sharedRows() {
		o.syncRows() // the rebuilt graph holds the rows, free slots zero
	} else {
		o.xd = *mat.NewDense(s.Height, s.Dim, nil)
		for id := range s.Slots {
			copy(o.xd.RawRowView(id), s.Dense[id*s.Dim:(id+1)*s.Dim])
		}
	}
	o.countNonzeros(s.Order) // the window's rows, as the step's choice of products reads them
	if s.Started {
		k := s.K
		o.u = *mat.NewDense(s.Dim, k, slices.Clone(s.U))
		o.v = *mat.NewDense(s.Height, k, nil) // fresh rows: those past len(s.V) stay unmapped until a sample takes them
		copy(o.v.RawMatrix().Data, s.V)
		o.a = *mat.NewDense(k, k, slices.Clone(s.A))
		o.b = *mat.NewDense(s.Dim, k, slices.Clone(s.B))
		o.ph = phantomRows{} // which rows are unseen is not in the state: the whole width
		if labelAware(o.meth()) {
			o.marked = slices.Clone(s.Marked)
			o.keepLabelGraphs(o.graphs())
		}
		o.findSupport()
	}
	return nil
}

// check validates the shapes of s.
func (s *OnlineState) check() error {
	bad := func(what string) error { return fmt.Errorf("model: online: state: %s", what) }
	if s.Slots == 0 {
		if s.Started {
			return bad("started without samples")
		}
		return nil
	}
	if s.Dim <= 0 || s.K <= 0 || s.Height < s.Slots {
		return bad("bad dimensions")
	}
	if len(s.Live) != s.Slots || len(s.Labels) != s.Slots {
		return bad("live flags or labels do not cover the slots")
	}
	live := 0
	for _, l := range s.Live {
		if l {
			live++
		}
	}
	seen := make([]bool, s.Slots)
	for _, id := range s.Order {
		if id < 0 || id >= s.Slots || !s.Live[id] || seen[id] {
			return bad("order is not a permutation of the live slots")
		}
		seen[id] = true
	}
	if len(s.Order) != live || live == 0 {
		return bad("order is not a permutation of the live slots")
	}
	if s.Sparse {
		if len(s.SparseInd) != s.Slots || len(s.SparseVal) != s.Slots {
			return bad("sparse rows do not cover the slots")
		}
		for id := range s.Slots {
			if len(s.SparseInd[id]) != len(s.SparseVal[id]) {
				return bad("sparse row lengths differ")
			}
			for _, c := range s.SparseInd[id] {
				if c < 0 || c >= s.Dim {
					return bad("sparse index out of range")
				}
			}
		}
	} else if len(s.Dense) != s.Slots*s.Dim {
		return bad("dense rows do not cover the slots")
	}
	if s.Started && (len(s.U) != s.Dim*s.K || len(s.V) != s.Slots*s.K && len(s.V) != s.Height*s.K || len(s.A) != s.K*s.K || len(s.B) != s.Dim*s.K) {
		return bad("factor shapes do not match")
	}
	return nil
}

// rebuildGraph fills the empty graph o.g with the rows of s so that every
// live row keeps its slot, the window's age order is s.Order and the free
// slots are those of s.
//
// A fresh graph hands out the smallest free slot and remembers insertion
// order, so: (1) insert every slot's row in one batch, in slot order (free
// slots get a copy of a live row as a placeholder); (2) the oldest live
// slots whose slot order already agrees with their age stay; the others
// are removed and inserted again, in age order, in runs whose slots
// ascend, so each reinsertion lands on its old slot and moves to the young
// end of the window; (3) remove the placeholders; (4) set the labels. The
// k-NN lists are exact however they were reached (model/graph), so they
// equal the original ones.
func (o *Online) rebuildGraph(s *OnlineState) error {
	filler := s.Order[0]
	rows := func(ids []int) (Data, error) {
		if s.Sparse {
			m := sparse.Zeros(0, s.Dim)
			for _, id := range ids {
				src := id
				if !s.Live[id] {
					src = filler
				}
				m.AppendRow(s.SparseInd[src], s.SparseVal[src])
			}
			return SparseRows(m), nil
		}
		if n := len(ids); n > 0 && ids[n-1]-ids[0] == n-1 && !slices.Contains(s.Live[ids[0]:ids[n-1]+1], false) {
			// A run of live slots (a full window's): a view of s.Dense,
			// which the insertion only reads, instead of a copy.
			return DenseRows(mat.NewDense(n, s.Dim, s.Dense[ids[0]*s.Dim:(ids[n-1]+1)*s.Dim])), nil
		}
		m := mat.NewDense(len(ids), s.Dim, nil)
		for r, id := range ids {
			src := id
			if !s.Live[id] {
				src = filler
			}
			copy(m.RawRowView(r), s.Dense[src*s.Dim:(src+1)*s.Dim])
		}
		return DenseRows(m), nil
	}
	insert := func(ids []int) error {
		x, _ := rows(ids)
		ch, err := o.insert(Rows(x))
		if err != nil {
			return err
		}
		if got := ch.Added; !slices.Equal(got, ids) {
			return fmt.Errorf("graph gave slots %v, want %v", got, ids)
		}
		return nil
	}
	all := make([]int, s.Slots)
	for i := range all {
		all[i] = i
	}
	if err := insert(all); err != nil {
		return err
	}
	// (2) keep the longest oldest prefix whose slots ascend.
	keep := 1
	for keep < len(s.Order) && s.Order[keep] > s.Order[keep-1] {
		keep++
	}
	for lo := keep; lo < len(s.Order); {
		hi := lo + 1
		for hi < len(s.Order) && s.Order[hi] > s.Order[hi-1] {
			hi++
		}
		run := s.Order[lo:hi]
		if _, err := o.g.Remove(run...); err != nil {
			return err
		}
		if err := insert(run); err != nil {
			return err
		}
		lo = hi
	}
	var holes []int
	for id, l := range s.Live {
		if !l {
			holes = append(holes, id)
		}
	}
	if len(holes) > 0 {
		if _, err := o.g.Remove(holes...); err != nil {
			return err
		}
	}
	var lid, lab []int
	for _, id := range s.Order {
		if s.Labels[id] >= 0 {
			lid = append(lid, id)
			lab = append(lab, s.Labels[id])
		}
	}
	if len(lid) > 0 {
		if _, err := o.g.SetLabels(lid, lab); err != nil {
			return err
		}
	}
	return nil
}
