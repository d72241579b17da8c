package model

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// TestOnlinePhantomSteps checks SSKNMF's and N²S²L's online U step on the
// seen rows and one phantom row (online_phantom.go) against the whole
// width's, on sparse rows whose later batches use columns no earlier
// sample used (each batch of digits spread over its own 64 of 8,000
// columns, so every step brings new ones), with labels: U and V within
// 10⁻⁸ of their largest entry after eight steps, U's rows for the columns
// still unseen equal, and the phantom's gather taken.
func TestOnlinePhantomSteps(t *testing.T) {
	defer func(p bool) { firstFitPhantom = p }(firstFitPhantom)
	train, _, trainY, _, _ := digitsSplit(t, 10)
	_, d := train.Dims()
	const wide, n, bs = 8000, 500, 50
	perm := rand.New(rand.NewPCG(4, 4)).Perm(wide)
	used := map[int]bool{}
	for _, method := range []string{"ssknmf", "n2s2l"} {
		var got [2]*Online
		for p, on := range []bool{false, true} {
			firstFitPhantom = on
			o := &Online{Rank: 8, Method: method, Graph: graph.KNN{K: 5}}
			feedSparseLabeled(t, o, n, bs, func(lo, hi int) *sparse.CSR {
				cols := slices.Clone(perm[(lo/bs)*d/2 : (lo/bs)*d/2+d]) // half new, half the last batch's
				slices.Sort(cols)
				return spreadRows(train, lo, hi, cols, wide, used)
			}, trainY)
			got[p] = o
		}
		whole, part := got[0], got[1]
		if part.ph.seen == nil || whole.ph.seen != nil || len(part.ph.rows) == 0 {
			t.Fatalf("%s: the phantom's step did not run (tracking %v, gathered %d rows) or ran without it", method, part.ph.seen != nil, len(part.ph.rows))
		}
		if part.ph.nSeen != len(used) {
			t.Errorf("%s: %d columns marked seen, the samples used %d", method, part.ph.nSeen, len(used))
		}
		for _, o := range got {
			if !equalRows(&o.u, used) {
				t.Errorf("%s: U's rows for the unseen columns differ", method)
			}
		}
		for _, m := range []struct {
			name string
			a, b *mat.Dense
		}{{"U", &whole.u, &part.u}, {"V", &whole.v, &part.v}, {"B", whole.fullB(), part.fullB()}} {
			if !mat.EqualApprox(m.a, m.b, 1e-8*mat.Max(m.a)) {
				var diff mat.Dense
				diff.Sub(m.a, m.b)
				t.Errorf("%s: %s with the phantom row differs from the whole width's by %.3g (max entry %.3g)", method, m.name, mat.Norm(&diff, math.Inf(1)), mat.Max(m.a))
			}
		}
	}
}
