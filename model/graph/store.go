package graph

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/nmfstream/nmfstream/internal/gemm"
)

// store keeps the data rows the search needs, one per slot, as given.
type store struct {
	isSparse bool
	dim      int
	cosine   bool

	data []float64 // dense: slot*dim + l
	// borrowed: data is the rows of a batch build's input, read in place
	// (KNN.Dense), until the first write makes the store its own copy.
	borrowed bool

	ind [][]int     // sparse: column indices of slot's row
	val [][]float64 // sparse: values of slot's row

	sq    []float64 // canonical squared norm of the stored row
	raw   []float64 // Euclidean norm of the row
	maxNm float64   // largest stored norm ever seen; bounds rounding error

	// fast32, set by a batch build (beginFast32), makes dense dots run in
	// float32 on data32, a float32 copy of data, with delta widened to
	// match: single precision doubles BLAS's speed, and refinement by
	// canon keeps the result exact.
	fast32 bool
	data32 []float32
	// keep32 keeps fast32 on after a build and for the insertions that
	// follow (enable32): setDense then writes data32 too. decided32 records
	// that the choice was made.
	keep32, decided32 bool

	bd bounds // the bounded search's state (bound.go)

	// workspaces
	bufs dotBufs
	cbuf []float64
}

// dotBufs is the workspace of dots: parts of a search that run at once
// (Graph.SetSplit) each bring their own.
type dotBufs struct {
	q, r  []float64
	c32   []float32
	abt32 gemm.ABTWorkspace32 // gemm.MulABT32's
	abt   gemm.ABTWorkspace   // gemm.MulABT's
	// sparseDots' column lists of the reference block (CSC)
	colPtr []int
	colRow []int32
	colVal []float64
	// part is set for a part of a split search, which runs beside the
	// others on its own core (see gemm.Serves64).
	part bool
}

func (s *store) slots() int { return len(s.sq) }

func (s *store) growTo(slots int) {
	for len(s.sq) < slots {
		s.sq = append(s.sq, 0)
		s.raw = append(s.raw, 0)
		if s.isSparse {
			s.ind = append(s.ind, nil)
			s.val = append(s.val, nil)
		} else if need := len(s.sq) * s.dim; len(s.data) < need {
			s.own()
			s.data = slices.Grow(s.data, s.dim)
			s.data = s.data[:len(s.data)+s.dim]
			clear(s.data[len(s.data)-s.dim:])
		}
	}
}

// own makes borrowed rows the store's own copy, before a write.
func (s *store) own() {
	if s.borrowed {
		s.data = slices.Clone(s.data)
		s.borrowed = false
	}
}

// checkRow validates values of a row before it is stored.
func (s *store) checkRow(i int, ind []int, val []float64) (float64, error) {
	var ss float64
	for p, v := range val {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			j := p
			if ind != nil {
				j = ind[p]
			}
			return 0, fmt.Errorf("graph: non-finite value %g at (%d, %d)", v, i, j)
		}
		ss += v * v
	}
	if math.IsInf(ss, 0) {
		// Every value finite, but the squares overflow: the row's distances
		// would be Inf or NaN (sources refuse values above record.MaxValue).
		return 0, fmt.Errorf("graph: row %d's squared norm overflows float64: scale the features down", i)
	}
	return math.Sqrt(ss), nil
}

// setDense stores row at slot; the row must have been checked.
func (s *store) setDense(slot int, row []float64, nm float64) {
	s.own()
	dst := s.data[slot*s.dim : (slot+1)*s.dim]
	copy(dst, row)
	s.finish(slot, nm)
	if s.bd.m > 0 {
		s.bd.pending = append(s.bd.pending, slot)
		s.bd.since++
		if len(s.bd.pending) > 2*len(s.sq) {
			// The bound has not been used for long: drop it until the
			// next bounded scan makes a new basis.
			s.bd.m, s.bd.pending = 0, nil
		}
	}
	if !s.keep32 {
		return
	}
	if s.maxNm > maxNorm32 {
		// float32 dots could overflow from now on: back to float64.
		s.keep32 = false
		s.endFast32()
		return
	}
	if need := (slot + 1) * s.dim; len(s.data32) < need {
		// Graph.reserve has made room for the batch (growData).
		old := len(s.data32)
		s.data32 = slices.Grow(s.data32, need-old)[:need]
		clear(s.data32[old : slot*s.dim])
	}
	for l, x := range row {
		s.data32[slot*s.dim+l] = float32(x)
	}
}

// setSparse stores a sparse row at slot, reusing the slot's old memory.
func (s *store) setSparse(slot int, ind []int, val []float64, nm float64) {
	s.ind[slot] = append(s.ind[slot][:0], ind...)
	s.val[slot] = append(s.val[slot][:0], val...)
	s.finish(slot, nm)
}

func (s *store) finish(slot int, nm float64) {
	s.raw[slot] = nm
	s.sq[slot] = s.canonDot(slot, slot)
	if r := math.Sqrt(s.sq[slot]); r > s.maxNm {
		s.maxNm = r
	}
}

func (s *store) clearSlot(slot int) {
	if s.isSparse {
		s.ind[slot] = s.ind[slot][:0]
		s.val[slot] = s.val[slot][:0]
	} else {
		s.own()
		clear(s.data[slot*s.dim : (slot+1)*s.dim])
	}
	s.sq[slot], s.raw[slot] = 0, 0
}

func (s *store) denseRow(i int) []float64 { return s.data[i*s.dim : (i+1)*s.dim] }

// DenseRows returns the stored rows of a dense graph as one row-major
// slice of rows×D values, rows at least Slots(): slot i's row, as inserted,
// at [i·D, (i+1)·D), zero for free slots and for the rows past Slots().
// The slice aliases the graph's storage, which DenseRows first grows to
// hold rows rows if it must (one copy); it follows the graph's later writes
// (an insertion writes new rows, a removal zeroes its rows) until an
// insertion that takes the store beyond its capacity, or a DenseRows call
// with more rows, moves the storage, so a caller that keeps it calls
// DenseRows again after each insertion. The caller must not write to it.
// It returns nil for a sparse graph.
//
// The rows past Slots() are zero because the store's capacity beyond its
// length is never written: it comes zeroed from make or append, and a slot
// that grows into it is cleared first (growTo).
func (g *Graph) DenseRows(rows int) []float64 {
	s := &g.st
	if s.isSparse {
		return nil
	}
	need := max(rows, len(s.sq)) * s.dim
	if cap(s.data) < need {
		t := make([]float64, len(s.data), need)
		copy(t, s.data)
		s.data, s.borrowed = t, false
	}
	return s.data[:need]
}

// canon returns the canonical key of the pair of stored rows i and j, the
// quantity neighbours are ranked by. For Euclidean it is the squared
// distance Σₗ(aₗ − bₗ)²; for Cosine it is −sgn(c)·c², c = cos(a, b),
// computed as −aᵀb·|aᵀb|/(‖a‖²‖b‖²) with a single final division, so that
// equal cosines of integer-valued rows (counts, pixels) tie exactly; a zero
// row has no direction, and its cosine with every row is taken as 0. It is
// computed in a fixed order that does not depend on how the pair was found,
// and canon(i, j) == canon(j, i) bit for bit, so batch, incremental and
// re-search agree exactly.
func (s *store) canon(i, j int) float64 {
	if s.cosine {
		if s.sq[i] == 0 || s.sq[j] == 0 {
			return 0 // a zero row: cosine 0 (see above)
		}
		d := s.canonDot(i, j)
		return -(d * math.Abs(d)) / (s.sq[i] * s.sq[j])
	}
	return s.canonSqDist(i, j)
}

// approxKey turns a fast inner product of rows i and j into the key of
// canon, up to delta.
func (s *store) approxKey(sqi, sqj, dot float64) float64 {
	if s.cosine {
		if sqi == 0 || sqj == 0 {
			return 0 // a zero row, as canon
		}
		return -(dot * math.Abs(dot)) / (sqi * sqj)
	}
	return sqi + sqj - 2*dot
}

func (s *store) canonSqDist(i, j int) float64 {
	if !s.isSparse {
		return sqDist(s.denseRow(i), s.denseRow(j))
	}
	ai, av := s.ind[i], s.val[i]
	bi, bv := s.ind[j], s.val[j]
	var sum float64
	p, q := 0, 0
	for p < len(ai) && q < len(bi) {
		switch {
		case ai[p] < bi[q]:
			sum += av[p] * av[p]
			p++
		case ai[p] > bi[q]:
			sum += bv[q] * bv[q]
			q++
		default:
			d := av[p] - bv[q]
			sum += d * d
			p++
			q++
		}
	}
	for ; p < len(ai); p++ {
		sum += av[p] * av[p]
	}
	for ; q < len(bi); q++ {
		sum += bv[q] * bv[q]
	}
	return sum
}

// canonDot returns the inner product of stored rows i and j in a fixed order.
func (s *store) canonDot(i, j int) float64 {
	if !s.isSparse {
		a, b := s.denseRow(i), s.denseRow(j)
		var s0, s1, s2, s3 float64
		n := len(a)
		l := 0
		for ; l+4 <= n; l += 4 {
			s0 += a[l] * b[l]
			s1 += a[l+1] * b[l+1]
			s2 += a[l+2] * b[l+2]
			s3 += a[l+3] * b[l+3]
		}
		for ; l < n; l++ {
			s0 += a[l] * b[l]
		}
		return (s0 + s1) + (s2 + s3)
	}
	ai, av := s.ind[i], s.val[i]
	bi, bv := s.ind[j], s.val[j]
	var sum float64
	for p, q := 0, 0; p < len(ai) && q < len(bi); {
		switch {
		case ai[p] < bi[q]:
			p++
		case ai[p] > bi[q]:
			q++
		default:
			sum += av[p] * bv[q]
			p++
			q++
		}
	}
	return sum
}

func sqDist(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	n := len(a)
	l := 0
	for ; l+4 <= n; l += 4 {
		d0 := a[l] - b[l]
		d1 := a[l+1] - b[l+1]
		d2 := a[l+2] - b[l+2]
		d3 := a[l+3] - b[l+3]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	for ; l < n; l++ {
		d := a[l] - b[l]
		s0 += d * d
	}
	return (s0 + s1) + (s2 + s3)
}

// delta bounds |approxKey − canon| for any pair involving slot i, where
// the approximate inner product comes from BLAS or a sparse accumulation in
// any order. With γₙ = n·u/(1 − n·u) (Higham, "Accuracy and Stability of
// Numerical Algorithms", §3.1), n ≥ 8 + the number of terms:
// Euclidean: the dot product, the norms and the direct sum Σ(aₗ − bₗ)² are
// each within γₙ(‖a‖ + ‖b‖)² of exact, so 4γₙ(‖a‖ + ‖b‖)² covers both keys.
// Cosine: each key is within 2γₙ + 6u ≤ 2.75γₙ of −sgn(c)c², so 8γₙ covers
// the difference.
//
// With fast32 (Euclidean only), the inner product comes from float32 copies
// of the rows: it is within γ'ₙ‖a‖‖b‖ ≤ γ'ₙ(‖a‖ + ‖b‖)²/4 of aᵀb, where γ'
// uses u = 2⁻²⁴ and n ≥ 3 + the number of terms (the roundings of the
// inputs count as terms), so the key, which doubles it, is within
// γ'ₙ(‖a‖ + ‖b‖)²/2 plus the float64 parts above; γ'ₙ(‖a‖ + ‖b‖)² covers
// that twice over. Entries or products below float32's normal range add an
// absolute error of at most 2⁻¹⁵⁰ per rounding, which 2⁻¹⁴⁶(n + √n(‖a‖ +
// ‖b‖)) covers with room to spare.
func (s *store) delta(i int) float64 {
	const u = 0x1p-53
	n := float64(s.dim + 8)
	g := n * u / (1 - n*u)
	if s.cosine {
		return 8 * g
	}
	r := math.Sqrt(s.sq[i]) + s.maxNm
	d := 4 * g * r * r
	if s.fast32 {
		const u32 = 0x1p-24
		g32 := n * u32 / (1 - n*u32)
		d += g32*r*r + 0x1p-146*(n+math.Sqrt(n)*r)
	}
	return d
}

// maxNorm32 bounds the row norms for which float32 dots cannot overflow:
// every entry, product and partial sum stays below 2¹²² < 2¹²⁸.
const maxNorm32 = 0x1p60

// minDim32 is the dimension from which float32 dots pay: below it the dot
// products are not the search's main cost. At 40 dimensions (the MNIST
// stream's search basis) they still are: the search's CPU time fell from
// about 1.0 to 0.84 s on that stream, the lists unchanged (BENCHMARKS.md,
// "Fifth pass").
const minDim32 = 32

// beginFast32 switches dense Euclidean dots to float32 for a batch search
// of the slots ids and reports whether it did; endFast32 switches back and
// frees the copy. Cosine keys, sparse rows, short rows and rows too long for
// float32 stay in float64, and so do data whose float32 margin δ would not
// be small against the mean squared distance between rows (points far from
// the origin and close together): there every pair would fall within the
// margin and need exact refinement.
func (s *store) beginFast32(ids []int) bool {
	if s.isSparse || s.cosine || s.dim < minDim32 || s.maxNm > maxNorm32 || len(ids) < 2 {
		return false
	}
	// Mean squared distance between rows = 2(mean ‖x‖² − ‖mean x‖²).
	mean := make([]float64, s.dim)
	var sumSq float64
	for _, i := range ids {
		sumSq += s.sq[i]
		for l, x := range s.denseRow(i) {
			mean[l] += x
		}
	}
	n := float64(len(ids))
	var mm float64
	for _, x := range mean {
		mm += (x / n) * (x / n)
	}
	spread := 2 * (sumSq/n - mm)
	s.fast32 = true
	worst := s.delta(ids[0])
	for _, i := range ids {
		worst = max(worst, s.delta(i))
	}
	s.fast32 = false
	// 1/64: side lists stay short on such data (uniform [0, 1)⁷⁸⁴ has
	// δ/spread ≈ 5e-4).
	if !(worst <= spread/64) {
		return false
	}
	s.data32 = slices.Grow(s.data32[:0], len(s.data))[:len(s.data)]
	for l, x := range s.data {
		s.data32[l] = float32(x)
	}
	s.fast32 = true
	return true
}

func (s *store) endFast32() {
	if s.keep32 {
		return
	}
	s.fast32 = false
	s.data32, s.bufs.c32 = nil, nil
}

// enable32 decides, once, whether dense dots stay in float32 for good,
// from the rows ids (as beginFast32 decides for a batch build): insertions
// into a large window then search at float32 speed, at the cost of a
// float32 copy of the stored rows (half their size). The lists stay exact:
// the margins follow the float32 bound and refinement is in float64.
func (s *store) enable32(ids []int) {
	if s.decided32 {
		return
	}
	s.decided32 = true
	if s.fast32 || s.beginFast32(ids) {
		s.keep32 = true
	}
}

// contiguous reports whether ids is a run of consecutive slots.
func contiguous(ids []int) bool {
	return len(ids) > 0 && ids[len(ids)-1]-ids[0] == len(ids)-1
}

// gather returns the dense rows ids as a row-major block, a view when the ids
// are consecutive slots.
func (s *store) gather(buf *[]float64, ids []int) []float64 {
	if contiguous(ids) {
		return s.data[ids[0]*s.dim : (ids[len(ids)-1]+1)*s.dim]
	}
	need := len(ids) * s.dim
	if cap(*buf) < need {
		*buf = make([]float64, need)
	}
	b := (*buf)[:need]
	for a, i := range ids {
		copy(b[a*s.dim:(a+1)*s.dim], s.denseRow(i))
	}
	return b
}

// dots32 is dots for contiguous dense slots, in float32.
func (s *store) dots32(dst []float64, qs, refs []int, w *dotBufs) {
	src := s.rawDots32(qs, refs, w)
	dst = dst[:len(src)]
	l := 0
	for ; l+4 <= len(src); l += 4 {
		d, c := dst[l:l+4:l+4], src[l:l+4:l+4]
		d[0], d[1], d[2], d[3] = float64(c[0]), float64(c[1]), float64(c[2]), float64(c[3])
	}
	for ; l < len(src); l++ {
		dst[l] = float64(src[l])
	}
}

// rawDots32 returns the float32 inner products of the contiguous dense
// slots qs and refs (len(qs)×len(refs), row-major), computed as dots32
// does, in w's buffer (valid until w's next use); fast32 must be on.
func (s *store) rawDots32(qs, refs []int, w *dotBufs) []float32 {
	nq, nr := len(qs), len(refs)
	q0, r0 := qs[0]*s.dim, refs[0]*s.dim
	a := blas32.General{Rows: nq, Cols: s.dim, Stride: s.dim, Data: s.data32[q0 : q0+nq*s.dim]}
	b := blas32.General{Rows: nr, Cols: s.dim, Stride: s.dim, Data: s.data32[r0 : r0+nr*s.dim]}
	w.c32 = slices.Grow(w.c32[:0], nq*nr)[:nq*nr]
	c := blas32.General{Rows: nq, Cols: nr, Stride: nr, Data: w.c32}
	gemm.ABT32(c, a, b, &w.abt32, w.part)
	return w.c32
}

// denseDots is dots for dense rows, with workspace w: calls with their own
// w may run at once.
func (s *store) denseDots(dst []float64, qs, refs []int, w *dotBufs) {
	nq, nr := len(qs), len(refs)
	dst = dst[:nq*nr]
	if s.dim == 0 {
		clear(dst)
		return
	}
	if s.fast32 && contiguous(qs) && contiguous(refs) {
		s.dots32(dst, qs, refs, w)
		return
	}
	a := blas64.General{Rows: nq, Cols: s.dim, Stride: s.dim, Data: s.gather(&w.q, qs)}
	b := blas64.General{Rows: nr, Cols: s.dim, Stride: s.dim, Data: s.gather(&w.r, refs)}
	c := blas64.General{Rows: nq, Cols: nr, Stride: nr, Data: dst}
	gemm.ABT(c, a, b, &w.abt, w.part)
}

// dots stores into dst (len(qs)×len(refs), row-major) the inner products of
// the stored rows qs and refs, computed fast (BLAS dgemm for dense rows, an
// inverted index for sparse rows). The values are approximate in the sense of
// delta; callers refine with canon.
func (s *store) dots(dst []float64, qs, refs []int) {
	nq, nr := len(qs), len(refs)
	dst = dst[:nq*nr]
	if !s.isSparse {
		s.denseDots(dst, qs, refs, &s.bufs)
		return
	}
	s.sparseDots(dst, qs, refs, &s.bufs)
}

// sparseDots is dots for sparse rows, with workspace w: calls with their
// own w may run at once. Each product sums q_t·r_t over the query's terms t
// in ascending order, whatever the other rows of qs and refs.
func (s *store) sparseDots(dst []float64, qs, refs []int, w *dotBufs) {
	nr := len(refs)
	// Transpose the reference block into column lists (CSC), then
	// accumulate each query row term by term: Σ_t q_t · R[:, t].
	ptr := w.colPtr[:0]
	for len(ptr) < s.dim+1 {
		ptr = append(ptr, 0)
	}
	clear(ptr)
	total := 0
	for _, r := range refs {
		for _, t := range s.ind[r] {
			ptr[t+1]++
		}
		total += len(s.ind[r])
	}
	for t := 0; t < s.dim; t++ {
		ptr[t+1] += ptr[t]
	}
	if cap(w.colRow) < total {
		w.colRow = make([]int32, total)
		w.colVal = make([]float64, total)
	}
	crow, cval := w.colRow[:total], w.colVal[:total]
	// Fill using ptr[t] as a cursor, then shift back.
	for b, r := range refs {
		for p, t := range s.ind[r] {
			crow[ptr[t]] = int32(b)
			cval[ptr[t]] = s.val[r][p]
			ptr[t]++
		}
	}
	for t := s.dim; t > 0; t-- {
		ptr[t] = ptr[t-1]
	}
	ptr[0] = 0
	w.colPtr = ptr
	for a, q := range qs {
		acc := dst[a*nr : (a+1)*nr]
		clear(acc)
		for p, t := range s.ind[q] {
			v := s.val[q][p]
			for c := ptr[t]; c < ptr[t+1]; c++ {
				acc[crow[c]] += v * cval[c]
			}
		}
	}
}
