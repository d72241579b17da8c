package classify

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/splittest"
	"github.com/nmfstream/nmfstream/pipeline"
)

// TestKernelRidgeSolution checks the exact fit against the closed form
// scores K(x, X)(K + λI)⁻¹Y solved densely, and that the
// subset-of-regressors path with every row a centre gives the same scores.
func TestKernelRidgeSolution(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 1))
	x, y := blobs(rnd, 3, 10, 4)
	y[4] = -1 // skipped
	q := randDense(rnd, 5, 4)
	kr := KernelRidge{Gamma: 1, Lambda: 0.1}
	if err := kr.Fit(x, y); err != nil {
		t.Fatal(err)
	}
	got := kr.DecisionTo(nil, q)

	// Dense reference on the 29 labeled rows.
	var lab []int
	for i, v := range y {
		if v >= 0 {
			lab = append(lab, i)
		}
	}
	n := len(lab)
	var s2 float64 // mean squared distance over all ordered pairs
	for _, i := range lab {
		for _, j := range lab {
			s2 += sqDist(x.RawRowView(i), x.RawRowView(j))
		}
	}
	s2 /= float64(n * n)
	g := 1 / s2
	k := mat.NewDense(n, n, nil)
	yy := mat.NewDense(n, 3, nil)
	for a, i := range lab {
		yy.Set(a, y[i], 1)
		for b, j := range lab {
			v := math.Exp(-g * sqDist(x.RawRowView(i), x.RawRowView(j)))
			if a == b {
				v += 0.1
			}
			k.Set(a, b, v)
		}
	}
	var alpha mat.Dense
	if err := alpha.Solve(k, yy); err != nil {
		t.Fatal(err)
	}
	kq := mat.NewDense(5, n, nil)
	for r := range 5 {
		for b, j := range lab {
			kq.Set(r, b, math.Exp(-g*sqDist(q.RawRowView(r), x.RawRowView(j))))
		}
	}
	var want mat.Dense
	want.Mul(kq, &alpha)
	// Cholesky against LU on a system with condition number below 1e3:
	// agreement to 1e-9 leaves room for rounding and catches any slip in
	// the kernel width or the ridge.
	if !mat.EqualApprox(got, &want, 1e-9) {
		t.Errorf("scores\n%v\nwant\n%v", mat.Formatted(got), mat.Formatted(&want))
	}
	// Subset of regressors with all rows as centres solves the same
	// problem through the normal equations, whose squared condition number
	// costs digits: 1e-6.
	sor := KernelRidge{Gamma: 1, Lambda: 0.1, MaxRows: n}
	x2 := mat.DenseCopyOf(x)
	y2 := slices.Clone(y)
	y2[4] = 0 // one more row than MaxRows forces the approximation
	if err := sor.Fit(x2, y2); err != nil {
		t.Fatal(err)
	}
	if m, _ := sor.centres.Dims(); m != n {
		t.Fatalf("%d centres, want %d", m, n)
	}
	pe, ps := kr.PredictTo(nil, x), sor.PredictTo(nil, x)
	if a := accuracy(ps, pe); a < 0.99 {
		t.Errorf("subset of regressors agrees with the exact fit on %.3f of the rows", a)
	}
}

func sqDist(a, b []float64) float64 {
	var s float64
	for i, v := range a {
		s += (v - b[i]) * (v - b[i])
	}
	return s
}

func TestKernelRidgeBlobs(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 1))
	x, y := blobs(rnd, 4, 40, 5)
	var kr KernelRidge
	if err := kr.Fit(x, y); err != nil {
		t.Fatal(err)
	}
	pred, score := kr.PredictScoresTo(nil, nil, x)
	if a := accuracy(pred, y); a != 1 {
		t.Errorf("training accuracy on separable blobs %.4f, want 1", a)
	}
	for i, s := range score {
		// A training row's own score is near its one-hot target 1.
		if !(s > 0.5 && s < 1.5) {
			t.Fatalf("row %d: score %v", i, s)
		}
	}
	// Scale invariance: the width follows the data.
	xs := mat.NewDense(160, 5, nil)
	xs.Scale(1000, x)
	var ks KernelRidge
	if err := ks.Fit(xs, y); err != nil {
		t.Fatal(err)
	}
	if !mat.EqualApprox(kr.DecisionTo(nil, x), ks.DecisionTo(nil, xs), 1e-8) {
		t.Error("scores change when the features are scaled by 1000")
	}
	// Far from every training row the scores fall to 0; a NaN row is −1.
	far := mat.NewDense(2, 5, []float64{1e3, 1e3, 1e3, 1e3, 1e3, math.NaN(), 0, 0, 0, 0})
	p, s := kr.PredictScoresTo(nil, nil, far)
	if math.Abs(s[0]) > 1e-6 || p[1] != -1 || s[1] != 0 {
		t.Errorf("far row score %v, NaN row (%d, %v)", s[0], p[1], s[1])
	}
	// Subset of regressors with a quarter of the rows as centres.
	sor := KernelRidge{MaxRows: 40}
	if err := sor.Fit(x, y); err != nil {
		t.Fatal(err)
	}
	if a := accuracy(sor.PredictTo(nil, x), y); a != 1 {
		t.Errorf("subset of regressors: training accuracy %.4f, want 1", a)
	}
}

// TestKernelSelfTraining: two labels per blob label the rest of each blob,
// given labels never change, and a wrong given label stays as given.
func TestKernelSelfTraining(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 1))
	x, truth := blobs(rnd, 3, 30, 3)
	y := make([]int, len(truth))
	for i := range y {
		y[i] = -1
		if i < 6 {
			y[i] = truth[i]
		}
	}
	y[6] = (truth[6] + 1) % 3 // a wrong given label
	var st KernelSelfTraining
	if err := st.Fit(x, y); err != nil {
		t.Fatal(err)
	}
	// Each class takes ⌊83/3⌋ = 27 rows: classes 1 and 2 have 28
	// unlabeled rows each, so one row of each stays unlabeled.
	unl := 0
	for i, v := range st.Labels() {
		want := truth[i]
		if i == 6 {
			want = y[6]
		}
		if v < 0 {
			unl++
		} else if v != want {
			t.Errorf("row %d labeled %d, want %d", i, v, want)
		}
	}
	if unl != 2 {
		t.Errorf("%d rows left unlabeled, want 2", unl)
	}
	if a := accuracy(st.PredictTo(nil, x), truth); a < 0.98 {
		t.Errorf("prediction accuracy %.3f on the blobs", a)
	}
	// Share 0.5 leaves about half of the unlabeled rows unlabeled.
	half := KernelSelfTraining{Share: 0.5}
	if err := half.Fit(x, y); err != nil {
		t.Fatal(err)
	}
	unl = 0
	for _, v := range half.Labels() {
		if v < 0 {
			unl++
		}
	}
	if unl != 83-3*13 {
		t.Errorf("share 0.5: %d of 83 unlabeled rows left unlabeled, want 83 − 3·⌊0.5·83/3⌋ = 44", unl)
	}
}

func TestKernelErrors(t *testing.T) {
	x := mat.NewDense(3, 2, []float64{0, 1, 2, 3, 4, 5})
	for name, f := range (fits{
		"KernelRidge":        (&KernelRidge{}).Fit,
		"KernelSelfTraining": (&KernelSelfTraining{}).Fit,
	}).withX(x) {
		if err := f([]int{-1, -1, -1}); !errors.Is(err, ErrNoLabels) {
			t.Errorf("%s with no labels: %v, want ErrNoLabels", name, err)
		}
		if err := f([]int{0, 1}); err == nil {
			t.Errorf("%s with 2 labels for 3 rows: no error", name)
		}
		if err := f([]int{0, -2, 1}); err == nil {
			t.Errorf("%s with label −2: no error", name)
		}
	}
	y := []int{0, 1, -1}
	for _, kr := range []KernelRidge{{Gamma: -1}, {Lambda: -1}, {MaxRows: -1}, {Gamma: math.Inf(1)}} {
		if err := kr.Fit(x, y); err == nil {
			t.Errorf("%+v: no error", kr)
		}
	}
	for _, st := range []KernelSelfTraining{{Rounds: -1}, {Share: 2}, {Share: -0.5}} {
		if err := st.Fit(x, y); err == nil {
			t.Errorf("Rounds %d Share %g: no error", st.Rounds, st.Share)
		}
	}
	bad := mat.NewDense(2, 1, []float64{0, math.NaN()})
	if err := (&KernelRidge{}).Fit(bad, []int{0, 1}); err == nil {
		t.Error("KernelRidge NaN: no error")
	}
	var kr KernelRidge
	if err := kr.Fit(x, y); err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]func(){
		"not fitted":     func() { (&KernelRidge{}).PredictTo(nil, x) },
		"labels":         func() { (&KernelSelfTraining{}).Labels() },
		"feature count":  func() { kr.PredictTo(nil, mat.NewDense(1, 3, nil)) },
		"decision shape": func() { kr.DecisionTo(mat.NewDense(3, 3, nil), x) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// TestMargin checks Margin on cases worked by hand: the best class and its
// lead over the runner-up, the first of equals, a single class.
func TestMargin(t *testing.T) {
	for _, c := range []struct {
		scores []float64
		best   int
		lead   float64
	}{
		{[]float64{0.1, 0.7, 0.3}, 1, 0.4},
		{[]float64{0.9, 0.2, 0.5}, 0, 0.4},
		{[]float64{-1, -3, -2}, 0, 1},
		{[]float64{0.5, 0.5, 0.1}, 0, 0},
		{[]float64{2}, 0, 2},
	} {
		best, lead := Margin(c.scores)
		if best != c.best || math.Abs(lead-c.lead) > 1e-12 {
			t.Errorf("Margin(%v) = %d, %g; want %d, %g", c.scores, best, lead, c.best, c.lead)
		}
	}
}

// TestKernelGram checks gramAdd, summed over two blocks of rows as Fit
// sums them, against kᵀk multiplied densely, and the kernel's products
// against a dense x·Cᵀ, on shapes that are not multiples of the kernels'
// tiles and on a row slice (a stride wider than its columns), as Fit's and
// PredictScoresTo's blocks are.
func TestKernelGram(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 3))
	for _, sh := range [][2]int{{1, 1}, {37, 23}, {301, 130}, {40, 600}} {
		k := randDense(rnd, sh[0], sh[1])
		var want mat.Dense
		want.Mul(k.T(), k)
		got := mat.NewSymDense(sh[1], nil)
		half := sh[0] / 2
		gramAdd(got, k.Slice(0, half, 0, sh[1]).(*mat.Dense), nil)
		gramAdd(got, k.Slice(half, sh[0], 0, sh[1]).(*mat.Dense), splittest.Reverse)
		for i := range sh[1] {
			for j := range sh[1] {
				if d := math.Abs(got.At(i, j) - want.At(i, j)); d > 1e-10*(1+math.Abs(want.At(i, j))) {
					t.Fatalf("%d×%d: gram(%d, %d) = %g, want %g", sh[0], sh[1], i, j, got.At(i, j), want.At(i, j))
				}
			}
		}
	}
	x, y := blobs(rnd, 3, 40, 9)
	kr := KernelRidge{MaxRows: 50}
	if err := kr.Fit(x, y); err != nil {
		t.Fatal(err)
	}
	rows := x.Slice(5, 77, 0, 9).(*mat.Dense)
	got := kr.kernel(nil, rows, rowSqNorms(rows))
	for i := range 72 {
		for j := range 50 {
			d := 0.0
			for c := range 9 {
				v := rows.At(i, c) - kr.centres.At(j, c)
				d += v * v
			}
			if want := math.Exp(-kr.gamma * d); math.Abs(got.At(i, j)-want) > 1e-12 {
				t.Fatalf("k(row %d, centre %d) = %g, want %g", i, j, got.At(i, j), want)
			}
		}
	}
}

// BenchmarkKernelGram times the subset-of-regressors fit's largest product,
// K_XCᵀ K_XC for 4,000 rows and 1,500 centres: gramAdd (internal/gemm's
// kernels with gonum's BLAS) against gonum's SymOuterK (Dsyrk).
func BenchmarkKernelGram(b *testing.B) {
	k := randDense(rand.New(rand.NewPCG(1, 1)), 4000, 1500)
	b.Run("gramAdd", func(b *testing.B) {
		for b.Loop() {
			gramAdd(mat.NewSymDense(1500, nil), k, nil)
		}
	})
	b.Run("SymOuterK", func(b *testing.B) {
		for b.Loop() {
			s := mat.NewSymDense(1500, nil)
			s.SymOuterK(1, k.T())
		}
	})
}

// TestCholSolve checks cholSolve against mat.Cholesky on random symmetric
// positive definite systems whose sizes straddle potrf's blocks, and that
// an indefinite matrix is refused.
func TestCholSolve(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 5))
	for _, m := range []int{1, 7, cholBlock, cholBlock + 1, 2*cholBlock + 37, 600} {
		s := mat.NewSymDense(m, nil)
		gramAdd(s, randDense(rnd, m+3, m), nil)
		for i := range m {
			s.SetSym(i, i, s.At(i, i)+0.1)
		}
		b := randDense(rnd, m, 3)
		var ch mat.Cholesky
		if !ch.Factorize(s) {
			t.Fatalf("m = %d: mat.Cholesky refused the system", m)
		}
		var want, got mat.Dense
		if err := ch.SolveTo(&want, b); err != nil {
			t.Fatal(err)
		}
		split := splittest.Reverse
		if m%2 == 0 {
			split = nil
		}
		if ok, err := cholSolve(&got, s, b, split); !ok || err != nil {
			t.Fatalf("m = %d: cholSolve ok %v, err %v", m, ok, err)
		}
		if !mat.EqualApprox(&got, &want, 1e-8) {
			t.Errorf("m = %d: cholSolve's solution differs from mat.Cholesky's by up to %g", m, maxAbsDiff(&got, &want))
		}
	}
	s := mat.NewSymDense(300, nil)
	for i := range 300 {
		s.SetSym(i, i, 1)
	}
	s.SetSym(250, 250, -1) // indefinite in a later block
	var x mat.Dense
	if ok, _ := cholSolve(&x, s, mat.NewDense(300, 1, nil), nil); ok {
		t.Error("cholSolve accepted an indefinite matrix")
	}
}

func maxAbsDiff(a, b *mat.Dense) float64 {
	var d mat.Dense
	d.Sub(a, b)
	return math.Max(mat.Max(&d), -mat.Min(&d))
}

// BenchmarkCholSolve times the kernel system's solve for 1,500 centres
// and 10 classes: cholSolve (potrf) against mat.Cholesky.
func BenchmarkCholSolve(b *testing.B) {
	rnd := rand.New(rand.NewPCG(1, 1))
	s := mat.NewSymDense(1500, nil)
	gramAdd(s, randDense(rnd, 1600, 1500), nil)
	for i := range 1500 {
		s.SetSym(i, i, s.At(i, i)+0.1)
	}
	rhs := randDense(rnd, 1500, 10)
	b.Run("cholSolve", func(b *testing.B) {
		var x mat.Dense
		for b.Loop() {
			c := mat.NewSymDense(1500, nil)
			c.CopySym(s)
			x.Reset()
			cholSolve(&x, c, rhs, nil)
		}
	})
	b.Run("mat.Cholesky", func(b *testing.B) {
		var x mat.Dense
		for b.Loop() {
			var ch mat.Cholesky
			ch.Factorize(s)
			ch.SolveTo(&x, rhs)
		}
	})
}

// TestKernelRidgeBlocks checks the subset-of-regressors fit, whose normal
// equations Fit sums over blocks of normalBlock rows, against the same
// equations built from the whole K_XC at once, on more labeled rows than
// two blocks hold.
func TestKernelRidgeBlocks(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 7))
	x, y := blobs(rnd, 3, normalBlock+300, 3)
	y[10] = -1 // skipped
	kr := KernelRidge{Gamma: 1, Lambda: 0.1, MaxRows: 40}
	if err := kr.Fit(x, y); err != nil {
		t.Fatal(err)
	}
	var xl mat.Dense
	lab := labeledRows(&xl, nil, x, y, len(y)-1)
	n := len(lab)
	kxc := kr.kernel(nil, &xl, rowSqNorms(&xl))
	kcc := kr.kernel(nil, &kr.centres, kr.sq)
	yl := mat.NewDense(n, 3, nil)
	for i, c := range lab {
		yl.Set(i, c, 1)
	}
	var lhs, rhs, want mat.Dense
	lhs.Mul(kxc.T(), kxc)
	var tr float64
	for i := range 40 {
		tr += lhs.At(i, i)
	}
	lhs.Add(&lhs, scaled(0.1, kcc))
	for i := range 40 {
		lhs.Set(i, i, lhs.At(i, i)+1e-10*tr/40)
	}
	rhs.Mul(kxc.T(), yl)
	if err := want.Solve(&lhs, &rhs); err != nil {
		t.Fatal(err)
	}
	// The normal equations are ill-conditioned (K_CC's Gaussian kernel on
	// 40 centres), so compare what they are for: the scores of the rows.
	var fw mat.Dense
	fw.Mul(kxc, &want)
	fg := kr.DecisionTo(nil, &xl)
	if d := maxAbsDiff(fg, &fw); d > 1e-6 {
		t.Errorf("scores differ from the whole K_XC's by up to %g", d)
	}
}

func scaled(f float64, a *mat.Dense) *mat.Dense {
	var out mat.Dense
	out.Scale(f, a)
	return &out
}

// TestKernelRidgeSplit checks that a fit and its predictions with Split
// (goroutines, and splittest's uneven parts run last first) are those
// without, on sizes whose every product is cut: several blocks of the
// Gram matrix's and the Cholesky factorization's columns, and of the
// normal equations' rows.
func TestKernelRidgeSplit(t *testing.T) {
	rnd := rand.New(rand.NewPCG(9, 9))
	x, y := blobs(rnd, 3, normalBlock/2+100, 5)
	q := randDense(rnd, 300, 5)
	var ref KernelRidge
	ref.MaxRows = 2*gramBlock + 70
	if err := ref.Fit(x, y); err != nil {
		t.Fatal(err)
	}
	want := ref.DecisionTo(nil, q)
	for name, split := range map[string]func(int, func(int, int)){"pipeline.Split(3)": pipeline.Split(3), "splittest.Reverse": splittest.Reverse} {
		kr := KernelRidge{MaxRows: ref.MaxRows, Split: split}
		if err := kr.Fit(x, y); err != nil {
			t.Fatal(err)
		}
		if got := kr.DecisionTo(nil, q); !mat.Equal(got, want) {
			t.Errorf("%s: scores differ from the serial fit's by up to %g", name, maxAbsDiff(got, want))
		}
	}
}
