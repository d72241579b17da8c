package kernel_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/kernel"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// randData returns n non-negative samples of d features, about half the
// entries zero (so the sparse path has work to skip), from seed s.
func randData(n, d int, s uint64) *mat.Dense {
	r := rand.New(rand.NewPCG(s, 1))
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			if r.Float64() < 0.5 {
				x.Set(i, j, r.Float64()*3)
			}
		}
	}
	return x
}

// clusters returns n samples around c well-separated non-negative centres.
func clusters(n, d, c int, s uint64) (*mat.Dense, []int) {
	r := rand.New(rand.NewPCG(s, 2))
	centres := mat.NewDense(c, d, nil)
	for i := 0; i < c; i++ {
		for j := 0; j < d; j++ {
			if r.Float64() < 0.3 {
				centres.Set(i, j, 2+3*r.Float64())
			}
		}
	}
	x := mat.NewDense(n, d, nil)
	y := make([]int, n)
	for i := 0; i < n; i++ {
		y[i] = i % c
		for j := 0; j < d; j++ {
			x.Set(i, j, max(0, centres.At(y[i], j)+0.3*r.NormFloat64()))
		}
	}
	return x, y
}

func TestKernelValues(t *testing.T) {
	x := randData(7, 5, 1)
	y := randData(4, 5, 2)
	ks := []kernel.Kernel{kernel.Gaussian{Sigma: 1.7}, kernel.Polynomial{Degree: 3}, kernel.Polynomial{Degree: 2, Homogeneous: true}, kernel.Cosine{}, kernel.Linear{}}
	direct := func(k kernel.Kernel, a, b []float64) float64 {
		var d2, dot, aa, bb float64
		for i := range a {
			d2 += (a[i] - b[i]) * (a[i] - b[i])
			dot += a[i] * b[i]
			aa += a[i] * a[i]
			bb += b[i] * b[i]
		}
		switch k := k.(type) {
		case kernel.Gaussian:
			return math.Exp(-d2 / (2 * k.Sigma * k.Sigma))
		case kernel.Polynomial:
			if k.Homogeneous {
				return math.Pow(dot, float64(k.Degree))
			}
			return math.Pow(1+dot, float64(k.Degree))
		case kernel.Cosine:
			if aa == 0 || bb == 0 {
				return 0 // documented: a zero sample is similar to nothing
			}
			return dot / math.Sqrt(aa*bb)
		}
		return dot
	}
	for _, k := range ks {
		for _, form := range []string{"dense", "sparse", "mixed"} {
			xd, yd := model.DenseRows(x), model.DenseRows(y)
			switch form {
			case "sparse":
				xd, yd = model.SparseRows(sparse.FromDense(x)), model.SparseRows(sparse.FromDense(y))
			case "mixed":
				yd = model.SparseRows(sparse.FromDense(y))
			}
			var kc, kx mat.Dense
			if err := kernel.CrossTo(&kc, k, xd, yd); err != nil {
				t.Fatal(err)
			}
			if err := kernel.MatrixTo(&kx, k, xd); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 7; i++ {
				for j := 0; j < 4; j++ {
					want := direct(k, x.RawRowView(i), y.RawRowView(j))
					// 1e-12 relative: one product of 5-term sums, then one
					// elementwise function.
					if got := kc.At(i, j); !scalar.EqualWithinAbsOrRel(got, want, 1e-12, 1e-12) {
						t.Errorf("%v %s cross(%d,%d) = %v, want %v", k, form, i, j, got, want)
					}
				}
				for j := 0; j < 7; j++ {
					want := direct(k, x.RawRowView(i), x.RawRowView(j))
					if got := kx.At(i, j); !scalar.EqualWithinAbsOrRel(got, want, 1e-12, 1e-12) {
						t.Errorf("%v %s K(%d,%d) = %v, want %v", k, form, i, j, got, want)
					}
					if kx.At(i, j) != kx.At(j, i) {
						t.Errorf("%v %s: K not exactly symmetric at (%d,%d)", k, form, i, j)
					}
				}
			}
		}
	}
}

func TestGaussianWidth(t *testing.T) {
	x := mat.NewDense(3, 1, []float64{0, 1, 3})
	for _, tc := range []struct {
		g    kernel.Gaussian
		want float64
	}{
		{kernel.Gaussian{Sigma: 2}, 2},
		{kernel.Gaussian{Scale: 0.5}, 1.5},                            // ρ = max distance 3
		{kernel.Gaussian{Scale: 3, Rule: kernel.MeanDistance}, 3 * 2}, // mean of 1, 3, 2
	} {
		k, err := tc.g.Bind(model.DenseRows(x))
		if err != nil {
			t.Fatal(err)
		}
		if got := k.(kernel.Gaussian).Sigma; math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%v: σ = %v, want %v", tc.g, got, tc.want)
		}
	}
}

func TestBadInput(t *testing.T) {
	x := model.DenseRows(randData(10, 3, 1))
	same := model.DenseRows(mat.NewDense(4, 2, []float64{1, 1, 1, 1, 1, 1, 1, 1}))
	for _, tc := range []struct {
		name string
		err  func() error
		want string
	}{
		{"width 0", func() error { _, err := kernel.Gaussian{}.Bind(x); return err }, "width σ = 0"},
		{"negative width", func() error { _, err := kernel.Gaussian{Sigma: -1}.Bind(x); return err }, "want > 0"},
		{"NaN scale", func() error { _, err := kernel.Gaussian{Scale: math.NaN()}.Bind(x); return err }, "scale"},
		{"coincident samples", func() error { _, err := kernel.Gaussian{Scale: 1}.Bind(same); return err }, "coincide"},
		{"unbound width", func() error { var k mat.Dense; return kernel.MatrixTo(&k, kernel.Gaussian{Scale: 1}, x) }, "not bound"},
		{"negative degree", func() error { _, err := kernel.Polynomial{Degree: -1}.Bind(x); return err }, "degree"},
		{"flexible width 0", func() error {
			m := kernel.Flexible{Common: model.Common{Rank: 2}, Kernel: kernel.Gaussian{}}
			return m.Fit(x, nil)
		}, "width σ = 0"},
		{"rank too large", func() error {
			m := kernel.MultiK{Common: model.Common{Rank: 11}, Kernels: []kernel.Kernel{kernel.Linear{}}}
			return m.Fit(x, nil)
		}, "rank"},
		{"negative data", func() error {
			m := kernel.MultiK{Common: model.Common{Rank: 2}, Kernels: []kernel.Kernel{kernel.Linear{}}}
			return m.Fit(model.DenseRows(mat.NewDense(2, 2, []float64{1, -1, 0, 1})), nil)
		}, "negative"},
	} {
		err := tc.err()
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "kernel: ") && !strings.HasPrefix(err.Error(), "model: ") {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

func TestTooLarge(t *testing.T) {
	x := model.DenseRows(randData(30, 3, 1))
	m := kernel.Flexible{Common: model.Common{Rank: 2}, MaxExact: 20}
	err := m.Fit(x, nil)
	if !errors.Is(err, kernel.ErrTooLarge) || !strings.Contains(err.Error(), "Nystrom") {
		t.Fatalf("Fit above MaxExact: %v, want ErrTooLarge naming Nystrom", err)
	}
	m.Nystrom = &kernel.Nystrom{Landmarks: 10}
	if err := m.Fit(x, nil); err != nil {
		t.Fatalf("with Nyström: %v", err)
	}
	mk := kernel.MultiK{Common: model.Common{Rank: 2}, MaxExact: 20}
	if err := mk.Fit(x, nil); !errors.Is(err, kernel.ErrTooLarge) {
		t.Fatalf("MultiK above MaxExact: %v", err)
	}
}

// TestKernelLossGradient checks the split gradients against central finite
// differences of Value, for a non-negative K, a K with negative entries
// (the K⁺ − K⁻ split) and a factor Φ.
// lossCase returns the kernel loss tests' case of n samples: a Gaussian
// kernel matrix K, a factor Φ of 5 columns, and positive F and V of r
// columns drawn from seed s.
func lossCase(t *testing.T, n, r int, s uint64) (k, phi, f, v *mat.Dense) {
	t.Helper()
	x := randData(n, 4, 3)
	k = new(mat.Dense)
	if err := kernel.MatrixTo(k, kernel.Gaussian{Sigma: 2}, model.DenseRows(x)); err != nil {
		t.Fatal(err)
	}
	rnd := rand.New(rand.NewPCG(s, 1))
	f, v = mat.NewDense(n, r, nil), mat.NewDense(n, r, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < r; j++ {
			f.Set(i, j, 0.1+rnd.Float64())
			v.Set(i, j, 0.1+rnd.Float64())
		}
	}
	return k, randData(n, 5, 4), f, v
}

func TestKernelLossGradient(t *testing.T) {
	const n, r = 9, 3
	kpos, phi, f, v := lossCase(t, n, r, 1)
	kneg := mat.DenseCopyOf(kpos)
	kneg.Set(0, 3, -0.4)
	kneg.Set(3, 0, -0.4)
	for name, l := range map[string]*kernel.KernelLoss{"K≥0": {K: kpos}, "K signed": {K: kneg}, "factor": {Phi: phi}} {
		var neg, pos mat.Dense
		neg.ReuseAs(n, r)
		pos.ReuseAs(n, r)
		for _, which := range []string{"F", "V"} {
			w := f
			if which == "F" {
				l.UGradTo(&neg, &pos, f, v)
			} else {
				l.VGradTo(&neg, &pos, f, v)
				w = v
			}
			for i := 0; i < n; i++ {
				for j := 0; j < r; j++ {
					if neg.At(i, j) < 0 || pos.At(i, j) < 0 {
						t.Errorf("%s %s: negative gradient part at (%d,%d)", name, which, i, j)
					}
					const h = 1e-5
					old := w.At(i, j)
					w.Set(i, j, old+h)
					fp := l.Value(f, v)
					w.Set(i, j, old-h)
					fm := l.Value(f, v)
					w.Set(i, j, old)
					fd := (fp - fm) / (2 * h) / 2 // halved gradient
					got := pos.At(i, j) - neg.At(i, j)
					// 1e-6: central differences of a quartic of O(10)
					// values with h = 1e-5 are exact to ~h²·f''' ≈ 1e-8.
					if math.Abs(got-fd) > 1e-6*max(1, math.Abs(fd)) {
						t.Errorf("%s ½∂/∂%s(%d,%d) = %v, finite difference %v", name, which, i, j, got, fd)
					}
				}
			}
		}
		// LastValue after VGradTo agrees with Value.
		l.VGradTo(&neg, &pos, f, v)
		if a, b := l.LastValue(v), l.Value(f, v); math.Abs(a-b) > 1e-10*b {
			t.Errorf("%s: LastValue %v, Value %v", name, a, b)
		}
	}
}

// TestKernelLossReusesKF checks UGradTo after VGradTo, which reuses the
// K·F that VGradTo computed while F is unchanged: its parts equal, bit for
// bit, those of a loss that computes K·F afresh, with F as VGradTo left it
// and after one entry of F changed in place.
func TestKernelLossReusesKF(t *testing.T) {
	k, phi, f, v := lossCase(t, 9, 3, 2)
	for name, mk := range map[string]func() *kernel.KernelLoss{
		"K":      func() *kernel.KernelLoss { return &kernel.KernelLoss{K: k} },
		"factor": func() *kernel.KernelLoss { return &kernel.KernelLoss{Phi: phi} },
	} {
		l := mk()
		var neg, pos, wantNeg, wantPos mat.Dense
		l.VGradTo(&neg, &pos, f, v)
		for step, change := range []func(){func() {}, func() { f.Set(4, 1, f.At(4, 1)*1.5) }} {
			change()
			neg.Reset()
			pos.Reset()
			l.UGradTo(&neg, &pos, f, v)
			wantNeg.Reset()
			wantPos.Reset()
			mk().UGradTo(&wantNeg, &wantPos, f, v)
			if !mat.Equal(&neg, &wantNeg) || !mat.Equal(&pos, &wantPos) {
				t.Errorf("%s, step %d: UGradTo after VGradTo differs from a fresh loss's", name, step)
			}
		}
	}
}

func nonNegative(t *testing.T, name string, m *mat.Dense) {
	t.Helper()
	for _, v := range m.RawMatrix().Data {
		if v < 0 || math.IsNaN(v) {
			t.Fatalf("%s has entry %v", name, v)
		}
	}
}

// monotone returns a callback that fails the test if the objective rises
// within a run (Iter restarts at 1 for each engine run).
func monotone(t *testing.T, name string) func(model.Stats) bool {
	prev := math.Inf(1)
	return func(s model.Stats) bool {
		if s.Iter == 1 {
			prev = math.Inf(1)
		}
		// 1e-9 relative: the objective is evaluated with O(N²) sums whose
		// rounding is about 1e-13 relative; a real rise is far larger.
		if s.Objective > prev*(1+1e-9) {
			t.Errorf("%s: objective rose at iteration %d: %v → %v", name, s.Iter, prev, s.Objective)
		}
		prev = s.Objective
		return true
	}
}
