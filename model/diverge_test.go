package model

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/metrics"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// TestAutoAllLabeled fits the default method (Auto, at its defaults) on
// the digits training pool of docs/DESIGN.md §7 (two thirds, seed 1) with every
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

// TestDotRepulsion checks GraphTerm.DotRepulsion against dense formulas:
// with the repelling edges' degree dropped, the value is
// Weight·(tr(VᵀD_attVV) − tr(VᵀSV)) and the gradient parts are
// |Weight|·S_att·V (numerator) and |Weight|·(D_att + S_rep)·V
// (denominator), for a signed S with a positive Weight and for a
// non-negative S with a negative Weight (then the value is non-negative).
func TestDotRepulsion(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 1))
	const n, k = 6, 3
	v := mat.NewDense(n, k, nil)
	for i := range n {
		for j := range k {
			v.Set(i, j, rnd.Float64())
		}
	}
	signed := mat.NewDense(n, n, nil)
	for i := range n {
		for j := i + 1; j < n; j++ {
			if s := float64(rnd.IntN(3) - 1); s != 0 { // −1, 0 or +1
				signed.Set(i, j, s)
				signed.Set(j, i, s)
			}
		}
	}
	plain := mat.NewDense(n, n, nil)
	plain.Apply(func(_, _ int, s float64) float64 { return math.Abs(s) }, signed)
	for _, tc := range []struct {
		name string
		w    float64
		s    *mat.Dense
	}{{"signed", 2, signed}, {"repelling weight", -2, plain}} {
		g := &GraphTerm{Weight: tc.w, S: sparse.FromDense(tc.s), DotRepulsion: true}
		// Split S by the sign of Weight·S_ij: att attracts, rep repels.
		att, rep := mat.NewDense(n, n, nil), mat.NewDense(n, n, nil)
		for i := range n {
			for j := range n {
				if x := tc.w * tc.s.At(i, j); x > 0 {
					att.Set(i, j, x)
				} else if x < 0 {
					rep.Set(i, j, -x)
				}
			}
		}
		dAtt := degrees(att)
		var num, den, tmp mat.Dense
		num.Mul(att, v)
		den.Mul(dAtt, v)
		tmp.Mul(rep, v)
		den.Add(&den, &tmp)
		// Value: ½Σ att_ij‖v_i − v_j‖² + Σ rep_ij v_iᵀv_j = tr(VᵀD_att V) − tr(VᵀAV) + tr(VᵀRV).
		var q mat.Dense
		q.Mul(dAtt, v)
		want := frob(v, &q)
		q.Mul(att, v)
		want -= frob(v, &q)
		q.Mul(rep, v)
		want += frob(v, &q)

		neg, pos := mat.NewDense(n, k, nil), mat.NewDense(n, k, nil)
		g.AddVGrad(neg, pos, v)
		// Sums of a few products of numbers below 2: 1e-12 is far above
		// rounding.
		if !mat.EqualApprox(neg, &num, 1e-12) || !mat.EqualApprox(pos, &den, 1e-12) {
			t.Errorf("%s: gradient parts\n%v\n%v\nwant\n%v\n%v", tc.name, mat.Formatted(neg), mat.Formatted(pos), mat.Formatted(&num), mat.Formatted(&den))
		}
		if got := g.Value(v); math.Abs(got-want) > 1e-12*math.Abs(want) {
			t.Errorf("%s: value %g, want %g", tc.name, got, want)
		}
		if tc.w < 0 && g.Value(v) < 0 {
			t.Errorf("%s: value %g < 0 for V ≥ 0", tc.name, g.Value(v))
		}
	}
}

// frob returns Σ_ij a_ij b_ij = tr(AᵀB).
func frob(a, b *mat.Dense) float64 {
	r, c := a.Dims()
	var s float64
	for i := range r {
		for j := range c {
			s += a.At(i, j) * b.At(i, j)
		}
	}
	return s
}
