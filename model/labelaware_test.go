package model

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// lineData returns six 1-D samples 0, 1, 3, 6, 10, 15 with a constant
// second feature (so that D = 2), and labels 0, 0, 1, 1, 0, −1.
func lineData() (Data, []int) {
	xs := []float64{0, 1, 3, 6, 10, 15}
	x := mat.NewDense(len(xs), 2, nil)
	for i, v := range xs {
		x.Set(i, 0, v)
		x.Set(i, 1, 1)
	}
	return DenseRows(x), []int{0, 0, 1, 1, 0, -1}
}

// edges returns the undirected edges of a symmetric CSR with their weights.
func edges(s *sparse.CSR) map[[2]int]float64 {
	out := map[[2]int]float64{}
	n, _ := s.Dims()
	for i := 0; i < n; i++ {
		ind, val := s.Row(i)
		for p, j := range ind {
			if s.At(j, i) != val[p] {
				panic("asymmetric graph")
			}
			if i < j {
				out[[2]int{i, j}] = val[p]
			}
		}
	}
	return out
}

func checkEdges(t *testing.T, name string, got *sparse.CSR, want map[[2]int]float64) {
	t.Helper()
	g := edges(got)
	if len(g) != len(want) {
		t.Errorf("%s: got edges %v, want %v", name, g, want)
		return
	}
	for e, w := range want {
		if g[e] != w {
			t.Errorf("%s: got edges %v, want %v", name, g, want)
			return
		}
	}
}

// TestLabelGraphsByHand checks the label graphs on six points of a line,
// worked out by hand (squared distances between 0, 1, 3, 6, 10, 15).
func TestLabelGraphsByHand(t *testing.T) {
	x, y := lineData()
	ls, err := parseLabels(y, 6)
	if err != nil {
		t.Fatal(err)
	}
	ww, wb, err := intraInterGraphs(x, ls, 1, 1, graph.Euclidean)
	if err != nil {
		t.Fatal(err)
	}
	// Intra, k = 1: 0→1, 1→0, 4→1 (9 < 10), 2→3, 3→2.
	checkEdges(t, "intra", ww, map[[2]int]float64{{0, 1}: 1, {1, 4}: 1, {2, 3}: 1})
	// Inter, k = 1: 0→2, 1→2, 4→3, 2→1, 3→4 (16 < 25). Sample 5 is unlabeled.
	checkEdges(t, "inter", wb, map[[2]int]float64{{0, 2}: 1, {1, 2}: 1, {3, 4}: 1})

	w1, err := signedLabelGraph(x, ls, 1, 1, graph.Euclidean)
	if err != nil {
		t.Fatal(err)
	}
	checkEdges(t, "signed", w1, map[[2]int]float64{{0, 1}: 1, {1, 4}: 1, {2, 3}: 1, {0, 2}: -1, {1, 2}: -1, {3, 4}: -1})

	// MFA, k₁ = all same-class, k₂ = 2 shortest between-class pairs per
	// class: class 0 → (1,2)=4, (0,2)=9; class 1 → (2,1)=4, (2,0)=9.
	s, sp, err := mfaGraphs(x, ls, -1, 2, graph.Euclidean)
	if err != nil {
		t.Fatal(err)
	}
	checkEdges(t, "intrinsic", s, map[[2]int]float64{{0, 1}: 1, {0, 4}: 1, {1, 4}: 1, {2, 3}: 1})
	checkEdges(t, "penalty", sp, map[[2]int]float64{{1, 2}: 1, {0, 2}: 1})
	// k₂ = 3: class 0 adds (4,3)=16; class 1 adds (3,4)=16 too.
	_, sp, _ = mfaGraphs(x, ls, -1, 3, graph.Euclidean)
	checkEdges(t, "penalty k2=3", sp, map[[2]int]float64{{1, 2}: 1, {0, 2}: 1, {3, 4}: 1})

	// The same graphs from sparse rows.
	xs := SparseRows(sparse.FromDense(Rows(x)))
	ww2, wb2, err := intraInterGraphs(xs, ls, 1, 1, graph.Euclidean)
	if err != nil {
		t.Fatal(err)
	}
	checkEdges(t, "sparse intra", ww2, edges(ww))
	checkEdges(t, "sparse inter", wb2, edges(wb))
}

// denseTerm is a graph term for the dense reference: Weight·tr(V_bᵀ L V_b)
// on a column-normalized basis.
type denseTerm struct {
	w      float64
	s      *mat.Dense
	lo, hi int
	// dot drops the degree of the repelling edges (GraphTerm.DotRepulsion).
	dot bool
}

// termDegrees returns D⁺ and D⁻ of t's graph, the repelling one zero if
// t.dot.
func termDegrees(t denseTerm, sp, sn *mat.Dense) (dp, dn *mat.Dense) {
	dp, dn = degrees(sp), degrees(sn)
	if t.dot {
		if t.w < 0 {
			dp.Zero()
		} else {
			dn.Zero()
		}
	}
	return dp, dn
}

// refIteration is one iteration of the normalized-terms rule written with
// dense matrices straight from the papers (N²S²L eq. 20–21, 25, 35–36, 44;
// split into positive and negative parts entrywise).
func refIteration(x, u, v *mat.Dense, terms []denseTerm) {
	n, k := v.Dims()
	d, _ := u.Dims()
	// U rule: U ⊙ (XV + UY⁻) / (UVᵀV + UY⁺), Y± diagonal.
	var xv, vtv, uvtv mat.Dense
	xv.Mul(x, v)
	vtv.Mul(v.T(), v)
	uvtv.Mul(u, &vtv)
	yNeg, yPos := make([]float64, k), make([]float64, k)
	for _, t := range terms {
		sp, sn := posNegParts(t.s)
		dp, dn := termDegrees(t, sp, sn)
		rep := new(mat.Dense) // D⁺ + S⁻
		rep.Add(dp, sn)
		att := new(mat.Dense) // D⁻ + S⁺
		att.Add(dn, sp)
		if t.w < 0 {
			rep, att = att, rep
		}
		w := math.Abs(t.w)
		for c := t.lo; c < t.hi; c++ {
			vc := v.ColView(c)
			yPos[c] += w * mat.Inner(vc, rep, vc)
			yNeg[c] += w * mat.Inner(vc, att, vc)
		}
	}
	nu := mat.NewDense(d, k, nil)
	for i := 0; i < d; i++ {
		for c := 0; c < k; c++ {
			num := xv.At(i, c) + u.At(i, c)*yNeg[c]
			den := uvtv.At(i, c) + u.At(i, c)*yPos[c]
			nu.Set(i, c, u.At(i, c)*num/den)
		}
	}
	u.Copy(nu)
	// Normalize U, convey the norms to V.
	for c := 0; c < k; c++ {
		nrm := mat.Norm(u.ColView(c), 2)
		for i := 0; i < d; i++ {
			u.Set(i, c, u.At(i, c)/nrm)
		}
		for i := 0; i < n; i++ {
			v.Set(i, c, v.At(i, c)*nrm)
		}
	}
	// V rule: V ⊙ (XᵀU + Σ att·V_b) / (VUᵀU + Σ rep·V_b).
	var num, den, utu mat.Dense
	num.Mul(x.T(), u)
	utu.Mul(u.T(), u)
	den.Mul(v, &utu)
	for _, t := range terms {
		sp, sn := posNegParts(t.s)
		dp, dn := termDegrees(t, sp, sn)
		rep, att := new(mat.Dense), new(mat.Dense)
		rep.Add(dp, sn)
		att.Add(dn, sp)
		if t.w < 0 {
			rep, att = att, rep
		}
		w := math.Abs(t.w)
		vb := v.Slice(0, n, t.lo, t.hi)
		var rv, av mat.Dense
		rv.Mul(rep, vb)
		av.Mul(att, vb)
		for i := 0; i < n; i++ {
			for c := t.lo; c < t.hi; c++ {
				den.Set(i, c, den.At(i, c)+w*rv.At(i, c-t.lo))
				num.Set(i, c, num.At(i, c)+w*av.At(i, c-t.lo))
			}
		}
	}
	for i := 0; i < n; i++ {
		for c := 0; c < k; c++ {
			v.Set(i, c, v.At(i, c)*num.At(i, c)/den.At(i, c))
		}
	}
}

func posNegParts(s *mat.Dense) (p, q *mat.Dense) {
	r, c := s.Dims()
	p, q = mat.NewDense(r, c, nil), mat.NewDense(r, c, nil)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			if x := s.At(i, j); x > 0 {
				p.Set(i, j, x)
			} else {
				q.Set(i, j, -x)
			}
		}
	}
	return p, q
}

func degrees(s *mat.Dense) *mat.Dense {
	n, _ := s.Dims()
	d := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		d.Set(i, i, mat.Sum(s.RowView(i)))
	}
	return d
}

// smallProblem returns an 8-sample, 4-feature problem with two classes and
// two unlabeled samples.
func smallProblem() (*mat.Dense, []int) {
	x := mat.NewDense(8, 4, []float64{
		5, 1, 0, 1,
		4, 2, 1, 0,
		6, 1, 1, 1,
		1, 0, 5, 4,
		0, 1, 4, 5,
		1, 1, 6, 4,
		5, 2, 1, 1,
		1, 0, 5, 5,
	})
	return x, []int{0, 0, 0, 1, 1, 1, -1, -1}
}

// TestOneIterationByHand compares one Fit iteration of DGNMF, SSKNMF and
// N2S2L with the dense reference, from the same initialization.
func TestOneIterationByHand(t *testing.T) {
	xr, y := smallProblem()
	x := DenseRows(xr)
	const k = 3
	c := Common{Rank: k, MaxIter: 1, Tol: -1}
	dense := func(s *sparse.CSR) *mat.Dense { return s.ToDense() }
	cases := []struct {
		name  string
		m     Method
		terms func() []denseTerm
	}{
		{"dgnmf", &DGNMF{Common: c, Alpha: 0.5, Neighbors: 2}, nil},
		{"ssknmf", &SSKNMF{Common: c, Alpha: 0.5, Beta: 2, Neighbors: 2, LabelNeighbors: 1}, nil},
		{"n2s2l", &N2S2L{Common: c, Alpha: 0.5, Beta: 2, Neighbors: 2, PenaltyPairs: 2}, nil},
	}
	for _, tc := range cases {
		if err := tc.m.Fit(x, y); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var terms []denseTerm
		switch m := tc.m.(type) {
		case *DGNMF:
			ww, wb := m.Graphs()
			terms = []denseTerm{{0.5, dense(ww), 0, k, false}, {-0.5, dense(wb), 0, k, false}}
		case *SSKNMF:
			w1, w2 := m.Graphs()
			terms = []denseTerm{{0.5, dense(w1), 0, k, true}, {2, dense(w2), 0, k, false}}
		case *N2S2L:
			s, sp, ss := m.Graphs()
			q := m.DiscriminativeCols()
			if q != 2 {
				t.Fatalf("n2s2l: q = %d, want 2 classes", q)
			}
			terms = []denseTerm{{0.5, dense(s), 0, q, false}, {2, dense(ss), 0, q, false}, {0.5, dense(sp), q, k, false}}
		}
		u0, v0, err := Initialize(x, k, InitNNDSVDa, nil)
		if err != nil {
			t.Fatal(err)
		}
		NormalizeColumns(u0, v0)
		refIteration(mat.DenseCopyOf(xr.T()), u0, v0, terms)
		// Both sides compute the same sums in different orders: 1e-10
		// relative is far above rounding and far below any real mistake.
		if !mat.EqualApprox(tc.m.Basis(), u0, 1e-10) || !mat.EqualApprox(tc.m.Codes(), v0, 1e-10) {
			t.Errorf("%s: one iteration differs from the dense reference:\nU = %v\nwant %v\nV = %v\nwant %v", tc.name,
				mat.Formatted(tc.m.Basis()), mat.Formatted(u0), mat.Formatted(tc.m.Codes()), mat.Formatted(v0))
		}
	}
}

// TestNGEOneIterationByHand checks one NGE iteration against the dense
// formulas of the paper: the U rule with the exact diagonal, normalization,
// and v_c = (diag(k_c) + G_b)⁻¹ Xᵀu_c solved densely, then the reordering.
func TestNGEOneIterationByHand(t *testing.T) {
	xr, y := smallProblem()
	x := DenseRows(xr)
	const k = 3
	m := &NGE{Common: Common{Rank: k, MaxIter: 1, Tol: -1}, Alpha: 0.5, Beta: 2, Neighbors: 2, IntrinsicK: 1, PenaltyPairs: 2, InnerTol: 1e-14, InnerIter: 100}
	if err := m.Fit(x, y); err != nil {
		t.Fatal(err)
	}
	s, sp, ss := m.Graphs()
	d := m.EmbeddingDim()
	if d != 2 {
		t.Fatalf("d = %d, want 2", d)
	}
	g1 := mat.NewDense(8, 8, nil) // 0.5 L + 2 Lˢ
	g1.Add(laplacian(s.ToDense(), 0.5), laplacian(ss.ToDense(), 2))
	g2 := mat.NewDense(8, 8, nil) // 0.5 Lᵖ + 2 Lˢ
	g2.Add(laplacian(sp.ToDense(), 0.5), laplacian(ss.ToDense(), 2))

	u, v, err := Initialize(x, k, InitNNDSVDa, nil)
	if err != nil {
		t.Fatal(err)
	}
	NormalizeColumns(u, v)
	xt := mat.DenseCopyOf(xr.T())
	// U ← U ⊙ XV / (UVᵀV + U diag(c)), c_m = v_mᵀ G_b v_m.
	var xv, vtv, den mat.Dense
	xv.Mul(xt, v)
	vtv.Mul(v.T(), v)
	den.Mul(u, &vtv)
	for c := 0; c < k; c++ {
		g := g1
		if c >= d {
			g = g2
		}
		cc := mat.Inner(v.ColView(c), g, v.ColView(c))
		for i := 0; i < 4; i++ {
			u.Set(i, c, u.At(i, c)*xv.At(i, c)/(den.At(i, c)+u.At(i, c)*cc))
		}
	}
	NormalizeColumns(u, v)
	var xtu, utu, vutu mat.Dense
	xtu.Mul(xr, u)
	utu.Mul(u.T(), u)
	vutu.Mul(v, &utu)
	nv := mat.NewDense(8, k, nil)
	for c := 0; c < k; c++ {
		g := g1
		if c >= d {
			g = g2
		}
		mm := mat.DenseCopyOf(g)
		for j := 0; j < 8; j++ {
			mm.Set(j, j, mm.At(j, j)+vutu.At(j, c)/v.At(j, c))
		}
		var sol mat.VecDense
		if err := sol.SolveVec(mm, xtu.ColView(c)); err != nil {
			t.Fatal(err)
		}
		nv.SetCol(c, sol.RawVector().Data)
	}
	// Reorder: the d columns with the smallest v_cᵀ(G₁ − G₂)v_c first.
	delta := make([]float64, k)
	for c := range delta {
		delta[c] = mat.Inner(nv.ColView(c), g1, nv.ColView(c)) - mat.Inner(nv.ColView(c), g2, nv.ColView(c))
	}
	worst := 0 // k = 3, d = 2: the one column with the largest delta goes last
	for c := range delta {
		if delta[c] > delta[worst] {
			worst = c
		}
	}
	var perm []int
	for c := 0; c < k; c++ {
		if c != worst {
			perm = append(perm, c)
		}
	}
	perm = append(perm, worst)
	permuteCols(u, perm)
	permuteCols(nv, perm)
	// CG to 1e-14 relative residual on an 8×8 system: 1e-9 is ample.
	if !mat.EqualApprox(m.Basis(), u, 1e-9) || !mat.EqualApprox(m.Codes(), nv, 1e-9) {
		t.Errorf("NGE iteration differs from the dense reference:\nU = %v\nwant %v\nV = %v\nwant %v",
			mat.Formatted(m.Basis()), mat.Formatted(u), mat.Formatted(m.Codes()), mat.Formatted(nv))
	}
}

func laplacian(s *mat.Dense, w float64) *mat.Dense {
	n, _ := s.Dims()
	l := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			l.Set(i, j, -w*s.At(i, j))
		}
		l.Set(i, i, l.At(i, i)+w*mat.Sum(s.RowView(i)))
	}
	return l
}

// randomProblem returns n non-negative samples of dimension d with labels
// in [0, c) for the first l samples and −1 after.
func randomProblem(n, d, c, l int) (Data, []int) {
	rnd := rand.New(rand.NewPCG(1, 1))
	x := mat.NewDense(n, d, nil)
	y := make([]int, n)
	for i := 0; i < n; i++ {
		cls := i % c
		for j := 0; j < d; j++ {
			v := rnd.Float64()
			if j%c == cls { // a class-dependent block of larger features
				v += 2
			}
			x.Set(i, j, v)
		}
		y[i] = -1
		if i < l {
			y[i] = cls
		}
	}
	return DenseRows(x), y
}

// digitsSubset returns the first n samples of the digits' validation pool
// with the task's labels.
func digitsSubset(n int) (Data, []int) {
	task := newDigitsTask(10, 1, true)
	r, _ := task.train.Dims()
	n = min(n, r)
	return DenseRows(mat.DenseCopyOf(task.train.Slice(0, n, 0, 64))), task.trainY[:n]
}

// monotone fits m and reports the first iteration whose objective exceeds
// the previous one by more than rel (relative), or 0.
func monotone(t *testing.T, name string, m Method, x Data, y []int, rel float64, setCB func(func(Stats) bool)) {
	t.Helper()
	var prev []float64
	bad := 0
	setCB(func(s Stats) bool {
		if len(prev) > 0 && s.Objective > prev[len(prev)-1]+rel*math.Abs(prev[len(prev)-1]) && bad == 0 {
			bad = s.Iter
		}
		prev = append(prev, s.Objective)
		return true
	})
	if err := m.Fit(x, y); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if bad != 0 {
		t.Errorf("%s: objective rose at iteration %d: %.12g → %.12g", name, bad, prev[bad-2], prev[bad-1])
	}
	if len(prev) < 2 {
		t.Errorf("%s: only %d iterations", name, len(prev))
	}
	checkNonNeg(t, name+" U", m.Basis())
	checkNonNeg(t, name+" V", m.Codes())
}

func checkNonNeg(t *testing.T, name string, a *mat.Dense) {
	t.Helper()
	r, c := a.Dims()
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			if v := a.At(i, j); v < 0 || math.IsNaN(v) {
				t.Fatalf("%s[%d,%d] = %g", name, i, j, v)
			}
		}
	}
}

// TestObjectiveMonotone checks that the objective never rises where it is
// proved (N²S²L eq. 25/44, NGE Theorem 3) and where it holds at the
// default α (DGNMF, SSKNMF: bounded objective, see their docs), on random
// data and on 400 digits, and that U, V ≥ 0.
func TestObjectiveMonotone(t *testing.T) {
	// Each update is a ratio of sums of products; 1e-10 relative allows
	// for rounding in objectives of size ~1e5 and nothing more.
	const rel = 1e-10
	rx, ry := randomProblem(60, 12, 3, 15)
	dx, dy := digitsSubset(400)
	for _, p := range []struct {
		name string
		x    Data
		y    []int
		k    int
	}{{"random", rx, ry, 6}, {"digits", dx, dy, 20}} {
		c := Common{Rank: p.k, MaxIter: 60, Tol: -1}
		n2 := &N2S2L{Common: c}
		monotone(t, p.name+" n2s2l", n2, p.x, p.y, rel, func(f func(Stats) bool) { n2.Callback = f })
		ng := &NGE{Common: c, Beta: -1, InnerTol: 1e-10}
		monotone(t, p.name+" nge (paper)", ng, p.x, p.y, rel, func(f func(Stats) bool) { ng.Callback = f })
		ngb := &NGE{Common: c} // default: smoothness, inexact CG solves
		monotone(t, p.name+" nge+smooth", ngb, p.x, p.y, rel, func(f func(Stats) bool) { ngb.Callback = f })
		dg := &DGNMF{Common: c}
		monotone(t, p.name+" dgnmf", dg, p.x, p.y, rel, func(f func(Stats) bool) { dg.Callback = f })
		ss := &SSKNMF{Common: c}
		monotone(t, p.name+" ssknmf", ss, p.x, p.y, rel, func(f func(Stats) bool) { ss.Callback = f })
	}
}

// TestNGEMMatrix checks Theorem 1 of the NGE paper on the matrices the
// V step solves: positive diagonal, non-positive off-diagonal entries,
// strict diagonal dominance (so M is a non-singular M-matrix), symmetry,
// and, on a small case, a non-negative inverse.
func TestNGEMMatrix(t *testing.T) {
	check := func(name string, m *NGE, x Data, y []int, dense bool) {
		t.Helper()
		if err := m.Fit(x, y); err != nil {
			t.Fatal(err)
		}
		u, v := m.Basis(), m.Codes()
		var utu, vutu mat.Dense
		utu.Mul(u.T(), u)
		vutu.Mul(v, &utu)
		n, k := v.Dims()
		for c := 0; c < k; c++ {
			mm := m.blocks[blockOf(c, m.d)]
			kk := make([]float64, n)
			for j := range kk {
				kk[j] = vutu.At(j, c) / max(v.At(j, c), math.SmallestNonzeroFloat64)
			}
			mm.setK(kk)
			for i := 0; i < n; i++ {
				ind, val := mm.off.Row(i)
				var off float64
				for p, j := range ind {
					if j == i || val[p] < 0 {
						t.Fatalf("%s: column %d: O[%d,%d] = %g (diagonal or negative)", name, c, i, j, val[p])
					}
					if mm.off.At(j, i) != val[p] {
						t.Fatalf("%s: O not symmetric at (%d, %d)", name, i, j)
					}
					off += val[p]
				}
				if !(mm.diag[i] > off) {
					t.Fatalf("%s: column %d row %d: diagonal %g not above off-diagonal sum %g", name, c, i, mm.diag[i], off)
				}
			}
			if dense {
				var inv mat.Dense
				if err := inv.Inverse(mm.Dense()); err != nil {
					t.Fatal(err)
				}
				r, _ := inv.Dims()
				for i := 0; i < r; i++ {
					for j := 0; j < r; j++ {
						// The inverse is ≥ 0 exactly; 1e-12 covers rounding of
						// entries that are tiny positive numbers.
						if inv.At(i, j) < -1e-12 {
							t.Fatalf("%s: (M⁻¹)[%d,%d] = %g < 0", name, i, j, inv.At(i, j))
						}
					}
				}
			}
		}
	}
	xr, y := smallProblem()
	check("small", &NGE{Common: Common{Rank: 3, MaxIter: 5}, Beta: 2, Neighbors: 2, IntrinsicK: 1, PenaltyPairs: 2}, DenseRows(xr), y, true)
	dx, dy := digitsSubset(400)
	check("digits", &NGE{Common: Common{Rank: 20, MaxIter: 5}, Beta: 100}, dx, dy, false)
}

// TestBadInput checks that wrong labels and hyperparameters give errors,
// not panics, and that the documented fallbacks run.
func TestLabelAwareBadInput(t *testing.T) {
	xr, y := smallProblem()
	x := DenseRows(xr)
	c := Common{Rank: 3, MaxIter: 5}
	methods := func() map[string]Method {
		return map[string]Method{
			"dgnmf":  &DGNMF{Common: c, Neighbors: 2},
			"ssknmf": &SSKNMF{Common: c, Neighbors: 2},
			"n2s2l":  &N2S2L{Common: c, Neighbors: 2},
			"nge":    &NGE{Common: c},
			"dpca":   &DPCA{Rank: 3},
		}
	}
	for name, m := range methods() {
		if err := m.Fit(x, y[:5]); err == nil {
			t.Errorf("%s: no error for 5 labels and 8 samples", name)
		}
		bad := append([]int(nil), y...)
		bad[2] = -2
		if err := m.Fit(x, bad); err == nil {
			t.Errorf("%s: no error for label −2", name)
		}
	}
	none := make([]int, 8)
	for i := range none {
		none[i] = -1
	}
	for _, name := range []string{"dgnmf", "nge"} {
		if err := methods()[name].Fit(x, none); !errors.Is(err, ErrNoLabels) {
			t.Errorf("%s: no labels: got %v, want ErrNoLabels", name, err)
		}
	}
	// Semi-supervised methods run without labels: SSKNMF is then GNMF,
	// N2S2L needs Q, DPCA is PCA.
	if err := methods()["ssknmf"].Fit(x, none); err != nil {
		t.Errorf("ssknmf without labels: %v", err)
	}
	if err := (&N2S2L{Common: c, Neighbors: 2}).Fit(x, none); err == nil {
		t.Errorf("n2s2l without labels and Q: no error")
	}
	if err := (&N2S2L{Common: c, Neighbors: 2, Q: 1}).Fit(x, none); err != nil {
		t.Errorf("n2s2l without labels, Q = 1: %v", err)
	}
	if err := methods()["dpca"].Fit(x, nil); err != nil {
		t.Errorf("dpca without labels: %v", err)
	}
	// q ≥ K.
	if err := (&N2S2L{Common: c, Q: 3}).Fit(x, y); err == nil {
		t.Errorf("n2s2l: no error for q = K")
	}
	if err := (&NGE{Common: c, Dim: 4}).Fit(x, y); err == nil {
		t.Errorf("nge: no error for d > K")
	}
	// Two classes at rank 2: q = 2 = K.
	if err := (&N2S2L{Common: Common{Rank: 2}}).Fit(x, y); err == nil {
		t.Errorf("n2s2l: no error for default q = classes = K")
	}
	// A class with one labeled sample has no intra-class edges: documented
	// fallback, the fit runs.
	one := append([]int(nil), y...)
	one[6] = 2
	c.Rank = 4 // three classes need K > 3 for N2S2L and NGE
	for name, m := range methods() {
		if err := m.Fit(x, one); err != nil {
			t.Errorf("%s: class with one sample: %v", name, err)
		}
	}
	// Negative hyperparameters.
	if err := (&DGNMF{Common: c, Alpha: -1}).Fit(x, y); err == nil {
		t.Errorf("dgnmf: no error for α < 0")
	}
	// DPCA constraints contradicting labels, out of range.
	if err := (&DPCA{Rank: 2, MustLink: [][2]int{{0, 3}}}).Fit(x, y); err == nil {
		t.Errorf("dpca: no error for a must-link across classes")
	}
	if err := (&DPCA{Rank: 2, CannotLink: [][2]int{{0, 9}}}).Fit(x, y); err == nil {
		t.Errorf("dpca: no error for a pair out of range")
	}
	if err := (&DPCA{Rank: 5}).Fit(x, y); err == nil {
		t.Errorf("dpca: no error for rank > D")
	}
}
