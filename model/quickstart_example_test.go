package model_test

import (
	"fmt"
	"log"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/datasets"
	"github.com/nmfstream/nmfstream/model"
)

// Example_quickStart is the library quick start of README.md: a batch GNMF
// fit on the embedded digits, and the coding of new samples on the learned
// basis.
func Example_quickStart() {
	x, y := datasets.Digits()                             // 1797×64, one sample per row
	train := x.Slice(0, 1500, 0, 64).(*mat.Dense)         // learn from the first 1,500
	newSamples := x.Slice(1500, 1797, 0, 64).(*mat.Dense) // code the other 297

	g := &model.GNMF{Common: model.Common{Rank: 40}}
	if err := g.Fit(model.DenseRows(train), nil); err != nil {
		log.Fatal(err)
	}
	var codes mat.Dense // 297×40, ≥ 0
	if err := g.Projector(model.ProjectGraph).ProjectTo(&codes, model.DenseRows(newSamples)); err != nil {
		log.Fatal(err)
	}

	// Label each new sample like the nearest of ten labeled training codes
	// per class.
	v := g.Codes() // 1500×40
	var labeled []int
	perClass := map[int]int{}
	for i := range 1500 {
		if perClass[y[i]] < 10 {
			perClass[y[i]]++
			labeled = append(labeled, i)
		}
	}
	right := 0
	for i := range 297 {
		best, bestDist := -1, 0.0
		for _, j := range labeled {
			if d := floats.Distance(codes.RawRowView(i), v.RawRowView(j), 2); best < 0 || d < bestDist {
				best, bestDist = j, d
			}
		}
		if y[best] == y[1500+i] {
			right++
		}
	}
	r, k := codes.Dims()
	fmt.Printf("%d new samples coded on %d factors\n", r, k)
	fmt.Println("1-NN on 100 labeled codes, accuracy above 0.85:", float64(right)/297 > 0.85)
	// Output:
	// 297 new samples coded on 40 factors
	// 1-NN on 100 labeled codes, accuracy above 0.85: true
}
