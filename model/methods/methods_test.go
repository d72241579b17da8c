package methods_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/datasets"
	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/kernel"
	"github.com/nmfstream/nmfstream/model/methods"
)

func TestList(t *testing.T) {
	want := []string{"dgnmf", "dpca", "gnmf", "kernel", "multik", "n2s2l", "nge", "nmf", "ssknmf", "ssnmf", "auto"}
	if got := methods.Names(); !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	types := map[string]string{
		"dgnmf": "*model.DGNMF", "dpca": "*model.DPCA", "gnmf": "*model.GNMF",
		"kernel": "*kernel.Flexible", "multik": "*kernel.MultiK", "n2s2l": "*model.N2S2L",
		"nge": "*model.NGE", "nmf": "*model.NMF", "ssknmf": "*model.SSKNMF", "ssnmf": "*model.SSNMF", "auto": "*model.SSKNMF",
	}
	for _, name := range want {
		m, err := methods.New(name, methods.Options{Common: model.Common{Rank: 3}})
		if err != nil {
			t.Fatalf("New(%q): %v", name, err)
		}
		if got := fmt.Sprintf("%T", m); got != types[name] {
			t.Errorf("New(%q) is %s, want %s", name, got, types[name])
		}
	}
	// auto is model.Auto's choice, and so is the empty name.
	for _, name := range []string{"auto", ""} {
		i, err := methods.Lookup(name)
		if err != nil || i.Name != model.AutoMethod {
			t.Errorf("Lookup(%q) = %q, %v; want %q", name, i.Name, err, model.AutoMethod)
		}
	}
	// Every method that needs labels uses them; the kernel methods and
	// DPCA are batch only.
	for _, i := range methods.List() {
		if i.NeedsLabels && !i.UsesLabels {
			t.Errorf("%s: needs labels but does not use them", i.Name)
		}
		if i.Online && (i.Kernel() || i.Linear) {
			t.Errorf("%s: marked online", i.Name)
		}
		if i.Summary == "" {
			t.Errorf("%s: no summary", i.Name)
		}
		// Kernels counts the kernels the built method holds.
		want := 0
		switch m, _ := methods.New(i.Name, methods.Options{Common: model.Common{Rank: 3}}); m := m.(type) {
		case *kernel.Flexible:
			want = 1
		case *kernel.MultiK:
			want = len(kernel.DefaultPool())
			if m.Kernels != nil {
				want = len(m.Kernels)
			}
		}
		if i.Kernels != want {
			t.Errorf("%s: Kernels %d; the method holds %d kernels", i.Name, i.Kernels, want)
		}
	}
}

func TestLookupUnknown(t *testing.T) {
	_, err := methods.Lookup("magic")
	if err == nil {
		t.Fatal("Lookup(magic): no error")
	}
	for _, want := range append(methods.Names(), `"magic"`) {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	if _, err := methods.New("magic", methods.Options{}); err == nil {
		t.Error("New(magic): no error")
	}
}

// TestOptions checks that the options reach the methods.
func TestOptions(t *testing.T) {
	o := methods.Options{Common: model.Common{Rank: 4, MaxIter: 7}, Neighbors: 3, Alpha: 0.5, Beta: 2, Projection: model.ProjectNNLS}
	s := must(t, "ssknmf", o).(*model.SSKNMF)
	if s.Rank != 4 || s.MaxIter != 7 || s.Alpha != 0.5 || s.Beta != 2 || s.Neighbors != 3 || s.LabelNeighbors != 3 {
		t.Errorf("ssknmf: got %+v", s)
	}
	if m := must(t, "ssnmf", o).(*model.SSNMF); m.Rank != 4 || m.Alpha != 0.5 || m.Lambda != 2 || m.Neighbors != 3 {
		t.Errorf("ssnmf: got %+v (β is λ)", m)
	}
	if g := must(t, "gnmf", o).(*model.GNMF); g.Alpha != 0.5 || g.Graph.K != 3 {
		t.Errorf("gnmf: Alpha %g, K %d; want 0.5, 3", g.Alpha, g.Graph.K)
	}
	if f := must(t, "kernel", o).(*kernel.Flexible); f.Projection != kernel.ProjectNNLS || f.Neighbors != 3 || f.Nystrom != nil {
		t.Errorf("kernel: Projection %v, Neighbors %d, Nystrom %v", f.Projection, f.Neighbors, f.Nystrom)
	}
	o.Nystrom, o.Alpha = 50, 0
	if m := must(t, "multik", o).(*kernel.MultiK); m.Nystrom == nil || m.Nystrom.Landmarks != 50 || m.Cost != kernel.CostRelative {
		t.Errorf("multik: Nystrom %v, Cost %v; want 50 landmarks, CostRelative without a graph", m.Nystrom, m.Cost)
	}
}

func must(t *testing.T, name string, o methods.Options) model.Method {
	t.Helper()
	m, err := methods.New(name, o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// digitsSubset returns n digits, balanced over the classes by taking the
// first rows (they cycle through the classes), with every label.
func digitsSubset(n int) (*mat.Dense, []int) {
	x, y := datasets.Digits()
	return mat.DenseCopyOf(x.Slice(0, n, 0, 64)), y[:n]
}

// TestFiniteEveryMethod fits every method on 400 digits with no labels,
// 10% of them labeled and every one labeled, and checks that the fit
// either stops with ErrNoLabels (methods that need labels, given none) or
// leaves a finite objective and finite, non-negative U and V (DPCA's
// linear codes may be negative). Before SSKNMF's repulsion was bounded,
// its objective fell to −1e10 within 20 iterations with every label.
func TestFiniteEveryMethod(t *testing.T) {
	xr, y := digitsSubset(400)
	x := model.DenseRows(xr)
	none := make([]int, len(y))
	part := make([]int, len(y))
	for i := range y {
		none[i], part[i] = -1, -1
		if i%10 == 0 {
			part[i] = y[i]
		}
	}
	labelings := []struct {
		name string
		y    []int
	}{{"none", none}, {"10%", part}, {"all", y}}
	for _, info := range methods.List() {
		for _, l := range labelings {
			// 60 updates: enough for a runaway to show (it did by 20).
			m := info.New(methods.Options{Common: model.Common{Rank: 12, MaxIter: 60, Src: rand.NewPCG(1, 1)}})
			err := m.Fit(x, l.y)
			name := info.Name + "/" + l.name
			if l.name == "none" && info.NeedsLabels {
				if !errors.Is(err, model.ErrNoLabels) {
					t.Errorf("%s: got %v, want ErrNoLabels", name, err)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			if r, ok := m.(interface{ Result() model.Result }); ok {
				if f := r.Result().Objective; math.IsNaN(f) || math.IsInf(f, 0) {
					t.Errorf("%s: objective %g", name, f)
				}
			}
			basis := m.Basis()
			if f, ok := m.(*kernel.Flexible); ok {
				// Its Basis is A in Φ(X)A, unconstrained in sign; the
				// non-negative factor is B = K^{½}A.
				basis = f.B()
			}
			for _, f := range []struct {
				what string
				m    *mat.Dense
			}{{"U", basis}, {"V", m.Codes()}} {
				if err := model.CheckFinite(name+" "+f.what, f.m); err != nil {
					t.Error(err)
					continue
				}
				if !info.Linear && mat.Min(f.m) < 0 {
					t.Errorf("%s: %s has a negative entry %g", name, f.what, mat.Min(f.m))
				}
				// Codes that ran away reached 3e43; fitted digits codes
				// stay below a few hundred.
				if f.what == "V" && mat.Max(f.m) > 1e6 {
					t.Errorf("%s: codes up to %g", name, mat.Max(f.m))
				}
			}
		}
	}
}

// TestDivergedError checks the message and the sentinel of a forced
// divergence: DGNMF with a huge α on fully labeled digits.
func TestDivergedError(t *testing.T) {
	xr, y := digitsSubset(400)
	m := must(t, "dgnmf", methods.Options{Common: model.Common{Rank: 12, MaxIter: 100}, Alpha: 1e3})
	err := m.Fit(model.DenseRows(xr), y)
	var d *model.DivergedError
	if !errors.Is(err, model.ErrDiverged) || !errors.As(err, &d) {
		t.Fatalf("got %v, want a *DivergedError", err)
	}
	if d.Method != "DGNMF" || !strings.Contains(err.Error(), "model: DGNMF: objective") || !strings.Contains(err.Error(), "lower Alpha") {
		t.Errorf("error %q (method %q) does not name the method and the remedy", err, d.Method)
	}
}

// TestLoss checks that the methods marked KL take the KL loss and the
// others refuse it.
func TestLoss(t *testing.T) {
	o := methods.Options{Common: model.Common{Rank: 3, Loss: model.LossKL}}
	for _, i := range methods.List() {
		m, err := methods.New(i.Name, o)
		if !i.KL {
			if err == nil {
				t.Errorf("New(%q) with the KL loss: no error", i.Name)
			}
			continue
		}
		if err != nil {
			t.Errorf("New(%q): %v", i.Name, err)
			continue
		}
		if got := reflectLoss(m); got != model.LossKL {
			t.Errorf("New(%q): loss %v, want kl", i.Name, got)
		}
	}
}

// reflectLoss returns the Loss of a method built on model.Common.
func reflectLoss(m model.Method) model.LossKind {
	switch m := m.(type) {
	case *model.NMF:
		return m.Loss
	case *model.GNMF:
		return m.Loss
	case *model.DGNMF:
		return m.Loss
	case *model.SSKNMF:
		return m.Loss
	case *model.N2S2L:
		return m.Loss
	}
	return -1
}
