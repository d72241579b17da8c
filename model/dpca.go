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
// Two forms solve the same eigenproblem (Form). The primal form builds the
// D×D scatter matrices and suits image-sized D. The Gram form works in
// the span of the samples: with A the N×D data (one sample per row), every
// scatter matrix above is AᵀMA for an N×N matrix M (S_T: M = I/N − 11ᵀ/N²;
// a pair (i, j): (e_i − e_j)(e_i − e_j)ᵀ), so with the Gram matrix
// AAᵀ = PΛPᵀ (r positive eigenvalues) and A = PΛ^½Qᵀ, the objective is
// Q(Λ^½PᵀMPΛ^½)Qᵀ: its eigenvectors with non-zero eigenvalues are Q times
// those of the r×r middle matrix, and W = AᵀPΛ^{−½}Z is formed without any
// D×D matrix (the kernel trick of kernel PCA, Schölkopf, Smola and Müller,
// "Nonlinear component analysis as a kernel eigenvalue problem", Neural
// Computation 10, 1998, with a linear kernel). It suits large vocabularies
// (sparse TF-IDF) with up to a few thousand samples. Both give the same W
// up to rounding, except that where the primal form would take directions
// of eigenvalue 0 outside the samples' span (which code every training
// sample as 0) ahead of negative eigenvalues, the Gram form keeps to the
// span; K must then not exceed the rank r of the data.
//
// DPCA is not safe for concurrent use.
type DPCA struct {
	// Rank is K, the number of projection directions, in [1, D] (the
	// Gram form: in [1, r], r ≤ min(N, D) the rank of the data).
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
	// Form chooses the primal (D×D) or the Gram (N×N) form. The zero
	// value, DPCAAuto, takes the Gram form when N < D.
	Form DPCAForm
	// MaxDim bounds the order of the eigenproblem: D in the primal form,
	// N in the Gram form. If zero, it defaults to 4096 (a 128 MiB
	// matrix); Fit returns an error above it.
	MaxDim int

	fitted
	form DPCAForm // the form of the last Fit
}

// DPCAForm chooses how DPCA solves its eigenproblem.
type DPCAForm int

const (
	// DPCAAuto takes the Gram form when there are fewer samples than
	// features (N < D), else the primal form.
	DPCAAuto DPCAForm = iota
	// DPCAPrimal builds the D×D scatter matrices.
	DPCAPrimal
	// DPCAGram works with N×N matrices in the span of the samples.
	DPCAGram
)

// String returns "auto", "primal" or "gram".
func (f DPCAForm) String() string {
	switch f {
	case DPCAAuto:
		return "auto"
	case DPCAPrimal:
		return "primal"
	case DPCAGram:
		return "gram"
	}
	return fmt.Sprintf("DPCAForm(%d)", int(f))
}

var _ Method = (*DPCA)(nil)

// FittedForm returns the form the last successful Fit used (DPCAPrimal or
// DPCAGram). It panics with ErrNotFitted before one.
func (m *DPCA) FittedForm() DPCAForm {
	if !m.ok {
		panic(ErrNotFitted)
	}
	return m.form
}

// dpcaScatter describes the scatter matrices of eq. 9–11 by the sample
// sets they sum over: each is a sum of group scatters
// |P| Σ_{i∈P} x_i x_iᵀ − s_P s_Pᵀ (s_P = Σ_{i∈P} x_i, all the pairs of P)
// and pair scatters (x_i − x_j)(x_i − x_j)ᵀ.
type dpcaScatter struct {
	all            []int   // the labeled samples: S_B's groups are all minus within
	classes        [][]int // one group per class: S_W
	must, cannot   [][2]int
	nb, nw         int     // pairs in S_B and S_W
	eta, lambda, n float64 // weights and sample count
}

// scatter collects the constraint structure of x's n samples.
func (m *DPCA) scatter(n int, labels []int) (*dpcaScatter, error) {
	ls, err := parseLabels(labels, n)
	if err != nil {
		return nil, err
	}
	lab := func(i int) int {
		if labels == nil {
			return -1
		}
		return labels[i]
	}
	sc := &dpcaScatter{all: ls.ids, eta: dpcaWeight(m.Eta), lambda: dpcaWeight(m.Lambda), n: float64(n)}
	byClass := map[int][]int{}
	var order []int
	for t, i := range ls.ids {
		if _, ok := byClass[ls.y[t]]; !ok {
			order = append(order, ls.y[t])
		}
		byClass[ls.y[t]] = append(byClass[ls.y[t]], i)
	}
	for _, c := range order {
		ids := byClass[c]
		sc.classes = append(sc.classes, ids)
		sc.nw += len(ids) * (len(ids) - 1) / 2
	}
	l := len(ls.ids)
	sc.nb = l*(l-1)/2 - sc.nw

	// Pairwise constraints not already implied by two labels.
	seen := map[[2]int]bool{}
	keep := func(pairs [][2]int, must bool) ([][2]int, error) {
		var out [][2]int
		for _, p := range pairs {
			i, j := p[0], p[1]
			if i < 0 || j < 0 || i >= n || j >= n || i == j {
				return nil, fmt.Errorf("model: DPCA: bad constraint pair (%d, %d) for %d samples", i, j, n)
			}
			if i > j {
				i, j = j, i
			}
			if yi, yj := lab(i), lab(j); yi >= 0 && yj >= 0 {
				if (yi == yj) != must {
					return nil, fmt.Errorf("model: DPCA: constraint (%d, %d) contradicts labels %d and %d", i, j, yi, yj)
				}
				continue // already in Ω_W or Ω_B
			}
			key := [2]int{i, j}
			if seen[key] {
				continue
			}
			seen[key] = true
			out = append(out, key)
		}
		return out, nil
	}
	if sc.must, err = keep(m.MustLink, true); err != nil {
		return nil, err
	}
	if sc.cannot, err = keep(m.CannotLink, false); err != nil {
		return nil, err
	}
	sc.nw += len(sc.must)
	sc.nb += len(sc.cannot)
	return sc, nil
}

// weights returns the factors of S_B and S_W in eq. 11: 1/|Ω_B| and
// −η/|Ω_W| (zero for an empty set).
func (sc *dpcaScatter) weights() (wb, ww float64) {
	if sc.nb > 0 {
		wb = 1 / float64(sc.nb)
	}
	if sc.nw > 0 {
		ww = -sc.eta / float64(sc.nw)
	}
	return wb, ww
}

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
	form := m.Form
	if form == DPCAAuto {
		form = DPCAPrimal
		if n < d {
			form = DPCAGram
		}
	}
	maxDim := orDefaultInt(m.MaxDim, 4096)
	switch {
	case form == DPCAPrimal && d > maxDim:
		return fmt.Errorf("model: DPCA: D = %d exceeds MaxDim = %d (the primal form's scatter is D×D; the Gram form's N×N)", d, maxDim)
	case form == DPCAGram && n > maxDim:
		return fmt.Errorf("model: DPCA: N = %d exceeds MaxDim = %d (the Gram form's matrices are N×N; the primal form's D×D)", n, maxDim)
	}
	sc, err := m.scatter(n, labels)
	if err != nil {
		return err
	}
	rows, err := sampleRows(x)
	if err != nil {
		return err
	}
	reuseAs(&m.u, d, m.Rank)
	if form == DPCAGram {
		err = m.fitGram(rows, d, n, sc)
	} else {
		err = m.fitPrimal(rows, d, n, sc)
	}
	if err != nil {
		return err
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
	m.form = form
	m.ok = true
	return nil
}

// fitPrimal stores into m.u the K leading eigenvectors of the D×D
// objective matrix.
func (m *DPCA) fitPrimal(rows *rowAccess, d, n int, sc *dpcaScatter) error {
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
	sAll := groupScatter(sc.all)
	sw := mat.NewSymDense(d, nil)
	for _, ids := range sc.classes {
		sw.AddSym(sw, groupScatter(ids))
	}
	sb := mat.NewSymDense(d, nil)
	sb.AddSym(sAll, scaledSym(sw, -1))
	diff := make([]float64, d)
	addPairs := func(pairs [][2]int, dst *mat.SymDense) {
		for _, p := range pairs {
			clear(diff)
			rows.addTo(diff, p[0], 1)
			rows.addTo(diff, p[1], -1)
			dst.SymRankOne(dst, 1, mat.NewVecDense(d, diff))
		}
	}
	addPairs(sc.must, sw)
	addPairs(sc.cannot, sb)

	wb, ww := sc.weights()
	obj := mat.NewSymDense(d, nil)
	obj.AddSym(obj, scaledSym(st, sc.lambda))
	if wb != 0 {
		obj.AddSym(obj, scaledSym(sb, wb))
	}
	if ww != 0 {
		obj.AddSym(obj, scaledSym(sw, ww))
	}
	var eig mat.EigenSym
	if !eig.Factorize(obj, true) {
		return fmt.Errorf("model: DPCA: eigendecomposition failed")
	}
	var vecs mat.Dense
	eig.VectorsTo(&vecs) // ascending eigenvalues
	for c := 0; c < m.Rank; c++ {
		setSignedCol(&m.u, c, vecs.ColView(d-1-c))
	}
	return nil
}

// setSignedCol stores ±src into column c of dst, the sign chosen so that
// the entry of largest magnitude is positive (the first one on a tie).
func setSignedCol(dst *mat.Dense, c int, src mat.Vector) {
	var big float64
	for r := 0; r < src.Len(); r++ {
		if x := src.AtVec(r); math.Abs(x) > math.Abs(big) {
			big = x
		}
	}
	s := 1.0
	if big < 0 {
		s = -1
	}
	for r := 0; r < src.Len(); r++ {
		dst.Set(r, c, s*src.AtVec(r))
	}
}

// dpcaRankTol is the relative size, against the largest, below which an
// eigenvalue of the Gram matrix counts as zero: a few hundred machine
// epsilons per sample, the rounding of a Gram matrix's entries.
const dpcaRankTol = 1e-12

// fitGram stores into m.u the K leading eigenvectors of the objective
// matrix, solved in the span of the samples (see DPCA).
func (m *DPCA) fitGram(rows *rowAccess, d, n int, sc *dpcaScatter) error {
	// G = AAᵀ (N×N).
	g := rows.gram(n, d)
	var ge mat.EigenSym
	if !ge.Factorize(g, true) {
		return fmt.Errorf("model: DPCA: eigendecomposition of the Gram matrix failed")
	}
	lam := ge.Values(nil) // ascending
	var p mat.Dense
	ge.VectorsTo(&p)
	top := lam[n-1]
	var keep []int // eigenpairs kept, descending
	for i := n - 1; i >= 0 && lam[i] > dpcaRankTol*float64(n)*top; i-- {
		keep = append(keep, i)
	}
	r := len(keep)
	if m.Rank > r {
		return fmt.Errorf("model: DPCA: rank %d exceeds the rank %d of the data (the Gram form works in the span of the samples)", m.Rank, r)
	}
	// B = P_r Λ^½ (N×r), so that A = BQᵀ with Q orthonormal.
	b := mat.NewDense(n, r, nil)
	for c, i := range keep {
		s := math.Sqrt(lam[i])
		for j := 0; j < n; j++ {
			b.Set(j, c, p.At(j, i)*s)
		}
	}
	mm := sc.gramWeights(n)
	var mb, t mat.Dense
	mb.Mul(mm, b)
	t.Mul(b.T(), &mb)
	tsym := mat.NewSymDense(r, nil)
	for i := 0; i < r; i++ {
		for j := i; j < r; j++ {
			tsym.SetSym(i, j, (t.At(i, j)+t.At(j, i))/2) // symmetric up to rounding
		}
	}
	var te mat.EigenSym
	if !te.Factorize(tsym, true) {
		return fmt.Errorf("model: DPCA: eigendecomposition failed")
	}
	var z mat.Dense
	te.VectorsTo(&z) // ascending eigenvalues
	// W = Q Z_K = AᵀP_rΛ^{−½}Z_K: the coefficients C = P_rΛ^{−½}Z_K (N×K)
	// of W's columns on the samples.
	cf := mat.NewDense(n, m.Rank, nil)
	for c := 0; c < m.Rank; c++ {
		zc := z.ColView(r - 1 - c)
		for j := 0; j < n; j++ {
			var s float64
			for q, i := range keep {
				s += p.At(j, i) / math.Sqrt(lam[i]) * zc.AtVec(q)
			}
			cf.Set(j, c, s)
		}
	}
	w := mat.NewDense(d, m.Rank, nil)
	rows.tMulTo(w, cf)
	for c := 0; c < m.Rank; c++ {
		setSignedCol(&m.u, c, w.ColView(c))
	}
	return nil
}

// gramWeights returns the N×N matrix M of eq. 11 with S_T, S_B and S_W
// written as AᵀMA.
func (sc *dpcaScatter) gramWeights(n int) *mat.Dense {
	mm := mat.NewDense(n, n, nil)
	// S_T: λ(I/N − 11ᵀ/N²).
	c := sc.lambda / (sc.n * sc.n)
	for i := 0; i < n; i++ {
		row := mm.RawRowView(i)
		for j := range row {
			row[j] = -c
		}
		row[i] += sc.lambda / sc.n
	}
	// A group P's pairs, with weight s: s(|P| diag(1_P) − 1_P1_Pᵀ).
	group := func(ids []int, s float64) {
		for _, i := range ids {
			mm.Set(i, i, mm.At(i, i)+s*float64(len(ids)))
			for _, j := range ids {
				mm.Set(i, j, mm.At(i, j)-s)
			}
		}
	}
	pair := func(i, j int, s float64) {
		mm.Set(i, i, mm.At(i, i)+s)
		mm.Set(j, j, mm.At(j, j)+s)
		mm.Set(i, j, mm.At(i, j)-s)
		mm.Set(j, i, mm.At(j, i)-s)
	}
	wb, ww := sc.weights()
	// S_B = (all labeled pairs − within-class pairs) + cannot-link pairs.
	group(sc.all, wb)
	for _, ids := range sc.classes {
		group(ids, ww-wb)
	}
	for _, p := range sc.must {
		pair(p[0], p[1], ww)
	}
	for _, p := range sc.cannot {
		pair(p[0], p[1], wb)
	}
	return mm
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

// gram returns AAᵀ (n×n) for the n×d rows A: for sparse rows, each row
// is scattered into a d-vector once and dotted with the rows before it,
// O(n·nnz) with one d-vector of workspace.
func (r *rowAccess) gram(n, d int) *mat.SymDense {
	g := mat.NewSymDense(n, nil)
	if r.dense != nil {
		g.SymOuterK(1, r.dense)
		return g
	}
	buf := make([]float64, d)
	for i := 0; i < n; i++ {
		ind, val := r.sp.Row(i)
		for p, j := range ind {
			buf[j] = val[p]
		}
		for j := 0; j <= i; j++ {
			jd, jv := r.sp.Row(j)
			var s float64
			for q, c := range jd {
				s += buf[c] * jv[q]
			}
			g.SetSym(j, i, s)
		}
		for _, j := range ind {
			buf[j] = 0
		}
	}
	return g
}

// tMulTo stores Aᵀc (d×k) into dst for the n×d rows A and c (n×k).
func (r *rowAccess) tMulTo(dst *mat.Dense, c *mat.Dense) {
	if r.dense != nil {
		dst.Mul(r.dense.T(), c)
		return
	}
	r.sp.TMulDenseTo(dst, c)
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
