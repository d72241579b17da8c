package model

import (
	"errors"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/classify"
)

// jointToy is two classes in 2-D features with matching 1-D codes: samples
// 0–3 are class 0 near (1, 0), samples 4–7 class 1 near (0, 1); 0 and 4 are
// labeled.
func jointToy() (x, v *mat.Dense, y []int) {
	x = mat.NewDense(8, 2, []float64{
		1, 0, 0.9, 0.1, 1, 0.2, 0.8, 0,
		0, 1, 0.1, 0.9, 0.2, 1, 0, 0.8,
	})
	v = mat.NewDense(8, 2, []float64{
		1, 0, 1, 0.1, 0.9, 0, 1, 0,
		0, 1, 0.1, 1, 0, 0.9, 0, 1,
	})
	y = []int{0, -1, -1, -1, 1, -1, -1, -1}
	return x, v, y
}

func TestJointClassifier(t *testing.T) {
	x, v, y := jointToy()
	j := JointClassifier{K: 1, Rounds: 1, Share: 1}
	if err := j.Fit(DenseRows(x), v, y); err != nil {
		t.Fatal(err)
	}
	want := []int{0, 0, 0, 0, 1, 1, 1, 1}
	for i, c := range j.Labels() {
		if c != want[i] {
			t.Errorf("self-label of sample %d = %d, want %d", i, c, want[i])
		}
	}
	// The query's features are class 0's, its code class 1's: the code
	// weight decides.
	qx := mat.NewDense(1, 2, []float64{1, 0.1})
	qv := mat.NewDense(1, 2, []float64{0, 1})
	for _, c := range []struct {
		w    float64
		want int
	}{{1e-3, 0}, {1e3, 1}} {
		j := JointClassifier{K: 1, Rounds: 1, Share: 1, CodeWeight: c.w}
		if err := j.Fit(DenseRows(x), v, y); err != nil {
			t.Fatal(err)
		}
		if got := j.PredictTo(nil, DenseRows(qx), qv)[0]; got != c.want {
			t.Errorf("CodeWeight %g: predicted %d, want %d", c.w, got, c.want)
		}
	}
	// Each block is scaled by its mean row norm, so rescaling the features
	// (pixels in [0, 16] or [0, 1]) changes nothing.
	xs := mat.NewDense(8, 2, nil)
	xs.Scale(1000, x)
	qs := mat.NewDense(1, 2, nil)
	qs.Scale(1000, qx)
	for _, w := range []float64{0.5, 2} {
		a := JointClassifier{K: 3, CodeWeight: w}
		b := JointClassifier{K: 3, CodeWeight: w}
		if err := a.Fit(DenseRows(x), v, y); err != nil {
			t.Fatal(err)
		}
		if err := b.Fit(DenseRows(xs), v, y); err != nil {
			t.Fatal(err)
		}
		if pa, pb := a.PredictTo(nil, DenseRows(qx), qv)[0], b.PredictTo(nil, DenseRows(qs), qv)[0]; pa != pb {
			t.Errorf("CodeWeight %g: prediction %d on x, %d on 1000·x", w, pa, pb)
		}
	}
}

func TestJointClassifierBadInput(t *testing.T) {
	x, v, y := jointToy()
	var j JointClassifier
	if err := j.Fit(DenseRows(x), mat.NewDense(7, 2, nil), y); err == nil {
		t.Error("Fit accepted 7 codes for 8 samples")
	}
	if err := (&JointClassifier{CodeWeight: -1}).Fit(DenseRows(x), v, y); err == nil {
		t.Error("Fit accepted a negative CodeWeight")
	}
	none := make([]int, 8)
	for i := range none {
		none[i] = -1
	}
	if err := j.Fit(DenseRows(x), v, none); !errors.Is(err, classify.ErrNoLabels) {
		t.Errorf("Fit without labels: %v, want classify.ErrNoLabels", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("PredictTo after a failed Fit did not panic")
		}
	}()
	j.PredictTo(nil, DenseRows(x), v)
}
