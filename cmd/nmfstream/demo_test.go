package main

import (
	"math"
	"regexp"
	"strconv"
	"testing"
)

// TestDemo runs the demo as README.md tells a new user to, and checks the
// figures it prints against the floors docs/DESIGN.md §7 sets: GNMF with
// graph-aware projection ≥ 0.945 on the held-out digits (seed 1), the
// default semi-supervised method above raw-pixel 1-NN, and the stream's
// prequential accuracy: over the labeled digits after the first label
// (measured 0.937, 148 of 158), and over every digit after the first label
// against its true class, the online-learning issue's goal: ≥ 0.90 over
// the stream and ≥ 0.96 over its second half (measured 0.921 and 0.974);
// the window's labeled GNMF codes at 1-NN ≥ 0.90 and NMI ≥ 0.70 (measured
// 0.923 and 0.829); and the codes' difference it prints is the table's.
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
	rawRow := row(`raw pixels \(peer\)\s+([0-9.]+) \(the pixels\)\s+([0-9.]+)`)
	raw := rawRow[0]
	gnmf := row(`(?m)^gnmf\s+graph ([0-9.]+), .*pinv [0-9.]+\s+([0-9.]+)`)
	auto := row(`\(auto\)\s+graph ([0-9.]+)\s+([0-9.]+)`)
	delta := row(`against the pixels alone: ([-+][0-9.]+) points`)[0]
	emb := row(`labeled codes \(gnmf\): 1-NN among them ([0-9.]+), NMI of their k-means clusters ([0-9.]+)`)
	if want := 100 * (max(gnmf[1], auto[1]) - rawRow[1]); math.Abs(delta-want) > 0.16 {
		t.Errorf("the codes' difference printed %+.1f, the table's %+.1f", delta, want)
	}
	if emb[0] < 0.90 || emb[1] < 0.70 {
		t.Errorf("the window's codes: 1-NN %.3f, NMI %.3f; want ≥ 0.90 and ≥ 0.70", emb[0], emb[1])
	}
	stream := row(`prequential accuracy ([0-9.]+)`)[0]
	every := row(`every digit after the first label against its true class: ([0-9.]+) .*second half ([0-9.]+)\)`)
	if gnmf[0] < 0.945 {
		t.Errorf("GNMF graph-aware 1-NN accuracy %.3f, want ≥ 0.945", gnmf[0])
	}
	if auto[1] <= raw {
		t.Errorf("auto method accuracy %.3f not above raw pixels %.3f", auto[1], raw)
	}
	if stream < 0.93 {
		t.Errorf("prequential accuracy %.3f, want ≥ 0.93", stream)
	}
	if every[0] < 0.90 || every[1] < 0.96 {
		t.Errorf("every digit after the first label: %.3f, second half %.3f; want ≥ 0.90 and ≥ 0.96", every[0], every[1])
	}
}
