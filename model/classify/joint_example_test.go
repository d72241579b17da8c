package classify_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/classify"
)

func ExampleJoint() {
	// Eight samples of two kinds (features as rows); the last two are
	// unlabeled.
	x := mat.NewDense(8, 4, []float64{
		5, 1, 0, 1, 4, 2, 1, 0, 6, 1, 1, 1,
		1, 0, 5, 4, 0, 1, 4, 5, 1, 1, 6, 4,
		5, 2, 1, 1, 1, 0, 5, 5,
	})
	y := []int{0, 0, 0, 1, 1, 1, -1, -1}
	m := &model.SSKNMF{Common: model.Common{Rank: 2}, Neighbors: 2, LabelNeighbors: 2}
	if err := m.Fit(model.DenseRows(x), y); err != nil {
		fmt.Println(err)
		return
	}
	j := classify.Joint{K: 3, Rounds: 1, Share: 1}
	if err := j.Fit(x, m.Codes(), y); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("self-labels:", j.Labels())
	fmt.Println("predicted:", j.PredictTo(nil, x, m.Codes()))
	// Output:
	// self-labels: [0 0 0 1 1 1 0 1]
	// predicted: [0 0 0 1 1 1 0 1]
}
