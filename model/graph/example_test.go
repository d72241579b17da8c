package graph_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// Five points on a line: 0, 1, 2, 10, 11.
var line = mat.NewDense(5, 1, []float64{0, 1, 2, 10, 11})

func ExampleKNN_Dense() {
	g, err := graph.KNN{K: 2}.Dense(line)
	if err != nil {
		fmt.Println(err)
		return
	}
	ids, dist := g.Neighbors(3)
	fmt.Println(ids, dist)
	// Output: [4 2] [1 8]
}

func ExampleKNN_Sparse() {
	// Three tiny documents over a 4-word vocabulary.
	x := sparse.FromDense(mat.NewDense(3, 4, []float64{
		1, 1, 0, 0,
		2, 2, 0, 1,
		0, 0, 3, 0,
	}))
	g, err := graph.KNN{K: 1, Metric: graph.Cosine}.Sparse(x)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := 0; i < 3; i++ {
		ids, dist := g.Neighbors(i)
		fmt.Printf("%d: %v %.3f\n", i, ids, dist)
	}
	// Output:
	// 0: [1] [0.057]
	// 1: [0] [0.057]
	// 2: [0] [1.000]
}

func ExampleGraph_Weights() {
	g, _ := graph.KNN{K: 1}.Dense(line)
	s := g.Weights(graph.Weighting{}) // binary, max(W, Wᵀ)
	fmt.Println(mat.Formatted(s.ToDense()))
	fmt.Println(graph.Degrees(s, nil))
	// Output:
	// ⎡0  1  0  0  0⎤
	// ⎢1  0  1  0  0⎥
	// ⎢0  1  0  0  0⎥
	// ⎢0  0  0  0  1⎥
	// ⎣0  0  0  1  0⎦
	// [1 2 1 1 1]
}

func ExampleLaplacian() {
	g, _ := graph.KNN{K: 1}.Dense(line)
	l := graph.Laplacian(g.Weights(graph.Weighting{}))
	fmt.Println(mat.Formatted(l.ToDense()))
	// Output:
	// ⎡ 1  -1   0   0   0⎤
	// ⎢-1   2  -1   0   0⎥
	// ⎢ 0  -1   1   0   0⎥
	// ⎢ 0   0   0   1  -1⎥
	// ⎣ 0   0   0  -1   1⎦
}

func ExampleGraph_InsertDense() {
	g, _ := graph.KNN{K: 1, Window: 5}.Dense(line)
	// 1.6 arrives: it becomes node 2's nearest; the window drops node 0.
	ch, err := g.InsertDense(mat.NewDense(1, 1, []float64{1.6}))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("added", ch.Added, "removed", ch.Removed, "changed", ch.Changed)
	ids, _ := g.Neighbors(2)
	fmt.Println("node 2's neighbour:", ids)
	// Output:
	// added [0] removed [0] changed [0 1 2]
	// node 2's neighbour: [0]
}

func ExampleGraph_SetLabel() {
	g, _ := graph.KNN{K: 1}.Dense(line)
	g.SetLabels([]int{0, 2, 3}, []int{0, 0, 1})
	// A late label for node 4. Each labeled node is joined to its nearest
	// same-class node (+1) and its nearest other-class node (−1).
	g.SetLabel(4, 1)
	fmt.Println(mat.Formatted(g.Signed(graph.Weighting{}).ToDense()))
	// Output:
	// ⎡ 0   0   1  -1   0⎤
	// ⎢ 0   0   0   0   0⎥
	// ⎢ 1   0   0  -1  -1⎥
	// ⎢-1   0  -1   0   1⎥
	// ⎣ 0   0  -1   1   0⎦
}

func ExampleGraph_MFA() {
	g, _ := graph.KNN{K: 1, PenaltyPairs: 1}.Dense(line)
	g.SetLabels([]int{0, 1, 2, 3, 4}, []int{0, 0, 0, 1, 1})
	intrinsic, penalty := g.MFA(graph.Weighting{})
	fmt.Println(intrinsic.NNZ()/2, "intrinsic edges")
	fmt.Println(mat.Formatted(penalty.ToDense()))
	// Output:
	// 3 intrinsic edges
	// ⎡0  0  0  0  0⎤
	// ⎢0  0  0  0  0⎥
	// ⎢0  0  0  1  0⎥
	// ⎢0  0  1  0  0⎥
	// ⎣0  0  0  0  0⎦
}

func ExampleFromConstraints() {
	s, err := graph.FromConstraints(3, [][2]int{{0, 1}}, [][2]int{{1, 2}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(mat.Formatted(s.ToDense()))
	// Output:
	// ⎡ 0   1   0⎤
	// ⎢ 1   0  -1⎥
	// ⎣ 0  -1   0⎦
}
