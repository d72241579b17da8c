package model

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/vec"
	"github.com/nmfstream/nmfstream/model/classify"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// JointClassifier runs classify.Joint on model.Data for this package's
// tests: the tests fit methods on Data and classify their codes with it.
// Its fields are classify.Joint's; sx and sv are the scales of the last
// Fit, which joint uses (tests that study the joint space set them).
type JointClassifier struct {
	CodeWeight, FinalCodeWeight float64
	Rounds                      int
	Share                       float64
	Gamma, Lambda               float64
	MaxRows                     int
	Vote                        bool
	K                           int

	sx, sv float64
	j      classify.Joint
}

func (j *JointClassifier) config() classify.Joint {
	return classify.Joint{CodeWeight: j.CodeWeight, FinalCodeWeight: j.FinalCodeWeight, Rounds: j.Rounds, Share: j.Share,
		Gamma: j.Gamma, Lambda: j.Lambda, MaxRows: j.MaxRows, Vote: j.Vote, K: j.K}
}

func (j *JointClassifier) Fit(x Data, codes *mat.Dense, labels []int) error {
	feat := denseRows(x)
	j.sx, j.sv = meanRowNorm(feat), meanRowNorm(codes)
	j.j = j.config()
	return j.j.Fit(feat, codes, labels)
}

func (j *JointClassifier) Labels() []int { return j.j.Labels() }

func (j *JointClassifier) PredictTo(dst []int, x Data, codes *mat.Dense) []int {
	return j.j.PredictTo(dst, denseRows(x), codes)
}

func (j *JointClassifier) PredictScoresTo(dst []int, score []float64, x Data, codes *mat.Dense) ([]int, []float64) {
	return j.j.PredictScoresTo(dst, score, denseRows(x), codes)
}

// joint returns the rows [x/s_x, w·v/s_v], as classify.Joint forms them.
func (j *JointClassifier) joint(x, v *mat.Dense, w float64) *mat.Dense {
	n, d := x.Dims()
	_, k := v.Dims()
	out := mat.NewDense(n, d+k, nil)
	for i := range n {
		row := out.RawRowView(i)
		for c, x := range x.RawRowView(i) {
			row[c] = x / j.sx
		}
		for c, x := range v.RawRowView(i) {
			row[d+c] = w / j.sv * x
		}
	}
	return out
}

// denseRows returns x's samples as the rows of a dense matrix (N×D).
func denseRows(x Data) *mat.Dense {
	switch r := Rows(x).(type) {
	case *mat.Dense:
		return r
	case *sparse.CSR:
		return r.ToDense()
	}
	panic("model: test data is neither DenseRows nor SparseRows")
}

// meanRowNorm returns the mean Euclidean norm of a's rows, or 1 if it is 0.
func meanRowNorm(a *mat.Dense) float64 {
	r, _ := a.Dims()
	var s float64
	for i := range r {
		row := a.RawRowView(i)
		s += math.Sqrt(vec.Dot(row, row))
	}
	if s == 0 || r == 0 {
		return 1
	}
	return s / float64(r)
}
