package kernel

import (
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// testRows returns n samples of d features in [0, 2.5], a third of them
// zero, varying with s.
func testRows(n, d, s int) *mat.Dense {
	data := make([]float64, n*d)
	for i := range data {
		if (i*7+s)%3 != 0 {
			data[i] = float64((i*13+s*5)%11) / 4
		}
	}
	return mat.NewDense(n, d, data)
}

// TestProductsMatchCrossTo checks that the kernels of a pool read from one
// set of products (newProducts, shared, as newSpace, loadSpace and crossTo
// do for pools of several kernels) are CrossTo's and MatrixTo's bit for
// bit, for every kernel of both pools, on dense and sparse samples; and
// that an unbound Gaussian is refused, shared or not.
func TestProductsMatchCrossTo(t *testing.T) {
	x, y := testRows(9, 6, 1), testRows(5, 6, 2)
	for _, form := range []string{"dense", "sparse"} {
		xd, yd := model.DenseRows(x), model.DenseRows(y)
		if form == "sparse" {
			xd, yd = model.SparseRows(sparse.FromDense(x)), model.SparseRows(sparse.FromDense(y))
		}
		cross, err := newProducts(xd, yd, true)
		if err != nil {
			t.Fatal(err)
		}
		self, err := newProducts(xd, xd, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, k0 := range append(append(DefaultPool(), ScalePool()...), Linear{}) {
			k, err := k0.Bind(xd)
			if err != nil {
				t.Fatal(err)
			}
			var a, b mat.Dense
			if err := cross.crossTo(&a, k); err != nil {
				t.Fatal(err)
			}
			if err := CrossTo(&b, k, xd, yd); err != nil {
				t.Fatal(err)
			}
			if !mat.Equal(&a, &b) {
				t.Errorf("%s, %v: products' cross-kernel differs from CrossTo's", form, k)
			}
			a.Reset()
			b.Reset()
			if err := self.matrixTo(&a, k); err != nil {
				t.Fatal(err)
			}
			if err := MatrixTo(&b, k, xd); err != nil {
				t.Fatal(err)
			}
			if !mat.Equal(&a, &b) {
				t.Errorf("%s, %v: products' kernel matrix differs from MatrixTo's", form, k)
			}
		}
		own, err := newProducts(xd, yd, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []*products{cross, own} {
			var a mat.Dense
			if err := p.crossTo(&a, Gaussian{Scale: 1}); err == nil {
				t.Errorf("%s, shared %v: an unbound Gaussian's cross-kernel: no error", form, p.shared)
			}
		}
	}
}

// TestPoolBoundAsAlone checks that newSpace binds the Gaussians of a pool,
// whose pairwise distance it computes once a rule, as each one's own Bind
// does: both rules in one pool, exact and with landmarks.
func TestPoolBoundAsAlone(t *testing.T) {
	x := model.DenseRows(testRows(40, 6, 3))
	pool := append(DefaultPool(), ScalePool()...)
	for _, ny := range []*Nystrom{nil, {Landmarks: 10}} {
		s, err := newSpace(x, pool, ny, 0, ScaleTrace)
		if err != nil {
			t.Fatal(err)
		}
		for l, k := range pool {
			want, err := k.Bind(x)
			if err != nil {
				t.Fatal(err)
			}
			if s.kernels[l] != want {
				t.Errorf("Nyström %v: kernel %d bound as %v, alone as %v", ny != nil, l, s.kernels[l], want)
			}
		}
	}
}
