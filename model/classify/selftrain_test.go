package classify

import (
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestSelfTrainingChain: two parallel lines of points 5 apart, spaced 1
// along each line, labeled at opposite ends. Plain 1-NN gives the left part
// of line 1 to class 0, whose labeled point is nearer; self-training labels
// each line from its labeled end, most confident first, and gets every point.
func TestSelfTrainingChain(t *testing.T) {
	var rows []float64
	var y []int
	for i := 0; i < 10; i++ { // group 0: x from 0 to 9 at height 0
		rows = append(rows, float64(i), 0)
		y = append(y, -1)
	}
	for i := 0; i < 10; i++ { // group 1: x from 0 to 9 at height 5
		rows = append(rows, float64(i), 5)
		y = append(y, -1)
	}
	y[0] = 0  // (0, 0)
	y[19] = 1 // (9, 3)
	truth := []int{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}
	x := mat.NewDense(20, 2, rows)

	var nn NearestNeighbor
	if err := nn.Fit(x, y); err != nil {
		t.Fatal(err)
	}
	plain := nn.PredictTo(nil, x)
	wrong := 0
	for i, p := range plain {
		if p != truth[i] {
			wrong++
		}
	}
	if wrong == 0 {
		t.Fatal("the chain should defeat plain 1-NN")
	}

	st := SelfTraining{Rounds: 10, Share: 1}
	if err := st.Fit(x, y); err != nil {
		t.Fatal(err)
	}
	pred, score := st.PredictScoresTo(nil, nil, x)
	for i, p := range pred {
		if p != truth[i] {
			t.Errorf("row %d: self-training predicts %d, want %d (plain 1-NN made %d errors)", i, p, truth[i], wrong)
		}
		if score[i] < 0 || score[i] > 1 {
			t.Errorf("row %d: score %v out of [0, 1]", i, score[i])
		}
	}
	for i, l := range st.Labels() {
		if l != truth[i] {
			t.Errorf("row %d labeled %d, want %d", i, l, truth[i])
		}
	}
}

func TestSelfTrainingErrors(t *testing.T) {
	x := mat.NewDense(3, 1, []float64{0, 1, 2})
	var st SelfTraining
	if err := st.Fit(x, []int{-1, -1, -1}); err != ErrNoLabels {
		t.Errorf("no labels: got %v, want ErrNoLabels", err)
	}
	if err := st.Fit(x, []int{0, 1}); err == nil {
		t.Error("wrong label count: no error")
	}
	st.Share = 2
	if err := st.Fit(x, []int{0, -1, 1}); err == nil {
		t.Error("share 2: no error")
	}
}
