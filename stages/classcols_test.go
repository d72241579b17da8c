package stages

import (
	"math/rand/v2"
	"testing"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/graph"
)

// TestN2S2LNearestByV1 runs N²S²L with q = 10 on the digits stream (10%
// labeled, each label 100 samples late) with the 1-NN on the labeled
// codes, and checks that the predictor reads the q discriminative columns
// V¹ only (model.Online.ClassCols): at that q the window's codes keep V²
// alive on this order, and its penalty graph draws different classes
// together there. Measured: 0.915 of the predictions after the first
// label right by V¹, 0.444 by the whole code (the build before
// ClassCols). (At the default q, 30, V² dies here.)
func TestN2S2LNearestByV1(t *testing.T) {
	_, truth := digitsStream(0.1, 100)
	l := &Learner{Predictor: PredictNearest, Model: &model.Online{Method: "n2s2l", Rank: 40, Q: 10, Graph: graph.KNN{K: 5}, Src: rand.NewPCG(1, 1)}}
	_, pred := runDigits(t, l)
	every, right := 0, 0
	for id, p := range pred {
		if p == "" {
			continue // before the first label
		}
		every++
		if p == truth[id] {
			right++
		}
	}
	lo, hi := l.Model.ClassCols()
	if q := l.Model.Q; lo != 0 || hi != q {
		t.Errorf("ClassCols = [%d, %d), want N²S²L's V¹, [0, %d)", lo, hi, q)
	}
	acc := float64(right) / float64(every)
	t.Logf("%d of %d predictions right (%.4f)", right, every, acc)
	if acc < 0.8 {
		t.Errorf("1-NN on N²S²L's codes: accuracy %.4f, want ≥ 0.8", acc)
	}
}
