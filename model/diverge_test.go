package model

import (
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/metrics"
)

// TestAutoAllLabeled fits the default method (Auto, at its defaults) on
// the digits training pool of DESIGN.md §7 (two thirds, seed 1) with every
// sample labeled, then codes the held-out third as the command line's
// classify does (graph-aware projection anchored with DefaultGNMFAlpha,
// JointClassifier at its defaults). With the signed graph in its
// Laplacian form this fit ran to −1e88; it must now converge, and both
// JointClassifier and 1-NN on the codes must score at least 0.95.
func TestAutoAllLabeled(t *testing.T) {
	train, test, trainY, testY, _ := digitsSplit(t, 1<<30) // every pool sample labeled
	m := Auto(40)
	if err := m.Fit(DenseRows(train), trainY); err != nil {
		t.Fatal(err)
	}
	res := m.(*SSKNMF).Result()
	if math.IsNaN(res.Objective) || res.Objective < 0 {
		t.Errorf("objective %g: want finite and non-negative (every term is)", res.Objective)
	}
	q := Query{Train: DenseRows(train)}
	p := Projector{Method: ProjectGraph, U: m.Basis(), TrainCodes: m.Codes(), Alpha: DefaultGNMFAlpha, Neighbors: q.Weights}
	var codes mat.Dense
	if err := p.ProjectTo(&codes, DenseRows(test)); err != nil {
		t.Fatal(err)
	}
	if err := CheckFinite("held-out codes", &codes); err != nil {
		t.Fatal(err)
	}
	var j JointClassifier
	if err := j.Fit(DenseRows(train), m.Codes(), trainY); err != nil {
		t.Fatal(err)
	}
	joint := metrics.Accuracy(j.PredictTo(nil, DenseRows(test), &codes), testY)
	// 1-NN against every training code: the codes alone must separate the
	// classes, not only the classifier's pixels.
	var nn nearest
	nn.fit(m.Codes(), trainY)
	oneNN := metrics.Accuracy(nn.predict(&codes), testY)
	t.Logf("every pool sample labeled: joint classifier %.4f, 1-NN on codes %.4f (%d iterations)", joint, oneNN, res.Iters)
	if joint < 0.95 || oneNN < 0.95 {
		t.Errorf("held-out accuracy: joint %.4f, 1-NN %.4f; want ≥ 0.95", joint, oneNN)
	}
}

// nearest is a plain 1-NN classifier on rows (model tests do not import
// model/classify's helpers for this).
type nearest struct {
	x *mat.Dense
	y []int
}

func (n *nearest) fit(x *mat.Dense, y []int) { n.x, n.y = x, y }

func (n *nearest) predict(q *mat.Dense) []int {
	r, _ := q.Dims()
	nr, _ := n.x.Dims()
	out := make([]int, r)
	for i := 0; i < r; i++ {
		qi := q.RawRowView(i)
		best := math.Inf(1)
		for j := 0; j < nr; j++ {
			var d float64
			for c, v := range n.x.RawRowView(j) {
				d += (v - qi[c]) * (v - qi[c])
			}
			if d < best {
				best, out[i] = d, n.y[j]
			}
		}
	}
	return out
}

// TestRunaway checks the divergence rule on hand-made sequences: falling
// below −10 times the scale (the starting magnitude, or the largest
// positive value since) stops, a negative start does not, negative values
// do not raise the scale, and a non-finite value stops.
func TestRunaway(t *testing.T) {
	for _, tc := range []struct {
		seq  []float64
		fail int // index of the failing value, −1 for none
	}{
		{[]float64{100, 50, 10, -5, -20, -999}, -1},
		{[]float64{100, 50, -1001}, 2},
		{[]float64{100, 200, -1500}, -1},
		{[]float64{-100, -150, -500, -900, -1001}, 4},
		{[]float64{-100, -99}, -1},
		{[]float64{1, math.NaN()}, 1},
		{[]float64{math.Inf(-1)}, 0},
	} {
		var r runaway
		got := -1
		for it, f := range tc.seq {
			if err := r.check(it, f); err != nil {
				var d *DivergedError
				if !errors.As(err, &d) || !errors.Is(err, ErrDiverged) || d.Iter != it {
					t.Errorf("%v: error %v at %d", tc.seq, err, it)
				}
				got = it
				break
			}
		}
		if got != tc.fail {
			t.Errorf("%v: stopped at %d, want %d", tc.seq, got, tc.fail)
		}
	}
}
