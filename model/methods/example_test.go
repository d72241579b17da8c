package methods_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/methods"
)

func ExampleList() {
	for _, m := range methods.List() {
		fmt.Printf("%-7s labels %-5v needs %-5v online %v\n", m.Name, m.UsesLabels, m.NeedsLabels, m.Online)
	}
	// Output:
	// dgnmf   labels true  needs true  online true
	// dpca    labels true  needs false online false
	// gnmf    labels false needs false online true
	// kernel  labels false needs false online false
	// multik  labels false needs false online false
	// n2s2l   labels true  needs true  online true
	// nge     labels true  needs true  online true
	// nmf     labels false needs false online true
	// ssknmf  labels true  needs false online true
	// ssnmf   labels true  needs true  online false
	// auto    labels true  needs false online true
}

func ExampleLookup() {
	i, err := methods.Lookup("auto")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("auto is %s: α defaults to %g, β to %g, k to %g\n", i.Name, i.Alpha.Default, i.Beta.Default, i.Neighbors.Default)
	_, err = methods.Lookup("pca")
	fmt.Println(err)
	// Output:
	// auto is ssknmf: α defaults to 1, β to 10, k to 5
	// methods: unknown method "pca" (want dgnmf, dpca, gnmf, kernel, multik, n2s2l, nge, nmf, ssknmf, ssnmf, auto)
}

func ExampleNew() {
	// Two groups of samples, the first of each labeled.
	x := mat.NewDense(6, 4, []float64{
		5, 1, 0, 1, 4, 2, 1, 0, 6, 1, 1, 1,
		1, 0, 5, 4, 0, 1, 4, 5, 1, 1, 6, 4,
	})
	labels := []int{0, -1, -1, 1, -1, -1}
	m, err := methods.New("gnmf", methods.Options{Common: model.Common{Rank: 2}, Neighbors: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := m.Fit(model.DenseRows(x), labels); err != nil {
		fmt.Println(err)
		return
	}
	r, k := m.Codes().Dims()
	fmt.Printf("%T: %d codes of rank %d\n", m, r, k)
	// Output:
	// *model.GNMF: 6 codes of rank 2
}
