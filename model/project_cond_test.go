package model

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/datasets"
	"github.com/nmfstream/nmfstream/model/graph"
)

// A basis with two nearly equal columns has a near-singular UᵀU (condition
// number far above 1e16, where gonum's solve gives up): the projections
// still succeed, with finite non-negative codes that reconstruct x better
// than the zero code.
func TestProjectNearSingularBasis(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	const d, k, n = 20, 6, 8
	u := mat.NewDense(d, k, nil)
	for i := range d {
		for j := range k - 1 {
			u.Set(i, j, r.Float64())
		}
		u.Set(i, k-1, u.At(i, 0)*(1+1e-7*r.Float64()))
	}
	x := mat.NewDense(n, d, nil)
	for i := range n {
		for j := range d {
			x.Set(i, j, r.Float64())
		}
	}
	var utu mat.SymDense
	utu.SymOuterK(1, u.T())
	var ch mat.Cholesky
	if ch.Factorize(&utu) && ch.Cond() < 1e16 {
		t.Fatalf("the test basis is not near-singular: cond %g", ch.Cond())
	}
	for _, m := range []Projection{ProjectNNLS, ProjectClampedPinv} {
		p := Projector{Method: m, U: u}
		var v mat.Dense
		if err := p.ProjectTo(&v, DenseRows(x)); err != nil {
			t.Fatalf("%v: %v", m, err)
		}
		for i := range n {
			var rec mat.VecDense
			rec.MulVec(u, v.RowView(i))
			var e, e0 float64
			for j := range d {
				e += (x.At(i, j) - rec.AtVec(j)) * (x.At(i, j) - rec.AtVec(j))
				e0 += x.At(i, j) * x.At(i, j)
			}
			for _, c := range v.RawRowView(i) {
				if c < 0 || math.IsNaN(c) || math.IsInf(c, 0) {
					t.Fatalf("%v: row %d: code entry %g", m, i, c)
				}
			}
			if m == ProjectNNLS && !(e < e0) {
				t.Errorf("%v: row %d: error %g, zero code's %g", m, i, e, e0)
			}
		}
	}
}

// At a rank close to the dimension (56 of the digits' 64 pixels) the
// online basis grows nearly collinear columns; the new samples' projection
// must keep working there: before the ridge for a near-singular UᵀU it
// failed, the new rows kept stale codes, and the window's objective rose
// twelvefold in one step (GNMF, digits in a random order).
func TestOnlineNearFullRankObjective(t *testing.T) {
	if testing.Short() {
		t.Skip("a 1,797-sample stream")
	}
	x, _ := datasets.Digits()
	n, d := x.Dims()
	perm := rand.New(rand.NewPCG(2, 2)).Perm(n)
	o := &Online{Method: "gnmf", Rank: 56, Graph: graph.KNN{K: 5, Window: 10000}}
	prev := 0.0
	for lo := 0; lo < n; lo += 18 {
		hi := min(lo+18, n)
		b := mat.NewDense(hi-lo, d, nil)
		for i := lo; i < hi; i++ {
			b.SetRow(i-lo, x.RawRowView(perm[i]))
		}
		if _, err := o.PartialFit(DenseRows(b)); err != nil {
			t.Fatal(err)
		}
		if !o.Started() {
			continue
		}
		// The window grows by 18 samples a step, about 1/10 at most of
		// its size once started: its objective grows alike, not by more
		// than half.
		f := o.Objective()
		if prev > 0 && f > 1.5*prev {
			t.Fatalf("after %d samples the objective rose from %g to %g in one step", o.Seen(), prev, f)
		}
		prev = f
	}
}
