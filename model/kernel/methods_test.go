package kernel_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/kernel"
	"github.com/nmfstream/nmfstream/pipeline"
)

func TestFlexible(t *testing.T) {
	x, _ := clusters(60, 8, 3, 1)
	xd := model.DenseRows(x)
	// Polynomial of degree 4: degree 2 on 8 features has rank ≤ 45 < 60,
	// so K would be singular (see TestFlexibleDuplicates for that case).
	for _, k := range []kernel.Kernel{kernel.Gaussian{Scale: 0.5}, kernel.Polynomial{Degree: 4}} {
		m := kernel.Flexible{Common: model.Common{Rank: 4, MaxIter: 300, Tol: -1}, Kernel: k}
		m.Callback = monotone(t, "flexible "+k.String())
		if err := m.Fit(xd, nil); err != nil {
			t.Fatal(err)
		}
		nonNegative(t, "B", m.B())
		nonNegative(t, "H", m.Codes())
		// A solves K^{½}A = B: check through the clipped square root
		// recomputed from K (N = 60, so it is cheap).
		if len(m.Result().Warnings) != 0 {
			t.Errorf("%v: unexpected warnings %v", k, m.Result().Warnings)
		}

		// The paper's projection applied to the training samples is
		// A⁺K⁻¹K = A⁺ exactly in exact arithmetic.
		m.Projection = kernel.ProjectPaper
		var got mat.Dense
		if err := m.ProjectTo(&got, xd); err != nil {
			t.Fatal(err)
		}
		var apinv mat.Dense
		var qr mat.QR
		qr.Factorize(m.Basis())
		eye := mat.NewDense(60, 60, nil)
		for i := 0; i < 60; i++ {
			eye.Set(i, i, 1)
		}
		if err := qr.SolveTo(&apinv, false, eye); err != nil {
			t.Fatal(err)
		}
		// 1e-6 relative to ‖A⁺‖: K's condition number is below condMax
		// (1e12) here, so K⁻¹K = I to about 1e-4·ε⁻¹·… in the worst case;
		// measured ~1e-9.
		if d := maxDiff(&got, apinv.T()); d > 1e-6*mat.Norm(&apinv, math.Inf(1)) {
			t.Errorf("%v: A⁺K⁻¹K_te on training samples is %g from A⁺", k, d)
		}

		// The default projection reproduces the training codes.
		m.Projection = kernel.ProjectNNLS
		if err := m.ProjectTo(&got, xd); err != nil {
			t.Fatal(err)
		}
		nonNegative(t, "projected codes", &got)
		// 2e-2 relative: both are multiplicative-update iterates of the same
		// NNLS problem, stopped at relative objective changes of 1e-5
		// (fit) and 1e-7 (projection); they agree to a few digits, not to
		// machine precision.
		if d := relDiff(&got, m.Codes()); d > 2e-2 {
			t.Errorf("%v: projected training codes differ from fitted ones by %.3g (relative)", k, d)
		}
	}
}

func TestFlexibleDuplicates(t *testing.T) {
	x, _ := clusters(40, 6, 2, 3)
	for i := 20; i < 40; i++ { // every sample twice: K is singular
		x.SetRow(i, x.RawRowView(i-20))
	}
	m := kernel.Flexible{Common: model.Common{Rank: 3}, Kernel: kernel.Gaussian{Scale: 0.5}, Projection: kernel.ProjectPaper}
	if err := m.Fit(model.DenseRows(x), nil); err != nil {
		t.Fatalf("singular K: %v", err)
	}
	if len(m.Result().Warnings) == 0 {
		t.Error("singular K^{½}: no ridge warning")
	}
	var got mat.Dense
	if err := m.ProjectTo(&got, model.DenseRows(x)); err != nil {
		t.Fatalf("paper projection with singular K: %v", err)
	}
	// Duplicate samples get identical codes.
	for i := 0; i < 20; i++ {
		for j := 0; j < 3; j++ {
			if a, b := got.At(i, j), got.At(i+20, j); math.Abs(a-b) > 1e-8*(1+math.Abs(a)) {
				t.Fatalf("duplicates %d, %d: codes %v and %v", i, i+20, a, b)
			}
		}
	}
}

// TestSplitSameCodes checks that the kernel methods' products in parts
// (Common.Split) change no bit of the codes: exact kernels and Nyström
// features, several kernels (MultiK) and one (Flexible). KernelLoss's
// parts never change a sum; Flexible's fit on its features is the
// Frobenius loss's, whose sums under Split run over fixed row chunks and
// differ from a serial fit's by rounding above one chunk (these 70 rows
// are one), whatever the number of parts.
func TestSplitSameCodes(t *testing.T) {
	x, _ := clusters(70, 9, 3, 4)
	xd := model.DenseRows(x)
	pool := []kernel.Kernel{kernel.Gaussian{Scale: 0.5}, kernel.Gaussian{Scale: 2}, kernel.Polynomial{Degree: 2}}
	fits := map[string]func(split func(int, func(int, int))) model.Method{
		"multik": func(split func(int, func(int, int))) model.Method {
			return &kernel.MultiK{Common: model.Common{Rank: 4, MaxIter: 40, Split: split}, Kernels: pool, Alpha: 0.5, Outer: 3}
		},
		"multik Nyström": func(split func(int, func(int, int))) model.Method {
			return &kernel.MultiK{Common: model.Common{Rank: 4, MaxIter: 40, Split: split}, Kernels: pool, Outer: 3, Nystrom: &kernel.Nystrom{Landmarks: 25}}
		},
		"flexible Nyström": func(split func(int, func(int, int))) model.Method {
			return &kernel.Flexible{Common: model.Common{Rank: 4, MaxIter: 40, Split: split}, Nystrom: &kernel.Nystrom{Landmarks: 25}}
		},
	}
	for name, mk := range fits {
		var codes [2]*mat.Dense
		for i, split := range []func(int, func(int, int)){nil, pipeline.Split(3)} {
			m := mk(split)
			if err := m.Fit(xd, nil); err != nil {
				t.Fatal(err)
			}
			codes[i] = mat.DenseCopyOf(m.(interface{ Codes() *mat.Dense }).Codes())
		}
		if !mat.Equal(codes[0], codes[1]) {
			t.Errorf("%s: the codes fitted with Split differ from those without", name)
		}
	}
}

func TestMultiKMonotoneAndSimplex(t *testing.T) {
	x, _ := clusters(60, 8, 3, 2)
	xd := model.DenseRows(x)
	pool := []kernel.Kernel{kernel.Gaussian{Scale: 0.1}, kernel.Gaussian{Scale: 1}, kernel.Polynomial{Degree: 2}, kernel.Cosine{}}
	for _, step := range []kernel.TauStep{kernel.TauLP, kernel.TauEntropy, kernel.TauSimplex} {
		for _, alpha := range []float64{0, 1} {
			m := kernel.MultiK{Common: model.Common{Rank: 3, MaxIter: 120}, Kernels: pool, Alpha: alpha, Step: step, Outer: 4}
			m.Callback = monotone(t, "multik")
			if err := m.Fit(xd, nil); err != nil {
				t.Fatal(err)
			}
			nonNegative(t, "F", m.Basis())
			nonNegative(t, "V", m.Codes())
			for _, tau := range m.TauHistory() {
				var s float64
				for _, v := range tau {
					if v < 0 {
						t.Fatalf("%v: τ = %v has a negative weight", step, tau)
					}
					s += v
				}
				if math.Abs(s-1) > 1e-12 {
					t.Fatalf("%v: τ = %v sums to %v", step, tau, s)
				}
			}
			tau, g := m.Tau(), m.Costs()
			best := slices.Index(g, slices.Min(g))
			switch step {
			case kernel.TauLP:
				if tau[best] != 1 {
					t.Errorf("LP: τ = %v, want all weight on kernel %d (g = %v)", tau, best, g)
				}
			case kernel.TauEntropy:
				if slices.Min(tau) <= 0 {
					t.Errorf("entropy: τ = %v has a zero weight", tau)
				}
			}
			if slices.Index(tau, slices.Max(tau)) != best {
				t.Errorf("%v: largest weight not on the cheapest kernel: τ = %v, g = %v", step, tau, g)
			}
		}
	}
}

func TestTauStep(t *testing.T) {
	g := []float64{3, 1, 2, 1.5}
	tau := make([]float64, 4)
	kernel.TauStepTo(tau, g, kernel.TauEntropy, 0.5)
	// τ_l ∝ exp(−(g_l − 1)/(0.5·2)).
	var z float64
	for _, x := range g {
		z += math.Exp(-(x - 1))
	}
	for l, x := range g {
		if want := math.Exp(-(x - 1)) / z; math.Abs(tau[l]-want) > 1e-15 {
			t.Errorf("entropy τ_%d = %v, want %v", l, tau[l], want)
		}
	}
	// Simplex: τ = projection of −(g − 1)/(γ·2) = (−2, 0, −1, −0.5)/(2γ).
	kernel.TauStepTo(tau, g, kernel.TauSimplex, 0.25)
	// y = (−4, 0, −2, −1): projection is (0, 1, 0, 0)? θ from the two
	// largest: (0 − 1 − 1)/2 = −1 → (0, 1, 0, 0) since −1 − (−1) = 0.
	want := []float64{0, 1, 0, 0}
	for l := range tau {
		if math.Abs(tau[l]-want[l]) > 1e-15 {
			t.Fatalf("simplex τ = %v, want %v", tau, want)
		}
	}
	kernel.TauStepTo(tau, g, kernel.TauSimplex, 2)
	// y = (−0.5, 0, −0.25, −0.125): the three largest stay positive with
	// θ = (0 − 0.125 − 0.25 − 1)/3; the fourth, −0.5 − θ < 0, is clipped.
	th := (-0.375 - 1) / 3
	want = []float64{0, -th, -0.25 - th, -0.125 - th}
	for l := range tau {
		if math.Abs(tau[l]-want[l]) > 1e-15 {
			t.Fatalf("simplex τ = %v, want %v", tau, want)
		}
	}
}

// TestAdaptiveGraph compares the graph in kernel space with a brute-force
// k-NN on d²(i, j) = K_ii + K_jj − 2K_ij.
func TestAdaptiveGraph(t *testing.T) {
	x := randData(25, 4, 5)
	xd := model.DenseRows(x)
	pool := []kernel.Kernel{kernel.Gaussian{Sigma: 1}, kernel.Cosine{}}
	m := kernel.MultiK{Common: model.Common{Rank: 2, MaxIter: 20}, Kernels: pool, Alpha: 0.5, Neighbors: 3, Step: kernel.TauEntropy, Outer: 2, Scaling: kernel.ScaleNone}
	if err := m.Fit(xd, nil); err != nil {
		t.Fatal(err)
	}
	tau := m.Tau()
	var k0, k1 mat.Dense
	kernel.MatrixTo(&k0, pool[0], xd)
	kernel.MatrixTo(&k1, pool[1], xd)
	var k mat.Dense
	k.Scale(tau[0], &k0)
	var t1 mat.Dense
	t1.Scale(tau[1], &k1)
	k.Add(&k, &t1)
	want := bruteGraph(&k, 3)
	s := m.Graph().S
	for i := 0; i < 25; i++ {
		for j := 0; j < 25; j++ {
			if s.At(i, j) != want.At(i, j) {
				t.Fatalf("graph(%d,%d) = %v, brute force %v", i, j, s.At(i, j), want.At(i, j))
			}
		}
	}
	if m.Graph().Weight != 0.5 {
		t.Errorf("graph weight %v, want α = 0.5", m.Graph().Weight)
	}
	// Kernel weights: the same edges, weighted by K.
	g, err := kernel.Graph(&k, 3, kernel.KernelWeight)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 25; i++ {
		for j := 0; j < 25; j++ {
			w := 0.0
			if want.At(i, j) == 1 {
				w = k.At(i, j)
			}
			if math.Abs(g.At(i, j)-w) > 1e-15 {
				t.Fatalf("kernel-weighted graph(%d,%d) = %v, want %v", i, j, g.At(i, j), w)
			}
		}
	}
}

// bruteGraph links each i to its p smallest d²(i, j), j ≠ i (ties to the
// smaller j), and symmetrizes.
func bruteGraph(k *mat.Dense, p int) *mat.Dense {
	n, _ := k.Dims()
	s := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		idx := make([]int, 0, n-1)
		for j := 0; j < n; j++ {
			if j != i {
				idx = append(idx, j)
			}
		}
		d := func(j int) float64 { return k.At(i, i) + k.At(j, j) - 2*k.At(i, j) }
		slices.SortStableFunc(idx, func(a, b int) int {
			switch {
			case d(a) < d(b):
				return -1
			case d(a) > d(b):
				return 1
			}
			return a - b
		})
		for _, j := range idx[:p] {
			s.Set(i, j, 1)
			s.Set(j, i, 1)
		}
	}
	return s
}

func TestMultiKProjection(t *testing.T) {
	x, _ := clusters(60, 8, 3, 4)
	xd := model.DenseRows(x)
	m := kernel.MultiK{Common: model.Common{Rank: 3, MaxIter: 400, Tol: 1e-9}, Kernels: []kernel.Kernel{kernel.Gaussian{Scale: 0.5}}, Projection: kernel.ProjectNNLS}
	m.Callback = monotone(t, "NMF_K")
	if err := m.Fit(xd, nil); err != nil {
		t.Fatal(err)
	}
	var got mat.Dense
	if err := m.ProjectTo(&got, xd); err != nil {
		t.Fatal(err)
	}
	nonNegative(t, "projected codes", &got)
	// 2e-2 relative: NNLS by multiplicative updates from a different start,
	// stopped at a relative change of 1e-7 (see TestFlexible).
	if d := relDiff(&got, m.Codes()); d > 2e-2 {
		t.Errorf("projected training codes differ from fitted ones by %.3g (relative)", d)
	}
}

func TestNystrom(t *testing.T) {
	x, _ := clusters(120, 8, 3, 5)
	xd := model.DenseRows(x)
	k := kernel.Gaussian{Scale: 0.5}
	prev := math.Inf(1)
	for _, m := range []int{10, 40, 120} {
		e, err := kernel.NystromError(kernel.Nystrom{Landmarks: m}, k, xd)
		if err != nil {
			t.Fatal(err)
		}
		if e > prev*1.05 { // more landmarks should not be worse (5% slack for the random draw)
			t.Errorf("m = %d: error %v above %v with fewer landmarks", m, e, prev)
		}
		prev = e
	}
	// With every sample a landmark, Φ = K^{½} and only the clipping of its
	// few negative entries separates Φ₊Φ₊ᵀ from K.
	if prev > 0.02 {
		t.Errorf("m = N: relative error %v, want < 0.02", prev)
	}
	for _, meth := range []fitProjector{
		&kernel.Flexible{Common: model.Common{Rank: 3}, Kernel: k, Nystrom: &kernel.Nystrom{Landmarks: 30}},
		&kernel.MultiK{Common: model.Common{Rank: 3, MaxIter: 60}, Alpha: 1, Step: kernel.TauEntropy, Outer: 3, Nystrom: &kernel.Nystrom{Landmarks: 30, Select: kernel.Uniform}},
	} {
		if err := meth.Fit(xd, nil); err != nil {
			t.Fatal(err)
		}
		nonNegative(t, "codes", meth.Codes())
		var got mat.Dense
		if err := meth.ProjectTo(&got, xd); err != nil {
			t.Fatal(err)
		}
		nonNegative(t, "projected codes", &got)
	}
}

func maxDiff(a, b mat.Matrix) float64 {
	r, c := a.Dims()
	var d float64
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			d = max(d, math.Abs(a.At(i, j)-b.At(i, j)))
		}
	}
	return d
}

// relDiff returns ‖a − b‖_F / ‖b‖_F.
func relDiff(a, b mat.Matrix) float64 {
	var d mat.Dense
	d.Sub(a, b)
	return mat.Norm(&d, 2) / mat.Norm(b, 2)
}

// TestProjectOverflowingSample checks that a sample whose kernel values
// with the training samples overflow (a polynomial kernel of a sample of
// 10⁵⁰) gets NaN codes, and that the other samples' codes are those they
// get without it, for Flexible (exact and Nyström, every projection) and
// MultiK: one such sample must not make every sample's projection fail.
func TestProjectOverflowingSample(t *testing.T) {
	x, _ := clusters(60, 8, 3, 1)
	xd := model.DenseRows(x)
	test := mat.NewDense(4, 8, nil)
	test.Copy(x.Slice(0, 4, 0, 8))
	withHuge := mat.DenseCopyOf(test)
	for j := range 8 {
		withHuge.Set(2, j, 1e50)
	}
	type projector interface {
		ProjectTo(*mat.Dense, model.Data) error
	}
	check := func(name string, m projector) {
		t.Helper()
		var want, got mat.Dense
		if err := m.ProjectTo(&want, model.DenseRows(test)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := m.ProjectTo(&got, model.DenseRows(withHuge)); err != nil {
			t.Fatalf("%s: with the huge sample: %v", name, err)
		}
		for i := range 4 {
			for j, v := range got.RawRowView(i) {
				if i == 2 && !math.IsNaN(v) {
					t.Fatalf("%s: the huge sample's code (%d) is %g, want NaN", name, j, v)
				}
				// The multiplicative updates stop on the objective's
				// relative change, which the huge sample no longer moves:
				// the others' codes are the same to a few digits.
				if w := want.At(i, j); i != 2 && math.Abs(v-w) > 1e-3*(1+math.Abs(w)) {
					t.Fatalf("%s: sample %d's code (%d) is %g with the huge sample, %g without", name, i, j, v, w)
				}
			}
		}
	}
	for _, ny := range []*kernel.Nystrom{nil, {Landmarks: 30}} {
		m := kernel.Flexible{Common: model.Common{Rank: 4, MaxIter: 100}, Kernel: kernel.Polynomial{Degree: 4}, Nystrom: ny}
		if err := m.Fit(xd, nil); err != nil {
			t.Fatal(err)
		}
		for _, p := range []kernel.Projection{kernel.ProjectNNLS, kernel.ProjectGraph, kernel.ProjectPaper} {
			if p == kernel.ProjectPaper && ny != nil {
				continue // the paper's projection needs the exact kernel
			}
			m.Projection = p
			check(fmt.Sprintf("flexible, Nyström %v, projection %v", ny != nil, p), &m)
		}
	}
	mk := kernel.MultiK{Common: model.Common{Rank: 4, MaxIter: 30}, Kernels: []kernel.Kernel{kernel.Gaussian{Scale: 0.5}, kernel.Polynomial{Degree: 4}}}
	if err := mk.Fit(xd, nil); err != nil {
		t.Fatal(err)
	}
	check("multik", &mk)
}
