package model

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/graph"
)

// TestDistributedStepsEqualNMF checks that summing partitions' statistics
// for StepU and sweeping each partition's rows with SweepRows is NMF's
// iteration: U and V equal NMF.Fit's to rounding, for 1, 2 and 4 blocks.
func TestDistributedStepsEqualNMF(t *testing.T) {
	const n, d, k, iters = 60, 12, 4, 30
	rnd := rand.New(rand.NewPCG(3, 4))
	x := mat.NewDense(n, d, nil)
	for i := range n {
		for j := range d {
			x.Set(i, j, rnd.Float64())
		}
	}
	ref := NMF{Common: Common{Rank: k, MaxIter: iters, Tol: -1}}
	if err := ref.Fit(DenseRows(x), nil); err != nil {
		t.Fatal(err)
	}
	for _, parts := range []int{1, 2, 4} {
		u0, v0, err := Initialize(DenseRows(x), k, InitNNDSVDa, nil)
		if err != nil {
			t.Fatal(err)
		}
		u := mat.DenseCopyOf(u0)
		// Blocks of uneven size, rows interleaved: block p holds rows i with
		// i%parts == p.
		xs := make([]*mat.Dense, parts)
		vs := make([]*mat.Dense, parts)
		for p := range parts {
			var rows []int
			for i := p; i < n; i += parts {
				rows = append(rows, i)
			}
			xs[p] = mat.NewDense(len(rows), d, nil)
			vs[p] = mat.NewDense(len(rows), k, nil)
			for r, i := range rows {
				xs[p].SetRow(r, x.RawRowView(i))
				vs[p].SetRow(r, v0.RawRowView(i))
			}
		}
		for range iters {
			var b, a mat.Dense
			for p := range parts {
				AddStats(&b, &a, DenseRows(xs[p]), vs[p], 1)
			}
			StepU(u, &b, &a, 1)
			for p := range parts {
				if err := SweepRows(vs[p], DenseRows(xs[p]), u, 1); err != nil {
					t.Fatal(err)
				}
			}
		}
		if e := relDiff(u, ref.Basis()); e > 1e-9 {
			t.Errorf("%d blocks: U differs from NMF's by %.3g (relative)", parts, e)
		}
		for p := range parts {
			for r := 0; r < vs[p].RawMatrix().Rows; r++ {
				i := p + r*parts
				for j := range k {
					got, want := vs[p].At(r, j), ref.Codes().At(i, j)
					if math.Abs(got-want) > 1e-9*(1+math.Abs(want)) {
						t.Fatalf("%d blocks: V[%d,%d] = %g, NMF has %g", parts, i, j, got, want)
					}
				}
			}
		}
	}
}

// TestAddStatsRemoves checks that adding and then removing codes leaves
// the statistics at zero, and that one addition is XV and VᵀV.
func TestAddStatsRemoves(t *testing.T) {
	x := mat.NewDense(3, 2, []float64{1, 2, 3, 4, 5, 6})
	v := mat.NewDense(3, 2, []float64{1, 0, 0, 1, 2, 1})
	var b, a mat.Dense
	AddStats(&b, &a, DenseRows(x), v, 1)
	var xv, vtv mat.Dense
	xv.Mul(x.T(), v)
	vtv.Mul(v.T(), v)
	if !mat.Equal(&b, &xv) || !mat.Equal(&a, &vtv) {
		t.Fatalf("AddStats gave B = %v, A = %v; want %v, %v", mat.Formatted(&b), mat.Formatted(&a), mat.Formatted(&xv), mat.Formatted(&vtv))
	}
	AddStats(&b, &a, DenseRows(x), v, -1)
	if mat.Norm(&b, 1) != 0 || mat.Norm(&a, 1) != 0 {
		t.Fatalf("adding then removing left B = %v, A = %v", mat.Formatted(&b), mat.Formatted(&a))
	}
}

func relDiff(a, b *mat.Dense) float64 {
	var d mat.Dense
	d.Sub(a, b)
	return mat.Norm(&d, 2) / mat.Norm(b, 2)
}

// TestDistributedStepsEqualGNMF checks that StepU on the statistics and
// SweepGraphRows on every row is GNMF's iteration (the engine with a
// GraphTerm) to rounding, and that a sweep of some rows changes those rows
// only, to what one sweep of every row gives them.
func TestDistributedStepsEqualGNMF(t *testing.T) {
	const n, d, k, iters, alpha = 60, 12, 4, 30, 5.0
	rnd := rand.New(rand.NewPCG(5, 6))
	x := mat.NewDense(n, d, nil)
	for i := range n {
		for j := range d {
			x.Set(i, j, rnd.Float64())
		}
	}
	g, err := graph.KNN{K: 4}.Dense(x)
	if err != nil {
		t.Fatal(err)
	}
	s := g.Weights(graph.Weighting{})
	u0, v0, err := Initialize(DenseRows(x), k, InitNNDSVDa, nil)
	if err != nil {
		t.Fatal(err)
	}
	ru, rv := mat.DenseCopyOf(u0), mat.DenseCopyOf(v0)
	ref := Engine{Loss: NewFrobenius(DenseRows(x)), Terms: []Term{&GraphTerm{Weight: alpha, S: s}}, MaxIter: iters, Tol: -1}
	if _, err := ref.Run(ru, rv); err != nil {
		t.Fatal(err)
	}
	u, v := mat.DenseCopyOf(u0), mat.DenseCopyOf(v0)
	for range iters {
		var b, a mat.Dense
		AddStats(&b, &a, DenseRows(x), v, 1)
		StepU(u, &b, &a, 1)
		if err := SweepGraphRows(v, DenseRows(x), u, s, alpha, nil, 1); err != nil {
			t.Fatal(err)
		}
	}
	// 1e-9: thirty iterations of sums in another order (StepU sums B and A
	// first; the engine forms its products directly).
	if e := relDiff(u, ru); e > 1e-9 {
		t.Errorf("U differs from GNMF's by %.3g (relative)", e)
	}
	if e := relDiff(v, rv); e > 1e-9 {
		t.Errorf("V differs from GNMF's by %.3g (relative)", e)
	}

	all := mat.DenseCopyOf(v)
	if err := SweepGraphRows(all, DenseRows(x), u, s, alpha, nil, 1); err != nil {
		t.Fatal(err)
	}
	some := mat.DenseCopyOf(v)
	rows := []int{0, 7, 8, 30, 59}
	if err := SweepGraphRows(some, DenseRows(x), u, s, alpha, rows, 1); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		want := v.RawRowView(i)
		if slices.Contains(rows, i) {
			want = all.RawRowView(i)
		}
		for j, got := range some.RawRowView(i) {
			if got < 0 || math.Abs(got-want[j]) > 1e-12*(1+math.Abs(want[j])) {
				t.Fatalf("row %d (swept: %v): V[%d,%d] = %g, want %g", i, slices.Contains(rows, i), i, j, got, want[j])
			}
		}
	}
}
