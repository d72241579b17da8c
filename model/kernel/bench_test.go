package kernel_test

import (
	"runtime"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/kernel"
)

// benchIter times one multiplicative-update iteration of NMF_K (F and V
// updates on KernelLoss) with K already built: the cost is O(N²K) whatever
// the input dimension D.
func benchIter(b *testing.B, n, d int) {
	x := randData(n, d, 1)
	var k mat.Dense
	kb, err := kernel.Gaussian{Scale: 0.5}.Bind(model.DenseRows(x))
	if err != nil {
		b.Fatal(err)
	}
	if err := kernel.MatrixTo(&k, kb, model.DenseRows(x)); err != nil {
		b.Fatal(err)
	}
	const r = 20
	f, v := mat.NewDense(n, r, nil), mat.NewDense(n, r, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < r; j++ {
			f.Set(i, j, 1e-3*float64(1+(i+j)%7))
			v.Set(i, j, float64(1+(i*j)%5))
		}
	}
	eng := model.Engine{Loss: &kernel.KernelLoss{K: &k}, MaxIter: 1, Tol: -1}
	// Every iteration starts from the same (F, V): repeated updates would
	// otherwise drive entries towards subnormal values, whose arithmetic is
	// slow and data-dependent. The copies cost 2NK, next to 8N²K flops.
	f0, v0 := mat.DenseCopyOf(f), mat.DenseCopyOf(v)
	x = nil // only K is needed from here on
	runtime.GC()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		f.Copy(f0)
		v.Copy(v0)
		if _, err := eng.Run(f, v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkIterN1000D64(b *testing.B)   { benchIter(b, 1000, 64) }
func BenchmarkIterN1000D4096(b *testing.B) { benchIter(b, 1000, 4096) }

// BenchmarkKernelMatrixN1000D4096 is the one-time cost the iterations do
// not pay again.
func BenchmarkKernelMatrixN1000D4096(b *testing.B) {
	x := model.DenseRows(randData(1000, 4096, 1))
	var k mat.Dense
	b.ReportAllocs()
	for range b.N {
		k.Reset()
		if err := kernel.MatrixTo(&k, kernel.Gaussian{Sigma: 10}, x); err != nil {
			b.Fatal(err)
		}
	}
}
