package model_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
)

// eightSamples is a tiny two-class problem: samples 0–2 and 3–5 are the
// classes, 6 and 7 are unlabeled.
func eightSamples() (model.Data, []int) {
	x := mat.NewDense(8, 4, []float64{
		5, 1, 0, 1, 4, 2, 1, 0, 6, 1, 1, 1,
		1, 0, 5, 4, 0, 1, 4, 5, 1, 1, 6, 4,
		5, 2, 1, 1, 1, 0, 5, 5,
	})
	return model.DenseRows(x), []int{0, 0, 0, 1, 1, 1, -1, -1}
}

// nearestLabeled returns the labeled sample whose code is nearest to row i.
func nearestLabeled(v *mat.Dense, y []int, i int) int {
	best, bd := -1, 0.0
	for j, c := range y {
		if c < 0 || j == i {
			continue
		}
		var d mat.VecDense
		d.SubVec(v.RowView(i), v.RowView(j))
		if n := mat.Norm(&d, 2); best < 0 || n < bd {
			best, bd = j, n
		}
	}
	return y[best]
}

func ExampleN2S2L() {
	x, y := eightSamples()
	m := &model.N2S2L{Common: model.Common{Rank: 3}, Neighbors: 2, PenaltyPairs: 2}
	if err := m.Fit(x, y); err != nil {
		fmt.Println(err)
		return
	}
	n, k := m.Codes().Dims()
	fmt.Printf("V is %d×%d, V¹ has %d columns\n", n, k, m.DiscriminativeCols())
	fmt.Println("unlabeled 6 and 7 look like classes", nearestLabeled(m.Codes(), y, 6), nearestLabeled(m.Codes(), y, 7))
	// Output:
	// V is 8×3, V¹ has 2 columns
	// unlabeled 6 and 7 look like classes 0 1
}

func ExampleNGE() {
	x, y := eightSamples()
	m := &model.NGE{Common: model.Common{Rank: 3}, Neighbors: 2, IntrinsicK: 1, PenaltyPairs: 2}
	if err := m.Fit(x, y); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("embedding columns:", m.EmbeddingDim())
	fmt.Println("unlabeled 6 and 7 look like classes", nearestLabeled(m.Codes(), y, 6), nearestLabeled(m.Codes(), y, 7))
	// Output:
	// embedding columns: 2
	// unlabeled 6 and 7 look like classes 0 1
}

func ExampleDGNMF() {
	x, y := eightSamples()
	m := &model.DGNMF{Common: model.Common{Rank: 2}, Neighbors: 2}
	if err := m.Fit(x, y); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("unlabeled 6 and 7 look like classes", nearestLabeled(m.Codes(), y, 6), nearestLabeled(m.Codes(), y, 7))
	// Output:
	// unlabeled 6 and 7 look like classes 0 1
}

func ExampleSSKNMF() {
	x, y := eightSamples()
	m := &model.SSKNMF{Common: model.Common{Rank: 2}, Neighbors: 2, LabelNeighbors: 2}
	if err := m.Fit(x, y); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("unlabeled 6 and 7 look like classes", nearestLabeled(m.Codes(), y, 6), nearestLabeled(m.Codes(), y, 7))
	// Output:
	// unlabeled 6 and 7 look like classes 0 1
}

func ExampleDPCA() {
	x, y := eightSamples()
	m := &model.DPCA{Rank: 2, MustLink: [][2]int{{0, 6}}}
	if err := m.Fit(x, y); err != nil {
		fmt.Println(err)
		return
	}
	var z mat.Dense
	if err := m.TransformTo(&z, x); err != nil {
		fmt.Println(err)
		return
	}
	r, c := z.Dims()
	fmt.Printf("codes %d×%d; unlabeled 7 looks like class %d\n", r, c, nearestLabeled(&z, y, 7))
	// Output:
	// codes 8×2; unlabeled 7 looks like class 1
}

func ExampleAuto() {
	x, y := eightSamples()
	m := model.Auto(2)
	// Eight samples: the default neighbourhoods (5) would join almost
	// every pair, and the k-NN graph (β = 10) would pull all codes
	// together.
	s := m.(*model.SSKNMF)
	s.Neighbors, s.LabelNeighbors = 2, 2
	if err := m.Fit(x, y); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: %T\n", model.AutoMethod, m)
	fmt.Println("unlabeled 6 and 7 look like classes", nearestLabeled(m.Codes(), y, 6), nearestLabeled(m.Codes(), y, 7))
	// Output:
	// ssknmf: *model.SSKNMF
	// unlabeled 6 and 7 look like classes 0 1
}
