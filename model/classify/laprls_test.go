package classify_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/nmfstream/nmfstream/model/classify"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// topicRows returns n l2-normalized sparse rows of dimension d, row i of
// topic i%c: each row draws nnz distinct columns, a share own of them from
// its topic's block of d/c columns and the rest anywhere.
func topicRows(n, d, c, nnz int, own float64, r *rand.Rand) (*sparse.CSR, []int) {
	x := sparse.Zeros(0, d)
	y := make([]int, n)
	block := d / c
	for i := range n {
		y[i] = i % c
		seen := map[int]bool{}
		var ind []int
		for len(ind) < nnz {
			j := r.IntN(d)
			if r.Float64() < own {
				j = y[i]*block + r.IntN(block)
			}
			if !seen[j] {
				seen[j] = true
				ind = append(ind, j)
			}
		}
		sortInts(ind)
		val := make([]float64, nnz)
		for k := range val {
			val[k] = 1 / math.Sqrt(float64(nnz))
		}
		x.AppendRow(ind, val)
	}
	return x, y
}

func sortInts(a []int) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

// hide keeps the labels of the first l rows of each class.
func hide(y []int, c, l int) []int {
	out := make([]int, len(y))
	seen := make([]int, c)
	for i, v := range y {
		out[i] = -1
		if seen[v] < l {
			out[i] = v
			seen[v]++
		}
	}
	return out
}

func accuracy(pred, y []int) float64 {
	ok := 0
	for i := range y {
		if pred[i] == y[i] {
			ok++
		}
	}
	return float64(ok) / float64(len(y))
}

// TestLapRLSTopics: three topics, five labels each, and held-out rows of
// the same topics. Both the supervised fit and the graph fit must classify
// nearly all of them, and cross-validation must report a score per choice.
func TestLapRLSTopics(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	x, y := topicRows(300, 300, 3, 20, 0.8, r)
	xt, yt := topicRows(150, 300, 3, 20, 0.8, r)
	for _, lr := range []*classify.LapRLS{
		{GammaI: -1},
		{},
		{Choices: []float64{classify.DefaultLapRLSGammaI, 0}},
	} {
		if err := lr.Fit(x, hide(y, 3, 5)); err != nil {
			t.Fatal(err)
		}
		pred, score := lr.PredictScoresTo(nil, nil, xt)
		acc := accuracy(pred, yt)
		t.Logf("γ_I %g: held-out accuracy %.3f", lr.GammaIChosen(), acc)
		// 0.9: a fifth of each row's terms are drawn from every topic.
		if acc < 0.9 {
			t.Errorf("γ_I %g: held-out accuracy %.3f, want ≥ 0.9", lr.GammaIChosen(), acc)
		}
		for i, s := range score {
			if !(s > -1 && s < 1) {
				t.Fatalf("score[%d] = %g outside (−1, 1)", i, s)
			}
		}
		if got, want := len(lr.Scores()), len(lr.Choices); got != want {
			t.Errorf("%d cross-validation scores, want %d", got, want)
		}
		if lr.Classes() != 3 || lr.Iterations() == 0 {
			t.Errorf("Classes %d, Iterations %d", lr.Classes(), lr.Iterations())
		}
	}
}

// TestLapRLSGraphCarriesLabels: rows on a chain of topics (each row shares
// terms with its neighbours along the chain only), one label at each end.
// The supervised fit sees two rows; the graph term carries their labels
// along the chain, so it must do better on the held-out rows.
func TestLapRLSGraphCarriesLabels(t *testing.T) {
	const n, d, nnz = 200, 400, 12
	r := rand.New(rand.NewPCG(1, 1))
	row := func(pos int) ([]int, []float64) {
		seen := map[int]bool{}
		var ind []int
		for len(ind) < nnz {
			j := 2*pos + r.IntN(32) - 16 // a window of terms around the position
			if j < 0 || j >= d || seen[j] {
				continue
			}
			seen[j] = true
			ind = append(ind, j)
		}
		sortInts(ind)
		val := make([]float64, nnz)
		for k := range val {
			val[k] = 1 / math.Sqrt(nnz)
		}
		return ind, val
	}
	x, xt := sparse.Zeros(0, d), sparse.Zeros(0, d)
	y, yt := make([]int, n), make([]int, n)
	for i := range n {
		x.AppendRow(row(i))
		y[i] = -1
		yt[i] = 0
		if i >= n/2 {
			yt[i] = 1
		}
		xt.AppendRow(row(i))
	}
	y[0], y[n-1] = 0, 1
	acc := func(lr *classify.LapRLS) float64 {
		if err := lr.Fit(x, y); err != nil {
			t.Fatal(err)
		}
		return accuracy(lr.PredictTo(nil, xt), yt)
	}
	sup, lap := acc(&classify.LapRLS{GammaI: -1}), acc(&classify.LapRLS{})
	t.Logf("chain: supervised %.3f, graph %.3f", sup, lap)
	if lap < sup+0.1 {
		t.Errorf("graph %.3f, want at least 0.1 above the supervised %.3f", lap, sup)
	}
}

func TestLapRLSErrors(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	x, y := topicRows(30, 60, 3, 5, 0.8, r)
	none := make([]int, 30)
	for i := range none {
		none[i] = -1
	}
	if err := (&classify.LapRLS{}).Fit(x, none); !errors.Is(err, classify.ErrNoLabels) {
		t.Errorf("no labels: %v, want ErrNoLabels", err)
	}
	for name, lr := range map[string]*classify.LapRLS{
		"negative GammaA": {GammaA: -1},
		"NaN GammaI":      {GammaI: math.NaN()},
		"K ≥ n":           {K: 30},
		"Inf choice":      {Choices: []float64{math.Inf(1)}},
		"negative Folds":  {Folds: -1},
	} {
		if err := lr.Fit(x, y); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if err := (&classify.LapRLS{}).Fit(x, y[:10]); err == nil {
		t.Error("short y: no error")
	}
}

// TestLapRLSMemory fits 2,000 rows of 10⁵ columns (a dense n×D copy would
// take 1.6 GB) and checks that the heap never grows by more than a tenth of
// that; run with -v for the peak.
func TestLapRLSMemory(t *testing.T) {
	const n, d, c = 2000, 100_000, 5
	r := rand.New(rand.NewPCG(1, 1))
	x, y := topicRows(n, d, c, 60, 0.5, r)
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak uint64
	var mu sync.Mutex
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // sample the live heap while Fit runs
		defer wg.Done()
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			mu.Lock()
			peak = max(peak, m.HeapAlloc)
			mu.Unlock()
			select {
			case <-done:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	lr := &classify.LapRLS{Choices: []float64{classify.DefaultLapRLSGammaI, 0}}
	err := lr.Fit(x, hide(y, c, 10))
	close(done)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	grew := int64(peak) - int64(base.HeapAlloc)
	dense := int64(n) * d * 8
	t.Logf("%d×%d, %d nonzeros: heap peak %.1f MB above the %.1f MB before Fit (a dense n×D copy: %.0f MB); %.1f MB allocated in all",
		n, d, x.NNZ(), float64(grew)/1e6, float64(base.HeapAlloc)/1e6, float64(dense)/1e6, float64(after.TotalAlloc-base.TotalAlloc)/1e6)
	if grew > dense/10 {
		t.Errorf("heap grew by %d bytes, want below %d", grew, dense/10)
	}
}

// TestLapRLSZeroRow: a zero row (a document with no known term) stays out
// of the graph instead of failing the fit, and gets the scores 0.
func TestLapRLSZeroRow(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	x, y := topicRows(60, 90, 3, 10, 0.8, r)
	x.AppendRow(nil, nil)
	y = append(hide(y, 3, 5), -1)
	lr := classify.LapRLS{}
	if err := lr.Fit(x, y); err != nil {
		t.Fatal(err)
	}
	zero := sparse.Zeros(0, 90)
	zero.AppendRow(nil, nil)
	if _, score := lr.PredictScoresTo(nil, nil, zero); score[0] != 0 {
		t.Errorf("zero row's score %g, want 0", score[0])
	}
}

// TestLapRLSOneLabel: with a single label, cross-validation has a fold
// without any label; Fit must still succeed, and predict that label.
func TestLapRLSOneLabel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	x, _ := topicRows(40, 60, 2, 8, 0.8, r)
	y := make([]int, 40)
	for i := range y {
		y[i] = -1
	}
	y[3] = 1
	lr := classify.LapRLS{K: 5, Choices: []float64{classify.DefaultLapRLSGammaI, 0}}
	if err := lr.Fit(x, y); err != nil {
		t.Fatal(err)
	}
	for i, p := range lr.PredictTo(nil, x) {
		if p != 1 {
			t.Fatalf("row %d predicted %d, want 1 (the only label)", i, p)
		}
	}
}

// TestLapRLSGraphGuard checks GraphGuard's contract on two skewed classes
// where cross-validation picks the graph term: SharesDistance is the
// total variation between the class shares that the graph fit and the
// supervised fit (each a LapRLS of its own, with Priors) predict over the
// unlabeled rows, counted here by hand; a guard below it overrules the
// choice and predicts as the supervised fit, one above it keeps the
// graph fit's predictions; without Choices nothing is measured.
func TestLapRLSGraphGuard(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 8))
	x, truth := skewedRows(rng, 600, 0.1)
	xte, _ := skewedRows(rng, 300, 0.1)
	y := make([]int, len(truth))
	un := sparse.Zeros(0, 28)
	var have [2]int
	for i, c := range truth {
		y[i] = -1
		if have[c] < 10 {
			y[i] = c
			have[c]++
			continue
		}
		un.AppendRow(x.Row(i))
	}
	fit := func(lr classify.LapRLS) *classify.LapRLS {
		t.Helper()
		if err := lr.Fit(x, y); err != nil {
			t.Fatal(err)
		}
		return &lr
	}
	choices := []float64{1e5, 0}
	plain := fit(classify.LapRLS{K: 5, Choices: choices, Priors: true})
	if plain.GammaIChosen() == 0 {
		t.Fatalf("cross-validation picked the supervised fit (%v): the data no longer exercise the guard", plain.Scores())
	}
	graph := fit(classify.LapRLS{K: 5, GammaI: 1e5, Priors: true})
	sup := fit(classify.LapRLS{GammaI: -1, Priors: true})
	pg, ps := graph.PredictTo(nil, un), sup.PredictTo(nil, un)
	var diff [2]float64
	for i := range pg {
		diff[pg[i]]++
		diff[ps[i]]--
	}
	want := (math.Abs(diff[0]) + math.Abs(diff[1])) / 2 / float64(len(pg))
	if want == 0 {
		t.Fatal("the two fits predict the same shares: the data no longer exercise the guard")
	}
	same := func(a, b *classify.LapRLS) bool { return samePredictions(a, b, xte) }
	strict := fit(classify.LapRLS{K: 5, Choices: choices, Priors: true, GraphGuard: want / 2})
	if !strict.Overruled() || strict.GammaIChosen() != 0 || math.Abs(strict.SharesDistance()-want) > 1e-12 || !same(strict, sup) {
		t.Errorf("guard %g under the shares' distance %g: overruled %v, γ_I %g, distance %g, predicts as the supervised fit %v; want true, 0, %g, true",
			want/2, want, strict.Overruled(), strict.GammaIChosen(), strict.SharesDistance(), same(strict, sup), want)
	}
	loose := fit(classify.LapRLS{K: 5, Choices: choices, Priors: true, GraphGuard: 2 * want})
	if loose.Overruled() || loose.GammaIChosen() != plain.GammaIChosen() || math.Abs(loose.SharesDistance()-want) > 1e-12 || !same(loose, plain) {
		t.Errorf("guard %g above the shares' distance %g: overruled %v, γ_I %g, distance %g, predicts as without the guard %v; want false, %g, %g, true",
			2*want, want, loose.Overruled(), loose.GammaIChosen(), loose.SharesDistance(), same(loose, plain), plain.GammaIChosen(), want)
	}
	fixed := fit(classify.LapRLS{K: 5, GammaI: 1e5, Priors: true, GraphGuard: want / 2})
	if fixed.Overruled() || !math.IsNaN(fixed.SharesDistance()) {
		t.Errorf("guard without Choices: overruled %v, distance %g; want false and NaN", fixed.Overruled(), fixed.SharesDistance())
	}
}

// TestLapRLSMasses checks LapRLS.Masses on ten topics whose last class
// appears in the pool only as its labeled rows, so the priors' estimate
// collapses it and is not used, and cross-validation keeps the graph:
// with labels balanced by design the graph fit's class masses move, and
// its class shares over the unlabeled rows come nearer the supervised
// fit's; with one label more in a class, or without Priors, nothing
// moves and the predictions are those without Masses.
func TestLapRLSMasses(t *testing.T) {
	const c = 10
	x, y, un, extra := lastClassLabeledOnly(c, 900, 0.6, 1)
	fit := func(lr classify.LapRLS, y []int) *classify.LapRLS {
		t.Helper()
		if err := lr.Fit(x, y); err != nil {
			t.Fatal(err)
		}
		return &lr
	}
	choices := []float64{1e5, 0}
	plain, moved := fitMasses(t, x, y)
	if plain.PriorsUsed() || plain.GammaIChosen() == 0 {
		t.Fatalf("priors used %v, γ_I %g: the data no longer exercise Masses (want an estimate collapsed and the graph kept)", plain.PriorsUsed(), plain.GammaIChosen())
	}
	if plain.MassesMoved() || !moved.MassesMoved() {
		t.Fatalf("masses moved without Masses %v, with it %v; want false, true", plain.MassesMoved(), moved.MassesMoved())
	}
	sup := fit(classify.LapRLS{GammaI: -1, Priors: true}, y)
	ps := sup.PredictTo(nil, un)
	tvPlain := sharesDistance(plain.PredictTo(nil, un), ps, c)
	tvMoved := sharesDistance(moved.PredictTo(nil, un), ps, c)
	if !(tvMoved < tvPlain) {
		t.Errorf("class shares' distance to the supervised fit's: %.3f with the masses moved, %.3f without; want it smaller", tvMoved, tvPlain)
	}
	same := func(a, b *classify.LapRLS) bool { return samePredictions(a, b, x) }
	uneven := append([]int(nil), y...)
	uneven[extra] = 0
	u0, u1 := fitMasses(t, x, uneven)
	if u0.PriorsUsed() || u0.GammaIChosen() == 0 {
		t.Fatalf("one label more: priors used %v, γ_I %g; want the case above but for the labels' balance", u0.PriorsUsed(), u0.GammaIChosen())
	}
	if u1.MassesMoved() || !same(u0, u1) {
		t.Errorf("labels not balanced: masses moved %v, predictions as without Masses %v; want false, true", u1.MassesMoved(), same(u0, u1))
	}
	n0 := fit(classify.LapRLS{K: 5, Choices: choices}, y)
	n1 := fit(classify.LapRLS{K: 5, Choices: choices, Masses: true}, y)
	if n0.GammaIChosen() == 0 {
		t.Fatal("without Priors cross-validation picked the supervised fit: the case checks nothing")
	}
	if n1.MassesMoved() || !same(n0, n1) {
		t.Errorf("without Priors: masses moved %v, predictions as without Masses %v; want false, true", n1.MassesMoved(), same(n0, n1))
	}
}

// TestLapRLSMassesTwoClasses checks that on two classes the estimate is
// used even for a class the unlabeled rows do not hold (here the last),
// at least at the guard's floor (its labels plus priorsCollapsed, 0.05,
// of its uniform share ½ of the unlabeled rows), where three classes fall
// back to the uniform priors (TestLapRLSMasses), so that Masses moves
// nothing.
func TestLapRLSMassesTwoClasses(t *testing.T) {
	x, y, un, _ := lastClassLabeledOnly(2, 400, 0.5, 2)
	plain, moved := fitMasses(t, x, y)
	m, _ := un.Dims()
	labeled := 0
	for _, c := range y {
		if c == 1 {
			labeled++
		}
	}
	floor := (float64(m)*0.05*0.5 + float64(labeled)) / float64(len(y))
	pi := plain.EstimatedPriors()
	if !plain.PriorsUsed() || len(pi) != 2 || pi[1] < floor-1e-12 || plain.GammaIChosen() == 0 {
		t.Fatalf("priors %v, used %v, γ_I %g; want the last class at or above the floor's %.6f, used, and the graph kept", pi, plain.PriorsUsed(), plain.GammaIChosen(), floor)
	}
	if moved.MassesMoved() || !samePredictions(plain, moved, x) {
		t.Errorf("two classes: masses moved %v, predictions as without Masses %v; want false, true", moved.MassesMoved(), samePredictions(plain, moved, x))
	}
	// The EM's estimate collapses here (nothing unlabeled is of the last
	// class): raised to the floor exactly, and used.
	em := classify.LapRLS{K: 5, Choices: []float64{1e5, 0}, Priors: true, PriorsEM: true}
	if err := em.Fit(x, y); err != nil {
		t.Fatal(err)
	}
	if pi := em.EstimatedPriors(); !em.PriorsUsed() || len(pi) != 2 || math.Abs(pi[1]-floor) > 1e-9 {
		t.Errorf("PriorsEM: priors %v, used %v; want the last class at the floor's %.6f, used", pi, em.PriorsUsed(), floor)
	}
}

// TestLapRLSMassesSupervisedAtChance checks that Masses moves nothing
// where the supervised fit's cross-validated balanced accuracy is at or
// below chance: its masses are not worth copying (as for GraphGuard).
func TestLapRLSMassesSupervisedAtChance(t *testing.T) {
	x, y, _, _ := lastClassLabeledOnly(3, 600, 0.2, 1)
	plain, moved := fitMasses(t, x, y)
	if sc := plain.Scores(); plain.PriorsUsed() || plain.GammaIChosen() == 0 || sc[1] > 1.0/3 {
		t.Fatalf("priors used %v, γ_I %g, cross-validated %v: the data no longer exercise the condition (want a collapsed estimate, the graph kept, the supervised fit at chance)", plain.PriorsUsed(), plain.GammaIChosen(), sc)
	}
	if moved.MassesMoved() || !samePredictions(plain, moved, x) {
		t.Errorf("supervised fit at chance: masses moved %v, predictions as without Masses %v; want false, true", moved.MassesMoved(), samePredictions(plain, moved, x))
	}
}

// fitMasses fits LapRLS with Priors and cross-validated γ_I (K 5) on x
// labeled y, without and with Masses.
func fitMasses(t *testing.T, x *sparse.CSR, y []int) (plain, moved *classify.LapRLS) {
	t.Helper()
	plain = &classify.LapRLS{K: 5, Choices: []float64{1e5, 0}, Priors: true}
	moved = &classify.LapRLS{K: 5, Choices: []float64{1e5, 0}, Priors: true, Masses: true}
	for _, lr := range []*classify.LapRLS{plain, moved} {
		if err := lr.Fit(x, y); err != nil {
			t.Fatal(err)
		}
	}
	return plain, moved
}

// lastClassLabeledOnly returns n rows of c topics (topicRows, a share own
// of each row's words from its topic; seed draws them) with 5 labels per class, the last
// class's unlabeled rows removed, so that the class is in the pool only
// through its labels; with the unlabeled rows and the index of an
// unlabeled row of class 0.
func lastClassLabeledOnly(c, n int, own float64, seed uint64) (x *sparse.CSR, y []int, un *sparse.CSR, extra int) {
	x0, truth0 := topicRows(n, 300, c, 12, own, rand.New(rand.NewPCG(seed, uint64(c))))
	y0 := hide(truth0, c, 5)
	x, un, extra = sparse.Zeros(0, 300), sparse.Zeros(0, 300), -1
	for i := range y0 {
		if y0[i] < 0 && truth0[i] == c-1 {
			continue
		}
		if y0[i] < 0 {
			un.AppendRow(x0.Row(i))
			if extra < 0 && truth0[i] == 0 {
				extra = len(y)
			}
		}
		x.AppendRow(x0.Row(i))
		y = append(y, y0[i])
	}
	return x, y, un, extra
}

// samePredictions reports whether a and b predict every row of x alike.
func samePredictions(a, b *classify.LapRLS, x *sparse.CSR) bool {
	pa, pb := a.PredictTo(nil, x), b.PredictTo(nil, x)
	for i := range pa {
		if pa[i] != pb[i] {
			return false
		}
	}
	return true
}

// sharesDistance is the total variation between the class shares of two
// predictions of the same rows.
func sharesDistance(a, b []int, classes int) float64 {
	d := make([]float64, classes)
	for i := range a {
		d[a[i]]++
		d[b[i]]--
	}
	var tv float64
	for _, v := range d {
		tv += math.Abs(v)
	}
	return tv / 2 / float64(len(a))
}

// TestLapRLSPool checks LapRLS.Pool where Masses applies (the data of
// TestLapRLSMasses): its scores are the mean of the graph fit's and the
// supervised fit's calibrated scores, xW_g/(2T_g) + xW_s/(2T_s), with the
// temperatures each fit calibrated alone; it predicts differently from
// Masses alone; and where Masses does not apply (labels not balanced,
// two classes) it predicts as without Pool.
func TestLapRLSPool(t *testing.T) {
	x, y, _, extra := lastClassLabeledOnly(10, 900, 0.6, 1)
	fit := func(lr classify.LapRLS, y []int) *classify.LapRLS {
		t.Helper()
		if err := lr.Fit(x, y); err != nil {
			t.Fatal(err)
		}
		return &lr
	}
	choices := []float64{1e5, 0}
	graph := fit(classify.LapRLS{K: 5, Choices: choices, Priors: true, Masses: true}, y)
	pooled := fit(classify.LapRLS{K: 5, Choices: choices, Priors: true, Masses: true, Pool: true}, y)
	sup := fit(classify.LapRLS{K: 5, Choices: []float64{0}, Priors: true}, y)
	if !graph.MassesMoved() || !pooled.MassesMoved() || sup.GammaIChosen() != 0 {
		t.Fatalf("masses moved %v / %v, supervised γ_I %g: the data no longer exercise Pool", graph.MassesMoved(), pooled.MassesMoved(), sup.GammaIChosen())
	}
	if !pooled.Pooled() || graph.Pooled() {
		t.Errorf("Pooled: %v with Pool, %v without; want true, false", pooled.Pooled(), graph.Pooled())
	}
	if pooled.Temperature() != 1 {
		t.Errorf("pooled temperature %g, want 1", pooled.Temperature())
	}
	fg, fs, fp := graph.DecisionTo(nil, x), sup.DecisionTo(nil, x), pooled.DecisionTo(nil, x)
	r, c := fp.Dims()
	worst := 0.0
	for i := range r {
		for j := range c {
			want := fg.At(i, j)/(2*graph.Temperature()) + fs.At(i, j)/(2*sup.Temperature())
			worst = max(worst, math.Abs(fp.At(i, j)-want))
		}
	}
	if worst > 1e-9 {
		t.Errorf("pooled scores depart from the mean of the two fits' calibrated scores by %g", worst)
	}
	if samePredictions(graph, pooled, x) {
		t.Error("Pool predicts as Masses alone: the case checks nothing")
	}
	uneven := append([]int(nil), y...)
	uneven[extra] = 0
	u0 := fit(classify.LapRLS{K: 5, Choices: choices, Priors: true, Masses: true}, uneven)
	u1 := fit(classify.LapRLS{K: 5, Choices: choices, Priors: true, Masses: true, Pool: true}, uneven)
	if u1.Pooled() || !samePredictions(u0, u1, x) {
		t.Error("labels not balanced: Pool changed the predictions")
	}
	x2, y2, _, _ := lastClassLabeledOnly(2, 400, 0.5, 2)
	b0, b1 := classify.LapRLS{K: 5, Choices: choices, Priors: true, Masses: true}, classify.LapRLS{K: 5, Choices: choices, Priors: true, Masses: true, Pool: true}
	if err := errors.Join(b0.Fit(x2, y2), b1.Fit(x2, y2)); err != nil {
		t.Fatal(err)
	}
	if b1.Pooled() || !samePredictions(&b0, &b1, x2) {
		t.Error("two classes: Pool changed the predictions")
	}
}
