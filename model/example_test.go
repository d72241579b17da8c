package model_test

import (
	"errors"
	"fmt"
	"log"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// Two groups of samples over four features, one sample per row.
var exampleRows = mat.NewDense(6, 4, []float64{
	5, 4, 0, 0,
	4, 5, 0, 1,
	5, 5, 1, 0,
	0, 0, 5, 4,
	0, 1, 4, 5,
	1, 0, 5, 5,
})

func ExampleNMF() {
	m := &model.NMF{Common: model.Common{Rank: 2, MaxIter: 500}}
	if err := m.Fit(model.DenseRows(exampleRows), nil); err != nil {
		log.Fatal(err)
	}
	// Each sample's code puts its weight on the factor of its group: the
	// first three on one factor, the last three on the other. Which factor
	// comes first depends on the initialization (an SVD, whose signs
	// differ between BLAS libraries), so compare with sample 0.
	v := m.Codes()
	first := v.At(0, 0) > v.At(0, 1)
	for i := 0; i < 6; i++ {
		fmt.Println(i, (v.At(i, 0) > v.At(i, 1)) == first)
	}
	// Output:
	// 0 true
	// 1 true
	// 2 true
	// 3 false
	// 4 false
	// 5 false
}

func ExampleGNMF() {
	g := &model.GNMF{
		Common: model.Common{Rank: 2, Src: rand.NewPCG(1, 1)},
		Alpha:  1,
		Graph:  graph.KNN{K: 2},
	}
	if err := g.Fit(model.DenseRows(exampleRows), nil); err != nil {
		log.Fatal(err)
	}
	// Code a new sample on the learned basis: graph-aware projection puts
	// it beside its nearest training samples.
	var code mat.Dense
	x := mat.NewDense(1, 4, []float64{0, 0, 4, 4})
	if err := g.Projector(model.ProjectGraph).ProjectTo(&code, model.DenseRows(x)); err != nil {
		log.Fatal(err)
	}
	v := g.Codes()
	sameAs3 := (code.At(0, 0) > code.At(0, 1)) == (v.At(3, 0) > v.At(3, 1))
	fmt.Println("coded like sample 3:", sameAs3)
	// Output:
	// coded like sample 3: true
}

func ExampleEngine() {
	// GNMF written out on the engine: the Frobenius loss plus one graph term.
	x := model.DenseRows(exampleRows)
	s := sparse.FromDense(mat.NewDense(6, 6, []float64{
		0, 1, 1, 0, 0, 0,
		1, 0, 1, 0, 0, 0,
		1, 1, 0, 0, 0, 0,
		0, 0, 0, 0, 1, 1,
		0, 0, 0, 1, 0, 1,
		0, 0, 0, 1, 1, 0,
	}))
	u, v, err := model.Initialize(x, 2, model.InitNNDSVDa, nil)
	if err != nil {
		log.Fatal(err)
	}
	e := model.Engine{
		Loss:    model.NewFrobenius(x),
		Terms:   []model.Term{&model.GraphTerm{Label: "knn", Weight: 0.5, S: s}},
		MaxIter: 100,
	}
	before := e.Objective(u, v, nil)
	res, err := e.Run(u, v)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("objective decreased:", res.Objective < before)
	// Output:
	// objective decreased: true
}

func ExampleProjector() {
	u := mat.NewDense(3, 2, []float64{
		1, 0,
		0, 1,
		1, 1,
	})
	x := mat.NewDense(1, 3, []float64{2, 3, 5}) // = 2·u₁ + 3·u₂
	var code mat.Dense
	p := &model.Projector{Method: model.ProjectPinv, U: u}
	if err := p.ProjectTo(&code, model.DenseRows(x)); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%.3f %.3f\n", code.At(0, 0), code.At(0, 1))
	// Output:
	// 2.000 3.000
}

func ExampleOnline() {
	o := &model.Online{Rank: 2, Graph: graph.KNN{K: 2}, InitSize: 6}
	// The first batch reaches InitSize and runs the first fit.
	if _, err := o.PartialFit(model.DenseRows(exampleRows)); err != nil {
		log.Fatal(err)
	}
	// Later samples are inserted into the graph and coded at once.
	ids, err := o.PartialFit(model.DenseRows(mat.NewDense(1, 4, []float64{4, 4, 0, 0})))
	if err != nil {
		log.Fatal(err)
	}
	v := o.Codes()
	fmt.Println("new sample coded like sample 0:", (v.At(ids[0], 0) > v.At(ids[0], 1)) == (v.At(0, 0) > v.At(0, 1)))
	// Output:
	// new sample coded like sample 0: true
}

func ExampleOnline_SetLabel() {
	// SSKNMF online: labels shape the codes through its signed label graph.
	o := &model.Online{Rank: 2, Method: "ssknmf", Graph: graph.KNN{K: 2, IntraK: 1}, InitSize: 6}
	// The first three samples are only stored; a label set now is used by
	// the first fit.
	ids, err := o.PartialFit(model.DenseRows(mat.DenseCopyOf(exampleRows.Slice(0, 3, 0, 4))))
	if err != nil {
		log.Fatal(err)
	}
	if err := o.SetLabel(ids[0], 0); err != nil {
		log.Fatal(err)
	}
	// These reach InitSize: the first fit runs.
	ids, err = o.PartialFit(model.DenseRows(mat.DenseCopyOf(exampleRows.Slice(3, 6, 0, 4))))
	if err != nil {
		log.Fatal(err)
	}
	// A late label: the codes change at the next PartialFit, not before.
	before := mat.DenseCopyOf(o.Codes())
	if err := o.SetLabel(ids[0], 1); err != nil {
		log.Fatal(err)
	}
	fmt.Println("codes changed by SetLabel:", !mat.Equal(before, o.Codes()))
	if _, err := o.PartialFit(model.DenseRows(mat.NewDense(1, 4, []float64{4, 4, 0, 0}))); err != nil {
		log.Fatal(err)
	}
	fmt.Println("labeled node's code changed at the next PartialFit:", !mat.Equal(before.RowView(ids[0]), o.Codes().RowView(ids[0])))

	// Methods without an online form say so.
	_, err = (&model.Online{Rank: 2, Method: "dpca"}).PartialFit(model.DenseRows(exampleRows))
	fmt.Println(errors.Is(err, model.ErrNotOnline))
	// Output:
	// codes changed by SetLabel: false
	// labeled node's code changed at the next PartialFit: true
	// true
}

// ExampleSweepGraphRows codes two new samples on a fixed basis with GNMF's
// V rule, their older neighbours' codes fixed: the rows a partition's owner
// sweeps in a round of package distributed.
func ExampleSweepGraphRows() {
	x := model.DenseRows(exampleRows)
	g, err := graph.KNN{K: 2}.Dense(exampleRows)
	if err != nil {
		log.Fatal(err)
	}
	s := g.Weights(graph.Weighting{})
	// A basis of one factor per group, and the codes of the first four
	// samples; the last two are new, their codes constant.
	u := mat.NewDense(4, 2, []float64{1, 0, 1, 0, 0, 1, 0, 1})
	v := mat.NewDense(6, 2, []float64{4.5, 0, 4.5, 0.5, 5, 0.5, 0.5, 4.5, 1, 1, 1, 1})
	if err := model.SweepGraphRows(v, x, u, s, 1, []int{4, 5}, 50); err != nil {
		log.Fatal(err)
	}
	for i := 4; i < 6; i++ {
		fmt.Printf("sample %d: %.2f\n", i, v.RawRowView(i))
	}
	fmt.Printf("sample 0 unchanged: %.2f\n", v.RawRowView(0))
	// Output:
	// sample 4: [0.50 4.57]
	// sample 5: [0.50 4.77]
	// sample 0 unchanged: [4.50 0.00]
}
