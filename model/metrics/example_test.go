package metrics_test

import (
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/metrics"
)

func ExampleAccuracy() {
	pred := []int{0, 1, 1, 2}
	truth := []int{0, 1, 2, -1} // the last sample has no known label
	fmt.Printf("%.3f\n", metrics.Accuracy(pred, truth))
	// Output: 0.667
}

func ExampleConfusionMatrix() {
	pred := []int{0, 1, 1, 0}
	truth := []int{0, 1, 0, 0}
	for _, row := range metrics.ConfusionMatrix(pred, truth, 2) {
		fmt.Println(row)
	}
	// Output:
	// [2 1]
	// [0 1]
}

func ExampleAssign() {
	cost := mat.NewDense(3, 3, []float64{
		4, 1, 3,
		2, 0, 5,
		3, 2, 2,
	})
	fmt.Println(metrics.Assign(cost))
	// Output: [1 0 2]
}

func ExampleClusteringAccuracy() {
	clusters := []int{2, 2, 0, 0, 0, 1}
	classes := []int{0, 0, 1, 1, 2, 2}
	fmt.Printf("%.3f\n", metrics.ClusteringAccuracy(clusters, classes))
	// Output: 0.833
}

func ExampleNMI() {
	fmt.Printf("%.3f\n", metrics.NMI([]int{5, 5, 7, 7}, []int{0, 0, 1, 1}))
	fmt.Printf("%.3f\n", metrics.NMI([]int{0, 0, 0, 1}, []int{0, 0, 1, 1}))
	// Output:
	// 1.000
	// 0.344
}

func ExampleLabelEncoder() {
	var e metrics.LabelEncoder
	e.Fit([]string{"dog", "cat", "dog", "bird"})
	fmt.Println(e.Classes())
	y, _ := e.Encode(nil, []string{"cat", "dog"})
	fmt.Println(y)
	back, _ := e.Decode(nil, y)
	fmt.Println(back)
	_, err := e.Encode(nil, []string{"fish"})
	fmt.Println(err)
	// Output:
	// [bird cat dog]
	// [1 2]
	// [cat dog]
	// metrics: unknown label "fish" at 0
}

func ExampleSplit() {
	y := []int{0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1}
	s, err := metrics.Split(y, 1.0/3, 1, rand.NewPCG(1, 1))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(s.Train), len(s.Labeled), len(s.Unlabeled), len(s.Test))
	_, err = metrics.Split(y, 1.0/3, 4, nil)
	fmt.Println(err)
	// Output:
	// 8 2 6 4
	// metrics: class 0 has 4 rows in the training pool, need at least 5
}
