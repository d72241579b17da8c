package classify_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/classify"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// codes: two groups of 2-D codes; rows 1 and 4 are unlabeled.
var (
	codes = mat.NewDense(6, 2, []float64{
		0.0, 1.0,
		0.1, 0.9,
		0.2, 1.1,
		1.0, 0.0,
		0.9, 0.1,
		1.1, 0.2,
	})
	labels = []int{0, -1, 0, 1, -1, 1}
	query  = mat.NewDense(2, 2, []float64{0.05, 0.8, 0.8, 0.05})
)

func ExampleNearestNeighbor() {
	var nn classify.NearestNeighbor // 1-NN, Euclidean
	if err := nn.Fit(codes, labels); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(nn.PredictTo(nil, query))
	// Output: [0 1]
}

func ExampleNearestNeighbor_PredictScoresTo() {
	nn := classify.NearestNeighbor{K: 3, Metric: classify.Cosine}
	if err := nn.Fit(codes, labels); err != nil {
		fmt.Println(err)
		return
	}
	pred, share := nn.PredictScoresTo(nil, nil, query)
	fmt.Println(pred)
	fmt.Printf("%.2f\n", share)
	// Output:
	// [0 1]
	// [0.67 0.67]
}

func ExampleNearestNeighbor_NeighborsTo() {
	nn := classify.NearestNeighbor{K: 2}
	if err := nn.Fit(codes, labels); err != nil {
		fmt.Println(err)
		return
	}
	// Indices count the labeled rows only: 0, 2, 3, 5 of codes are 0..3.
	idx, dist := nn.NeighborsTo(nil, nil, query)
	fmt.Println(idx)
	fmt.Printf("%.3f\n", dist)
	// Output:
	// [0 1 2 3]
	// [0.206 0.335 0.206 0.335]
}

func ExampleNearestCentroid() {
	var nc classify.NearestCentroid
	if err := nc.Fit(codes, labels); err != nil {
		fmt.Println(err)
		return
	}
	pred, dist := nc.PredictScoresTo(nil, nil, query)
	fmt.Println(pred)
	fmt.Printf("%.3f\n", dist)
	fmt.Printf("%.2f\n", mat.Formatted(nc.CentroidsTo(nil)))
	// Output:
	// [0 1]
	// [0.255 0.255]
	// ⎡0.10  1.05⎤
	// ⎣1.05  0.10⎦
}

func ExampleLabelPropagation() {
	lp := classify.LabelPropagation{K: 2} // Alpha 0.2 by default
	if err := lp.Fit(codes, labels); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(lp.TransductionTo(nil)) // labels of the training rows
	pred, share := lp.PredictScoresTo(nil, nil, query)
	fmt.Println(pred)
	fmt.Printf("%.2f\n", share)
	// Output:
	// [0 0 0 1 1 1]
	// [0 1]
	// [1.00 1.00]
}

func ExampleLinear() {
	var li classify.Linear // C = 1
	if err := li.Fit(codes, labels); err != nil {
		fmt.Println(err)
		return
	}
	pred, prob := li.PredictScoresTo(nil, nil, query)
	fmt.Println(pred)
	fmt.Printf("%.2f\n", prob)
	// Output:
	// [0 1]
	// [0.68 0.68]
}

func ExampleKMeans() {
	km := classify.KMeans{K: 2, Src: rand.NewPCG(1, 1)}
	if err := km.Fit(codes); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(km.LabelsTo(nil))
	fmt.Printf("%.3f\n", km.Inertia())
	fmt.Println(km.PredictTo(nil, query))
	// Output:
	// [1 1 1 0 0 0]
	// 0.080
	// [1 0]
}

func ExampleErrNoLabels() {
	var nn classify.NearestNeighbor
	err := nn.Fit(codes, []int{-1, -1, -1, -1, -1, -1})
	fmt.Println(errors.Is(err, classify.ErrNoLabels), err)
	// Output: true classify: no labeled samples
}

func ExampleMetric_String() {
	fmt.Println(classify.Euclidean, classify.Cosine)
	// Output: euclidean cosine
}

func ExampleLapRLS() {
	// Six short documents over five terms, as l2-normalized TF-IDF rows:
	// three use terms 0–2, three terms 2–4; one of each group is labeled.
	x := sparse.Zeros(0, 5)
	for _, terms := range [][]int{{0, 1}, {0, 2}, {1, 2}, {3, 4}, {2, 3}, {2, 4}} {
		x.AppendRow(terms, []float64{math.Sqrt2 / 2, math.Sqrt2 / 2})
	}
	y := []int{0, -1, -1, 1, -1, -1}
	lr := classify.LapRLS{K: 2}
	if err := lr.Fit(x, y); err != nil {
		fmt.Println(err)
		return
	}
	query := sparse.Zeros(0, 5)
	query.AppendRow([]int{1}, []float64{1}) // only term 1: first group
	query.AppendRow([]int{4}, []float64{1}) // only term 4: second group
	fmt.Println(lr.PredictTo(nil, query))
	// Output: [0 1]
}
