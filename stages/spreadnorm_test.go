package stages

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/nmfstream/nmfstream/model/sparse"
)

// TestSweepNormSameBits runs Gauss–Seidel sweeps with the rows divided
// once per batch (normRows, as sweepAll sets them) and with each row
// summed and divided anew in every sweep (the plain sweep, written here),
// and wants the same scores to the bit: rows of degree 0, empty rows, self
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
	// ref is the sweep written plainly: each row summed and divided anew.
	ref := func(f []float64, nodes []int) {
		for _, i := range nodes {
			fi := f[i*c : (i+1)*c]
			clear(fi)
			if k := class(i); k >= 0 {
				fi[k] = 1
				continue
			}
			ind, val := w.Row(i)
			var deg float64
			for _, x := range val {
				deg += x
			}
			if deg == 0 {
				continue
			}
			for p, j := range ind {
				a := val[p] / deg
				for k, x := range f[j*c : (j+1)*c] {
					fi[k] += a * x
				}
			}
		}
	}
	s := &spreader{f: slices.Clone(f0), c: c}
	s.w = w
	s.nw.set(w)
	for range 3 {
		s.sweep(nodes, class)
	}
	s.sweep([]int{11, 22, 150, 5, 6, 299}, class)
	got := s.f
	want := slices.Clone(f0)
	for range 3 {
		ref(want, nodes)
	}
	ref(want, []int{11, 22, 150, 5, 6, 299})
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("score %d: %v, %v by the plain sweep", i, got[i], want[i])
		}
	}
}
