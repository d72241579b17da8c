package model

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/sparse"
)

// DPCA is discriminant principal component analysis with partial
// supervision (Sun and Zhang, "A New Discriminant Principal Component
// Analysis Method with Partial Supervision", Neural Processing Letters 30,
// 2009). It is a linear, closed-form baseline, not a factorization: the
// projection W (D×K) holds the K leading eigenvectors of
//
//	S_B − η S_W + λ S_T        (eq. 11)
//
// where S_T is the covariance of all samples, S_B the mean scatter
// (x_i − x_j)(x_i − x_j)ᵀ over the pairs of labeled samples of different
// classes together with the cannot-link pairs, and S_W the same over the
// pairs of the same class together with the must-link pairs (eq. 9–10).
// A sample's code is Wᵀx (the paper does not center), so codes may be
// negative; Basis returns W and Codes the codes of the training samples,
// so that DPCA can stand in for a Method where classification only needs
// codes. With no labels and no pairs, DPCA is PCA without centering the
// codes.
//
// DPCA needs the dense D×D scatter matrices and their eigendecomposition:
// it suits image-sized D (it returns an error above MaxDim), not large
// vocabularies. It is not safe for concurrent use.
type DPCA struct {
	// Rank is K, the number of projection directions, in [1, D].
	Rank int
	// Eta is η, the weight of the within-class scatter. If zero, it
	// defaults to 1 (the paper picks η from {0.1, 1, 10}). Use a negative
	// value for η = 0.
	Eta float64
	// Lambda is λ, the weight of the total scatter (PCA). If zero, it
	// defaults to 1 (the paper picks λ from {0.1, 1, 10}). Use a negative
	// value for λ = 0.
	Lambda float64
	// MustLink and CannotLink are pairwise constraints between samples
	// (indices into the data given to Fit), in addition to the labels. A
	// constraint that contradicts two labels is an error.
	MustLink, CannotLink [][2]int
	// MaxDim bounds D. If zero, it defaults to 4096 (a 128 MiB scatter).
	MaxDim int

	fitted
}

var _ Method = (*DPCA)(nil)

// Fit computes W from x, labels (one per sample, −1 = unlabeled, nil for
// none) and the pairwise constraints, and the codes of x.
func (m *DPCA) Fit(x Data, labels []int) error {
	m.ok = false
	if err := Validate(x); err != nil {
		return err
	}
	d, n := x.Dims()
	if m.Rank < 1 || m.Rank > d {
		return fmt.Errorf("model: DPCA: rank %d out of range [1, D=%d]", m.Rank, d)
	}
	if d > orDefaultInt(m.MaxDim, 4096) {
		return fmt.Errorf("model: DPCA: D = %d exceeds MaxDim = %d (the scatter is D×D)", d, orDefaultInt(m.MaxDim, 4096))
	}
	ls, err := parseLabels(labels, n)
	if err != nil {
		return err
	}
	rows, err := sampleRows(x)
	if err != nil {
		return err
	}
	lab := func(i int) int {
		if labels == nil {
			return -1
		}
		return labels[i]
	}

	// Total scatter S_T = (1/n) Σ x xᵀ − μ μᵀ.
	st := mat.NewSymDense(d, nil)
	mean := make([]float64, d)
	for i := 0; i < n; i++ {
		rows.addOuter(st, i, 1/float64(n))
		rows.addTo(mean, i, 1/float64(n))
	}
	st.SymRankOne(st, -1, mat.NewVecDense(d, mean))

	// Labeled pairs: Σ_{i<j ∈ P} (x_i − x_j)(x_i − x_j)ᵀ = |P| Σ x xᵀ − s sᵀ.
	groupScatter := func(ids []int) *mat.SymDense {
		a := mat.NewSymDense(d, nil)
		s := make([]float64, d)
		for _, i := range ids {
			rows.addOuter(a, i, float64(len(ids)))
			rows.addTo(s, i, 1)
		}
		a.SymRankOne(a, -1, mat.NewVecDense(d, s))
		return a
	}
	sAll := groupScatter(ls.ids)
	byClass := map[int][]int{}
	for t, i := range ls.ids {
		byClass[ls.y[t]] = append(byClass[ls.y[t]], i)
	}
	sw := mat.NewSymDense(d, nil)
	var nw int
	for _, ids := range byClass {
		sw.AddSym(sw, groupScatter(ids))
		nw += len(ids) * (len(ids) - 1) / 2
	}
	sb := mat.NewSymDense(d, nil)
	sb.AddSym(sAll, scaledSym(sw, -1))
	l := len(ls.ids)
	nb := l*(l-1)/2 - nw

	// Pairwise constraints not already implied by two labels.
	seen := map[[2]int]bool{}
	diff := make([]float64, d)
	addPairs := func(pairs [][2]int, dst *mat.SymDense, count *int, must bool) error {
		for _, p := range pairs {
			i, j := p[0], p[1]
			if i < 0 || j < 0 || i >= n || j >= n || i == j {
				return fmt.Errorf("model: DPCA: bad constraint pair (%d, %d) for %d samples", i, j, n)
			}
			if i > j {
				i, j = j, i
			}
			if yi, yj := lab(i), lab(j); yi >= 0 && yj >= 0 {
				if (yi == yj) != must {
					return fmt.Errorf("model: DPCA: constraint (%d, %d) contradicts labels %d and %d", i, j, yi, yj)
				}
				continue // already in Ω_W or Ω_B
			}
			key := [2]int{i, j}
			if seen[key] {
				continue
			}
			seen[key] = true
			clear(diff)
			rows.addTo(diff, i, 1)
			rows.addTo(diff, j, -1)
			dst.SymRankOne(dst, 1, mat.NewVecDense(d, diff))
			*count++
		}
		return nil
	}
	if err := addPairs(m.MustLink, sw, &nw, true); err != nil {
		return err
	}
	if err := addPairs(m.CannotLink, sb, &nb, false); err != nil {
		return err
	}

	eta, lambda := dpcaWeight(m.Eta), dpcaWeight(m.Lambda)
	obj := mat.NewSymDense(d, nil)
	obj.AddSym(obj, scaledSym(st, lambda))
	if nb > 0 {
		obj.AddSym(obj, scaledSym(sb, 1/float64(nb)))
	}
	if nw > 0 {
		obj.AddSym(obj, scaledSym(sw, -eta/float64(nw)))
	}
	var eig mat.EigenSym
	if !eig.Factorize(obj, true) {
		return fmt.Errorf("model: DPCA: eigendecomposition failed")
	}
	var vecs mat.Dense
	eig.VectorsTo(&vecs) // ascending eigenvalues
	k := m.Rank
	reuseAs(&m.u, d, k)
	for c := 0; c < k; c++ {
		src := d - 1 - c
		// Fix the sign: the entry of largest magnitude is positive.
		var big float64
		for r := 0; r < d; r++ {
			if x := vecs.At(r, src); math.Abs(x) > math.Abs(big) {
				big = x
			}
		}
		s := 1.0
		if big < 0 {
			s = -1
		}
		for r := 0; r < d; r++ {
			m.u.Set(r, c, s*vecs.At(r, src))
		}
	}
	m.v.Reset()
	x.TMulTo(&m.v, &m.u)
	m.res = Result{}
	if err := CheckFinite("DPCA basis", &m.u); err != nil {
		return err
	}
	if err := CheckFinite("DPCA codes", &m.v); err != nil {
		return err
	}
	m.ok = true
	return nil
}

// TransformTo stores the codes Xᵀ W (N×K) of x's samples into dst, which
// must be empty or N×K. It returns ErrNotFitted before a successful Fit.
func (m *DPCA) TransformTo(dst *mat.Dense, x Data) error {
	if !m.ok {
		return ErrNotFitted
	}
	d, n := x.Dims()
	if wd, _ := m.u.Dims(); wd != d {
		return fmt.Errorf("model: DPCA: data has %d features, projection has %d", d, wd)
	}
	if !dst.IsEmpty() {
		if r, c := dst.Dims(); r != n || c != m.Rank {
			panic(mat.ErrShape)
		}
	}
	x.TMulTo(dst, &m.u)
	return nil
}

func dpcaWeight(w float64) float64 {
	switch {
	case w == 0:
		return 1
	case w < 0:
		return 0
	}
	return w
}

func scaledSym(a *mat.SymDense, s float64) *mat.SymDense {
	var b mat.SymDense
	b.ScaleSym(s, a)
	return &b
}

// rowAccess reads sample rows of dense or sparse data.
type rowAccess struct {
	dense *mat.Dense
	sp    *sparse.CSR
	buf   []float64
}

func sampleRows(x Data) (*rowAccess, error) {
	switch r := Rows(x).(type) {
	case *mat.Dense:
		return &rowAccess{dense: r}, nil
	case *sparse.CSR:
		return &rowAccess{sp: r}, nil
	}
	return nil, fmt.Errorf("model: need DenseRows or SparseRows data, got %T", x)
}

// addTo adds s·x_i to dst.
func (r *rowAccess) addTo(dst []float64, i int, s float64) {
	if r.dense != nil {
		for j, v := range r.dense.RawRowView(i) {
			dst[j] += s * v
		}
		return
	}
	ind, val := r.sp.Row(i)
	for p, j := range ind {
		dst[j] += s * val[p]
	}
}

// addOuter adds s·x_i x_iᵀ to a.
func (r *rowAccess) addOuter(a *mat.SymDense, i int, s float64) {
	if r.dense != nil {
		a.SymRankOne(a, s, mat.NewVecDense(len(r.dense.RawRowView(i)), r.dense.RawRowView(i)))
		return
	}
	ind, val := r.sp.Row(i)
	for p, j := range ind {
		for q := p; q < len(ind); q++ {
			k := ind[q]
			a.SetSym(j, k, a.At(j, k)+s*val[p]*val[q])
		}
	}
}
