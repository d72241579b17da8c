package model

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/graph"
)

// TestOnlineOutlierLeaves streams 3,000 four-feature samples (three
// classes, values up to 15) in batches of 10 through a window of 300, one
// record of 10⁴ in every 90. Each outlier's contribution to the
// statistics is added and, 300 samples later, subtracted: before repairA
// the rounding left of it made the U step diverge (the objective went
// from 10⁹ to NaN by the 90th batch). It checks that the objective stays
// finite and within 4 times its value after 30 batches, that the
// statistics A and B are those of the codes to 10⁻⁶ at the end, and that
// the repair fired (without it the test fails).
func TestOnlineOutlierLeaves(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 7))
	o := &Online{Rank: 4, Graph: graph.KNN{K: 5, Window: 300}, Src: rand.NewPCG(1, 1)}
	var ref float64
	for step := range 300 {
		x := mat.NewDense(10, 4, nil)
		for i := range 10 {
			c := (step*10 + i) % 3
			for j := range 4 {
				x.Set(i, j, float64(r.IntN(4)))
			}
			x.Set(i, c, x.At(i, c)+12)
		}
		if step%9 == 3 {
			x.SetRow(0, []float64{1e4, 1e4, 1e4, 1e4})
		}
		if _, err := o.PartialFit(DenseRows(x)); err != nil {
			t.Fatalf("batch %d: %v", step, err)
		}
		if !o.Started() || step%10 != 0 {
			continue
		}
		obj := o.Objective()
		if step == 30 {
			ref = obj
		}
		if math.IsNaN(obj) || math.IsInf(obj, 0) || (ref > 0 && obj > 4*ref) {
			t.Fatalf("batch %d: objective %g (%g after 30 batches)", step, obj, ref)
		}
	}
	var a, b, da, db mat.Dense
	a.Mul(o.v.T(), &o.v)
	o.Data().MulTo(&b, &o.v)
	da.Sub(&a, &o.a)
	db.Sub(&b, o.fullB())
	if ea, eb := mat.Norm(&da, 2)/mat.Norm(&a, 2), mat.Norm(&db, 2)/mat.Norm(&b, 2); ea > 1e-6 || eb > 1e-6 {
		t.Errorf("statistics off the codes: A by %.3g, B by %.3g (relative)", ea, eb)
	}
	if o.repairs == 0 {
		t.Error("repairA never fired: the stream no longer tests it")
	}
	t.Logf("%d repairs in 300 batches", o.repairs)
}
