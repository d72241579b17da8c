package model

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/datasets"
	"github.com/nmfstream/nmfstream/internal/splittest"
	"github.com/nmfstream/nmfstream/pipeline"
)

// TestEngineSplit runs GNMF on the digits with Engine.Split: the objective
// never rises, U and V do not depend on the number of parts or their order
// (bit for bit: goroutines from pipeline.Split with 2 and 3 parts, from
// pipeline.Share with 2 and 3 goroutines, and three parts run last
// first), and they are those of the serial run up to rounding. It runs on
// all 1,797 digits (8 row chunks, chunksOf) and on the first 600 (3) and
// 100 (1).
func TestEngineSplit(t *testing.T) {
	all, _ := datasets.Digits()
	for _, n := range []int{1797, 600, 100} {
		x := mat.DenseCopyOf(all.Slice(0, n, 0, 64))
		if got, want := chunksOf(n), map[int]int{1797: 8, 600: 3, 100: 1}[n]; got != want {
			t.Fatalf("chunksOf(%d) = %d, want %d", n, got, want)
		}
		t.Run(fmt.Sprint(n), func(t *testing.T) { testEngineSplit(t, x) })
	}
}

func testEngineSplit(t *testing.T, x *mat.Dense) {
	data := DenseRows(x)
	s := bruteKNN(x, 5)
	run := func(name string, split func(int, func(int, int))) (u, v *mat.Dense) {
		u, v, err := Initialize(data, 20, InitRandom, rand.NewPCG(1, 1))
		if err != nil {
			t.Fatal(err)
		}
		term := &GraphTerm{Weight: 10, S: s}
		if n, _ := v.Dims(); n == 1797 && !term.tiled(n, 20) {
			t.Fatal("the digits' graph product is not tiled: the test needs a larger V")
		}
		e := &Engine{Loss: NewFrobenius(data), Terms: []Term{term}, MaxIter: 60, Tol: -1, Split: split}
		checkRun(t, name, e, u, v)
		return u, v
	}
	u0, v0 := run("serial", nil)
	u1, v1 := run("reverse parts", splittest.Reverse)
	for _, w := range []int{2, 3} {
		u, v := run(fmt.Sprint(w, " goroutines"), pipeline.Split(w))
		if !mat.Equal(u, u1) || !mat.Equal(v, v1) {
			t.Errorf("%d goroutines: U, V differ from three parts run last first", w)
		}
		u, v = run(fmt.Sprint(w, " goroutines sharing pieces"), pipeline.Share(w))
		if !mat.Equal(u, u1) || !mat.Equal(v, v1) {
			t.Errorf("%d goroutines sharing pieces: U, V differ from three parts run last first", w)
		}
	}
	if !mat.EqualApprox(u0, u1, 1e-9*mat.Max(u0)) || !mat.EqualApprox(v0, v1, 1e-9*mat.Max(v0)) {
		var d mat.Dense
		d.Sub(v0, v1)
		t.Errorf("split run differs from the serial one by up to %g in V", mat.Max(&d))
	}
}

// TestGraphTermSplit checks the graph term's tiled product in row-block
// parts against the serial one, bit for bit.
func TestGraphTermSplit(t *testing.T) {
	const n, k = 5000, 20
	s := randomGraph(n, 6)
	rnd := rand.New(rand.NewPCG(3, 3))
	v := mat.NewDense(n, k, nil)
	for i := range v.RawMatrix().Data {
		v.RawMatrix().Data[i] = rnd.Float64()
	}
	serial := &GraphTerm{Weight: 0.7, S: s}
	split := &GraphTerm{Weight: 0.7, S: s}
	split.setSplit(splittest.Reverse)
	if !split.tiled(n, k) || len(split.tiles.start) < 4 {
		t.Fatalf("%d row blocks: the test needs more", len(split.tiles.start)-1)
	}
	negS, posS := mat.NewDense(n, k, nil), mat.NewDense(n, k, nil)
	negP, posP := mat.NewDense(n, k, nil), mat.NewDense(n, k, nil)
	serial.AddVGrad(negS, posS, v)
	split.AddVGrad(negP, posP, v)
	if !mat.Equal(negS, negP) || !mat.Equal(posS, posP) {
		t.Error("the product in row-block parts differs from the serial one")
	}
}
