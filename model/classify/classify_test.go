package classify

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

func randDense(rnd *rand.Rand, r, c int) *mat.Dense {
	m := mat.NewDense(r, c, nil)
	for i := range r {
		for j := range c {
			m.Set(i, j, rnd.NormFloat64())
		}
	}
	return m
}

// bruteDist is the per-pair dissimilarity the blocked search must match.
func bruteDist(a, b []float64, metric Metric) float64 {
	if metric == Cosine {
		na, nb := floats.Norm(a, 2), floats.Norm(b, 2)
		if na == 0 || nb == 0 {
			return 1
		}
		return 1 - floats.Dot(a, b)/(na*nb)
	}
	return floats.Distance(a, b, 2)
}

// TestNeighborsBruteForce compares the blocked search with a per-pair loop
// on sizes that cross both block boundaries (256 queries, 1024 references).
func TestNeighborsBruteForce(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 1))
	const nr, nq, d, k = 1100, 300, 5, 4
	ref, q := randDense(rnd, nr, d), randDense(rnd, nq, d)
	y := make([]int, nr)
	for i := range y {
		y[i] = rnd.IntN(3)
	}
	for _, metric := range []Metric{Euclidean, Cosine} {
		nn := NearestNeighbor{K: k, Metric: metric}
		if err := nn.Fit(ref, y); err != nil {
			t.Fatal(err)
		}
		idx, dist := nn.NeighborsTo(nil, nil, q)
		type pair struct {
			j int
			d float64
		}
		for i := range nq {
			all := make([]pair, nr)
			for j := range nr {
				all[j] = pair{j, bruteDist(q.RawRowView(i), ref.RawRowView(j), metric)}
			}
			slices.SortStableFunc(all, func(a, b pair) int {
				switch {
				case a.d < b.d:
					return -1
				case a.d > b.d:
					return 1
				}
				return 0
			})
			for r := range k {
				// ‖a‖²+‖b‖²−2ab loses a few digits to cancellation
				// against the per-pair difference; 1e-9 on O(1) distances
				// still separates any two distinct random neighbours.
				if idx[i*k+r] != all[r].j || math.Abs(dist[i*k+r]-all[r].d) > 1e-9 {
					t.Fatalf("%v query %d rank %d: got (%d, %v), brute force (%d, %v)",
						metric, i, r, idx[i*k+r], dist[i*k+r], all[r].j, all[r].d)
				}
			}
		}
		// 1-NN prediction is the label of the brute-force nearest row.
		one := NearestNeighbor{Metric: metric}
		if err := one.Fit(ref, y); err != nil {
			t.Fatal(err)
		}
		pred := one.PredictTo(nil, q)
		for i := range nq {
			if want := y[idx[i*k]]; pred[i] != want {
				t.Fatalf("%v query %d: 1-NN predicts %d, nearest row has %d", metric, i, pred[i], want)
			}
		}
	}
}

func TestNearestNeighborVotes(t *testing.T) {
	// Labeled rows on a line; row 3 is unlabeled and must be ignored.
	x := mat.NewDense(6, 1, []float64{0, 1, 2, 2.5, 10, 11})
	y := []int{0, 1, 1, -1, 0, 2}
	nn := NearestNeighbor{K: 3}
	if err := nn.Fit(x, y); err != nil {
		t.Fatal(err)
	}
	q := mat.NewDense(3, 1, []float64{1.9, 10.4, 0.2})
	pred, score := nn.PredictScoresTo(nil, nil, q)
	// 1.9: neighbours 2(1), 1(1), 0(0) → 1 with 2/3.
	// 10.4: 10(0), 11(2), 2(1) → three-way tie, nearest member wins: 0.
	// 0.2: 0(0), 1(1), 2(1) → 1 with 2/3.
	wantPred, wantScore := []int{1, 0, 1}, []float64{2.0 / 3, 1.0 / 3, 2.0 / 3}
	if !slices.Equal(pred, wantPred) || !floats.EqualApprox(score, wantScore, 1e-15) {
		t.Errorf("pred %v score %v, want %v %v", pred, score, wantPred, wantScore)
	}
	nan := mat.NewDense(1, 1, []float64{math.NaN()})
	if p, s := nn.PredictScoresTo(nil, nil, nan); p[0] != -1 || s[0] != 0 {
		t.Errorf("NaN row: %d %v, want -1 0", p[0], s[0])
	}
}

func TestNearestCentroid(t *testing.T) {
	x := mat.NewDense(5, 2, []float64{
		0, 0,
		2, 0, // class 0 centroid (1, 0)
		10, 10,
		12, 10, // class 2 centroid (11, 10); class 1 absent
		100, 100, // unlabeled
	})
	y := []int{0, 0, 2, 2, -1}
	var nc NearestCentroid
	if err := nc.Fit(x, y); err != nil {
		t.Fatal(err)
	}
	got := nc.CentroidsTo(nil)
	want := mat.NewDense(3, 2, []float64{1, 0, 0, 0, 11, 10})
	if !mat.Equal(got, want) {
		t.Errorf("centroids\n%v\nwant\n%v", mat.Formatted(got), mat.Formatted(want))
	}
	pred, dist := nc.PredictScoresTo(nil, nil, mat.NewDense(2, 2, []float64{1, 3, 8, 6}))
	if !slices.Equal(pred, []int{0, 2}) || !floats.EqualApprox(dist, []float64{3, 5}, 1e-15) {
		t.Errorf("pred %v dist %v, want [0 2] [3 5]", pred, dist)
	}
}

// twoMoons returns n points on two interleaved half circles with Gaussian
// noise, label 0 for the upper moon and 1 for the lower.
func twoMoons(rnd *rand.Rand, n int, noise float64) (*mat.Dense, []int) {
	x := mat.NewDense(n, 2, nil)
	y := make([]int, n)
	for i := range n {
		th := math.Pi * float64(i/2) / float64(n/2-1)
		if i%2 == 0 {
			x.Set(i, 0, math.Cos(th))
			x.Set(i, 1, math.Sin(th))
		} else {
			x.Set(i, 0, 1-math.Cos(th))
			x.Set(i, 1, 0.5-math.Sin(th))
			y[i] = 1
		}
		x.Set(i, 0, x.At(i, 0)+noise*rnd.NormFloat64())
		x.Set(i, 1, x.At(i, 1)+noise*rnd.NormFloat64())
	}
	return x, y
}

func TestLabelPropagationMoons(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 1))
	x, truth := twoMoons(rnd, 400, 0.05)
	// One label per moon, at the far ends, where 1-NN on these two labels
	// alone mislabels the inner tips of both moons.
	y := make([]int, len(truth))
	for i := range y {
		y[i] = -1
	}
	y[0], y[len(y)-1] = 0, 1
	lp := LabelPropagation{Alpha: 0.99, MaxIter: 1000}
	if err := lp.Fit(x, y); err != nil {
		t.Fatal(err)
	}
	trans := lp.TransductionTo(nil)
	acc := accuracy(trans, truth)
	var nn NearestNeighbor
	nn.Fit(x, y)
	base := accuracy(nn.PredictTo(nil, x), truth)
	t.Logf("two moons, 1 label each: label spreading %.4f, 1-NN %.4f, %d iterations", acc, base, lp.Iterations())
	if acc < 0.99 {
		t.Errorf("label spreading accuracy %.4f, want ≥ 0.99", acc)
	}
	if base > 0.9 {
		t.Errorf("1-NN baseline %.4f: the test is too easy to tell the methods apart", base)
	}
	// Label distributions are probability rows.
	f := lp.LabelDistributionsTo(nil)
	for i := range len(y) {
		if s := floats.Sum(f.RawRowView(i)); math.Abs(s-1) > 1e-12 {
			t.Fatalf("row %d of the label distributions sums to %v", i, s)
		}
	}
	// New points from the same moons are labeled through their neighbours.
	xt, yt := twoMoons(rnd, 200, 0.05)
	if a := accuracy(lp.PredictTo(nil, xt), yt); a < 0.99 {
		t.Errorf("inductive accuracy %.4f, want ≥ 0.99", a)
	}
}

// TestLabelPropagationFixedPoint checks the iteration against the closed
// form F* = (1 − α)(I − αS)⁻¹Y of Zhou et al. on a small random graph.
func TestLabelPropagationFixedPoint(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 1))
	const n, k, alpha = 40, 4, 0.5
	x := randDense(rnd, n, 3)
	y := make([]int, n)
	for i := range y {
		y[i] = -1
	}
	y[0], y[1], y[2] = 0, 1, 2
	lp := LabelPropagation{Alpha: alpha, K: k, MaxIter: 500, Tol: 1e-13}
	if err := lp.Fit(x, y); err != nil {
		t.Fatal(err)
	}
	s := lp.s.ToDense()
	// S is symmetric with zero diagonal.
	if !mat.EqualApprox(s, s.T(), 1e-15) {
		t.Fatal("S is not symmetric")
	}
	a := mat.NewDense(n, n, nil)
	a.Scale(-alpha, s)
	for i := range n {
		a.Set(i, i, a.At(i, i)+1)
	}
	yy := mat.NewDense(n, 3, nil)
	for i, c := range y {
		if c >= 0 {
			yy.Set(i, c, 1-alpha)
		}
	}
	var fstar mat.Dense
	if err := fstar.Solve(a, yy); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		normalizeArgmax(fstar.RawRowView(i))
	}
	// Tol 1e-13 on Σ|ΔF| and contraction α = 0.5 leave ≲ 1e-12 error.
	if got := lp.LabelDistributionsTo(nil); !mat.EqualApprox(got, &fstar, 1e-10) {
		t.Errorf("label distributions differ from the closed form")
	}
}

func accuracy(pred, truth []int) float64 {
	ok := 0
	for i := range pred {
		if pred[i] == truth[i] {
			ok++
		}
	}
	return float64(ok) / float64(len(pred))
}

// blobs returns c Gaussian blobs of m points each in d dimensions, with
// centres 10 apart along the axes and unit noise.
func blobs(rnd *rand.Rand, c, m, d int) (*mat.Dense, []int) {
	x := mat.NewDense(c*m, d, nil)
	y := make([]int, c*m)
	for i := range c * m {
		y[i] = i % c
		for j := range d {
			v := rnd.NormFloat64()
			if j == y[i]%d {
				v += 10 * float64(1+y[i]/d)
			}
			x.Set(i, j, v)
		}
	}
	return x, y
}

func TestLinearSeparable(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 1))
	x, y := blobs(rnd, 3, 50, 4)
	y[5] = -1 // unlabeled rows are skipped
	var li Linear
	if err := li.Fit(x, y); err != nil {
		t.Fatal(err)
	}
	y[5] = 5 % 3
	pred, prob := li.PredictScoresTo(nil, nil, x)
	if a := accuracy(pred, y); a != 1 {
		t.Errorf("training accuracy on separable blobs %.4f, want 1", a)
	}
	for i, p := range prob {
		if !(p > 1.0/3 && p <= 1) {
			t.Fatalf("row %d: probability %v of the predicted class", i, p)
		}
	}
	t.Logf("L-BFGS iterations: %d", li.Iterations())
}

// TestLinearOptimum checks the gradient by central differences and that
// Fit ends at a stationary point of the objective.
func TestLinearOptimum(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 1))
	x := randDense(rnd, 60, 3)
	y := make([]int, 60)
	for i := range y {
		y[i] = rnd.IntN(3) // overlapping classes: a finite, interior optimum
	}
	obj := &softmaxObjective{x: x, y: y, p: 3, d: 3, reg: 1.0 / 60}
	theta := make([]float64, 12)
	for i := range theta {
		theta[i] = rnd.NormFloat64()
	}
	g := make([]float64, 12)
	obj.eval(theta, g)
	const h = 1e-6
	for i := range theta {
		tp, tm := slices.Clone(theta), slices.Clone(theta)
		tp[i] += h
		tm[i] -= h
		num := (obj.eval(tp, make([]float64, 12)) - obj.eval(tm, make([]float64, 12))) / (2 * h)
		// Central differences: O(h²) truncation plus 1e-16/h rounding.
		if math.Abs(num-g[i]) > 1e-7 {
			t.Errorf("∂f/∂θ%d = %v, finite difference %v", i, g[i], num)
		}
	}
	li := Linear{Tol: 1e-8, MaxIter: 500}
	if err := li.Fit(x, y); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		copy(theta[3*i:3*i+3], li.w.RawRowView(i))
	}
	copy(theta[9:], li.b)
	obj.eval(theta, g)
	if m := floats.Norm(g, math.Inf(1)); m > 1e-8 {
		t.Errorf("gradient at the fitted point has max |g| = %v (after %d iterations)", m, li.Iterations())
	}
}

func TestKMeansMonotoneAndBlobs(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 1))
	// Overlapping blobs make Lloyd take many steps.
	x := randDense(rnd, 500, 3)
	km := KMeans{K: 8}
	var trace []float64
	var cent mat.Dense
	km.seed(&cent, x, rand.New(rand.NewPCG(3, 3)))
	labels := make([]int, 500)
	_, iters := km.lloyd(&cent, labels, x, 300, 0, func(v float64) { trace = append(trace, v) })
	if iters < 5 {
		t.Fatalf("only %d Lloyd iterations: the test would not see much", iters)
	}
	for i := 1; i < len(trace); i++ {
		// Each step is exact up to rounding of sums of 500 terms.
		if trace[i] > trace[i-1]*(1+1e-12) {
			t.Errorf("inertia rose at iteration %d: %v → %v", i, trace[i-1], trace[i])
		}
	}

	xb, yb := blobs(rnd, 4, 60, 5)
	km = KMeans{K: 4}
	if err := km.Fit(xb); err != nil {
		t.Fatal(err)
	}
	got := km.LabelsTo(nil)
	// Recovering the blobs means a one-to-one map of clusters onto classes.
	m := map[int]int{}
	for i, c := range got {
		if v, ok := m[c]; ok && v != yb[i] {
			t.Fatalf("cluster %d mixes classes %d and %d", c, v, yb[i])
		}
		m[c] = yb[i]
	}
	if len(m) != 4 {
		t.Fatalf("%d clusters used, want 4", len(m))
	}
	if p := km.PredictTo(nil, xb); !slices.Equal(p, got) {
		t.Error("PredictTo on the training rows differs from the fitted labels")
	}
	// Reproducible for a seed.
	km2 := KMeans{K: 4}
	km2.Fit(xb)
	if !mat.Equal(km.CentersTo(nil), km2.CentersTo(nil)) {
		t.Error("two fits with the default seed differ")
	}
}

func TestKMeansRelocatesEmpty(t *testing.T) {
	// Start with two centres on the same point: one cluster is empty after
	// the first assignment and must take the farthest row.
	x := mat.NewDense(4, 1, []float64{0, 1, 10, 11})
	cent := mat.NewDense(2, 1, []float64{5, 5})
	km := KMeans{K: 2}
	labels := make([]int, 4)
	var trace []float64
	inertia, _ := km.lloyd(cent, labels, x, 100, 0, func(v float64) { trace = append(trace, v) })
	if inertia != 1 { // clusters {0,1} and {10,11}: 4·0.5²
		t.Errorf("inertia %v, want 1 (trace %v)", inertia, trace)
	}
}

func TestErrors(t *testing.T) {
	x := mat.NewDense(3, 2, []float64{0, 1, 2, 3, 4, 5})
	none := []int{-1, -1, -1}
	for name, f := range (fits{
		"NearestNeighbor":  (&NearestNeighbor{}).Fit,
		"NearestCentroid":  (&NearestCentroid{}).Fit,
		"LabelPropagation": (&LabelPropagation{K: 1}).Fit,
		"Linear":           (&Linear{}).Fit,
	}).withX(x) {
		if err := f(none); !errors.Is(err, ErrNoLabels) {
			t.Errorf("%s with no labels: %v, want ErrNoLabels", name, err)
		}
		if err := f([]int{0, 1}); err == nil {
			t.Errorf("%s with 2 labels for 3 rows: no error", name)
		}
		if err := f([]int{0, -2, 1}); err == nil {
			t.Errorf("%s with label −2: no error", name)
		}
	}
	bad := mat.NewDense(2, 1, []float64{0, math.NaN()})
	y := []int{0, 1}
	if err := (&NearestNeighbor{}).Fit(bad, y); err == nil {
		t.Error("NearestNeighbor NaN: no error")
	}
	if err := (&Linear{}).Fit(bad, y); err == nil {
		t.Error("Linear NaN: no error")
	}
	if err := (&KMeans{K: 1}).Fit(bad); err == nil {
		t.Error("KMeans NaN: no error")
	}
	if err := (&NearestNeighbor{K: 3}).Fit(x, []int{0, 1, -1}); err == nil {
		t.Error("K = 3 with 2 labeled rows: no error")
	}
	if err := (&KMeans{K: 4}).Fit(x); err == nil {
		t.Error("KMeans K = 4 on 3 rows: no error")
	}
	if err := (&LabelPropagation{}).Fit(x, []int{0, 1, -1}); err == nil {
		t.Error("LabelPropagation K = 7 on 3 rows: no error")
	}
	if err := (&LabelPropagation{Alpha: 1, K: 1}).Fit(x, []int{0, 1, -1}); err == nil {
		t.Error("LabelPropagation Alpha = 1: no error")
	}
}

// withX binds x as the first argument of each Fit.
type fits map[string]func(mat.Matrix, []int) error

func (fs fits) withX(x mat.Matrix) map[string]func([]int) error {
	out := map[string]func([]int) error{}
	for name, f := range fs {
		out[name] = func(y []int) error { return f(x, y) }
	}
	return out
}

func TestMisusePanics(t *testing.T) {
	x := mat.NewDense(3, 2, []float64{0, 1, 2, 3, 4, 5})
	var nn NearestNeighbor
	nn.Fit(x, []int{0, 1, 1})
	lp := LabelPropagation{K: 1}
	if err := lp.Fit(x, []int{0, 1, -1}); err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]func(){
		"distributions shape": func() { lp.LabelDistributionsTo(mat.NewDense(3, 3, nil)) },
		"transduction length": func() { lp.TransductionTo(make([]int, 4)) },
		"not fitted":          func() { (&NearestNeighbor{}).PredictTo(nil, x) },
		"dst length":          func() { nn.PredictTo(make([]int, 2), x) },
		"feature count":       func() { nn.PredictTo(nil, mat.NewDense(1, 3, nil)) },
		"kmeans labels":       func() { (&KMeans{}).LabelsTo(nil) },
		"centroid shape":      func() { (&NearestCentroid{}).CentroidsTo(nil) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
