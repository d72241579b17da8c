package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/gemm"
	"github.com/nmfstream/nmfstream/pipeline"
)

// maxRelDiff returns max |a − b| over the entries, relative to max |b|.
func maxRelDiff(a, b *mat.Dense) float64 {
	var d, s float64
	ar, br := a.RawMatrix(), b.RawMatrix()
	for i := range br.Rows {
		for j := range br.Cols {
			x, y := ar.Data[i*ar.Stride+j], br.Data[i*br.Stride+j]
			d = max(d, math.Abs(x-y))
			s = max(s, math.Abs(y))
		}
	}
	return d / s
}

// TestFloat32Products checks Frobenius.Float32's two products against the
// float64 ones on 5,000 × 100 uniform rows (three chunks of V for xᵀ·V)
// and 1,000 × 100 (one chunk, whose product Split cuts by rows of xᵀ):
// close to float32 rounding, not equal (the float32 path ran), and the
// same bits whether or not Split cuts the work into parts.
func TestFloat32Products(t *testing.T) {
	if !gemm.Serves32(true) {
		t.Skip("no float32 kernels on this machine or build")
	}
	for _, n := range []int{5000, 1000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) { testFloat32Products(t, n) })
	}
}

func testFloat32Products(t *testing.T, n int) {
	const d, k = 100, 30
	x := DenseRows(uniformRows(n, d))
	u, v, err := Initialize(x, k, InitRandom, rand.NewPCG(2, 2))
	if err != nil {
		t.Fatal(err)
	}
	var neg64, pos64, vneg64, vpos64 mat.Dense
	l64 := NewFrobenius(x)
	l64.UGradTo(&neg64, &pos64, u, v)
	l64.VGradTo(&vneg64, &vpos64, u, v)
	f64 := l64.Value(u, v)

	var ref [2]mat.Dense
	for i, split := range []func(int, func(int, int)){nil, pipeline.Split(3)} {
		l32 := NewFrobenius(x)
		l32.Float32 = true
		l32.setSplit(split)
		var neg, pos, vneg, vpos mat.Dense
		l32.UGradTo(&neg, &pos, u, v)
		l32.VGradTo(&vneg, &vpos, u, v)
		if l32.f32.src == nil {
			t.Fatal("Float32 set, but the float32 copies of X were not made")
		}
		if e := maxRelDiff(&neg, &neg64); e > 1e-5 || e == 0 {
			t.Errorf("split %v: XV in float32 differs from float64 by %.3g relative, want (0, 1e-5]", i, e)
		}
		if e := maxRelDiff(&vneg, &vneg64); e > 1e-5 || e == 0 {
			t.Errorf("split %v: XᵀU in float32 differs from float64 by %.3g relative, want (0, 1e-5]", i, e)
		}
		if f := l32.Value(u, v); math.Abs(f-f64) > 1e-5*f64 {
			t.Errorf("split %v: objective %v in float32, %v in float64", i, f, f64)
		}
		if i == 0 {
			ref[0].CloneFrom(&neg)
			ref[1].CloneFrom(&vneg)
		} else if !mat.Equal(&neg, &ref[0]) || !mat.Equal(&vneg, &ref[1]) {
			t.Error("the float32 products in parts differ from the serial ones")
		}
	}
}

// TestFloat32Fit fits GNMF (K = 40, 200 iterations) on the digits split
// with Common.Float32 and without: the final objectives agree to 1e-4
// relative and the held-out 1-NN accuracies, graph-aware and NNLS
// projections, to half a point.
func TestFloat32Fit(t *testing.T) {
	if !gemm.Serves32(false) {
		t.Skip("no float32 kernels on this machine or build")
	}
	train, test, trainY, testY, labeled := digitsSplit(t, 10)
	var obj [2]float64
	var acc [2][2]float64
	for i, f32 := range []bool{false, true} {
		g := &GNMF{Common: Common{Rank: 40, Src: rand.NewPCG(1, 1), Float32: f32}}
		if err := g.Fit(DenseRows(train), trainY); err != nil {
			t.Fatal(err)
		}
		if fl := g.eng.Loss.(*Frobenius); fl.f32.src != nil {
			t.Error("the float32 copies of X are kept after the fit")
		}
		obj[i] = g.Result().Objective
		if got := g.Result().Float32; got != f32 {
			t.Errorf("Float32 %v: Result.Float32 = %v, want %[1]v", f32, got)
		}
		for j, p := range []Projection{ProjectGraph, ProjectNNLS} {
			var codes mat.Dense
			if err := g.Projector(p).ProjectTo(&codes, DenseRows(test)); err != nil {
				t.Fatal(err)
			}
			acc[i][j] = oneNN(g.Codes(), trainY, labeled, &codes, testY)
		}
	}
	t.Logf("objective float64 %.6g, float32 %.6g; accuracy (graph, NNLS) float64 %.4f, float32 %.4f", obj[0], obj[1], acc[0], acc[1])
	if obj[1] == obj[0] {
		t.Error("the same objective to the bit with Float32: the float32 products did not run")
	}
	if r := math.Abs(obj[1]-obj[0]) / obj[0]; r > 1e-4 {
		t.Errorf("objectives differ by %.3g relative, want ≤ 1e-4", r)
	}
	for j := range 2 {
		if math.Abs(acc[1][j]-acc[0][j]) > 0.005 {
			t.Errorf("projection %d: accuracy %.4f in float32 against %.4f", j, acc[1][j], acc[0][j])
		}
	}
}

// TestFloat32LargeEntries checks that Common.Float32 keeps the products in
// float64 for an X with an entry above max32Value, whose products could
// overflow float32 (one such sample made a float32 fit's objective NaN at
// its first update), and runs them in float32 up to it: the fit is finite
// either way and Result.Float32 says which ran.
func TestFloat32LargeEntries(t *testing.T) {
	if !gemm.Serves32(false) {
		t.Skip("no float32 kernels on this machine or build")
	}
	rnd := rand.New(rand.NewPCG(3, 3))
	for _, c := range []struct {
		big  float64
		want bool // Result.Float32
	}{{1e14, true}, {max32Value, true}, {1e25, false}} {
		x := mat.NewDense(60, 12, nil)
		for i := range 60 {
			for j := range 12 {
				x.Set(i, j, rnd.Float64())
			}
		}
		x.SetRow(7, []float64{c.big, c.big, c.big, 0, 0, 0, 0, 0, 0, 0, 0, c.big})
		m := &NMF{Common: Common{Rank: 4, MaxIter: 20, Src: rand.NewPCG(1, 1), Float32: true}}
		if err := m.Fit(DenseRows(x), nil); err != nil {
			t.Fatalf("entry %g: %v", c.big, err)
		}
		r := m.Result()
		if r.Float32 != c.want || math.IsNaN(r.Objective) || math.IsInf(r.Objective, 0) {
			t.Errorf("entry %g: Result.Float32 %v (want %v), objective %g", c.big, r.Float32, c.want, r.Objective)
		}
	}
}
