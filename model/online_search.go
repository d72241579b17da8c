package model

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime/trace"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/gemm"
)

// DefaultSearchBasis is the rank of the search basis the command line sets
// (Online.SearchBasis; `stream --search-basis`): on the MNIST stream ranks
// 40 and 80 searched alike (BENCHMARKS.md, "What the codes add").
const DefaultSearchBasis = 40

// The schedule and size of Online.SearchBasis's fits, measured with the
// NMF fit (BENCHMARKS.md, "What the codes add"). On the MNIST stream a
// basis fitted on the first 100 samples searched as well as the pixels, on
// the first 250 it lifted the stream by 0.5 point, on the first 500 by 0.9
// and on the first 2,000 by 1.0: the first basis waits for
// searchBasisFirst samples, the next ones come each time the count of
// samples seen has grown searchBasisGrowth-fold, each fitted
// (fitSearchBasisOn; with SearchFitNMF, searchBasisIter products with the
// samples, each followed by searchBasisInner multiplicative updates of the
// factor, in float32) on the newest searchBasisRows samples of the window.
// Refitting once per window as well changed nothing on MNIST 30k (0.941
// either way) and would cost a rebuild of the whole window, Window²·K
// flops, every Window samples.
const (
	searchBasisFirst  = 500
	searchBasisGrowth = 4
	searchBasisRows   = 2000
	// searchBasisIter·searchBasisInner is the count of multiplicative
	// updates of each factor: 100 as in the plain fit of 100 updates they
	// replaced, at half its products (BENCHMARKS.md, "Ninth pass").
	searchBasisIter  = 50
	searchBasisInner = 2
	// searchBasisBytes bounds the copy of the newest samples a fit reads
	// (8·D bytes a sample, and its float32 copy beside): 2,000 MNIST
	// images take 12.5 MB; samples of D = 100,000 would take only 83 rows.
	searchBasisBytes = 64 << 20
	// searchBasisMinRatio is the smallest D/SearchBasis at which the search
	// moves to the span. Measured: MNIST (D/K = 19.6) +0.6 to +1.1 point on
	// five streams; the digits (D = 64) −0.4 to −1.7 at rank 16 (D/K = 4)
	// and −0.2 to 0 at rank 40; MNIST at rank 20 −0.5 (a span too small
	// for the classes). The threshold lies between 4 and 19.6.
	searchBasisMinRatio = 10
)

// searchStep fits a new search basis and rebuilds the graph in its span when
// the schedule of Online.SearchBasis says so. A fit that fails (a
// degenerate window) leaves the search where it was until the next one; a
// basis whose span loses the labeled samples' classes (spanLoses) moves it
// to the samples until the next one. Between two fits the span in use is
// judged again, without a refit: at every step, whether the labels'
// estimated classes outnumber its columns (spanTooNarrow), and each time the
// count of samples seen crosses a judgement point (judgedAt): the guard
// abstains at a fit that has fewer than spanGuardMinLabels labels, and the
// labels that arrive before the next fit, a fourfold growth later, are
// enough to refuse a span that loses the classes. added is the count of
// samples the step brought.
func (o *Online) searchStep(added int) error {
	if !o.searchesBasis() {
		return nil
	}
	if o.next == 0 {
		o.next = searchBasisFirst
	}
	if o.seen < o.next {
		if o.r != nil && (o.spanTooNarrow(o.SearchBasis) || judgedAt(o.seen-added, o.seen) && o.spanLoses(o.r)) {
			if err := o.reembed(nil); err != nil {
				return fmt.Errorf("model: online: search basis: %w", err)
			}
		}
		return nil
	}
	for o.next <= o.seen {
		o.next *= searchBasisGrowth
	}
	defer trace.StartRegion(context.Background(), "searchBasis").End() // the fit and the rebuild, for `stream --trace`
	r, err := o.fitSearchBasis()
	if err != nil {
		return nil // the search stays in the current space: see above
	}
	if o.spanLoses(r) {
		if o.r == nil {
			return nil // already searching the samples
		}
		r = nil // back to the samples (online_guard.go)
	}
	if err := o.reembed(r); err != nil {
		return fmt.Errorf("model: online: search basis: %w", err)
	}
	return nil
}

// metricStep lets the labels choose the graph's metric (ChooseMetric) at
// the judgement points of judgedAt, for dense samples searched as they are
// or in the search basis's span: where the other metric wins
// (metricLoses) the window's graph is rebuilt under it, in the same
// space. added is the count of samples the step brought.
func (o *Online) metricStep(added int) error {
	if !o.ChooseMetric || o.sparse || o.SearchDim > 0 || o.g == nil || !judgedAt(o.seen-added, o.seen) || !o.metricLoses() {
		return nil
	}
	o.flipped = !o.flipped
	if err := o.reembed(o.r); err != nil {
		o.flipped = !o.flipped // reembed kept the graph it had
		return fmt.Errorf("model: online: metric: %w", err)
	}
	return nil
}

// judgedAt reports whether the count of samples seen, from prev to seen,
// crossed a judgement point of the span between fits:
// ⌈searchBasisFirst·√2^m⌉ for m ≥ 1 (708, 1,000, 1,415, 2,000, 2,829, …;
// the fits fall on every fourth, which searchStep handles first).
// Geometric, so a stream of N samples is judged about 2·log₂(N/searchBasisFirst) times,
// each over at most spanGuardLabels labeled samples.
func judgedAt(prev, seen int) bool {
	for m := 1; ; m++ {
		p := searchBasisFirst << (m / 2)
		if m%2 == 1 {
			p = int(math.Ceil(float64(p) * math.Sqrt2))
		}
		if p > seen {
			return false
		}
		if prev < p {
			return true
		}
	}
}

// searchesBasis reports whether SearchBasis applies to the stream's samples
// (SearchBasisApplies).
func (o *Online) searchesBasis() bool { return SearchBasisApplies(o.SearchBasis, o.sparse, o.dim) }

// SearchBasisApplies reports whether a search basis of the given rank
// (Online.SearchBasis) applies to samples of dimension dim, sparse or
// dense: only to dense ones of dimension at least searchBasisMinRatio (10)
// times the rank. Elsewhere Online searches the samples as they are.
func SearchBasisApplies(rank int, sparse bool, dim int) bool {
	return rank > 0 && !sparse && dim >= searchBasisMinRatio*rank
}

// fitSearchBasis fits the search basis of rank SearchBasis to the newest
// searchBasisRows live samples (fewer if searchBasisBytes says so; a fit on
// fewer samples than the rank is an error) as SearchFit says
// (fitSearchBasisOn) and returns an orthonormal basis of its span
// (D×SearchBasis).
func (o *Online) fitSearchBasis() (*mat.Dense, error) {
	order := o.g.Order()
	if n := min(searchBasisRows, searchBasisBytes/(8*o.dim)); len(order) > n {
		order = order[len(order)-n:]
	}
	x := mat.NewDense(len(order), o.dim, nil)
	for r, id := range order {
		copy(x.RawRowView(r), o.xd.RawRowView(id))
	}
	if o.SearchBases == nil {
		return o.fitSearchBasisOn(x)
	}
	r, err := o.SearchBases.get(searchBasisKey(x, o.SearchBasis, o.SearchFit, o.Split != nil), func() (*mat.Dense, error) { return o.fitSearchBasisOn(x) })
	if err != nil {
		return nil, err
	}
	return mat.DenseCopyOf(r), nil
}

// SearchFit says which basis Online.SearchBasis fits to the window's newest
// samples; the graph is searched in its span.
type SearchFit int

const (
	// SearchFitSVD, the default, takes the span of the samples' K leading
	// right singular vectors (uncentered: the best rank-K approximation of
	// the samples in the least-squares sense), by a seeded randomized
	// range finder (principalSpan). On eight MNIST streams it searched
	// better than the NMF span on every one (+0.35 point on average) at
	// 0.18× the fit's cost (BENCHMARKS.md, "The principal span").
	SearchFitSVD SearchFit = iota
	// SearchFitNMF fits a plain NMF (Frobenius, multiplicative updates,
	// from NNDSVDa) and takes the span of its basis U: the search basis
	// before SearchFitSVD.
	SearchFitNMF
)

// String returns the command line's name of f: svd or nmf.
func (f SearchFit) String() string {
	switch f {
	case SearchFitSVD:
		return "svd"
	case SearchFitNMF:
		return "nmf"
	}
	return fmt.Sprintf("SearchFit(%d)", int(f))
}

// ParseSearchFit returns the SearchFit that String names.
func ParseSearchFit(s string) (SearchFit, error) {
	for _, f := range []SearchFit{SearchFitSVD, SearchFitNMF} {
		if s == f.String() {
			return f, nil
		}
	}
	return 0, fmt.Errorf("model: search fit %q: want svd or nmf", s)
}

// The randomized range finder of SearchFitSVD (principalSpan): its random
// test matrix's seed (the fit is a function of its rows alone, as
// SearchBases requires), oversampling columns and power iterations, as in
// RandomizedSVD (Halko, Martinsson and Tropp 2011, §4.2 and §4.5).
const (
	searchSVDSeed       = 0x5eed
	searchSVDOversample = 10
	searchSVDPower      = 4
)

// principalSpan returns an orthonormal basis (D×k) of the span of the k
// leading right singular vectors of x (N×D, 1 ≤ k ≤ min(N, D)): a
// randomized range finder of xᵀ with searchSVDOversample extra columns
// and searchSVDPower power iterations of xᵀx, each re-orthonormalized
// (orthonormalize), then the k leading eigenvectors of the small Gram
// matrix (xQ)ᵀ(xQ) taken back to the D features. The products go through
// internal/gemm, in parts of split when it is set: each entry is summed
// in the same order either way, so the basis is the same bits with or
// without parts. Where x has fewer than k independent directions, the
// basis is orthonormalized again (orthonormalColumns), so that the
// columns past x's rank are zero, as an NMF basis's dependent columns
// are. It returns an error if the small eigenproblem fails.
func principalSpan(x *mat.Dense, k int, split func(n int, body func(lo, hi int))) (*mat.Dense, error) {
	n, d := x.Dims()
	l := min(k+searchSVDOversample, n, d)
	rnd := rand.New(rand.NewPCG(searchSVDSeed, searchSVDSeed))
	omega := mat.NewDense(n, l, nil)
	for i := range omega.RawMatrix().Data {
		omega.RawMatrix().Data[i] = rnd.NormFloat64()
	}
	xr := x.RawMatrix()
	// xt sets y (D×l) to xᵀa for a of N×l, in parts over the D features:
	// each row of y sums over the N samples in order (gemm.MulXTA).
	y, z := mat.NewDense(d, l, nil), mat.NewDense(n, l, nil)
	xt := func(a *mat.Dense) {
		ar, yr := a.RawMatrix(), y.RawMatrix()
		inParts(split, d, func(lo, hi int) {
			var ws gemm.Workspace
			xs := blas64.General{Rows: n, Cols: hi - lo, Stride: xr.Stride, Data: xr.Data[lo:]}
			gemm.MulXTA(blas64.General{Rows: hi - lo, Cols: l, Stride: yr.Stride, Data: yr.Data[lo*yr.Stride:]}, xs, ar, &ws)
		})
	}
	// xq sets z (N×l) to x·q for q of D×l, in parts over the N samples.
	xq := func(q *mat.Dense) {
		var p gemm.Packed
		p.Pack(q.RawMatrix())
		zr := z.RawMatrix()
		inParts(split, n, func(lo, hi int) {
			gemm.MulPacked(blas64.General{Rows: hi - lo, Cols: l, Stride: zr.Stride, Data: zr.Data[lo*zr.Stride:]},
				blas64.General{Rows: hi - lo, Cols: d, Stride: xr.Stride, Data: xr.Data[lo*xr.Stride:]}, &p)
		})
	}
	xt(omega)
	q := orthonormalize(y)
	for range searchSVDPower {
		xq(q)
		xt(z) // xᵀx·Q: its condition number is x's squared at most
		q = orthonormalize(y)
	}
	// With Z = xQ, ZᵀZ = Qᵀxᵀx Q: its leading eigenvectors W give the
	// leading right singular vectors of x within span(Q) as Q·W.
	xq(q)
	var ws gemm.Workspace
	g := mat.NewDense(l, l, nil)
	gemm.MulXTA(g.RawMatrix(), z.RawMatrix(), z.RawMatrix(), &ws)
	sym := mat.NewSymDense(l, nil)
	for i := range l {
		for j := i; j < l; j++ {
			sym.SetSym(i, j, (g.At(i, j)+g.At(j, i))/2)
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(sym, true) {
		return nil, errors.New("model: online: search basis: the eigendecomposition of the range's Gram matrix failed")
	}
	var vec mat.Dense
	eig.VectorsTo(&vec) // ascending eigenvalues: the leading k are the last
	w := mat.NewDense(l, k, nil)
	for j := range k {
		for i := range l {
			w.Set(i, j, vec.At(i, l-1-j))
		}
	}
	r := mat.NewDense(d, k, nil)
	r.Mul(q, w)
	// The k-th eigenvalue at rounding level (or Q short of a column):
	// x's rank is below k, and the null directions mix Q's zero columns
	// in, so Q·W is not orthonormal there.
	vals := eig.Values(nil)
	if vals[l-k] <= 1e-12*vals[l-1] {
		return orthonormalColumns(r), nil
	}
	return r, nil
}

// fitSearchBasisOn fits the search basis to the rows x (fitSearchBasis),
// as o.SearchFit says: with SearchFitSVD an orthonormal basis of the
// samples' K leading right singular vectors (principalSpan); with SearchFitNMF a plain NMF
// from NNDSVDa, searchBasisIter products with x (in float32), each followed
// by searchBasisInner updates of its factor (Engine.Inner), no objective
// computed between them (Tol −1), its basis orthonormalized. It returns an
// error for an unknown SearchFit, a rank out of range and a failed fit.
func (o *Online) fitSearchBasisOn(x *mat.Dense) (*mat.Dense, error) {
	switch o.SearchFit {
	case SearchFitSVD:
		n, d := x.Dims()
		if k := o.SearchBasis; k <= 0 || k > min(n, d) {
			return nil, fmt.Errorf("model: online: search basis rank %d out of range [1, min(%d, %d)]", k, n, d)
		}
		return principalSpan(x, o.SearchBasis, o.Split)
	case SearchFitNMF:
	default:
		return nil, fmt.Errorf("model: online: unknown %v", o.SearchFit)
	}
	nm := &NMF{Common: Common{Rank: o.SearchBasis, MaxIter: searchBasisIter, Tol: -1, Split: o.Split, Float32: true}, Inner: searchBasisInner}
	if err := nm.Fit(DenseRows(x), nil); err != nil {
		return nil, err
	}
	return orthonormalColumns(nm.Basis()), nil
}

// orthonormalColumns returns an orthonormal basis of the span of u's
// columns (D×K) by modified Gram–Schmidt, twice for accuracy, in a new
// matrix: a column that depends on the earlier ones (below 1e-10 of its
// norm once they are taken out) is left zero.
func orthonormalColumns(u *mat.Dense) *mat.Dense {
	d, k := u.Dims()
	q := mat.NewDense(k, d, nil) // columns of the result, as rows
	for j := range k {
		row := q.RawRowView(j)
		mat.Col(row, j, u)
		n0 := floats.Norm(row, 2)
		for range 2 {
			for i := range j {
				qi := q.RawRowView(i)
				floats.AddScaled(row, -floats.Dot(qi, row), qi)
			}
		}
		if n := floats.Norm(row, 2); n > 1e-10*n0 && n > 0 {
			floats.Scale(1/n, row)
		} else {
			clear(row)
		}
	}
	return mat.DenseCopyOf(q.T())
}

// reembed makes r (D×K, orthonormal columns) the graph's search basis, or
// with r nil moves the search back to the samples themselves (on an error
// it leaves the graph as it was): the
// graph is built anew on the window's rows projected on it, every live
// sample keeping its slot, the window its age order and the nodes their
// labels (rebuildGraph), so the codes, labels and callers' slot-indexed
// state stay valid; TakeGraphEdits then reports every row. Distances and
// cosines in the new graph are those of the samples' orthogonal projections
// on the span of the search basis.
func (o *Online) reembed(r *mat.Dense) error {
	slots := o.g.Slots()
	s := &OnlineState{Dim: o.dim, Slots: slots, Order: o.g.Order(), Live: make([]bool, slots), Labels: make([]int, slots)}
	for id := range slots {
		s.Live[id], s.Labels[id] = o.g.Live(id), -1
		if s.Live[id] {
			s.Labels[id] = o.g.Label(id)
		}
	}
	if len(s.Order) == 0 {
		return nil
	}
	// The rows by slot: o.xd, which may be the old graph's own storage
	// (sharedRows); it stays o's once the new graph stores projections.
	s.Dense = o.xd.RawMatrix().Data[:slots*o.dim]
	oldG, oldR := o.g, o.r
	err := o.newGraph(o.dim, false, r)
	if err == nil {
		err = o.rebuildGraph(s)
	}
	if err != nil {
		// Searching where it searched before is still exact: keep it.
		o.g, o.r = oldG, oldR
		o.edits, o.editsAll = o.edits[:0], true
	}
	return err
}
