package model

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/splittest"
	"github.com/nmfstream/nmfstream/model/sparse"
	"github.com/nmfstream/nmfstream/pipeline"
)

// naiveKL returns D(X‖UVᵀ) for x (N×D, one sample per row) by forming
// UVᵀ densely: the reference for KL.Value.
func naiveKL(x, u, v *mat.Dense) float64 {
	var y mat.Dense
	y.Mul(v, u.T()) // N×D
	n, d := x.Dims()
	var f float64
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			xv, yv := x.At(i, j), y.At(i, j)
			if xv > 0 {
				f += xv * math.Log(xv/yv)
			}
			f += yv - xv
		}
	}
	return f
}

// naiveKLStep runs one Lee–Seung divergence update of U then V, as written
// in their paper (no halving, no shared code with KL).
func naiveKLStep(x, u, v *mat.Dense) {
	n, d := x.Dims()
	_, k := u.Dims()
	ratio := func() *mat.Dense {
		var y mat.Dense
		y.Mul(v, u.T())
		r := mat.NewDense(n, d, nil)
		for i := 0; i < n; i++ {
			for j := 0; j < d; j++ {
				r.Set(i, j, x.At(i, j)/y.At(i, j))
			}
		}
		return r
	}
	r := ratio()
	var num mat.Dense
	num.Mul(r.T(), v) // D×K
	for a := 0; a < k; a++ {
		s := mat.Sum(v.ColView(a))
		for i := 0; i < d; i++ {
			u.Set(i, a, u.At(i, a)*num.At(i, a)/s)
		}
	}
	r = ratio()
	num.Reset()
	num.Mul(r, u) // N×K
	for a := 0; a < k; a++ {
		s := mat.Sum(u.ColView(a))
		for j := 0; j < n; j++ {
			v.Set(j, a, v.At(j, a)*num.At(j, a)/s)
		}
	}
}

// countData returns N×D count-like data with about a third of the entries
// zero, and positive factors U (D×K), V (N×K), from seed.
func countData(n, d, k int, seed uint64) (x, u, v *mat.Dense) {
	rnd := rand.New(rand.NewPCG(seed, seed))
	x = mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			if rnd.Float64() > 1.0/3 {
				x.Set(i, j, float64(1+rnd.IntN(5)))
			}
		}
	}
	u = mat.NewDense(d, k, nil)
	v = mat.NewDense(n, k, nil)
	for _, m := range []*mat.Dense{u, v} {
		r := m.RawMatrix()
		for i := range r.Data {
			r.Data[i] = 0.1 + rnd.Float64()
		}
	}
	return x, u, v
}

func TestKLValueByHand(t *testing.T) {
	// One sample, x = (1, 0)ᵀ, U = (1, 1)ᵀ, V = (2): UVᵀ = (2, 2)ᵀ, so
	// D = 1·log(1/2) − 1 + 2 + (0 − 0 + 2) = 3 − log 2.
	x := mat.NewDense(1, 2, []float64{1, 0})
	u := mat.NewDense(2, 1, []float64{1, 1})
	v := mat.NewDense(1, 1, []float64{2})
	want := 3 - math.Ln2
	for name, data := range map[string]Data{"dense": DenseRows(x), "sparse": SparseRows(sparse.FromDense(x))} {
		if got := NewKL(data).Value(u, v); math.Abs(got-want) > 1e-15 {
			t.Errorf("%s: D = %.17g, want 3 − log 2 = %.17g", name, got, want)
		}
		// ½ of the gradient parts: neg_V = ½ Σ_i x_i/y_i u_i = ½·(1/2),
		// pos_V = ½ Σ_i u_i = 1; neg_U = ½ (x_i/y_i) v = (½, 0),
		// pos_U = ½ v = (1, 1).
		l := NewKL(data)
		var neg, pos mat.Dense
		l.VGradTo(&neg, &pos, u, v)
		if neg.At(0, 0) != 0.25 || pos.At(0, 0) != 1 {
			t.Errorf("%s: V parts (%g, %g), want (0.25, 1)", name, neg.At(0, 0), pos.At(0, 0))
		}
		neg.Reset()
		pos.Reset()
		l.UGradTo(&neg, &pos, u, v)
		if !mat.Equal(&neg, mat.NewDense(2, 1, []float64{0.5, 0})) || !mat.Equal(&pos, mat.NewDense(2, 1, []float64{1, 1})) {
			t.Errorf("%s: U parts %v, %v, want (0.5, 0) and (1, 1)", name, mat.Formatted(neg.T()), mat.Formatted(pos.T()))
		}
	}
}

func TestKLMatchesNaive(t *testing.T) {
	x, u0, v0 := countData(12, 9, 3, 1)
	want := naiveKL(x, u0, v0)
	for name, data := range map[string]Data{"dense": DenseRows(x), "sparse": SparseRows(sparse.FromDense(x))} {
		// Value: the sums run in a different order than naiveKL's.
		if got := NewKL(data).Value(u0, v0); !floatsEqual([]float64{got}, []float64{want}, 1e-12) {
			t.Errorf("%s: Value = %.15g, want %.15g", name, got, want)
		}
		// Five engine iterations against five of Lee and Seung's updates
		// as written: the halving of both parts must cancel.
		u, v := mat.DenseCopyOf(u0), mat.DenseCopyOf(v0)
		nu, nv := mat.DenseCopyOf(u0), mat.DenseCopyOf(v0)
		e := Engine{Loss: NewKL(data), MaxIter: 5, Tol: -1}
		if _, err := e.Run(u, v); err != nil {
			t.Fatal(err)
		}
		for range 5 {
			naiveKLStep(x, nu, nv)
		}
		// 1e-12 relative: five iterations of rounding in sums of ≤ 12 terms.
		if !mat.EqualApprox(u, nu, 1e-12) || !mat.EqualApprox(v, nv, 1e-12) {
			t.Errorf("%s: engine and naive updates differ:\nU %v\nnaive %v", name, mat.Formatted(u), mat.Formatted(nu))
		}
	}
}

// TestKLRowsMatchAll checks VGradRowsTo against VGradTo on the rows given.
func TestKLRowsMatchAll(t *testing.T) {
	x, u, v := countData(10, 7, 3, 2)
	rows := []int{0, 3, 9}
	for name, data := range map[string]Data{"dense": DenseRows(x), "sparse": SparseRows(sparse.FromDense(x))} {
		l := NewKL(data)
		var neg, pos mat.Dense
		l.VGradTo(&neg, &pos, u, v)
		rn, rp := mat.NewDense(10, 3, nil), mat.NewDense(10, 3, nil)
		l.VGradRowsTo(rn, rp, u, v, rows)
		for _, i := range rows {
			if !floatsEqual(rn.RawRowView(i), neg.RawRowView(i), 1e-13) || !floatsEqual(rp.RawRowView(i), pos.RawRowView(i), 1e-13) {
				t.Errorf("%s: row %d: (%v, %v), want (%v, %v)", name, i, rn.RawRowView(i), rp.RawRowView(i), neg.RawRowView(i), pos.RawRowView(i))
			}
		}
		if rn.At(1, 0) != 0 {
			t.Errorf("%s: row 1 written", name)
		}
	}
}

// TestKLMonotone checks that the objective of NMF and GNMF with the KL
// loss never increases under the engine's updates, on dense and sparse
// data, and that the results are finite and non-negative.
func TestKLMonotone(t *testing.T) {
	x, _, _ := countData(60, 25, 4, 3)
	// A smaller relative slack than any real increase: 1e-12 allows only
	// the rounding of the objective's sums.
	const slack = 1e-12
	// α from none to a graph term that dominates the divergence (at
	// α = 1e5 the objective plateaus and moves by 1e-11 relative either
	// way, the rounding of its large graph term).
	for _, alpha := range []float64{-1, 0.1, 10, 1000} {
		for name, data := range map[string]Data{"dense": DenseRows(x), "sparse": SparseRows(sparse.FromDense(x))} {
			prev := math.Inf(1)
			var increases int
			g := &GNMF{
				Common: Common{Rank: 4, MaxIter: 300, Tol: -1, Loss: LossKL, Src: rand.NewPCG(1, 1), Callback: func(s Stats) bool {
					if s.Objective > prev*(1+slack) {
						increases++
						t.Logf("α=%g %s: iteration %d: objective %.15g after %.15g", alpha, name, s.Iter, s.Objective, prev)
					}
					prev = s.Objective
					return true
				}},
				Alpha:   alpha,
				Scaling: ScaleNone, // normalization would change the graph term
			}
			if err := g.Fit(data, nil); err != nil {
				t.Fatalf("α=%g %s: %v", alpha, name, err)
			}
			if increases > 0 {
				t.Errorf("α=%g %s: objective increased %d times", alpha, name, increases)
			}
			for what, m := range map[string]*mat.Dense{"U": g.Basis(), "V": g.Codes()} {
				for _, w := range m.RawMatrix().Data {
					if w < 0 || math.IsNaN(w) || math.IsInf(w, 0) {
						t.Fatalf("α=%g %s: %s has entry %g", alpha, name, what, w)
					}
				}
			}
		}
	}
}

// TestKLSparseEqualsDense fits GNMF with the KL loss on the same data
// stored dense and sparse.
func TestKLSparseEqualsDense(t *testing.T) {
	sp := randomSparse(40, 30, 0.2, rand.NewPCG(4, 4))
	fit := func(data Data) *GNMF {
		g := &GNMF{Common: Common{Rank: 3, MaxIter: 50, Tol: -1, Loss: LossKL}, Alpha: 1}
		if err := g.Fit(data, nil); err != nil {
			t.Fatal(err)
		}
		return g
	}
	d, s := fit(DenseRows(sp.ToDense())), fit(SparseRows(sp))
	// 1e-9: fifty iterations of rounding that differs between a dense
	// product with zeros and a sum over the non-zeros.
	if !mat.EqualApprox(d.Basis(), s.Basis(), 1e-9) || !mat.EqualApprox(d.Codes(), s.Codes(), 1e-9) {
		t.Errorf("sparse and dense fits differ")
	}
	if a, b := d.Result().Objective, s.Result().Objective; !floatsEqual([]float64{a}, []float64{b}, 1e-9) {
		t.Errorf("objective: dense %g, sparse %g", a, b)
	}
}

func TestKLEveryMethod(t *testing.T) {
	x, _, _ := countData(60, 25, 4, 5)
	labels := make([]int, 60)
	for i := range labels {
		labels[i] = -1
		if i%4 == 0 {
			labels[i] = i % 3
		}
	}
	c := Common{Rank: 5, MaxIter: 30, Loss: LossKL}
	for _, m := range []Method{&NMF{Common: c}, &GNMF{Common: c}, &DGNMF{Common: c}, &SSKNMF{Common: c}, &N2S2L{Common: c}} {
		if err := m.Fit(SparseRows(sparse.FromDense(x)), labels); err != nil {
			t.Errorf("%T: %v", m, err)
			continue
		}
		if err := CheckFinite("codes", m.Codes()); err != nil {
			t.Errorf("%T: %v", m, err)
		}
	}
	if err := (&NGE{Common: c}).Fit(DenseRows(x), labels); err == nil {
		t.Errorf("NGE with the KL loss: no error")
	}
}

func TestParseLoss(t *testing.T) {
	for _, k := range []LossKind{LossFrobenius, LossKL} {
		if got, err := ParseLoss(k.String()); err != nil || got != k {
			t.Errorf("ParseLoss(%q) = %v, %v", k.String(), got, err)
		}
	}
	if _, err := ParseLoss("l1"); err == nil {
		t.Errorf("ParseLoss(l1): no error")
	}
}

// benchLossIter times one engine iteration (U and V updates and the
// objective) of loss on 500 sparse documents × 16,000 terms with about
// 500 non-zeros each (the shape of the Brown TF-IDF), rank 15.
func benchLossIter(b *testing.B, kl bool) {
	x := SparseRows(randomSparse(500, 16000, 0.03, rand.NewPCG(1, 1)))
	u, v, err := Initialize(x, 15, InitRandom, rand.NewPCG(1, 1))
	if err != nil {
		b.Fatal(err)
	}
	var loss Loss = NewFrobenius(x)
	if kl {
		loss = NewKL(x)
	}
	e := Engine{Loss: loss, MaxIter: 1, Tol: 1e-300}
	e.Run(u, v) // allocate the workspaces
	b.ReportAllocs()
	for b.Loop() {
		e.Run(u, v)
	}
}

func BenchmarkIterFrobenius500x16000(b *testing.B) { benchLossIter(b, false) }
func BenchmarkIterKL500x16000(b *testing.B)        { benchLossIter(b, true) }

// TestKLSplit runs the KL loss with Engine.Split (three parts run last
// first, and two goroutines): sparse data gives the serial result bit for
// bit (every row's sums run in the same order), dense data up to the
// rounding of products over row blocks.
func TestKLSplit(t *testing.T) {
	x, u0, v0 := countData(50, 20, 3, 6)
	for name, data := range map[string]Data{"dense": DenseRows(x), "sparse": SparseRows(sparse.FromDense(x))} {
		run := func(split func(int, func(int, int))) (u, v *mat.Dense) {
			u, v = mat.DenseCopyOf(u0), mat.DenseCopyOf(v0)
			e := &Engine{Loss: NewKL(data), MaxIter: 30, Tol: -1, Split: split}
			if _, err := e.Run(u, v); err != nil {
				t.Fatal(err)
			}
			return u, v
		}
		u, v := run(nil)
		for pname, split := range map[string]func(int, func(int, int)){"reverse": splittest.Reverse, "2 goroutines": pipeline.Split(2)} {
			su, sv := run(split)
			tol := 0.0
			if name == "dense" {
				tol = 1e-12 // thirty iterations of block-wise product rounding
			}
			if !mat.EqualApprox(u, su, tol) || !mat.EqualApprox(v, sv, tol) {
				t.Errorf("%s, %s: split run differs from the serial one", name, pname)
			}
		}
	}
}
