package stages

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/nmfstream/nmfstream/model/sparse"
)

// TestSweepNormSameBits runs the same Gauss–Seidel sweeps with the rows
// divided once per batch (normRows, sweepAll) and divided anew in each
// sweep (sweep without them), then the local sweeps after labels, and
// wants the same scores to the bit: rows of degree 0, empty rows, self
// loops and labeled nodes included.
func TestSweepNormSameBits(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n, slots, c = 300, 310, 4
	w := sparse.Zeros(0, n)
	for i := range n {
		var ind []int
		var val []float64
		for j := range n {
			if r.IntN(25) == 0 || (j == i && r.IntN(10) == 0) {
				ind = append(ind, j)
				v := math.Pow(r.Float64(), 20)
				if i%37 == 0 {
					v = 0 // degree 0
				}
				val = append(val, v)
			}
		}
		w.AppendRow(ind, val)
	}
	class := func(i int) int {
		if i%11 == 0 {
			return i % c
		}
		return -1
	}
	var nodes []int
	for i := range n {
		if i%5 != 3 {
			nodes = append(nodes, i)
		}
	}
	f0 := make([]float64, slots*c)
	for i := range f0 {
		f0[i] = r.Float64()
	}
	run := func(norm bool) []float64 {
		s := &spreader{f: slices.Clone(f0), c: c}
		if norm {
			s.sweepAll(w, nodes, 3, class)
		} else {
			s.w = w
			for range 3 {
				s.sweep(nodes, class)
			}
		}
		if s.nw.ok != norm {
			t.Fatalf("normRows set %v, want %v", s.nw.ok, norm)
		}
		s.dirty = []int{11, 22, 150}
		s.sweepLocal([]int{5, 6, 299}, class)
		return s.f
	}
	want, got := run(false), run(true)
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("score %d: %v with normRows, %v without", i, got[i], want[i])
		}
	}
}
