package main

import (
	"regexp"
	"strconv"
	"testing"
)

// TestDemo runs the demo as README.md tells a new user to, and checks the
// figures it prints against the floors DESIGN.md sets: GNMF with
// graph-aware projection ≥ 0.945 on the held-out digits (seed 1), the
// default semi-supervised method above raw-pixel 1-NN, the kernel method
// above scikit-learn NMF + 1-NN, and the stream's
// prequential accuracy ≥ 0.93, the goal of the online-learning issue
// (measured 0.930: 147 of 158; one prediction fewer is 0.924).
func TestDemo(t *testing.T) {
	out := mustRun(t, "demo")
	t.Log("\n" + out)
	row := func(pattern string) []float64 {
		t.Helper()
		m := regexp.MustCompile(pattern).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("demo output has no line matching %q", pattern)
		}
		var f []float64
		for _, s := range m[1:] {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatal(err)
			}
			f = append(f, v)
		}
		return f
	}
	raw := row(`raw pixels \(peer\)\s+-\s+([0-9.]+)`)[0]
	gnmf := row(`gnmf\s+graph\s+([0-9.]+)\s+([0-9.]+)`)
	auto := row(`\(auto\)\s+graph\s+([0-9.]+)\s+([0-9.]+)`)
	kern := row(`kernel \(flexible, Gaussian\)\s+graph\s+([0-9.]+)\s+([0-9.]+)`)
	stream := row(`prequential accuracy ([0-9.]+)`)[0]
	if gnmf[0] < 0.945 {
		t.Errorf("GNMF graph-aware 1-NN accuracy %.3f, want ≥ 0.945", gnmf[0])
	}
	if auto[1] <= raw {
		t.Errorf("auto method accuracy %.3f not above raw pixels %.3f", auto[1], raw)
	}
	// Kernel methods must beat scikit-learn NMF + 1-NN (0.868, DESIGN.md §7);
	// measured 0.940 and 0.952.
	if kern[0] < 0.868 || kern[1] < 0.868 {
		t.Errorf("kernel method accuracy %v, want ≥ 0.868", kern)
	}
	if stream < 0.93 {
		t.Errorf("prequential accuracy %.3f, want ≥ 0.93", stream)
	}
}
