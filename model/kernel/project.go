package kernel

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// Projection selects how a fitted kernel method codes new samples.
type Projection int

const (
	// ProjectGraph is ProjectNNLS plus the graph-aware term of docs/DESIGN.md §4:
	// the new sample is linked to its Neighbors nearest training samples in
	// the kernel space (0-1 weights), whose codes stay fixed, with weight
	// GraphAlpha. It measures best on digits for every method (see the
	// package tests) and is the default.
	ProjectGraph Projection = iota
	// ProjectNNLS solves the method's own reconstruction problem for the new
	// sample with the basis fixed, v ≥ 0, by multiplicative updates: for
	// Flexible, NNLS of the sample's coordinates max(K^{-½}K_te, 0) on B
	// (which are exactly the clipped columns of K^{½} for training samples);
	// for MultiK, min ‖φ(x) − Φ(X)F v‖², v ≥ 0, through K_te.
	ProjectNNLS
	// ProjectPaper is the papers' projection: A⁺K⁻¹K_te for Flexible (Zhang
	// and Liu §4.1), and the least-squares code (FᵀKF)⁻¹FᵀK_te "regarding F"
	// for MultiK (Wang and AbdulJabbar §4.2.1). Codes may be negative.
	// A⁺K⁻¹K_te suffers from K's conditioning: with wide Gaussians it
	// measures far below the others.
	ProjectPaper
)

// String returns "nnls", "paper" or "graph".
func (p Projection) String() string {
	switch p {
	case ProjectNNLS:
		return "nnls"
	case ProjectPaper:
		return "paper"
	case ProjectGraph:
		return "graph"
	}
	return fmt.Sprintf("Projection(%d)", int(p))
}

// Projector codes new samples on a fitted model. Flexible and MultiK
// implement it.
type Projector interface {
	// ProjectTo stores the codes of x's samples (M×K, one row per sample)
	// into dst, which must be empty or M×K.
	ProjectTo(dst *mat.Dense, x model.Data) error
}

// projDefaults bound the multiplicative updates of ProjectNNLS and
// ProjectGraph: 200 iterations or a relative change of 1e-7, enough for the
// codes of training samples to agree with their fitted codes to about 1e-3
// (see the tests).
const (
	projMaxIter = 200
	projTol     = 1e-7
)

// crossLoss is Σ_j ‖φ(x_j) − Φ(X)F v_j‖² for new samples x_j with F fixed:
// Σ_j k(x_j, x_j) − 2 tr(Vᵀ K_teᵀ F) + tr((FᵀKF)(VᵀV)). K_te may have
// negative entries; its negative part goes to the denominator.
type crossLoss struct {
	n      int
	self   []float64
	ktf    mat.Dense // K_teᵀF, M×K (positive part)
	ktfNeg mat.Dense // negative part, or empty
	fkf    *mat.Dense
	vtv    mat.Dense
	tmp    mat.Dense
}

func newCrossLoss(kte, f, fkf *mat.Dense, self []float64) *crossLoss {
	n, _ := kte.Dims()
	l := &crossLoss{n: n, self: self, fkf: fkf}
	neg := false
	for _, v := range kte.RawMatrix().Data {
		if v < 0 {
			neg = true
			break
		}
	}
	if !neg {
		l.ktf.Mul(kte.T(), f)
		return l
	}
	var p, q mat.Dense
	p.Apply(func(_, _ int, v float64) float64 { return max(v, 0) }, kte)
	q.Apply(func(_, _ int, v float64) float64 { return max(-v, 0) }, kte)
	l.ktf.Mul(p.T(), f)
	l.ktfNeg.Mul(q.T(), f)
	return l
}

func (l *crossLoss) Dims() (d, n int) { return l.n, len(l.self) }

func (l *crossLoss) UGradTo(_, _, _, _ *mat.Dense) {
	panic("kernel: projection keeps the basis fixed")
}

func (l *crossLoss) VGradTo(neg, pos, _, v *mat.Dense) {
	neg.Copy(&l.ktf)
	pos.Mul(v, l.fkf)
	if !l.ktfNeg.IsEmpty() {
		pos.Add(pos, &l.ktfNeg)
	}
}

func (l *crossLoss) Value(_, v *mat.Dense) float64 {
	l.vtv.Reset()
	l.vtv.Mul(v.T(), v)
	var s float64
	for _, x := range l.self {
		s += x
	}
	kt := inner(v, &l.ktf)
	if !l.ktfNeg.IsEmpty() {
		kt -= inner(v, &l.ktfNeg)
	}
	return max(s-2*kt+inner(l.fkf, &l.vtv), 0)
}

// anchorGraph returns the M×N 0-1 weights linking each new sample to its p
// nearest training samples in kernel space: d² = k(x, x) + K_jj − 2K_te(j, x).
func anchorGraph(kte *mat.Dense, diag, self []float64, p int) *sparse.CSR {
	n, m := kte.Dims()
	p = min(p, n)
	b := sparse.NewBuilder(m, n)
	idx := make([]int, p)
	dist := make([]float64, p)
	for c := 0; c < m; c++ {
		cnt := 0
		for j := 0; j < n; j++ {
			d := self[c] + diag[j] - 2*kte.At(j, c)
			if cnt == p && !(d < dist[p-1]) {
				continue
			}
			if cnt < p {
				cnt++
			}
			q := cnt - 1
			for q > 0 && d < dist[q-1] {
				dist[q], idx[q] = dist[q-1], idx[q-1]
				q--
			}
			dist[q], idx[q] = d, j
		}
		for q := 0; q < cnt; q++ {
			b.Add(c, idx[q], 1)
		}
	}
	return b.CSR()
}

// initCodes fills v (M×K) with the clamped least-squares codes
// (FᵀKF)⁻¹FᵀK_te, floored so that multiplicative updates can move them.
func floorCodes(v *mat.Dense) {
	const (
		rel  = 1e-3 // small next to the row's scale, yet movable
		zero = 1e-6 // for a row that projects to zero entirely
	)
	r, c := v.Dims()
	for i := 0; i < r; i++ {
		row := v.RawRowView(i)
		var s float64
		for j, x := range row {
			if x < 0 {
				row[j] = 0
			} else {
				s += x
			}
		}
		f := rel * s / float64(c)
		if f == 0 {
			f = zero
		}
		for j, x := range row {
			row[j] = max(x, f)
		}
	}
}

func reuseDst(dst *mat.Dense, r, c int) {
	if dst.IsEmpty() {
		dst.ReuseAs(r, c)
		return
	}
	if dr, dc := dst.Dims(); dr != r || dc != c {
		panic(mat.ErrShape)
	}
}

// quarantine finds the samples (columns of kte, entries of self) with a
// kernel value that is not finite or above limit in magnitude, zeroes
// those values so that the other samples' projection can run, and returns
// the samples' indices. Such a sample has values far beyond the training
// data's (a polynomial kernel of a sample of 10⁵⁰ overflows): one of them
// must not make every sample's projection fail.
func quarantine(kte *mat.Dense, self []float64, limit float64) []int {
	n, m := kte.Dims()
	var bad []int
	for j := 0; j < m; j++ {
		ok := math.Abs(self[j]) <= limit // false for NaN
		for i := 0; i < n && ok; i++ {
			ok = math.Abs(kte.At(i, j)) <= limit
		}
		if ok {
			continue
		}
		bad = append(bad, j)
		self[j] = 0
		for i := 0; i < n; i++ {
			kte.Set(i, j, 0)
		}
	}
	return bad
}

// poisonRows sets the rows bad of dst to NaN: the codes of the samples
// quarantine set aside, which have none (callers reject them).
func poisonRows(dst *mat.Dense, bad []int) {
	for _, i := range bad {
		row := dst.RawRowView(i)
		for j := range row {
			row[j] = math.NaN()
		}
	}
}
