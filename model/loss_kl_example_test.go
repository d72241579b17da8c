package model_test

import (
	"fmt"
	"log"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// The divergence of one sample x = (1, 0) from UVᵀ = (2, 2): the zero
// entry contributes its (UVᵀ)_ij, so D = log(1/2) − 1 + 2 + 2 = 3 − log 2.
func ExampleNewKL() {
	x := model.SparseRows(sparse.FromDense(mat.NewDense(1, 2, []float64{1, 0})))
	u := mat.NewDense(2, 1, []float64{1, 1})
	v := mat.NewDense(1, 1, []float64{2})
	fmt.Printf("D = %.4f\n", model.NewKL(x).Value(u, v))
	// Output:
	// D = 2.3069
}

// GNMF with the KL divergence instead of the Frobenius loss: the graph
// weight α keeps its meaning (the objective is D(X‖UVᵀ) + α tr(VᵀLV)).
func ExampleLossKind() {
	x := model.DenseRows(mat.NewDense(6, 4, []float64{
		5, 4, 0, 0,
		4, 5, 0, 1,
		5, 5, 1, 0,
		0, 1, 5, 4,
		0, 0, 4, 5,
		1, 0, 5, 5,
	}))
	g := &model.GNMF{Common: model.Common{Rank: 2, Loss: model.LossKL}, Alpha: 1}
	g.Graph.K = 2
	if err := g.Fit(x, nil); err != nil {
		log.Fatal(err)
	}
	// Which factor dominates each sample's code: the two groups split.
	v := g.Codes()
	for i := 0; i < 6; i++ {
		fmt.Println(i, v.At(i, 0) > v.At(i, 1) == (v.At(0, 0) > v.At(0, 1)))
	}
	// Output:
	// 0 true
	// 1 true
	// 2 true
	// 3 false
	// 4 false
	// 5 false
}

// With fewer samples than features, DPCA works with N×N matrices (the
// Gram form) and never forms the D×D scatter.
func ExampleDPCA_gram() {
	x := sparse.NewBuilder(4, 100_000)
	x.Add(0, 7, 1)
	x.Add(0, 99_999, 2)
	x.Add(1, 7, 2)
	x.Add(2, 50_000, 1)
	x.Add(3, 50_000, 3)
	x.Add(3, 12, 1)
	m := &model.DPCA{Rank: 2}
	if err := m.Fit(model.SparseRows(x.CSR()), []int{0, -1, 1, -1}); err != nil {
		log.Fatal(err)
	}
	d, k := m.Basis().Dims()
	fmt.Println(m.FittedForm(), d, k)
	// Output:
	// gram 100000 2
}
