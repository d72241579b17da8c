package classify

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/sparse"
)

// LabelPropagation is the transductive "learning with local and global
// consistency" method of Zhou et al. (2004), the algorithm of
// scikit-learn's LabelSpreading with its knn kernel. Fit builds the
// symmetric 0-1 k-nearest-neighbour graph W over all rows (labeled and
// unlabeled), normalizes it to S = D^{-1/2} W D^{-1/2} with D = diag(W·1),
// and iterates
//
//	F ← α S F + (1 − α) Y,  F₀ = Y,
//
// where Y (n×C) is one-hot on the labeled rows and zero on the others.
// Each row of F, normalized to sum 1, is that row's label distribution, and
// its arg max is the row's label (the transduction). Labeled rows are
// clamped softly and may change label, as in Zhou et al.
//
// Rows outside the training set are labeled like scikit-learn does: the
// label distributions of their K nearest training rows are summed.
//
// It works on any features (NMF codes or raw pixels); choose Metric to
// suit them. W is symmetrized with max(W, Wᵀ) and has no self loops, as in
// Zhou et al.; scikit-learn instead counts each row as its own neighbour and
// does not symmetrize, so its graph differs slightly for the same K.
//
// The zero value uses the defaults below. A LabelPropagation is not safe
// for concurrent use.
type LabelPropagation struct {
	// Alpha is the weight α of the neighbours' labels against the row's own
	// initial label. If zero, it defaults to 0.2. It must be in (0, 1).
	Alpha float64
	// K is the number of nearest neighbours linked to each row (before
	// symmetrization) and consulted for new rows. If zero, it defaults to 7.
	// It must be below the number of training rows.
	K int
	// Metric chooses the neighbours, Euclidean (the default) or Cosine.
	Metric Metric
	// MaxIter bounds the iterations. If zero, it defaults to 30.
	MaxIter int
	// Tol stops the iterations once Σ|F_t − F_{t−1}| < Tol. If zero, it
	// defaults to 1e-3 (scikit-learn's default).
	Tol float64

	ix      knnIndex
	s       *sparse.CSR // normalized graph S
	f       mat.Dense   // n×C row-normalized label distributions
	trans   []int
	classes int
	d       int
	iter    int
	fitted  bool

	k int // K used by Fit, kept for prediction

	idx  []int
	dist []float64
	row  []float64
}

func (lp *LabelPropagation) params() (alpha float64, k, maxIter int, tol float64) {
	alpha, k, maxIter, tol = lp.Alpha, lp.K, lp.MaxIter, lp.Tol
	if alpha == 0 {
		alpha = 0.2
	}
	if k == 0 {
		k = 7
	}
	if maxIter == 0 {
		maxIter = 30
	}
	if tol == 0 {
		tol = 1e-3
	}
	return
}

// Fit runs label spreading over the rows of x (n×D, labeled and unlabeled
// together) with labels y (length n, in [0, C) or −1 for unlabeled). It
// stores a copy of x for labeling new rows. It returns ErrNoLabels if no
// row is labeled, and an error if a parameter is out of range, K ≥ n,
// len(y) ≠ n, or x has a non-finite entry.
func (lp *LabelPropagation) Fit(x mat.Matrix, y []int) error {
	lp.fitted = false
	alpha, k, maxIter, tol := lp.params()
	switch {
	case !(alpha > 0 && alpha < 1):
		return fmt.Errorf("classify: Alpha %v outside (0, 1)", lp.Alpha)
	case k < 0:
		return fmt.Errorf("classify: negative K %d", lp.K)
	case maxIter < 0:
		return fmt.Errorf("classify: negative MaxIter %d", lp.MaxIter)
	case !(tol > 0):
		return fmt.Errorf("classify: Tol %v not positive", lp.Tol)
	}
	n, d := x.Dims()
	classes, _, err := checkLabels(n, y)
	if err != nil {
		return err
	}
	if k >= n {
		return fmt.Errorf("classify: K = %d needs more than %d samples", k, n)
	}
	if err := checkFinite(x); err != nil {
		return err
	}
	lp.ix.reset(x, lp.Metric)
	lp.idx = resizeInts(lp.idx, n*k)
	lp.dist = resizeFloats(lp.dist, n*k)
	lp.ix.search(lp.idx, lp.dist, &lp.ix.ref, k, true)
	lp.s = normalizedGraph(n, k, lp.idx)

	// Y is one-hot on labeled rows; ystatic = (1 − α) Y.
	var f, prev mat.Dense
	f.ReuseAs(n, classes)
	f.Zero()
	for i, c := range y {
		if c >= 0 {
			f.Set(i, c, 1)
		}
	}
	prev.ReuseAs(n, classes)
	prev.Zero()
	lp.iter = 0
	for lp.iter < maxIter && absDiffSum(&f, &prev) >= tol {
		prev.Copy(&f)
		lp.s.MulDenseTo(&f, &prev)
		f.Scale(alpha, &f)
		for i, c := range y {
			if c >= 0 {
				f.Set(i, c, f.At(i, c)+(1-alpha))
			}
		}
		lp.iter++
	}

	lp.f.Reset()
	lp.f.ReuseAs(n, classes)
	lp.f.Copy(&f)
	lp.trans = resizeInts(lp.trans, n)
	for i := range n {
		lp.trans[i], _ = normalizeArgmax(lp.f.RawRowView(i))
	}
	lp.classes, lp.d, lp.k, lp.fitted = classes, d, k, true
	return nil
}

// normalizedGraph returns S = D^{-1/2} W D^{-1/2} for the symmetrized 0-1
// kNN graph W = max(A, Aᵀ), where row i of A links i to idx[i*k:(i+1)*k].
func normalizedGraph(n, k int, idx []int) *sparse.CSR {
	adj := make([][]int, n)
	for i := range n {
		for _, j := range idx[i*k : (i+1)*k] {
			if j >= 0 {
				adj[i] = append(adj[i], j)
				adj[j] = append(adj[j], i)
			}
		}
	}
	indptr := make([]int, n+1)
	var ind []int
	deg := make([]float64, n)
	for i, a := range adj {
		slices.Sort(a)
		a = slices.Compact(a)
		adj[i] = a
		deg[i] = float64(len(a))
		ind = append(ind, a...)
		indptr[i+1] = len(ind)
	}
	val := make([]float64, len(ind))
	for i, a := range adj {
		for p, j := range a {
			val[indptr[i]+p] = 1 / math.Sqrt(deg[i]*deg[j])
		}
	}
	return sparse.NewCSR(n, n, indptr, ind, val)
}

func absDiffSum(a, b *mat.Dense) float64 {
	r, _ := a.Dims()
	var s float64
	for i := range r {
		br := b.RawRowView(i)
		for j, v := range a.RawRowView(i) {
			s += math.Abs(v - br[j])
		}
	}
	return s
}

// normalizeArgmax scales row to sum 1 and returns its arg max (first on
// ties) and maximum. A row summing to zero is left as is and gives −1, 0.
func normalizeArgmax(row []float64) (int, float64) {
	var s float64
	for _, v := range row {
		s += v
	}
	if !(s > 0) {
		return -1, 0
	}
	best := 0
	for j := range row {
		row[j] /= s
		if row[j] > row[best] {
			best = j
		}
	}
	return best, row[best]
}

// Classes returns C, one more than the largest label seen by Fit.
func (lp *LabelPropagation) Classes() int { return lp.classes }

// Iterations returns the number of iterations the last Fit ran.
func (lp *LabelPropagation) Iterations() int { return lp.iter }

// TransductionTo stores the label Fit assigned to each training row in dst
// and returns it: the arg max of its label distribution, or −1 for a row
// that no label reached (its connected component of the graph has no
// labeled row). A nil dst is allocated; a non-nil one must have length n.
// It panics if lp is not fitted.
func (lp *LabelPropagation) TransductionTo(dst []int) []int {
	if !lp.fitted {
		panic(ErrNotFitted)
	}
	dst = intsTo(dst, len(lp.trans))
	copy(dst, lp.trans)
	return dst
}

// LabelDistributionsTo stores the n×C label distributions of the training
// rows (rows sum to 1, or are zero when no label reached the row) into dst
// and returns it. An empty dst is resized; a non-empty one must be n×C. It
// panics if lp is not fitted.
func (lp *LabelPropagation) LabelDistributionsTo(dst *mat.Dense) *mat.Dense {
	if !lp.fitted {
		panic(ErrNotFitted)
	}
	if dst == nil {
		dst = &mat.Dense{}
	}
	if dst.IsEmpty() {
		dst.ReuseAs(lp.f.Dims())
	}
	if r, c := dst.Dims(); r != len(lp.trans) || c != lp.classes {
		panic(mat.ErrShape)
	}
	dst.Copy(&lp.f)
	return dst
}

// PredictTo labels new rows x (m×D): each row gets the arg max of the sum
// of the label distributions of its K nearest training rows. A nil dst is
// allocated; a non-nil one must have length m. A row with a non-finite
// entry, or whose neighbours carry no label mass, is predicted −1. It
// panics if lp is not fitted or x does not have D columns. To label the
// training rows themselves, use TransductionTo.
func (lp *LabelPropagation) PredictTo(dst []int, x mat.Matrix) []int {
	dst, _ = lp.PredictScoresTo(dst, nil, x)
	return dst
}

// PredictScoresTo is PredictTo that also stores the predicted label's share
// of the summed distribution, in (0, 1], in score (0 for rows predicted −1).
func (lp *LabelPropagation) PredictScoresTo(dst []int, score []float64, x mat.Matrix) ([]int, []float64) {
	if !lp.fitted {
		panic(ErrNotFitted)
	}
	checkDims(x, lp.d)
	k := lp.k
	m, _ := x.Dims()
	dst = intsTo(dst, m)
	score = floatsTo(score, m)
	lp.idx = resizeInts(lp.idx, m*k)
	lp.dist = resizeFloats(lp.dist, m*k)
	lp.ix.search(lp.idx, lp.dist, x, k, false)
	lp.row = resizeFloats(lp.row, lp.classes)
	row := lp.row
	for i := range m {
		clear(row)
		for _, j := range lp.idx[i*k : (i+1)*k] {
			if j < 0 {
				continue
			}
			for c, v := range lp.f.RawRowView(j) {
				row[c] += v
			}
		}
		dst[i], score[i] = normalizeArgmax(row)
	}
	return dst, score
}
