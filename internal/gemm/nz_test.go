package gemm

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
)

// sparseRows returns an n×d matrix of entries in [0, 1), each zero with
// probability 0.8 (about MNIST's share), and some rows all zero.
func sparseRows(rnd *rand.Rand, n, d int) []float64 {
	x := make([]float64, n*d)
	for i := range n {
		if i%7 == 3 {
			continue
		}
		for t := range d {
			if rnd.Float64() < 0.2 {
				x[i*d+t] = rnd.Float64()
			}
		}
	}
	return x
}

// TestNZSameBits checks RowNZ on x's rows against MulPacked and on its
// columns against MulXTA bit for bit, on sparse rows, for widths below, at and across the
// kernels' panels (4, 48 entries) and with a remainder of 1–3 entries; a
// has entries of both signs. Where no kernel runs, the dense products do
// not fuse, and RowNZ is checked against chains of math.FMA.
func TestNZSameBits(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 1))
	const n, d = 40, 97
	x := sparseRows(rnd, n, d)
	for _, k := range []int{1, 3, 4, 5, 8, 40, 47, 48, 49, 52, 100} {
		b := randGeneral(rnd, d, k, 0, 0)
		a := randGeneral(rnd, n, k, 0, 0)
		for i := range a.Data {
			a.Data[i] -= 0.5
		}
		// x·B, row by row.
		want := make([]float64, n*k)
		if hasKernels {
			var p Packed
			p.Pack(b)
			MulPacked(blas64General(n, k, want), blas64General(n, d, x), &p)
		} else {
			for i := range n {
				for j := range k {
					s := 0.0
					for tt := range d {
						s = math.FMA(x[i*d+tt], b.Data[tt*k+j], s)
					}
					want[i*k+j] = s
				}
			}
		}
		got := make([]float64, n*k)
		var idx []int32
		var val []float64
		for i := range n {
			idx, val = Nonzeros(idx[:0], val[:0], x[i*d:(i+1)*d])
			RowNZ(got[i*k:(i+1)*k], val, idx, b.Data, k, k)
		}
		sameBits(t, "RowNZ", k, got, want)

		// xᵀ·a, accumulated row by row.
		want = make([]float64, d*k)
		if hasKernels {
			var ws Workspace
			MulXTA(blas64General(d, k, want), blas64General(n, d, x), a, &ws)
		} else {
			for tt := range d {
				for j := range k {
					s := 0.0
					for i := range n {
						s = math.FMA(x[i*d+tt], a.Data[i*k+j], s)
					}
					want[tt*k+j] = s
				}
			}
		}
		// The columns of x's nonzeros, rows ascending.
		got = make([]float64, d*k)
		for tt := range d {
			idx, val = idx[:0], val[:0]
			for i := range n {
				if v := x[i*d+tt]; v != 0 {
					idx, val = append(idx, int32(i)), append(val, v)
				}
			}
			RowNZ(got[tt*k:(tt+1)*k], val, idx, a.Data, k, k)
		}
		sameBits(t, "RowNZ (columns)", k, got, want)
	}
}

func blas64General(r, c int, data []float64) blas64.General {
	return blas64.General{Rows: r, Cols: c, Stride: c, Data: data}
}

func sameBits(t *testing.T, name string, k int, got, want []float64) {
	t.Helper()
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("%s, K = %d: entry %d is %v, want %v", name, k, i, got[i], want[i])
		}
	}
}

// TestNZBounds checks that an index outside b panics.
func TestNZBounds(t *testing.T) {
	val := make([]float64, 2)
	b := make([]float64, 8*4)
	c := make([]float64, 4)
	for _, idx := range [][]int32{{8}, {-1}, {2, 9}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("RowNZ with indices %v did not panic", idx)
				}
			}()
			RowNZ(c, val, idx, b, 4, 4)
		}()
	}
}

// BenchmarkRowNZ784x40 times a row of MNIST's shape (a fifth of 784
// entries nonzero) against the basis (K = 40): MulPacked's row costs
// 2·784·40 flops at BenchmarkMulPacked20000x784x50's rate.
func BenchmarkRowNZ784x40(bm *testing.B) {
	rnd := rand.New(rand.NewPCG(1, 1))
	x := sparseRows(rnd, 2, 784)[784:]
	idx, val := Nonzeros(nil, nil, x)
	b := randGeneral(rnd, 784, 40, 0, 0)
	c := make([]float64, 40)
	bm.ReportAllocs()
	for bm.Loop() {
		RowNZ(c, val, idx, b.Data, 40, 40)
	}
}
