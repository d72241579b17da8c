package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestScreen32 checks that Screen32 returns, from every start, the first
// b that the scan's own test (key > thr and, with rthr, key > rthr[b]+dq)
// does not pass over, with and without the assembly, NaN and infinite keys
// and bounds included.
func TestScreen32(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	want := func(from int, dots []float32, sq []float64, base, thr float64, rthr []float64, dq float64) int {
		for b := from; b < len(dots); b++ {
			key := base + sq[b] - 2*float64(dots[b])
			if rthr == nil {
				if key > thr {
					continue
				}
			} else if key > thr && key > rthr[b]+dq {
				continue
			}
			return b
		}
		return len(dots)
	}
	odd := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, -0.0}
	for trial := range 400 {
		n := r.IntN(70)
		dots := make([]float32, n)
		sq := make([]float64, n+r.IntN(3))
		rthr := make([]float64, n)
		base := r.Float64() * 10
		for b := range n {
			sq[b] = r.Float64() * 10
			dots[b] = float32(r.Float64() * 5)
			rthr[b] = r.Float64()*4 - 2
			if r.IntN(40) == 0 {
				sq[b] = odd[r.IntN(len(odd))]
			}
			if r.IntN(40) == 0 {
				rthr[b] = odd[r.IntN(len(odd))]
			}
		}
		thr := r.Float64()*3 - 1
		if trial%10 == 0 {
			thr = odd[r.IntN(len(odd))]
		}
		dq := r.Float64()
		for _, rt := range [][]float64{nil, rthr} {
			for from := 0; from <= n+1; from++ {
				w := want(from, dots, sq, base, thr, rt, dq)
				if from > n {
					w = n
				}
				if got := Screen32(from, dots, sq, base, thr, rt, dq); got != w {
					t.Fatalf("trial %d, n %d, from %d, rthr %v: Screen32 %d, want %d", trial, n, from, rt != nil, got, w)
				}
				if from <= n {
					if got := screen32Generic(from, dots, sq[:n], base, thr, rt, dq); got != w {
						t.Fatalf("trial %d, n %d, from %d, rthr %v: generic %d, want %d", trial, n, from, rt != nil, got, w)
					}
				}
			}
		}
	}
}

func BenchmarkScreen32(b *testing.B) {
	const n = 2048
	r := rand.New(rand.NewPCG(1, 2))
	dots := make([]float32, n)
	sq, rthr := make([]float64, n), make([]float64, n)
	for i := range n {
		dots[i], sq[i], rthr[i] = float32(r.Float64()), 2+r.Float64(), -1
	}
	for _, c := range []struct {
		name string
		rthr []float64
	}{{"forward", nil}, {"reverse", rthr}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if Screen32(0, dots, sq, 2, 0.5, c.rthr, 0.1) != n {
					b.Fatal("kept")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/entry")
		})
	}
}
