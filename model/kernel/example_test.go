package kernel_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/kernel"
)

// Two groups of samples, far apart.
func twoGroups() *mat.Dense {
	return mat.NewDense(6, 2, []float64{
		0, 1, 0.1, 1, 0.2, 0.9,
		5, 0, 5.1, 0.2, 4.9, 0.1,
	})
}

func ExampleMatrixTo() {
	x := model.DenseRows(mat.NewDense(3, 1, []float64{0, 1, 3}))
	k, err := kernel.Gaussian{Scale: 1}.Bind(x) // σ = 1 × the largest distance, 3
	if err != nil {
		fmt.Println(err)
		return
	}
	var km mat.Dense
	if err := kernel.MatrixTo(&km, k, x); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(k)
	fmt.Printf("%.3f\n", mat.Formatted(&km))
	// Output:
	// gaussian(σ=3)
	// ⎡1.000  0.946  0.607⎤
	// ⎢0.946  1.000  0.801⎥
	// ⎣0.607  0.801  1.000⎦
}

func ExampleFlexible() {
	x := model.DenseRows(twoGroups())
	m := kernel.Flexible{Common: model.Common{Rank: 2}, Kernel: kernel.Gaussian{Scale: 0.5}}
	if err := m.Fit(x, nil); err != nil {
		fmt.Println(err)
		return
	}
	var codes mat.Dense
	if err := m.ProjectTo(&codes, model.DenseRows(mat.NewDense(2, 2, []float64{0.1, 0.95, 5, 0.1}))); err != nil {
		fmt.Println(err)
		return
	}
	// Each new sample loads on the factor of its group.
	first := codes.At(0, 0) > codes.At(0, 1)
	second := codes.At(1, 0) > codes.At(1, 1)
	fmt.Println(first != second)
	// Output: true
}

func ExampleMultiK() {
	x := model.DenseRows(twoGroups())
	m := kernel.MultiK{
		Common:    model.Common{Rank: 2},
		Kernels:   []kernel.Kernel{kernel.Gaussian{Scale: 0.1}, kernel.Gaussian{Scale: 1}, kernel.Cosine{}},
		Alpha:     1, // AdapGrNMF_MultiK
		Neighbors: 2,
		Step:      kernel.TauLP,
	}
	if err := m.Fit(x, nil); err != nil {
		fmt.Println(err)
		return
	}
	var sum float64
	ones := 0
	for _, t := range m.Tau() {
		sum += t
		if t == 1 {
			ones++
		}
	}
	fmt.Printf("τ sums to %.0f; the LP picks %d kernel\n", sum, ones)
	// Output: τ sums to 1; the LP picks 1 kernel
}

func ExampleGraph() {
	k := mat.NewDense(4, 4, []float64{
		1, 0.9, 0.1, 0.1,
		0.9, 1, 0.1, 0.2,
		0.1, 0.1, 1, 0.8,
		0.1, 0.2, 0.8, 1,
	})
	s, err := kernel.Graph(k, 1, kernel.ZeroOne)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(mat.Formatted(s.ToDense()))
	// Output:
	// ⎡0  1  0  0⎤
	// ⎢1  0  0  0⎥
	// ⎢0  0  0  1⎥
	// ⎣0  0  1  0⎦
}

func ExampleTauStepTo() {
	g := []float64{3, 1, 2}
	tau := make([]float64, 3)
	kernel.TauStepTo(tau, g, kernel.TauLP, 0)
	fmt.Println(tau)
	kernel.TauStepTo(tau, g, kernel.TauEntropy, 0.5)
	fmt.Printf("%.3f\n", tau)
	// Output:
	// [0 1 0]
	// [0.090 0.665 0.245]
}

func ExampleNystrom() {
	x := model.DenseRows(twoGroups())
	m := kernel.MultiK{
		Common:  model.Common{Rank: 2},
		Kernels: []kernel.Kernel{kernel.Gaussian{Scale: 0.5}},
		Nystrom: &kernel.Nystrom{Landmarks: 4},
	}
	if err := m.Fit(x, nil); err != nil {
		fmt.Println(err)
		return
	}
	r, c := m.Codes().Dims()
	fmt.Println(r, c)
	// Output: 6 2
}
