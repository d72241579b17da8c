package model

import (
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/datasets"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// bruteKNN returns the symmetric 0-1 k-NN graph (max(W, Wᵀ)) of x's rows
// by brute force: the reference that keeps these tests independent of
// the graph package.
func bruteKNN(x *mat.Dense, k int) *sparse.CSR {
	n, _ := x.Dims()
	b := sparse.NewBuilder(n, n)
	seen := make(map[[2]int]bool)
	for i := 0; i < n; i++ {
		type nd struct {
			j int
			d float64
		}
		var c []nd
		for j := 0; j < n; j++ {
			if j != i {
				c = append(c, nd{j, floatsDist2(x.RawRowView(i), x.RawRowView(j))})
			}
		}
		sort.Slice(c, func(a, b int) bool {
			if c[a].d != c[b].d {
				return c[a].d < c[b].d
			}
			return c[a].j < c[b].j
		})
		for _, e := range c[:k] {
			for _, p := range [][2]int{{i, e.j}, {e.j, i}} {
				if !seen[p] {
					seen[p] = true
					b.Add(p[0], p[1], 1)
				}
			}
		}
	}
	return b.CSR()
}

func floatsDist2(a, b []float64) float64 {
	var s float64
	for i := range a {
		d := a[i] - b[i]
		s += d * d
	}
	return s
}

func randomSparse(n, d int, density float64, src rand.Source) *sparse.CSR {
	rnd := rand.New(src)
	m := sparse.Zeros(0, d)
	for i := 0; i < n; i++ {
		var ind []int
		var val []float64
		for j := 0; j < d; j++ {
			if rnd.Float64() < density {
				ind = append(ind, j)
				val = append(val, rnd.Float64())
			}
		}
		if len(ind) == 0 { // keep every sample non-empty
			ind, val = []int{rnd.IntN(d)}, []float64{1}
		}
		m.AppendRow(ind, val)
	}
	return m
}

// TestHandWorked checks one iteration on a 3×2 problem against values
// worked out by hand (see the comments), with and without a graph term.
func TestHandWorked(t *testing.T) {
	// X (D×N = 3×2) has samples (1,3,5) and (2,4,6).
	xr := mat.NewDense(2, 3, []float64{1, 3, 5, 2, 4, 6})
	for _, tc := range []struct {
		name  string
		terms []Term
		wantU []float64
		wantV []float64
	}{
		{
			// U-step: XV = (3,7,11), U·VᵀV = (2,2,2) → U = (1.5, 3.5, 5.5).
			// V-step: XᵀU = (39.5, 50), V·UᵀU = 44.75 → V = (39.5, 50)/44.75.
			name:  "nmf",
			wantU: []float64{1.5, 3.5, 5.5},
			wantV: []float64{39.5 / 44.75, 50 / 44.75},
		},
		{
			// S = [[0,1],[1,0]], α = 1: neg += SV = (1,1), pos += DV = (1,1).
			name:  "graph",
			terms: []Term{&GraphTerm{Weight: 1, S: sparse.FromDense(mat.NewDense(2, 2, []float64{0, 1, 1, 0}))}},
			wantU: []float64{1.5, 3.5, 5.5},
			wantV: []float64{40.5 / 45.75, 51 / 45.75},
		},
		{
			// A repelling term swaps the sides: neg += DV, pos += SV: same
			// numbers here since V = (1,1) makes SV = DV.
			name:  "repel",
			terms: []Term{&GraphTerm{Weight: -1, S: sparse.FromDense(mat.NewDense(2, 2, []float64{0, 1, 1, 0}))}},
			wantU: []float64{1.5, 3.5, 5.5},
			wantV: []float64{40.5 / 45.75, 51 / 45.75},
		},
	} {
		u := mat.NewDense(3, 1, []float64{1, 1, 1})
		v := mat.NewDense(2, 1, []float64{1, 1})
		e := Engine{Loss: NewFrobenius(DenseRows(xr)), Terms: tc.terms, MaxIter: 1, Tol: -1}
		if _, err := e.Run(u, v); err != nil {
			t.Fatal(err)
		}
		const tol = 1e-14 // a handful of roundings on numbers of order 1
		if !floatsEqual(u.RawMatrix().Data, tc.wantU, tol) || !floatsEqual(v.RawMatrix().Data, tc.wantV, tol) {
			t.Errorf("%s: got U=%v V=%v, want U=%v V=%v", tc.name, u.RawMatrix().Data, v.RawMatrix().Data, tc.wantU, tc.wantV)
		}
		// The engine's objective must equal the dense formula.
		var r mat.Dense
		r.Mul(u, v.T())
		r.Sub(xr.T(), &r)
		want := mat.Norm(&r, 2) * mat.Norm(&r, 2)
		for _, term := range tc.terms {
			g := term.(*GraphTerm)
			l := mat.NewDense(2, 2, []float64{1, -1, -1, 1})
			var lv, vlv mat.Dense
			lv.Mul(l, v)
			vlv.Mul(v.T(), &lv)
			want += g.Weight * mat.Trace(&vlv)
		}
		if got := e.Objective(u, v, nil); math.Abs(got-want) > 1e-12*want {
			t.Errorf("%s: objective %v, want %v", tc.name, got, want)
		}
	}
}

func floatsEqual(a, b []float64, tol float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > tol {
			return false
		}
	}
	return true
}

// checkRun runs e from (u, v) and fails if the objective ever rises by more
// than a relative 1e-9 (rounding in ‖X‖² − 2tr(·) + tr(·)), or if U or V
// has a negative entry.
func checkRun(t *testing.T, name string, e *Engine, u, v *mat.Dense) {
	t.Helper()
	const rel = 1e-9
	prev := e.Objective(u, v, nil)
	first := prev
	e.Callback = func(s Stats) bool {
		if s.Objective > prev*(1+rel) {
			t.Errorf("%s: objective rose at iteration %d: %.12g → %.12g", name, s.Iter, prev, s.Objective)
		}
		prev = s.Objective
		return true
	}
	if _, err := e.Run(u, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if !(prev < first) {
		t.Errorf("%s: objective did not decrease: %g → %g", name, first, prev)
	}
	for _, m := range []*mat.Dense{u, v} {
		for _, x := range m.RawMatrix().Data {
			if x < 0 || math.IsNaN(x) {
				t.Fatalf("%s: factor entry %v is not ≥ 0", name, x)
			}
		}
	}
}

func TestMonotoneDigits(t *testing.T) {
	x, _ := datasets.Digits()
	data := DenseRows(x)
	s := bruteKNN(x, 5)
	for _, tc := range []struct {
		name  string
		terms []Term
	}{
		{"nmf", nil},
		{"gnmf", []Term{&GraphTerm{Weight: 10, S: s}}},
		{"gnmf-block", []Term{&GraphTerm{Weight: 100, S: s, Lo: 3, Hi: 12}}},
	} {
		u, v, err := Initialize(data, 20, InitRandom, rand.NewPCG(1, 1))
		if err != nil {
			t.Fatal(err)
		}
		e := &Engine{Loss: NewFrobenius(data), Terms: tc.terms, MaxIter: 60, Tol: -1}
		checkRun(t, tc.name, e, u, v)
	}
}

func TestMonotoneSparse(t *testing.T) {
	xs := randomSparse(300, 500, 0.02, rand.NewPCG(1, 1))
	data := SparseRows(xs)
	s := bruteKNN(xs.ToDense(), 4)
	for _, tc := range []struct {
		name  string
		terms []Term
	}{
		{"nmf", nil},
		{"gnmf", []Term{&GraphTerm{Weight: 1, S: s}}},
	} {
		for _, init := range []Init{InitRandom, InitNNDSVDa} {
			u, v, err := Initialize(data, 10, init, rand.NewPCG(1, 1))
			if err != nil {
				t.Fatal(err)
			}
			e := &Engine{Loss: NewFrobenius(data), Terms: tc.terms, MaxIter: 50, Tol: -1}
			checkRun(t, tc.name+"/"+init.String(), e, u, v)
		}
	}
}

// TestDenseSparseAgree fits the same data stored dense and as CSR.
func TestDenseSparseAgree(t *testing.T) {
	xs := randomSparse(120, 80, 0.1, rand.NewPCG(2, 2))
	xd := xs.ToDense()
	s := bruteKNN(xd, 3)
	fit := func(data Data) (*mat.Dense, *mat.Dense) {
		u, v, err := Initialize(data, 6, InitRandom, rand.NewPCG(1, 1))
		if err != nil {
			t.Fatal(err)
		}
		e := Engine{Loss: NewFrobenius(data), Terms: []Term{&GraphTerm{Weight: 0.5, S: s}}, MaxIter: 100, Tol: -1}
		if _, err := e.Run(u, v); err != nil {
			t.Fatal(err)
		}
		return u, v
	}
	ud, vd := fit(DenseRows(xd))
	us, vs := fit(SparseRows(xs))
	// Both paths sum the same products in different orders; 100 iterations
	// amplify that rounding only mildly.
	const tol = 1e-9
	if !mat.EqualApprox(ud, us, tol) || !mat.EqualApprox(vd, vs, tol) {
		var d mat.Dense
		d.Sub(ud, us)
		t.Errorf("dense and sparse factorizations differ: max |ΔU| = %g", mat.Max(&d))
	}
}

// TestReproducible checks that a fixed seed reproduces a fit bit for bit.
func TestReproducible(t *testing.T) {
	x, _ := datasets.Digits()
	fit := func() *NMF {
		m := &NMF{Common: Common{Rank: 10, MaxIter: 30, Init: InitRandom, Src: rand.NewPCG(7, 7)}}
		if err := m.Fit(DenseRows(x), nil); err != nil {
			t.Fatal(err)
		}
		return m
	}
	a, b := fit(), fit()
	if !mat.Equal(a.Basis(), b.Basis()) || !mat.Equal(a.Codes(), b.Codes()) {
		t.Error("two fits with the same seed differ")
	}
}

// TestFirstBadAgrees checks Validate's fast scan against checkEntry, entry
// by entry: the same entries refused (−0 and the largest finite value
// accepted), and the first of several found.
func TestFirstBadAgrees(t *testing.T) {
	vals := []float64{0, math.Copysign(0, -1), 1e-300, 1, math.MaxFloat64, -1e-300, -1, math.Inf(1), math.Inf(-1), math.NaN()}
	for _, v := range vals {
		got := firstBad([]float64{1, v}) == 1
		if want := checkEntry(v, 0, 1) != nil; got != want {
			t.Errorf("%g: firstBad refuses %v, checkEntry %v", v, got, want)
		}
	}
	if j := firstBad([]float64{1, 2, math.NaN(), -1}); j != 2 {
		t.Errorf("firstBad found %d, want the first bad entry, 2", j)
	}
	if j := firstBad(nil); j != -1 {
		t.Errorf("firstBad(nil) = %d, want -1", j)
	}
}

func TestBadInput(t *testing.T) {
	good := mat.NewDense(4, 3, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3})
	bad := func(i, j int, v float64) *mat.Dense {
		m := mat.DenseCopyOf(good)
		m.Set(i, j, v)
		return m
	}
	for _, tc := range []struct {
		name string
		x    Data
		rank int
		want string
	}{
		{"negative", DenseRows(bad(2, 1, -1)), 2, "negative entry -1 at sample 2, feature 1"},
		{"nan", DenseRows(bad(1, 0, math.NaN())), 2, "NaN at sample 1, feature 0"},
		{"inf", DenseRows(bad(3, 2, math.Inf(1))), 2, "infinite entry at sample 3, feature 2"},
		{"sparse negative", SparseRows(sparse.FromDense(bad(0, 2, -3))), 2, "negative entry -3 at sample 0, feature 2"},
		{"minus inf", DenseRows(bad(0, 1, math.Inf(-1))), 2, "infinite entry at sample 0, feature 1"},
		{"sparse nan", SparseRows(sparse.FromDense(bad(2, 2, math.NaN()))), 2, "NaN at sample 2, feature 2"},
		{"above MaxValue", DenseRows(bad(1, 1, 1e200)), 2, "entry 1e+200 at sample 1, feature 1 is above 1e+60"},
		{"sparse above MaxValue", SparseRows(sparse.FromDense(bad(3, 0, 1e61))), 2, "entry 1e+61 at sample 3, feature 0 is above 1e+60"},
		{"rank zero", DenseRows(good), 0, "rank 0 out of range"},
		{"rank too big", DenseRows(good), 4, "rank 4 out of range"},
		{"empty", SparseRows(sparse.Zeros(0, 3)), 1, "empty data"},
	} {
		m := &NMF{Common: Common{Rank: tc.rank}}
		err := m.Fit(tc.x, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

func TestNormalizeColumns(t *testing.T) {
	u := mat.NewDense(2, 2, []float64{3, 0, 4, 2})
	v := mat.NewDense(3, 2, []float64{1, 1, 2, 2, 3, 3})
	var before, after mat.Dense
	before.Mul(u, v.T())
	NormalizeColumns(u, v)
	after.Mul(u, v.T())
	if !mat.EqualApprox(&before, &after, 1e-14) {
		t.Error("UVᵀ changed under normalization")
	}
	for j := 0; j < 2; j++ {
		if n := mat.Norm(u.ColView(j), 2); math.Abs(n-1) > 1e-15 {
			t.Errorf("column %d has norm %v", j, n)
		}
	}
}

// randomSignedGraph returns a symmetric n×n graph: deg draws of a
// neighbour per node (a draw of the node itself adds nothing, duplicates
// sum), each edge's weight uniform in [0, 1) and negated with probability
// 1/negOneIn (never when negOneIn is 0).
func randomSignedGraph(rnd *rand.Rand, n, deg, negOneIn int) *sparse.CSR {
	b := sparse.NewBuilder(n, n)
	for i := range n {
		for range deg {
			j := rnd.IntN(n)
			if j == i {
				continue
			}
			w := rnd.Float64()
			if negOneIn > 0 && rnd.IntN(negOneIn) == 0 {
				w = -w
			}
			b.Add(i, j, w)
			b.Add(j, i, w)
		}
	}
	return b.CSR()
}

// TestGraphTermTiled checks the product over all rows against the
// row-by-row one (AddVGradRows with every row listed) on a signed graph
// large enough to be tiled: the gradient bit for bit (vec.SumRows's
// blocks of rows against its single rows with AVX-512, the tiles against
// the CSR loop without), the objective (through the tiles) against
// ½Σ S_ij‖v_i − v_j‖² computed directly.
func TestGraphTermTiled(t *testing.T) {
	const n, k = 5000, 20
	rnd := rand.New(rand.NewPCG(9, 9))
	s := randomSignedGraph(rnd, n, 6, 4)
	v := mat.NewDense(n, k, nil)
	for i := range v.RawMatrix().Data {
		v.RawMatrix().Data[i] = rnd.Float64()
	}
	for _, term := range []*GraphTerm{{Weight: 0.7, S: s}, {Weight: -0.3, S: s, Lo: 5, Hi: 15}} {
		if !term.tiled(n, term.width(k)) {
			t.Fatalf("%d×%d is not tiled: the test needs a larger V", n, k)
		}
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		negT, posT := mat.NewDense(n, k, nil), mat.NewDense(n, k, nil)
		negR, posR := mat.NewDense(n, k, nil), mat.NewDense(n, k, nil)
		term.AddVGrad(negT, posT, v)
		term.AddVGradRows(negR, posR, v, all)
		if !mat.Equal(negT, negR) || !mat.Equal(posT, posR) {
			t.Errorf("weight %g: tiled gradient differs from the CSR loop", term.Weight)
		}
		lo, hi := term.Lo, term.width(k)+term.Lo
		var want float64
		for i := range n {
			ind, val := s.Row(i)
			for p, j := range ind {
				var d float64
				for c := lo; c < hi; c++ {
					x := v.At(i, c) - v.At(j, c)
					d += x * x
				}
				want += val[p] * d / 2
			}
		}
		want *= term.Weight
		if got := term.Value(v); math.Abs(got-want) > 1e-10*math.Abs(want) {
			t.Errorf("weight %g: tiled objective %.15g, direct %.15g", term.Weight, got, want)
		}
	}
}
