package graph

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestCosineWeightsFromDistances checks the CosineSimilarity weights of a
// dense Euclidean graph, computed in O(1) from each edge's squared distance
// and the rows' squared norms, against the cosine of the rows themselves.
func TestCosineWeightsFromDistances(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	x := mat.NewDense(60, 16, nil)
	for i := range 60 {
		for j := range 16 {
			x.Set(i, j, r.Float64()*10)
		}
	}
	g, err := KNN{K: 5}.Dense(x)
	if err != nil {
		t.Fatal(err)
	}
	w := g.Weights(Weighting{Scheme: CosineSimilarity})
	edges := 0
	for i := range 60 {
		ind, val := w.Row(i)
		for p, j := range ind {
			a, b := x.RawRowView(i), x.RawRowView(j)
			var ab, aa, bb float64
			for l := range a {
				ab, aa, bb = ab+a[l]*b[l], aa+a[l]*a[l], bb+b[l]*b[l]
			}
			want := ab / math.Sqrt(aa*bb)
			// The distance form loses about ε·‖a‖²/(‖a‖‖b‖(1−cos)) to
			// cancellation: 1e-9 is ample for rows of norm ~20.
			if math.Abs(val[p]-want) > 1e-9 {
				t.Errorf("weight (%d, %d) = %v, want cosine %v", i, j, val[p], want)
			}
			if w.At(j, i) != val[p] {
				t.Errorf("weight (%d, %d) = %v differs from (%d, %d) = %v", i, j, val[p], j, i, w.At(j, i))
			}
			edges++
		}
	}
	if edges < 60*5 {
		t.Errorf("%d edges, want at least %d", edges, 60*5)
	}
}
