package model

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/classify"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// JointClassifier classifies samples from their features and their codes
// together. Fit labels the unlabeled training samples by self-training in
// code space (classify.SelfTraining), then PredictTo votes among the K
// nearest training samples in the joint space [x/s_x, w·v/s_v], where s_x
// and s_v are the mean row norms of the training features and codes (so
// each block weighs about the same) and w is CodeWeight.
//
// Codes propagate the few labels well (self-training on SSKNMF codes labels
// the digits pool with 0.975–0.98 accuracy), but classifying by codes alone
// is capped by what the codes keep: on validation splits of the digits, 1-NN
// on SSKNMF codes with every pool label known scores 0.976, on raw pixels
// 0.983. Voting in the joint space uses both (see Auto for the figures).
//
// The features of sparse data are densified (N×D); use it for dense data of
// moderate dimension. A JointClassifier is not safe for concurrent use.
type JointClassifier struct {
	// K is the number of neighbours that vote. If zero, it defaults to 5
	// (validation splits of the digits: 5 and 7 tie, 1 and 3 lose 0.2–0.3
	// points).
	K int
	// CodeWeight is w, the weight of the codes against the features after
	// both are scaled to unit mean row norm. If zero, it defaults to 1. It
	// must not be negative.
	CodeWeight float64
	// Rounds and Share configure the self-training in code space (see
	// classify.SelfTraining). If zero, they default to 5 and 0.8.
	Rounds int
	Share  float64

	sx, sv float64
	labels []int
	nn     classify.NearestNeighbor
}

// Fit self-labels the training samples from their codes (N×K, one row per
// column of x) and labels (one per sample, −1 = unlabeled), and stores the
// joint rows of the labeled ones for prediction.
func (j *JointClassifier) Fit(x Data, codes *mat.Dense, labels []int) error {
	j.labels = nil
	_, n := x.Dims()
	if r, _ := codes.Dims(); r != n {
		return fmt.Errorf("model: joint classifier: %d codes for %d samples", r, n)
	}
	if j.CodeWeight < 0 {
		return fmt.Errorf("model: joint classifier: negative CodeWeight %g", j.CodeWeight)
	}
	st := classify.SelfTraining{Rounds: j.Rounds, Share: j.Share}
	if err := st.Fit(codes, labels); err != nil {
		return fmt.Errorf("model: joint classifier: %w", err)
	}
	j.labels = append(j.labels[:0:0], st.Labels()...)
	feat := denseRows(x)
	if feat == nil {
		return fmt.Errorf("model: joint classifier needs DenseRows or SparseRows data, got %T", x)
	}
	j.sx, j.sv = meanRowNorm(feat), meanRowNorm(codes)
	j.nn = classify.NearestNeighbor{K: orDefaultInt(j.K, 5)}
	if err := j.nn.Fit(j.joint(feat, codes), j.labels); err != nil {
		return fmt.Errorf("model: joint classifier: %w", err)
	}
	return nil
}

// Labels returns the label of every training sample after self-training
// (−1 for those left unlabeled). The slice belongs to j and is valid until
// the next Fit.
func (j *JointClassifier) Labels() []int { return j.labels }

// PredictTo stores the predicted class of each sample of x, whose codes
// (on the same basis as the training codes) are given, into dst and returns
// it. A nil dst is allocated. It panics if j is not fitted or the shapes do
// not match the training data.
func (j *JointClassifier) PredictTo(dst []int, x Data, codes *mat.Dense) []int {
	if j.labels == nil {
		panic(ErrNotFitted)
	}
	feat := denseRows(x)
	if feat == nil {
		panic(fmt.Sprintf("model: joint classifier: unsupported data %T", x))
	}
	return j.nn.PredictTo(dst, j.joint(feat, codes))
}

// joint returns the rows [x/s_x, w·v/s_v].
func (j *JointClassifier) joint(x, v *mat.Dense) *mat.Dense {
	n, d := x.Dims()
	vn, k := v.Dims()
	if vn != n {
		panic(mat.ErrShape)
	}
	a := 1 / j.sx
	b := orDefault(j.CodeWeight, 1) / j.sv
	out := mat.NewDense(n, d+k, nil)
	for i := 0; i < n; i++ {
		row := out.RawRowView(i)
		for c, x := range x.RawRowView(i) {
			row[c] = a * x
		}
		for c, x := range v.RawRowView(i) {
			row[d+c] = b * x
		}
	}
	return out
}

// denseRows returns x's samples as the rows of a dense matrix (N×D),
// without a copy for DenseRows data, or nil for other kinds of Data.
func denseRows(x Data) *mat.Dense {
	switch r := Rows(x).(type) {
	case *mat.Dense:
		return r
	case *sparse.CSR:
		return r.ToDense()
	}
	return nil
}

// meanRowNorm returns the mean Euclidean norm of a's rows, or 1 if it is
// zero (so that scaling by its inverse stays finite).
func meanRowNorm(a *mat.Dense) float64 {
	r, _ := a.Dims()
	var s float64
	for i := 0; i < r; i++ {
		row := a.RawRowView(i)
		s += math.Sqrt(dot(row, row))
	}
	if s == 0 || r == 0 {
		return 1
	}
	return s / float64(r)
}
