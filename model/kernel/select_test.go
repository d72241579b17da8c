package kernel_test

import (
	"math"
	"slices"
	"testing"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/kernel"
)

// TestMinVariance checks that nearly constant kernels leave the pool: the
// Gaussians of DefaultPool with σ ≥ 10ρ have a centred variance fraction
// far below 1%, and the τ steps never give them weight; the reconstruction
// LP without the filter picks one of them (the failure the filter fixes).
func TestMinVariance(t *testing.T) {
	x, _ := clusters(60, 8, 3, 6)
	xd := model.DenseRows(x)
	wide := []int{4, 5, 6} // σ = 10ρ, 50ρ, 100ρ in DefaultPool
	paper := kernel.MultiK{Common: model.Common{Rank: 3, MaxIter: 60}, Outer: 3}
	if err := paper.Fit(xd, nil); err != nil {
		t.Fatal(err)
	}
	if best := slices.Index(paper.Tau(), 1); !slices.Contains(wide, best) {
		t.Logf("note: the paper's LP picked kernel %d, not a wide Gaussian", best)
	}
	for _, step := range []kernel.TauStep{kernel.TauLP, kernel.TauEntropy, kernel.TauSimplex} {
		m := kernel.MultiK{Common: model.Common{Rank: 3, MaxIter: 60}, Outer: 3, Step: step, MinVariance: 0.01}
		if err := m.Fit(xd, nil); err != nil {
			t.Fatal(err)
		}
		act := m.Active()
		for _, l := range wide {
			if act[l] {
				t.Errorf("%v: wide Gaussian %d kept", step, l)
			}
		}
		if !act[3] || !act[7] { // σ = ρ and (1 + xᵀy)² vary across samples
			t.Errorf("%v: active %v, want kernels 3 and 7 kept", step, act)
		}
		for i, tau := range m.TauHistory() {
			var sum float64
			for l, v := range tau {
				sum += v
				if !act[l] && v != 0 {
					t.Errorf("%v: alternation %d gives τ_%d = %v to a left-out kernel", step, i, l, v)
				}
			}
			if math.Abs(sum-1) > 1e-12 { // a sum of ≤ 10 terms
				t.Errorf("%v: alternation %d: Σ τ = %v", step, i, sum)
			}
		}
		for l, g := range m.Costs() {
			if act[l] == math.IsInf(g, 1) {
				t.Errorf("%v: cost %d = %v with active = %v", step, l, g, act[l])
			}
		}
	}
	m := kernel.MultiK{Common: model.Common{Rank: 3}, MinVariance: 0.9999}
	if err := m.Fit(xd, nil); err == nil {
		t.Error("MinVariance above every kernel's fraction: no error")
	}
	m = kernel.MultiK{Common: model.Common{Rank: 3}, MinVariance: 1}
	if err := m.Fit(xd, nil); err == nil {
		t.Error("MinVariance = 1: no error")
	}
}

// TestCostRelative checks the scale-free cost: the reconstruction cost
// divided by each kernel's centred variance does not pick the nearly
// constant kernel that the paper's cost picks.
func TestCostRelative(t *testing.T) {
	x, _ := clusters(60, 8, 3, 6)
	xd := model.DenseRows(x)
	pool := []kernel.Kernel{kernel.Gaussian{Scale: 100}, kernel.Gaussian{Scale: 0.3}}
	rec := kernel.MultiK{Common: model.Common{Rank: 3, MaxIter: 40}, Outer: 2, Kernels: pool}
	rel := rec
	rel.Cost = kernel.CostRelative
	for _, m := range []*kernel.MultiK{&rec, &rel} {
		if err := m.Fit(xd, nil); err != nil {
			t.Fatal(err)
		}
	}
	// The constant-like Gaussian (σ = 100ρ) is reconstructed almost for
	// free: the paper's cost picks it, the relative cost does not.
	if got := rec.Tau(); got[0] != 1 {
		t.Errorf("reconstruction LP τ = %v, want all on σ = 100ρ", got)
	}
	if got := rel.Tau(); got[1] != 1 {
		t.Errorf("relative LP τ = %v, want all on σ = 0.3ρ", got)
	}
	g := rel.Costs()
	if !(g[0] > g[1]) {
		t.Errorf("relative costs %v, want the wide kernel's larger", g)
	}
}

// TestCostAlignment checks the label-driven τ: on clustered data with a
// kernel that separates the clusters and one that is nearly the identity
// (σ tiny: every sample is alone), the alignment is higher for the former
// and the LP puts τ there from the start; without two labeled classes Fit
// fails.
func TestCostAlignment(t *testing.T) {
	x, y := clusters(60, 8, 3, 7)
	xd := model.DenseRows(x)
	labels := make([]int, len(y))
	for i := range labels {
		labels[i] = -1
		if i%5 == 0 { // 12 labeled samples, 4 of each class
			labels[i] = y[i]
		}
	}
	pool := []kernel.Kernel{kernel.Gaussian{Scale: 0.001}, kernel.Gaussian{Scale: 0.5}}
	m := kernel.MultiK{Common: model.Common{Rank: 3, MaxIter: 40}, Outer: 2, Kernels: pool, Cost: kernel.CostAlignment}
	if err := m.Fit(xd, labels); err != nil {
		t.Fatal(err)
	}
	a := m.Alignments()
	// The identity's centred alignment with a 3-class target of l samples
	// is ⟨H, HYYᵀH⟩/(‖H‖‖HYYᵀH‖) = √((c−1)/(l−1)) ≈ 0.43 for c = 3, l = 12;
	// a kernel that separates the clusters is near 1.
	if !(a[1] > 0.8 && a[0] < 0.6) {
		t.Errorf("alignments %v, want the separating kernel > 0.8 and the identity < 0.6", a)
	}
	for i, tau := range m.TauHistory() {
		if tau[1] != 1 {
			t.Errorf("alternation %d: τ = %v, want all on the aligned kernel", i, tau)
		}
	}
	one := make([]int, len(y))
	for i := range one {
		one[i] = -1
	}
	one[0], one[1] = 0, 0
	if err := m.Fit(xd, one); err == nil {
		t.Error("one labeled class: no error")
	}
	if err := m.Fit(xd, labels[:10]); err == nil {
		t.Error("short labels: no error")
	}
}
