package gemm

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// TestBackendAgreesWithBLAS runs MulTo, MulTransTo, ABT and ABT32, serially
// and in parts (kernels or BLAS, as Serves64/32 decide on this machine),
// against gonum's BLAS on the same operands, resizing a destination of
// another shape.
func TestBackendAgreesWithBLAS(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	randDense := func(r, c int) *mat.Dense {
		m := mat.NewDense(r, c, nil)
		for i := range m.RawMatrix().Data {
			m.RawMatrix().Data[i] = rng.Float64()
		}
		return m
	}
	near := func(what string, got, want []float64, tol float64) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
		}
		for i := range got {
			if math.Abs(got[i]-want[i]) > tol*(1+math.Abs(want[i])) {
				t.Fatalf("%s: entry %d = %v, want %v", what, i, got[i], want[i])
			}
		}
	}
	a, b, c := randDense(37, 29), randDense(29, 11), randDense(37, 11)
	var want mat.Dense
	want.Mul(a, b)
	var wantT mat.Dense
	wantT.Mul(a.T(), c)
	for _, inParts := range []bool{false, true} {
		dst := mat.NewDense(3, 3, nil) // another shape: resized
		MulTo(dst, a, b, inParts)
		near("MulTo", dst.RawMatrix().Data, want.RawMatrix().Data, 1e-12)
		var ws Workspace
		dst = mat.NewDense(2, 5, nil)
		MulTransTo(dst, a, c, &ws, inParts)
		near("MulTransTo", dst.RawMatrix().Data, wantT.RawMatrix().Data, 1e-12)

		q, r := randDense(9, 40).RawMatrix(), randDense(13, 40).RawMatrix()
		abt := blas64.General{Rows: 9, Cols: 13, Stride: 13, Data: make([]float64, 9*13)}
		ref := blas64.General{Rows: 9, Cols: 13, Stride: 13, Data: make([]float64, 9*13)}
		var aw ABTWorkspace
		ABT(abt, q, r, &aw, inParts)
		blas64.Gemm(blas.NoTrans, blas.Trans, 1, q, r, 0, ref)
		near("ABT", abt.Data, ref.Data, 1e-12)

		q32 := blas32.General{Rows: 9, Cols: 40, Stride: 40, Data: make([]float32, 9*40)}
		r32 := blas32.General{Rows: 13, Cols: 40, Stride: 40, Data: make([]float32, 13*40)}
		for i := range q32.Data {
			q32.Data[i] = float32(q.Data[i])
		}
		for i := range r32.Data {
			r32.Data[i] = float32(r.Data[i])
		}
		c32 := blas32.General{Rows: 9, Cols: 13, Stride: 13, Data: make([]float32, 9*13)}
		var aw32 ABTWorkspace32
		ABT32(c32, q32, r32, &aw32, inParts)
		got := make([]float64, len(c32.Data))
		for i, v := range c32.Data {
			got[i] = float64(v)
		}
		near("ABT32", got, ref.Data, 1e-5)
	}
}
