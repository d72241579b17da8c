package model

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/metrics"
)

// TestSSNMFOneIterationByHand runs one engine iteration of the label block
// on a 3×4 problem and compares it with the updates of Haddock et al.
// (Frobenius SSNMF), written out here on A, B and S = Vᵀ separately:
//
//	A ← A ⊙ XSᵀ / ASSᵀ
//	B ← B ⊙ (M⊙Y)Sᵀ / (M⊙BS)Sᵀ
//	S ← S ⊙ (AᵀX + λBᵀ(M⊙Y)) / (AᵀAS + λBᵀ(M⊙BS))
//
// with the new A and B in S's update (the engine updates U first).
func TestSSNMFOneIterationByHand(t *testing.T) {
	x := mat.NewDense(3, 4, []float64{ // D×N
		1, 2, 0.5, 3,
		0.2, 1, 2, 1,
		3, 0.1, 1, 2,
	})
	labels := []int{0, -1, 1, 0} // sample 1 unlabeled
	const lambda = 0.7
	a := mat.NewDense(3, 2, []float64{0.5, 1, 1, 0.3, 0.8, 0.6})
	b := mat.NewDense(2, 2, []float64{0.9, 0.2, 0.1, 0.7})
	v := mat.NewDense(4, 2, []float64{1, 0.5, 0.3, 0.9, 0.6, 0.6, 1.2, 0.2})

	// By hand.
	y := mat.NewDense(2, 4, nil) // M⊙Y
	mask := mat.NewDense(2, 4, nil)
	for i, c := range labels {
		if c >= 0 {
			y.Set(c, i, 1)
			mask.Set(0, i, 1)
			mask.Set(1, i, 1)
		}
	}
	s := mat.DenseCopyOf(v.T())
	mulDiv := func(w, num, den *mat.Dense) {
		r, c := w.Dims()
		for i := 0; i < r; i++ {
			for j := 0; j < c; j++ {
				w.Set(i, j, w.At(i, j)*num.At(i, j)/max(den.At(i, j), eps))
			}
		}
	}
	var num, den, t1, t2 mat.Dense
	a2, b2, s2 := mat.DenseCopyOf(a), mat.DenseCopyOf(b), mat.DenseCopyOf(s)
	num.Mul(x, s.T())
	t1.Mul(a, s)
	den.Mul(&t1, s.T())
	mulDiv(a2, &num, &den)
	num.Reset()
	num.Mul(y, s.T())
	t1.Reset()
	t1.Mul(b, s)
	t1.MulElem(&t1, mask)
	den.Reset()
	den.Mul(&t1, s.T())
	mulDiv(b2, &num, &den)
	num.Reset()
	num.Mul(a2.T(), x)
	t2.Mul(b2.T(), y)
	t2.Scale(lambda, &t2)
	num.Add(&num, &t2)
	t1.Reset()
	t1.Mul(b2, s)
	t1.MulElem(&t1, mask)
	t2.Reset()
	t2.Mul(b2.T(), &t1)
	t2.Scale(lambda, &t2)
	var ata mat.Dense
	ata.Mul(a2.T(), a2)
	den.Reset()
	den.Mul(&ata, s)
	den.Add(&den, &t2)
	mulDiv(s2, &num, &den)

	// The engine on the stacked basis [A; B].
	u := mat.NewDense(5, 2, nil)
	u.Slice(0, 3, 0, 2).(*mat.Dense).Copy(a)
	u.Slice(3, 5, 0, 2).(*mat.Dense).Copy(b)
	vv := mat.DenseCopyOf(v)
	lb := newLabelBlock(NewFrobenius(DenseRows(mat.DenseCopyOf(x.T()))), 3, 2, lambda, labels, []int{0, 2, 3})
	e := Engine{Loss: lb, MaxIter: 1, Tol: -1}
	if _, err := e.Run(u, vv); err != nil {
		t.Fatal(err)
	}
	near := func(name string, got, want mat.Matrix) {
		t.Helper()
		if !mat.EqualApprox(got, want, 1e-12) {
			t.Errorf("%s:\n got %v\nwant %v", name, mat.Formatted(got), mat.Formatted(want))
		}
	}
	near("A", u.Slice(0, 3, 0, 2), a2)
	near("B", u.Slice(3, 5, 0, 2), b2)
	near("V", vv, s2.T())

	// The objective by hand at the result.
	var r mat.Dense
	r.Mul(a2, s2)
	r.Sub(x, &r)
	want := mat.Norm(&r, 2) * mat.Norm(&r, 2)
	var ry mat.Dense
	ry.Mul(b2, s2)
	ry.MulElem(&ry, mask)
	ry.Sub(y, &ry)
	want += lambda * mat.Norm(&ry, 2) * mat.Norm(&ry, 2)
	if got := e.Objective(u, vv, nil); math.Abs(got-want) > 1e-12*want {
		t.Errorf("objective %g, want %g", got, want)
	}
}

// TestSSNMFMonotone checks that the objective never rises, with and
// without the graph term, on random data and on 400 digits, and that A, B
// and V stay non-negative.
func TestSSNMFMonotone(t *testing.T) {
	const rel = 1e-10
	rx, ry := randomProblem(60, 12, 3, 15)
	dx, dy := digitsSubset(400)
	for _, p := range []struct {
		name string
		x    Data
		y    []int
		k    int
	}{{"random", rx, ry, 6}, {"digits", dx, dy, 20}} {
		for _, alpha := range []float64{-1, 100} {
			for _, lambda := range []float64{0.1, 1, 10} {
				m := &SSNMF{Common: Common{Rank: p.k, MaxIter: 60, Tol: -1}, Lambda: lambda, Alpha: alpha}
				name := p.name + " ssnmf"
				if alpha > 0 {
					name += "+graph"
				}
				monotone(t, name, m, p.x, p.y, rel, func(f func(Stats) bool) { m.Callback = f })
				checkNonNeg(t, name+" B", m.LabelBasis())
			}
		}
	}
}

// TestSSNMFClassifies checks the method's contract on a separable problem:
// A is D×K with unit columns, B is C×K, V is N×K, the training rows'
// classes argmax(B·v) (transductive) and new samples' argmax(B·s) (coded
// on A by each projection) are right, and a larger λ fits the labeled
// samples' one-hot targets more closely.
func TestSSNMFClassifies(t *testing.T) {
	x, y := randomProblem(90, 12, 3, 15)
	m := &SSNMF{Common: Common{Rank: 6}}
	if err := m.Fit(x, y); err != nil {
		t.Fatal(err)
	}
	if r, c := m.Basis().Dims(); r != 12 || c != 6 {
		t.Fatalf("A is %d×%d, want 12×6", r, c)
	}
	if r, c := m.LabelBasis().Dims(); r != 3 || c != 6 {
		t.Fatalf("B is %d×%d, want 3×6", r, c)
	}
	if r, c := m.Codes().Dims(); r != 90 || c != 6 {
		t.Fatalf("V is %d×%d, want 90×6", r, c)
	}
	for j := 0; j < 6; j++ {
		if n := mat.Norm(m.Basis().ColView(j), 2); n != 0 && math.Abs(n-1) > 1e-12 {
			t.Errorf("‖A[:,%d]‖ = %g, want 1", j, n)
		}
	}
	truth := make([]int, 90)
	for i := range truth {
		truth[i] = i % 3
	}
	if acc := metrics.Accuracy(m.PredictTrain(), truth); acc < 0.99 {
		t.Errorf("transductive accuracy %.3f, want ≥ 0.99", acc)
	}
	// New samples from the same model as randomProblem's, another seed.
	rnd := rand.New(rand.NewPCG(7, 7))
	nxm := mat.NewDense(30, 12, nil)
	for i := 0; i < 30; i++ {
		for j := 0; j < 12; j++ {
			v := rnd.Float64()
			if j%3 == i%3 {
				v += 2
			}
			nxm.Set(i, j, v)
		}
	}
	nx := DenseRows(nxm)
	for _, p := range []Projection{ProjectNNLS, ProjectGraph, ProjectClampedPinv} {
		pred, err := m.Predict(nx, p)
		if err != nil {
			t.Fatal(err)
		}
		if acc := metrics.Accuracy(pred, truth[:30]); acc < 0.99 {
			t.Errorf("%v: held-out accuracy %.3f, want ≥ 0.99", p, acc)
		}
	}
	// The label block pulls the labeled codes to their one-hot targets:
	// λ = 100 fits them closer than λ = 0.01.
	fitErr := func(lambda float64) float64 {
		m := &SSNMF{Common: Common{Rank: 6}, Lambda: lambda}
		if err := m.Fit(x, y); err != nil {
			t.Fatal(err)
		}
		var bv mat.Dense
		bv.Mul(m.Codes(), m.LabelBasis().T())
		var s float64
		for i, c := range y {
			if c < 0 {
				continue
			}
			for cl := 0; cl < 3; cl++ {
				r := bv.At(i, cl)
				if cl == c {
					r--
				}
				s += r * r
			}
		}
		return s
	}
	if lo, hi := fitErr(0.01), fitErr(100); hi >= lo {
		t.Errorf("label misfit at λ = 100 (%g) not below λ = 0.01 (%g)", hi, lo)
	}
}

// TestSSNMFBadInput checks the errors of bad hyperparameters and labels.
func TestSSNMFBadInput(t *testing.T) {
	x, y := randomProblem(30, 6, 3, 6)
	none := make([]int, 30)
	for i := range none {
		none[i] = -1
	}
	for _, c := range []struct {
		name string
		m    *SSNMF
		y    []int
	}{
		{"no labels", &SSNMF{Common: Common{Rank: 3}}, none},
		{"nil labels", &SSNMF{Common: Common{Rank: 3}}, nil},
		{"short labels", &SSNMF{Common: Common{Rank: 3}}, y[:10]},
		{"negative lambda", &SSNMF{Common: Common{Rank: 3}, Lambda: -1}, y},
		{"negative neighbors", &SSNMF{Common: Common{Rank: 3}, Neighbors: -1}, y},
		{"NaN lambda", &SSNMF{Common: Common{Rank: 3}, Lambda: math.NaN()}, y},
		{"infinite alpha", &SSNMF{Common: Common{Rank: 3}, Alpha: math.Inf(1)}, y},
		{"rank 0", &SSNMF{}, y},
	} {
		err := c.m.Fit(x, c.y)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if c.name == "no labels" && !errors.Is(err, ErrNoLabels) {
			t.Errorf("%s: %v does not wrap ErrNoLabels", c.name, err)
		}
		if errors.Is(err, ErrDiverged) {
			t.Errorf("%s: %v reported as divergence", c.name, err)
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Basis after a failed Fit did not panic", c.name)
				}
			}()
			c.m.Basis()
		}()
	}
}
