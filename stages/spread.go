package stages

import (
	"cmp"
	"math"
	"slices"

	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/record"

	"github.com/nmfstream/nmfstream/model/sparse"
)

// defaultSpreadSweeps is the number of Gauss–Seidel sweeps of the label
// scores over the whole window per batch, before the conjugate gradients
// that solve them (solve), when Learner.SpreadSweeps is zero. The scores
// are warm-started from the previous batch; the sweeps fill the rows of
// the batch's new nodes from their neighbours' before the solve.
const defaultSpreadSweeps = 3

// spreader keeps label scores F (Slots×C) on the nodes of the stream's
// k-NN graph, propagated from the labeled nodes by the harmonic function
// of Zhu, Ghahramani and Lafferty ("Semi-supervised learning using
// Gaussian fields and harmonic functions", ICML 2003): labeled rows are
// clamped to their class, and every unlabeled row is the weighted mean of
// its neighbours' rows. F is solved warm-started from the previous batch's
// F.
//
// A batch solves F over the whole window once its graph is known
// (sweepAll: a few Gauss–Seidel sweeps, then conjugate gradients to a
// relative residual of spreadTol, harmonic.go); each label learned within
// the batch then moves F by its own harmonic function (sweepLocal, push),
// so that a sample is predicted with every label that arrived before it as
// if F had been solved again (BENCHMARKS.md, "The spreading solved").
type spreader struct {
	f     []float64 // Slots×c, row-major
	c     int       // classes (columns of f)
	w     rowSource // this batch's weights, nil until sweepAll
	pre   []int     // the nodes of the batch's first prediction when presweep swept for it, else nil
	dirty []int     // nodes labeled since the last sweep
	mass  []float64 // workspace of predict: Σ_i F_ic over live nodes
	nw    normRows  // w's rows divided by their degrees, set by sweepAll, read by sweep
	cg    cgWork    // workspace of solve
	ps    pushWork  // workspace of push
}

// normRows holds the rows of a batch's weights w, each divided by its
// degree (the sum of its entries, in order) as sweep divides them, one
// after the other: row i is ind[ptr[i]:ptr[i+1]] with a[ptr[i]:ptr[i+1]],
// empty when its degree is 0. The sweeps of a batch read these instead of
// summing and dividing each row anew in every sweep.
type normRows struct {
	ptr []int
	ind []int32
	a   []float64
	deg []float64 // each row's degree, the sum of w's entries
	// fromRows is set when the rows are those of a weightRows as of its
	// last takeChanged: the next set from it divides only the rows
	// refreshed since, and copies the others. old holds the arrays of
	// the set before, reused.
	fromRows bool
	old      struct {
		ptr []int
		ind []int32
		a   []float64
		deg []float64
	}
}

// set fills r with the rows of w. Node ids fit an int32: the graph keeps
// its lists as int32 too.
func (r *normRows) set(w rowSource) {
	n, _ := w.Dims()
	wr, isRows := w.(*weightRows)
	var changed []int
	all := true
	if isRows {
		changed, all = wr.takeChanged()
		all = all || !r.fromRows
	}
	r.fromRows = isRows
	if !all {
		r.update(wr, n, changed)
		return
	}
	r.ptr = slices.Grow(r.ptr[:0], n+1)[:n+1]
	r.deg = slices.Grow(r.deg[:0], n)[:n]
	r.ind, r.a = r.ind[:0], r.a[:0]
	for i := range n {
		r.ind, r.a, r.deg[i] = normRow(r.ind, r.a, w, i)
		r.ptr[i+1] = len(r.ind)
	}
}

// update makes r the n rows of w from r's rows as of the last set, the
// rows changed (ascending) divided anew and the others copied.
func (r *normRows) update(w rowSource, n int, changed []int) {
	o := &r.old
	o.ptr, r.ptr = r.ptr, o.ptr
	o.ind, r.ind = r.ind, o.ind
	o.a, r.a = r.a, o.a
	o.deg, r.deg = r.deg, o.deg
	r.ptr = slices.Grow(r.ptr[:0], n+1)[:n+1]
	r.deg = slices.Grow(r.deg[:0], n)[:n]
	r.ind, r.a = r.ind[:0], r.a[:0]
	oldN := len(o.ptr) - 1
	copyRows := func(lo, hi int) { // rows [lo, hi) as they were
		hi = min(hi, oldN)
		if lo >= hi {
			return
		}
		b, e := o.ptr[lo], o.ptr[hi]
		shift := len(r.ind) - b
		r.ind, r.a = append(r.ind, o.ind[b:e]...), append(r.a, o.a[b:e]...)
		for i := lo; i < hi; i++ {
			r.ptr[i+1] = o.ptr[i+1] + shift
		}
		copy(r.deg[lo:hi], o.deg[lo:hi])
	}
	next := 0
	for _, i := range changed {
		if i >= n {
			break
		}
		copyRows(next, i)
		for j := max(next, oldN); j < i; j++ {
			r.ptr[j+1] = len(r.ind) // rows past the old ones: empty
			r.deg[j] = 0
		}
		r.ind, r.a, r.deg[i] = normRow(r.ind, r.a, w, i)
		r.ptr[i+1] = len(r.ind)
		next = i + 1
	}
	copyRows(next, n)
	for j := max(next, oldN); j < n; j++ {
		r.ptr[j+1] = len(r.ind)
		r.deg[j] = 0
	}
}

// normRow appends to ind and a the entries of w's row i divided by their
// sum taken in order, or nothing when that sum is 0, and returns that sum.
func normRow(ind []int32, a []float64, w rowSource, i int) ([]int32, []float64, float64) {
	rind, val := w.Row(i)
	var deg float64
	for _, x := range val {
		deg += x
	}
	if deg != 0 {
		for p, j := range rind {
			ind = append(ind, int32(j))
			a = append(a, val[p]/deg)
		}
	}
	return ind, a, deg
}

// rowSource is a square sparse matrix read by rows: *sparse.CSR, or the
// weights kept between batches (weightRows).
type rowSource interface {
	Row(i int) (ind []int, val []float64)
	Dims() (r, c int)
}

// resize makes f cover slots rows and c columns, keeping old values.
func (s *spreader) resize(slots, c int) {
	if c == s.c {
		if len(s.f) < slots*c {
			s.f = append(s.f, make([]float64, slots*c-len(s.f))...)
		}
		return
	}
	nf := make([]float64, slots*c)
	if s.c > 0 {
		for i := range min(len(s.f)/s.c, slots) {
			copy(nf[i*c:i*c+s.c], s.f[i*s.c:(i+1)*s.c])
		}
	}
	s.f, s.c = nf, c
}

// row returns node i's scores.
func (s *spreader) row(i int) []float64 { return s.f[i*s.c : (i+1)*s.c] }

// newBatch forgets the previous batch's weights: the next prediction
// sweeps the whole window again.
func (s *spreader) newBatch() { s.w = nil }

// sweepAll sets the batch's weights w, runs sweeps Gauss–Seidel sweeps
// over the nodes (the live ones, in slot order), then solves F on them by
// conjugate gradients from there (solve).
func (s *spreader) sweepAll(w rowSource, nodes []int, sweeps int, class func(int) int) {
	s.w = w
	s.nw.set(w)
	for range sweeps {
		s.sweep(nodes, class)
	}
	s.solve(nodes, class, spreadTol, spreadMaxIter)
	s.dirty = s.dirty[:0]
}

// sweepLocal moves F by the labels learned since the last sweep, one after
// the other (push), or, when more than pushMaxLabels of them came at once,
// solves F on the live nodes again (solve); then it sweeps the rows of ids.
func (s *spreader) sweepLocal(ids, live []int, class func(int) int) {
	if len(s.dirty) > pushMaxLabels {
		s.solve(live, class, spreadTol, spreadMaxIter)
	} else {
		for _, j := range s.dirty {
			s.push(j, class, pushTol, pushMaxRelax*(len(s.nw.ptr)-1))
		}
	}
	s.sweep(ids, class)
	s.dirty = s.dirty[:0]
}

// sweep runs one Gauss–Seidel sweep over the given nodes, with class(i)
// the label of node i (−1: unlabeled): each unlabeled node's scores become
// the average of its neighbours' under the batch's weights (s.nw, the rows
// of w divided by their degrees; a row of degree 0 gives zero scores).
func (s *spreader) sweep(nodes []int, class func(int) int) {
	nw := &s.nw
	for _, i := range nodes {
		fi, labeled := s.clampRow(i, class)
		if labeled {
			continue
		}
		if i+1 >= len(nw.ptr) {
			continue // a slot past w's rows: an empty row, as w.Row returns
		}
		lo, hi := nw.ptr[i], nw.ptr[i+1]
		a := nw.a[lo:hi]
		for p, j := range nw.ind[lo:hi] {
			ap := a[p]
			for c, x := range s.row(int(j)) {
				fi[c] += ap * x
			}
		}
	}
}

// clampRow clears node i's scores and returns them, with labeled true and
// the score of its class set to 1 when class(i) ≥ 0 (a labeled node keeps
// its label through the sweeps).
func (s *spreader) clampRow(i int, class func(int) int) (fi []float64, labeled bool) {
	fi = s.row(i)
	clear(fi)
	if c := class(i); c >= 0 {
		fi[c] = 1
		return fi, true
	}
	return fi, false
}

// classMass sets s.mass to the column sums of F over the live nodes.
func (s *spreader) classMass(live []int) []float64 {
	s.mass = slices.Grow(s.mass[:0], s.c)[:s.c]
	clear(s.mass)
	for _, n := range live {
		for c, x := range s.row(n) {
			s.mass[c] += x
		}
	}
	return s.mass
}

// predictGraph fills out for the new nodes ids by PredictGraph: the class
// whose share of its total mass is largest at the node, ties to the
// lower class. Class mass normalization (Zhu et al. 2003, §4) divides each
// class's scores by its total over the window, so that a class that has
// few labels so far is not drowned by one that has many: a uniform prior
// over the classes seen. A node that no label reaches (a component of the
// graph without labels) is predicted as PredictNearest would, or, before
// the model has codes, as the class with the most labels.
func (l *Learner) predictGraph(ids []int, out []Prediction) {
	g := l.Model.KNN()
	if g == nil || len(l.classes) == 0 {
		return
	}
	l.sp.resize(g.Slots(), len(l.classes))
	class := func(n int) int { return l.nodes[n].class }
	live := g.IDs()
	// presweep did this batch's sweeps for these nodes when pre equals
	// ids. Any other pre means firstPrediction and predictInOrder disagree
	// on the batch's first prediction, which they must not: the sweeps are
	// then run again for these nodes rather than trusted.
	pre := l.sp.pre
	l.sp.pre = nil
	switch {
	case pre != nil && slices.Equal(pre, ids):
		// presweep's scores stand.
	case l.sp.w == nil || pre != nil:
		l.sweepWindow(ids, live)
	default:
		for _, n := range ids {
			clear(l.sp.row(n)) // a reused slot's old scores
		}
		l.sp.sweepLocal(ids, live, class)
	}
	mass := l.sp.classMass(live)
	count, _ := l.labelCounts() // the run's labels: read by forgetAbsent and mix
	l.forgetAbsent(mass, count)
	useLin := l.linear()
	var q []float64 // the graph's class probabilities at each position, len(ids)×C
	if useLin {
		q = make([]float64, len(ids)*len(l.classes))
	}
	var rest []int // positions no label reaches
	for p, n := range ids {
		// The score is bv's share of the positive mass pos, in (0, 1]: the
		// harmonic solution's slightly negative entries put bv/tot above
		// 1. q keeps tot, and the predictions with it.
		best, bv, tot, pos := -1, 0.0, 0.0, 0.0
		for c, x := range l.sp.row(n) {
			if mass[c] == 0 {
				continue
			}
			y := x / mass[c]
			tot += y
			pos += max(y, 0)
			if y > bv {
				best, bv = c, y
			}
		}
		if best < 0 {
			rest = append(rest, p)
			continue
		}
		out[p].Label, out[p].Score, out[p].graph = l.classes[best], bv/pos, best
		if useLin {
			for c, x := range l.sp.row(n) {
				if mass[c] != 0 {
					q[p*len(l.classes)+c] = x / mass[c] / tot
				}
			}
		}
	}
	if len(rest) > 0 {
		l.predictUnreached(ids, out, rest)
		for _, p := range rest {
			if out[p].Label != "" {
				out[p].graph = l.classOf[out[p].Label]
				if useLin {
					q[p*len(l.classes)+out[p].graph] = 1
				}
			}
		}
	}
	if useLin {
		l.mix(ids, out, q, count)
	}
}

// spreadGraph returns the weights PredictGraph spreads the labels over this
// batch: the k-NN graph of the raw samples under spreadWeighting (kept
// between batches where its weights allow, weightRows), with SpreadMetric
// where it applies the graph under the learned metric (metricGraph), each
// edge of either also weighed by its ends' codes (codeScaled, with
// spreadCodes) once the model has codes from a step before this batch; or,
// with CodesOnly, the graph of the codes (codeGraph) once the model has
// them. live are the graph's live nodes (graph.Graph.IDs).
func (l *Learner) spreadGraph(live []int) rowSource {
	p := l.spreadPower()
	g := l.Model.KNN()
	if l.Codes == CodesOnly {
		if !l.Model.Started() {
			return sparse.Zeros(g.Slots(), g.Slots()) // no codes yet: no graph
		}
		return l.cg.weights(g, l.classCodes(l.Model.Codes()), p)
	}
	var base rowSource
	if w := l.metricWeights(g, p); w != nil {
		base = w
	} else if w := l.spreadWeighting(); incremental(w, p) {
		l.wr.refresh(l.Model, g, w, p)
		base = &l.wr
	} else {
		base = spreadWeights(g, w, p)
	}
	if q := l.spreadCodes(); q > 0 {
		if v := l.Model.LastCodes(); v != nil {
			l.cs.set(base, l.classCodes(v), live, q)
			return &l.cs
		}
	}
	return base
}

// spreadCodes is q of the codes' factor on PredictGraph's edge weights
// (codeScaled): SpreadCodes or its default (4 on dense rows, 40 on
// sparse ones) with CodesAuto, 0 (no factor) with CodesOff, CodesOnly
// (whose graph is the codes') or a negative SpreadCodes.
func (l *Learner) spreadCodes() float64 {
	if l.Codes != CodesAuto || l.SpreadCodes < 0 {
		return 0
	}
	if l.SpreadCodes > 0 {
		return l.SpreadCodes
	}
	if l.Model.Sparse() {
		return defaultSpreadCodesSparse
	}
	return defaultSpreadCodesDense
}

// spreadWeighting is the weighting of the k-NN graph's edges that the
// spreading reads (spreadWeights with spreadPower): the model's, with the
// two ends' lists averaged (graph.Mean), whatever symmetrization the
// factorization's graph takes: an edge that one end only found weighs
// half one that both found (BENCHMARKS.md, "The spreading's edges
// averaged").
func (l *Learner) spreadWeighting() graph.Weighting {
	w := l.Model.Weighting
	w.Sym = graph.Mean
	return w
}

// spreadPower is p of PredictGraph's edge weights: SpreadPower or its
// default.
func (l *Learner) spreadPower() float64 {
	p := l.SpreadPower
	if p == 0 {
		p = defaultSpreadPower
		if l.Model.Sparse() {
			p = -1 // documents: binary weights (see defaultSpreadPower)
		}
	}
	return p
}

// refreshSpread brings the weights PredictGraph spreads over (weightRows)
// up to date with the graph, as the batch's first prediction would: it
// reads the graph and its edits only (model.Online.TakeGraphEdits), so it
// may run beside the model's deferred step (predictBeside). The refresh is
// exact whenever it runs, so running it on a batch that predicts nothing
// changes nothing. It does nothing where spreadGraph does not keep the
// weights between batches.
func (l *Learner) refreshSpread() {
	if l.Predictor != PredictGraph && l.Predictor != PredictSpread || l.Codes == CodesOnly {
		return
	}
	g := l.Model.KNN()
	if g == nil {
		return
	}
	if w, p := l.spreadWeighting(), l.spreadPower(); incremental(w, p) {
		l.wr.refresh(l.Model, g, w, p)
	}
}

// presweep runs, ahead of predictInOrder, the batch's sweeps of the label
// scores over the whole window that its first prediction would run
// (predictGraph's sweepAll, after clearing the rows of the nodes that
// prediction is for), when they are known before it: PredictGraph or
// PredictSpread with classes, no label of the batch before its first
// sample (firstPrediction). It reads the graph, the labels and the
// pending labels, and writes the spreader only, so it may run beside the
// model's deferred step (predictBeside); the first prediction then uses
// its scores. The scores are those predictInOrder would have made.
func (l *Learner) presweep(ids []int, b *Identified) {
	if l.Predictor != PredictGraph && l.Predictor != PredictSpread || len(l.classes) == 0 {
		return
	}
	g := l.Model.KNN()
	if g == nil {
		return
	}
	end, ok := l.firstPrediction(ids, b)
	if !ok {
		return
	}
	first := ids[:end]
	l.sp.newBatch()
	l.sp.resize(g.Slots(), len(l.classes))
	l.sweepWindow(first, g.IDs())
	l.sp.pre = first
}

// sweepWindow solves a batch's label scores over the live nodes
// (SpreadSweeps Gauss–Seidel sweeps over this batch's weights, spreadGraph,
// then conjugate gradients: sweepAll), after clearing the rows of the new
// nodes ids (a reused slot's old scores).
func (l *Learner) sweepWindow(ids, live []int) {
	for _, n := range ids {
		clear(l.sp.row(n))
	}
	sweeps := l.SpreadSweeps
	if sweeps == 0 {
		sweeps = defaultSpreadSweeps
	}
	l.sp.sweepAll(l.spreadGraph(live), live, sweeps, func(n int) int { return l.nodes[n].class })
}

// firstPrediction returns the end of the nodes ids[:end] that
// predictInOrder predicts first for the batch b, when no label (a late
// label, the batch's own or a pending one) is learned before that
// prediction; ok is false otherwise, or if nothing is predicted. It sorts
// b.Late by offset as predictInOrder does (stably: sorting again changes
// nothing) and changes nothing else.
func (l *Learner) firstPrediction(ids []int, b *Identified) (end int, ok bool) {
	if len(ids) == 0 {
		return 0, false
	}
	late := b.Late
	slices.SortStableFunc(late, func(a, b record.LateLabel) int { return cmp.Compare(a.Offset, b.Offset) })
	if len(late) > 0 && late[0].Offset < b.Offsets[0] {
		return 0, false // learned before the first sample is predicted
	}
	for p := range ids {
		if p > 0 && len(late) > 0 && late[0].Offset < b.Offsets[p] {
			return p, true // samples [0, p) are predicted before this label
		}
		if b.Labeled[p] || b.IDs[p] != "" && l.pending.has(b.IDs[p]) {
			return p + 1, true // predicted with the samples before it, then learned
		}
	}
	return len(ids), true
}

// forgetAbsent zeroes the mass of the classes that have no labeled node in
// the window, so that they are not predicted: the harmonic function of a
// class without labeled nodes is zero, and what is left of its scores
// (warm starts, a few sweeps) would be blown up by the class mass
// normalization, which would keep predicting a class long after its last
// label left the window. count is labelCounts'.
func (l *Learner) forgetAbsent(mass []float64, count []int) {
	for c := range mass {
		if count[c] == 0 {
			mass[c] = 0
		}
	}
}

// labelCounts returns the number of labeled nodes of each class in the
// window, and their total.
func (l *Learner) labelCounts() (count []int, total int) {
	count = make([]int, len(l.classes))
	for _, nd := range l.nodes {
		if nd.live && nd.class >= 0 {
			count[nd.class]++
			total++
		}
	}
	return count, total
}

// mix predicts the new nodes ids by the mixture of the experts' class
// probabilities, weighted by the hedge: the graph's q (len(ids)×C, zero
// rows where the graph made no prediction), the linear model's, the recent
// labels' class shares and, once the model has codes, the nearest labeled
// codes' (codeVotes), divided out of the window's label counts count
// (labelCounts; priorScale).
func (l *Learner) mix(ids []int, out []Prediction, q []float64, count []int) {
	nc := len(l.classes)
	pc := l.codeVotes(ids)
	w := l.hd.weights(pc != nil)
	pr := l.rc.probs(nil, nc)
	rb := noPrediction
	if pr != nil {
		rb = argmax(pr)
	}
	scale := l.priorScale(count)
	for p, n := range ids {
		out[p].recent = rb
		d, ind, val := l.linRow(n)
		pl := l.lin.probs(d, ind, val)
		if pl == nil {
			continue
		}
		best, bv, tot := 0, -1.0, 0.0
		for c := range nc {
			m := w[expertGraph]*q[p*nc+c] + w[expertLinear]*pl[c]
			if pr != nil {
				m += w[expertRecent] * pr[c]
			}
			if pc != nil {
				m += w[expertCodes] * pc[p*nc+c]
			}
			if scale != nil {
				m *= scale[c]
				tot += max(m, 0)
			}
			if m > bv {
				best, bv = c, m
			}
		}
		if scale != nil && tot > 0 {
			bv /= tot // the scaled mixture renormalized: the score stays a probability
		}
		out[p].lin = argmax(pl)
		if pc != nil {
			out[p].codes = argmax(pc[p*nc : (p+1)*nc])
		}
		// bv can pass 1 by q's negative entries (predictGraph): the score
		// is clamped to [0, 1], the prediction left as the mixture says.
		out[p].Label, out[p].Score = l.classes[best], min(max(bv, 0), 1)
	}
}

// defaultPriorPower is Learner.PriorPower's default γ, chosen on the
// document streams (BENCHMARKS.md, "The labels' prior divided out of the
// mixture").
const defaultPriorPower = 0.15

// priorScale returns the factors by which mix divides the mixture's class
// probabilities out of the labels' prior: (π_c)^−γ over the largest of
// them, (min π / π_c)^γ, in (0, 1] for any γ (mix renormalizes, so the
// common factor changes nothing), where π_c = (count[c] + 1) / (the
// labels in the window + nc) for the window's label counts count
// (labelCounts) of nc classes, and γ = Learner.PriorPower or its default;
// nil where PriorPower is negative.
func (l *Learner) priorScale(count []int) []float64 {
	g := l.PriorPower
	switch {
	case g < 0:
		return nil
	case g == 0:
		g = defaultPriorPower
	}
	if len(count) == 0 {
		return nil
	}
	least := slices.Min(count) // the smoothing's total cancels in the ratio
	scale := make([]float64, len(count))
	for c := range scale {
		scale[c] = math.Pow(float64(least+1)/float64(count[c]+1), g)
	}
	return scale
}

// argmax returns the index of p's largest value, the first of ties.
func argmax(p []float64) int {
	best := 0
	for c, x := range p {
		if x > p[best] {
			best = c
		}
	}
	return best
}

// predictUnreached predicts the nodes ids[p] for p in rest, which no label
// reaches in the graph: by the code-space vote once the model has codes,
// else as the class with the most labels in the window.
func (l *Learner) predictUnreached(ids []int, out []Prediction, rest []int) {
	sub := make([]int, len(rest))
	for r, p := range rest {
		sub[r] = ids[p]
	}
	if l.Model.Started() && l.Codes != CodesOff {
		if classes, scores := l.nearest(l.codesOf(sub)); classes != nil {
			for r, p := range rest {
				if classes[r] >= 0 {
					out[p].Label, out[p].Score = l.classes[classes[r]], scores[r]
				}
			}
			return
		}
	}
	count, total := l.labelCounts()
	if total == 0 {
		return
	}
	best := 0
	for c, k := range count {
		if k > count[best] {
			best = c
		}
	}
	for _, p := range rest {
		out[p].Label, out[p].Score = l.classes[best], float64(count[best])/float64(total)
	}
}
