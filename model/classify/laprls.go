package classify

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// LapRLS is linear Laplacian-regularized least squares (Belkin, Niyogi
// and Sindhwani 2006, §4.2, in its primal form), a semi-supervised
// one-vs-rest classifier for sparse high-dimensional rows such as TF-IDF
// documents. It uses the labels, the raw features and the graph of every
// training row together: Fit builds the cosine k-nearest-neighbour graph S
// (n×n, cosine-similarity weights, symmetrized by max; package graph) over
// all n training rows, labeled or not, and minimizes over W (D×C)
//
//	(1/ℓ) Σ_{i labeled} ωᵢ ‖tᵢ − xᵢW‖² + γ_A ‖W‖² + (γ_I/n²) tr((XW)ᵀ 𝓛 (XW)),
//
// where tᵢ is the one-hot row of xᵢ's class minus 1/C (so that the targets
// are centred and no intercept is needed), ωᵢ = ℓ/(P·n_c) weighs every
// present class alike (P classes with labels, n_c labeled rows in xᵢ's
// class), and 𝓛 = D − S is the graph Laplacian (D = diag(S·1)); the 1/n²
// is Belkin et al.'s normalization, which lets one γ_I serve corpora of a
// few hundred and of thousands of rows (with 1/n, Brown and SpamAssassin
// wanted γ_I a hundred times apart). The graph term asks that
// neighbouring rows, labeled or not, get similar scores XW: the unlabeled
// rows carry the labels along the graph, while the scores stay a linear
// function of the features, so that new rows are classified without the
// graph.
//
// W solves the normal equations
//
//	((1/ℓ) X_ℓᵀ Ω X_ℓ + γ_A I + (γ_I/n²) Xᵀ 𝓛 X) W = (1/ℓ) X_ℓᵀ Ω T,
//
// by conjugate gradients, one column per class, each step a few products
// with the sparse X and S: nothing n×D or D×D is formed, and the memory is
// O(nnz(X) + n·k + D·C).
//
// On documents (BENCHMARKS.md, "Documents") the graph term lifts the
// supervised fit (the same minimization with γ_I = 0) on Brown genres,
// 3 labels per genre, from 0.380 to 0.393 held out (mean of 5 splits) and
// on SpamAssassin, 10 labels per class, from 0.899 to 0.929; on State of
// the Union addresses by party, whose graph joins addresses of one era
// rather than one party, it drops from 0.520 to 0.440. Choices lets
// cross-validation on the labels decide (0.491 there, unchanged on the
// other two).
//
// The zero value uses the defaults below. A LapRLS is not safe for
// concurrent use.
type LapRLS struct {
	// K is the number of nearest neighbours (cosine) linked to each
	// training row before symmetrization. If zero, it defaults to 10. It
	// must be below the number of non-zero training rows.
	K int
	// GammaA is γ_A, the ridge weight on ‖W‖². If zero, it defaults to
	// 0.01. It must be positive.
	GammaA float64
	// GammaI is γ_I, the weight of the graph term. If zero, it defaults
	// to 1e5; a negative value disables the graph term (plain regularized
	// least squares on the labeled rows).
	GammaI float64
	// Choices, if set, lists the values of γ_I among which Fit chooses by
	// cross-validation on the labeled rows (GammaI is then ignored): the
	// labeled rows are dealt, class by class, round Folds folds; each
	// fold is held out in turn, its rows cut out of the graph as a test
	// row is absent from it, and predicted by the fit on the other
	// labels; the choice with the highest balanced accuracy over the
	// held-out rows wins. A tie, frequent with a few labels (10 per class
	// is a step of 0.05), goes to the choice whose held-out scores rank
	// the rows better (macroAUC), and a tie of both to the first. A
	// value ≤ 0 stands for no graph term, the supervised fit. The choices
	// share one graph.
	Choices []float64
	// Folds is the number of cross-validation folds, at most the number
	// of labeled rows. If zero, it defaults to 10.
	Folds int
	// MaxIter bounds the conjugate-gradient steps. If zero, it defaults
	// to 300.
	MaxIter int
	// Tol stops conjugate gradients once every column's residual norm is
	// at most Tol times its right-hand side's. If zero, it defaults to
	// 1e-4 (on Brown, 1e-6 predicts the same classes in a third more
	// steps).
	Tol float64
	// Priors, if set, makes Fit calibrate the scores into probabilities
	// and estimate the class priors of the training pool from its
	// unlabeled rows; prediction then moves its scores halfway from the
	// uniform priors the class weighting implies toward the Bayes rule
	// for the estimated ones, unless the estimate has collapsed a class
	// (see priors.go: a temperature fitted on the cross-validated scores
	// of the labels; on two classes labeled alike mixture proportion
	// estimation from those scores and the unlabeled rows', and a floor
	// under a collapsed class instead of the guard; otherwise the EM; the
	// labeled rows counted in, the half shift). It matters
	// where the labeled rows are balanced by design and the classes are
	// not: a labeled subset says nothing of the priors then. It costs one
	// cross-validation unless Choices already ran one.
	Priors bool
	// PriorsEM, with Priors, estimates the unlabeled rows' class priors of
	// two classes labeled alike by the EM of Saerens, Latinne and
	// Decaestecker (2002) instead of by mixture proportion estimation
	// (see priors.go): the estimator before (the floor applies to both),
	// for the ablation (eval --priors em). Three labeled classes or more,
	// and labels not balanced by design, are estimated by the EM either
	// way.
	PriorsEM bool
	// GraphGuard, if positive, overrules cross-validation's choice of the
	// graph term where the graph fit's predictions depart from the
	// supervised fit's: when Choices picks a γ_I > 0 and also lists the
	// supervised fit (a choice ≤ 0), and that fit's cross-validated
	// balanced accuracy is above chance (1/P for P labeled classes), Fit
	// fits both and predicts the unlabeled training rows with each (with
	// Priors, each calibrated and shifted as it would predict), and if
	// their class shares over those rows differ by more than GraphGuard
	// in total variation (½·Σ_c |share_graph(c) − share_supervised(c)|),
	// the supervised fit is used. A graph that joins rows by something
	// other than their class (the State of the Union's addresses by era,
	// a hub of one genre) spreads a few labels over the wrong parts of
	// the pool, and cross-validation on those few labels cannot see it;
	// the supervised fit has no such failure, but it must have learned
	// something to arbitrate: where it stays at chance the shares may
	// differ by its fault (short texts of few words). BENCHMARKS.md,
	// "Skewed text: the graph overruled". It costs one more solve, and
	// with Priors one more calibration. DefaultLapRLSGraphGuard is eval's
	// value.
	GraphGuard float64
	// Masses, with Priors, moves the graph fit's class masses to the
	// supervised fit's where the priors' estimate is not used. It applies
	// when Fit keeps the graph term (Choices picked it and GraphGuard did
	// not overrule it); Choices lists the supervised fit, and its
	// cross-validated balanced accuracy is above chance (as for
	// GraphGuard: a fit at chance has no masses worth copying); the
	// estimate collapsed a labeled class (see Priors); at least three
	// classes are labeled; and every labeled class has as many labeled
	// rows as the others (labels balanced by design). Prediction then adds
	// to the calibrated scores f/T the offsets b under which the graph
	// fit's mean probabilities softmax(f/T + b) over the unlabeled
	// training rows equal the supervised fit's (the class mass
	// normalization of Zhu, Ghahramani and Lafferty 2003, its target the
	// supervised fit's masses; massOffsets). The graph spreads each class
	// over the part of the graph its few labels sit in, so with labels
	// balanced by design its masses follow where they were drawn; the
	// supervised fit's follow the rows' features. Labels drawn at random
	// carry the priors themselves, and there the graph's masses are the
	// better. On two classes the collapsed estimate marks a rare class,
	// whose mass the supervised fit overstates, and moving cost accuracy
	// (BENCHMARKS.md, "Skewed text: the supervised fit's class masses").
	// Without Priors it does nothing. Where it applies it costs the
	// supervised fit's solve and calibration, unless GraphGuard already
	// made them.
	Masses bool
	// Pool, with Masses, predicts where Masses applies from both fits
	// rather than the graph fit alone: from the mean of their calibrated
	// scores, W = ½(W_graph/T_graph + W_supervised/T_supervised), the
	// normalized product of their probabilities (a product of experts),
	// whose class masses over the unlabeled training rows are then moved
	// to the supervised fit's as Masses moves the graph fit's. With 3 to 5
	// labels a class, cross-validation cannot tell the two fits apart
	// (its folds leave a class a label short: BENCHMARKS.md, "Skewed text:
	// cross-validation's folds stratified"), so where it keeps the graph
	// the pool keeps what each fit knows. Temperature then reports 1, the
	// pool's. BENCHMARKS.md, "Skewed text: the two fits pooled".
	Pool bool
	// GraphRows, if set, are the rows the k-NN graph joins instead of
	// Fit's x: the same rows in the same order, of any width. A caller that
	// appends features to the rows (such as a factorization's codes, see
	// AppendCodes) passes the rows without them here, so that the graph
	// stays on the rows' own cosines: the appended features weigh in the
	// fit, not in which rows are neighbours. Fit reads it only; a count of
	// rows other than x's is an error.
	GraphRows *sparse.CSR
	// Split, if set, runs the k-NN graph's search in parts at once, as
	// Joint.Split does (pipeline.Split provides one): the graph, and so
	// the fit, are the same either way. If nil, the search runs on the
	// caller's goroutine.
	Split func(n int, body func(lo, hi int))

	temp    float64   // temperature T of the last Fit (1 without Priors)
	shift   []float64 // per class: priorsShift·log(π/π₀) if priorsUsed, the offsets b if massesMoved, else nil
	prior   []float64 // estimated priors π, nil without Priors
	w       mat.Dense // D×C weights
	chosen  float64   // γ_I of the last Fit
	scores  []float64 // cross-validated balanced accuracy of each choice
	aucs    []float64 // cross-validated macro AUC of each choice (macroAUC)
	classes int
	d       int
	iter    int
	fitted  bool
	// priorsUsed: prediction leans on prior (Priors set and the estimate
	// passed trustPriors); otherwise it assumes the uniform priors.
	priorsUsed bool
	// shareTV is the total variation between the graph and supervised
	// fits' class shares over the unlabeled rows (GraphGuard), NaN where
	// not measured; overruled: GraphGuard took the supervised fit.
	shareTV   float64
	overruled bool
	// massesMoved: Masses moved the graph fit's class masses, or with
	// Pool the pooled fits' (shift holds the offsets); pooled: Pool
	// pooled the two fits.
	massesMoved, pooled bool

	f mat.Dense // prediction scratch, m×C
}

// Defaults of LapRLS's zero fields.
const (
	DefaultLapRLSK      = 10
	DefaultLapRLSGammaA = 0.01
	DefaultLapRLSGammaI = 1e5
	DefaultLapRLSFolds  = 10
	// DefaultLapRLSGraphGuard is the GraphGuard that eval and classify
	// use: the two fits must disagree on a fifth of the pool's class
	// shares. On sixteen splits of eight text sets the guard took the
	// supervised fit on the splits where the graph fit failed worst
	// (Brown's news given 87% of the pool), and on one of the
	// mails' 16 (BENCHMARKS.md, "Skewed text: the graph overruled").
	DefaultLapRLSGraphGuard = 0.2
)

func (lr *LapRLS) params() (k int, gammaA, gammaI float64, maxIter int, tol float64) {
	k, gammaA, gammaI, maxIter, tol = lr.K, lr.GammaA, lr.GammaI, lr.MaxIter, lr.Tol
	if k == 0 {
		k = DefaultLapRLSK
	}
	if gammaA == 0 {
		gammaA = DefaultLapRLSGammaA
	}
	if gammaI == 0 {
		gammaI = DefaultLapRLSGammaI
	}
	if gammaI < 0 {
		gammaI = 0
	}
	if maxIter == 0 {
		maxIter = 300
	}
	if tol == 0 {
		tol = 1e-4
	}
	return
}

// Fit trains on the rows of x (n×D), labeled by y (length n, in [0, C) or
// −1 for unlabeled): the labeled rows give the targets and every row the
// graph. With Choices set it first picks γ_I by cross-validation (see
// Choices). It returns ErrNoLabels if no row is labeled, and an error if a
// parameter is out of range, len(y) ≠ n, x has a non-finite entry, or K
// is not below the number of non-zero rows (a zero row has no cosine
// neighbours and stays out of the graph). Reaching MaxIter is not an
// error; see Iterations. Fit keeps only W (D×C), not x; a later Fit
// replaces it.
func (lr *LapRLS) Fit(x *sparse.CSR, y []int) error {
	k, gammaA, gammaI, maxIter, tol := lr.params()
	n, _ := x.Dims()
	if !(gammaA > 0) || math.IsInf(gammaA, 0) || math.IsNaN(gammaI) || math.IsInf(gammaI, 0) {
		return fmt.Errorf("classify: laprls: GammaA = %g must be positive and GammaI = %g finite", lr.GammaA, lr.GammaI)
	}
	if k < 0 || maxIter < 0 || tol < 0 || lr.Folds < 0 {
		return fmt.Errorf("classify: laprls: negative K, MaxIter, Tol or Folds")
	}
	for _, g := range lr.Choices {
		if math.IsNaN(g) || math.IsInf(g, 0) {
			return fmt.Errorf("classify: laprls: choice of GammaI %g is not finite", g)
		}
	}
	classes, _, err := checkLabels(n, y)
	if err != nil {
		return err
	}
	for _, v := range x.Val {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("classify: laprls: non-finite entry %v", v)
		}
	}
	sys := lapSystem{x: x, classes: classes, gammaA: gammaA, maxIter: maxIter, tol: tol}
	needGraph := gammaI > 0
	for _, g := range lr.Choices {
		needGraph = needGraph || g > 0
	}
	if needGraph {
		gx := x
		if lr.GraphRows != nil {
			if m, _ := lr.GraphRows.Dims(); m != n {
				return fmt.Errorf("classify: laprls: %d graph rows for %d rows", m, n)
			}
			gx = lr.GraphRows
		}
		s, err := cosineGraph(gx, k, lr.Split)
		if err != nil {
			return err
		}
		sys.s = s
		sys.deg = make([]float64, n)
		for i := range n {
			for p := sys.s.Indptr[i]; p < sys.s.Indptr[i+1]; p++ {
				sys.deg[i] += sys.s.Val[p]
			}
		}
	}
	lr.scores, lr.aucs = lr.scores[:0], lr.aucs[:0]
	var oof, supOOF *mat.Dense
	var oofTruth, supTruth []int
	supScore := math.Inf(-1) // the supervised fit's cross-validated balanced accuracy
	if len(lr.Choices) > 0 {
		folds := lr.Folds
		if folds == 0 {
			folds = DefaultLapRLSFolds
		}
		best, bestAUC := math.Inf(-1), math.Inf(-1)
		for _, g := range lr.Choices {
			sc, f, truth := sys.crossValidate(y, max(g, 0), folds)
			if g <= 0 {
				supOOF, supTruth, supScore = f, truth, sc
			}
			auc := macroAUC(f, truth, classes)
			lr.scores, lr.aucs = append(lr.scores, sc), append(lr.aucs, auc)
			if better(sc, auc, best, bestAUC) {
				best, bestAUC, gammaI = sc, auc, max(g, 0)
				oof, oofTruth = f, truth
			}
		}
	}
	var un *sparse.CSR // the unlabeled rows, which Priors and GraphGuard read
	if lr.Priors || lr.GraphGuard > 0 {
		un = unlabeledRows(x, y)
	}
	lr.finish(un, y, &sys, gammaI, oof, oofTruth)
	lr.shareTV, lr.overruled, lr.massesMoved, lr.pooled = math.NaN(), false, false, false
	labeled, present := labelCounts(y, classes)
	var sup *LapRLS // the supervised fit, made once for GraphGuard or Masses
	supervised := func() *LapRLS {
		if sup == nil {
			sup = &LapRLS{Priors: lr.Priors, PriorsEM: lr.PriorsEM, Folds: lr.Folds}
			sup.finish(un, y, &sys, 0, supOOF, supTruth)
		}
		return sup
	}
	if lr.GraphGuard > 0 && gammaI > 0 && supOOF != nil && supScore > 1/float64(present) && un.NNZ() > 0 {
		sup := supervised()
		lr.shareTV = sharesTV(lr.PredictTo(nil, un), sup.PredictTo(nil, un), classes)
		if lr.shareTV > lr.GraphGuard {
			lr.w, lr.iter, lr.chosen = sup.w, sup.iter, 0
			lr.temp, lr.shift, lr.prior, lr.priorsUsed = sup.temp, sup.shift, sup.prior, sup.priorsUsed
			lr.f.Reset()
			lr.overruled = true
		}
	}
	if lr.Masses && lr.Priors && !lr.priorsUsed && gammaI > 0 && !lr.overruled && supOOF != nil && supScore > 1/float64(present) &&
		present >= 3 && un.NNZ() > 0 && balancedLabels(labeled) {
		sup := supervised()
		var fg, fs mat.Dense
		un.MulDenseTo(&fs, &sup.w)
		if lr.Pool {
			var ws mat.Dense
			ws.Scale(0.5/sup.temp, &sup.w)
			lr.w.Scale(0.5/lr.temp, &lr.w)
			lr.w.Add(&lr.w, &ws)
			lr.temp = 1
		}
		un.MulDenseTo(&fg, &lr.w) // the graph fit's scores, or the pool's
		lr.shift = massOffsets(&fg, lr.temp, classMasses(&fs, sup.temp, nil, labeled), labeled)
		lr.massesMoved, lr.pooled = true, lr.Pool
	}
	return nil
}

// balancedLabels reports whether every class with a labeled row has as
// many as each other (labeled[c] rows in class c: labels drawn per class,
// balanced by design), and at least one row is labeled.
func balancedLabels(labeled []float64) bool {
	n := 0.0
	for _, v := range labeled {
		if v > 0 && n > 0 && v != n {
			return false
		}
		n = max(n, v)
	}
	return n > 0
}

// classMasses returns the mean over the rows of f (m×C scores) of
// softmax(f/t + shift) (shift nil: none), with the classes that have no
// labeled row (labeled[c] = 0) left out: 0, the rest renormalized in each
// row.
func classMasses(f *mat.Dense, t float64, shift, labeled []float64) []float64 {
	m, c := f.Dims()
	mass := make([]float64, c)
	p := make([]float64, c)
	for i := range m {
		softmaxLabeled(p, f.RawRowView(i), t, shift, labeled)
		for j, v := range p {
			mass[j] += v / float64(m)
		}
	}
	return mass
}

// softmaxLabeled is softmaxRow over the classes with a labeled row
// (labeled[c] > 0); the others get 0. If every labeled class underflowed
// (no evidence), they share the row alike.
func softmaxLabeled(p, f []float64, t float64, shift, labeled []float64) {
	softmaxRow(p, f, t, shift)
	var kept, np float64
	for j := range p {
		if labeled[j] == 0 {
			p[j] = 0
		} else {
			np++
		}
		kept += p[j]
	}
	for j := range p {
		switch {
		case kept > 0:
			p[j] /= kept
		case labeled[j] > 0:
			p[j] = 1 / np
		}
	}
}

// massOffsets returns the offsets b (one per class, 0 for the classes
// without a labeled row) under which the mean over f's rows of
// softmax(f/t + b), over the labeled classes, equals target (positive on
// those classes, summing to 1): the fixed point of b(c) += log(target(c)
// / mass(c)) (iterative proportional scaling), stopped once no offset
// moves by more than 10⁻⁶ or after 1000 rounds.
func massOffsets(f *mat.Dense, t float64, target, labeled []float64) []float64 {
	_, c := f.Dims()
	b := make([]float64, c)
	for range 1000 {
		mass := classMasses(f, t, b, labeled)
		var moved float64
		for j := range b {
			if labeled[j] == 0 || mass[j] <= 0 || target[j] <= 0 {
				continue
			}
			d := math.Log(target[j] / mass[j])
			b[j] += d
			moved = max(moved, math.Abs(d))
		}
		if moved < 1e-6 {
			break
		}
	}
	return b
}

// finish solves for W with weight γ_I = gammaI and, with Priors,
// calibrates it on the cross-validated scores oof of the labeled rows
// (classes truth; a cross-validation is run if oof is nil) and the
// unlabeled rows un of the training rows labeled y.
func (lr *LapRLS) finish(un *sparse.CSR, y []int, sys *lapSystem, gammaI float64, oof *mat.Dense, truth []int) {
	_, d := sys.x.Dims()
	lr.chosen = gammaI
	lr.w.Reset()
	lr.iter = sys.solve(&lr.w, y, gammaI)
	lr.classes, lr.d, lr.fitted = sys.classes, d, true
	lr.temp, lr.shift, lr.prior, lr.priorsUsed = 1, nil, nil, false
	if lr.Priors {
		if oof == nil {
			folds := lr.Folds
			if folds == 0 {
				folds = DefaultLapRLSFolds
			}
			_, oof, truth = sys.crossValidate(y, gammaI, folds)
		}
		lr.calibrate(un, y, oof, truth)
	}
}

// labelCounts returns the labeled rows of y in each of the classes and
// how many classes have one (the chance level of a balanced accuracy over
// them is its inverse).
func labelCounts(y []int, classes int) (labeled []float64, present int) {
	labeled = make([]float64, classes)
	for _, c := range y {
		if c >= 0 {
			if labeled[c] == 0 {
				present++
			}
			labeled[c]++
		}
	}
	return labeled, present
}

// unlabeledRows returns the rows of x whose label in y is negative.
func unlabeledRows(x *sparse.CSR, y []int) *sparse.CSR {
	_, d := x.Dims()
	un := sparse.Zeros(0, d)
	for i, v := range y {
		if v < 0 {
			un.AppendRow(x.Row(i))
		}
	}
	return un
}

// sharesTV returns the total variation distance ½·Σ_c |a(c) − b(c)|
// between the class shares of two predictions a and b of the same rows
// (classes in [0, classes); a negative class, no prediction, counts in
// no share), 0 without rows.
func sharesTV(a, b []int, classes int) float64 {
	if len(a) == 0 {
		return 0
	}
	diff := make([]float64, classes)
	for i := range a {
		if a[i] >= 0 {
			diff[a[i]]++
		}
		if b[i] >= 0 {
			diff[b[i]]--
		}
	}
	var tv float64
	for _, v := range diff {
		tv += math.Abs(v)
	}
	return tv / 2 / float64(len(a))
}

// calibrate fits the temperature on the cross-validated scores oof of
// the labeled rows (classes truth) and estimates the class priors of the
// training pool, labeled y, from its unlabeled rows un; see Priors and
// priors.go.
func (lr *LapRLS) calibrate(un *sparse.CSR, y []int, oof *mat.Dense, truth []int) {
	lr.temp = fitTemperature(oof, truth)
	c := lr.classes
	labeled, np := labelCounts(y, c)
	prior0 := make([]float64, c)
	for j := range prior0 {
		prior0[j] = 1e-6
		if labeled[j] > 0 {
			prior0[j] = 1 / float64(np)
		}
	}
	// Two classes labeled alike (balanced by design): mixture proportion
	// estimation and the floor; otherwise the EM and the guard.
	alike := np == 2 && balancedLabels(labeled)
	m, _ := un.Dims()
	est := prior0
	if m > 0 {
		// A class without labels is no class of the estimate's: the
		// softmax gives its column mass, which would otherwise grow to a
		// prior.
		p := mat.NewDense(m, c, nil)
		var f mat.Dense
		un.MulDenseTo(&f, &lr.w)
		for i := range m {
			softmaxLabeled(p.RawRowView(i), f.RawRowView(i), lr.temp, nil, labeled)
		}
		if lr.PriorsEM || !alike {
			est = emPriors(p, prior0, 1000, 1e-8)
		} else {
			r, _ := oof.Dims()
			q := mat.NewDense(r, c, nil)
			for i := range r {
				softmaxLabeled(q.RawRowView(i), oof.RawRowView(i), lr.temp, nil, labeled)
			}
			est = mpePriors(p, q, truth, prior0, labeled)
		}
	}
	if alike {
		est, lr.priorsUsed = floorPriors(est, prior0, labeled), true
	} else {
		lr.priorsUsed = trustPriors(est, prior0, labeled)
	}
	lr.prior = poolPriors(est, m, labeled)
	lr.shift = nil
	if lr.priorsUsed {
		lr.shift = make([]float64, c)
		for j := range c {
			lr.shift[j] = priorsShift * math.Log(lr.prior[j]/prior0[j])
		}
	}
}

// cosineGraph returns the symmetric cosine k-NN graph of x's rows
// (cosine-similarity weights, symmetrized by max); a zero row has no
// direction, so it gets no edge.
func cosineGraph(x *sparse.CSR, k int, split func(n int, body func(lo, hi int))) (*sparse.CSR, error) {
	n, d := x.Dims()
	var nz []int
	sub := sparse.Zeros(0, d)
	for i := range n {
		if ind, val := x.Row(i); len(ind) > 0 {
			nz = append(nz, i)
			sub.AppendRow(ind, val)
		}
	}
	if k >= len(nz) {
		return nil, fmt.Errorf("classify: laprls: K = %d needs more than %d non-zero training rows", k, len(nz))
	}
	g, err := graph.KNN{K: k, Metric: graph.Cosine}.SparseSplit(sub, split)
	if err != nil {
		return nil, fmt.Errorf("classify: laprls: %w", err)
	}
	s := g.Weights(graph.Weighting{Scheme: graph.CosineSimilarity})
	if len(nz) == n {
		return s, nil
	}
	b := sparse.NewBuilder(n, n)
	for r, i := range nz {
		for p := s.Indptr[r]; p < s.Indptr[r+1]; p++ {
			b.Add(i, nz[s.Ind[p]], s.Val[p])
		}
	}
	return b.CSR(), nil
}

// lapSystem holds what the fits of one training set share: the rows, the
// graph S (nil without the graph term) and its degrees.
type lapSystem struct {
	x       *sparse.CSR
	s       *sparse.CSR
	deg     []float64
	classes int
	gammaA  float64
	maxIter int
	tol     float64
}

// solve stores in w (empty, or D×C) the W that minimizes LapRLS's
// objective for labels y and weight γ_I, and returns the conjugate-gradient
// steps taken.
func (sys *lapSystem) solve(w *mat.Dense, y []int, gammaI float64) int {
	x, classes := sys.x, sys.classes
	n, d := x.Dims()
	count := make([]int, classes)
	var lab []int
	for i, c := range y {
		if c >= 0 {
			count[c]++
			lab = append(lab, i)
		}
	}
	present := 0
	for _, c := range count {
		if c > 0 {
			present++
		}
	}
	nl := len(lab)
	if w.IsEmpty() {
		w.ReuseAs(d, classes)
	}
	w.Zero()
	if nl == 0 { // a cross-validation fold that held out every label
		return 0
	}
	xl := sparse.Zeros(0, d)
	for _, i := range lab {
		xl.AppendRow(x.Row(i))
	}
	omega := make([]float64, nl) // ωᵢ/ℓ
	t := mat.NewDense(nl, classes, nil)
	for r, i := range lab {
		c := y[i]
		omega[r] = 1 / float64(present*count[c])
		row := t.RawRowView(r)
		for j := range row {
			row[j] = -omega[r] / float64(classes)
		}
		row[c] += omega[r]
	}
	b := mat.NewDense(d, classes, nil)
	xl.TMulDenseTo(b, t)

	// A(W) = X_ℓᵀ (ω∘(X_ℓ W)) + γ_A W + (γ_I/n²) Xᵀ (D − S) X W.
	graphTerm := gammaI > 0 && sys.s != nil
	gi := gammaI / float64(n) / float64(n)
	var zl, zn, sz, tmp mat.Dense
	apply := func(dst, w *mat.Dense) {
		xl.MulDenseTo(&zl, w)
		for r := range nl {
			row := zl.RawRowView(r)
			for j := range row {
				row[j] *= omega[r]
			}
		}
		xl.TMulDenseTo(dst, &zl)
		axpy(dst, sys.gammaA, w)
		if !graphTerm {
			return
		}
		x.MulDenseTo(&zn, w)
		sys.s.MulDenseTo(&sz, &zn)
		for i := range n {
			row, srow := zn.RawRowView(i), sz.RawRowView(i)
			for j := range row {
				row[j] = sys.deg[i]*row[j] - srow[j]
			}
		}
		x.TMulDenseTo(&tmp, &zn)
		axpy(dst, gi, &tmp)
	}
	return cg(w, b, apply, sys.maxIter, sys.tol)
}

// crossValidate returns the balanced accuracy with which the fits for γ_I
// predict the labeled rows of y held out in turn: the labeled rows, in
// order of class, are dealt round the folds, and each fold's rows leave
// the graph while the others' labels fit W.
//
// It also returns the held-out rows' scores (one row per labeled row, in
// the order of the returned classes) for the calibration of Priors.
func (sys *lapSystem) crossValidate(y []int, gammaI float64, folds int) (float64, *mat.Dense, []int) {
	var lab []int
	for c := range sys.classes {
		for i, v := range y {
			if v == c {
				lab = append(lab, i)
			}
		}
	}
	folds = min(folds, len(lab))
	hit := make([]float64, sys.classes)
	tot := make([]float64, sys.classes)
	yf := make([]int, len(y))
	var w, f mat.Dense
	oof := mat.NewDense(max(len(lab), 1), sys.classes, nil)
	var oofTruth []int
	for fold := range folds {
		copy(yf, y)
		_, d := sys.x.Dims()
		held := sparse.Zeros(0, d)
		var truth []int
		for r := fold; r < len(lab); r += folds {
			yf[lab[r]] = -1
			held.AppendRow(sys.x.Row(lab[r]))
			truth = append(truth, y[lab[r]])
		}
		fs := sys.without(yf, y)
		fs.solve(&w, yf, gammaI)
		f.Reset()
		held.MulDenseTo(&f, &w)
		for r, c := range truth {
			oof.SetRow(len(oofTruth), f.RawRowView(r))
			oofTruth = append(oofTruth, c)
			tot[c]++
			if argmax(f.RawRowView(r)) == c {
				hit[c]++
			}
		}
	}
	var sum float64
	var m int
	for c := range hit {
		if tot[c] > 0 {
			sum += hit[c] / tot[c]
			m++
		}
	}
	return sum / float64(m), oof, oofTruth
}

// without returns sys with the rows labeled in y but not in yf cut out of
// the graph (their edges gone), so that a held-out row is as unseen as a
// test row.
func (sys *lapSystem) without(yf, y []int) *lapSystem {
	if sys.s == nil {
		return sys
	}
	out := *sys
	n, _ := sys.s.Dims()
	gone := make([]bool, n)
	for i := range y {
		gone[i] = y[i] >= 0 && yf[i] < 0
	}
	val := make([]float64, len(sys.s.Val))
	out.deg = make([]float64, n)
	for i := range n {
		for p := sys.s.Indptr[i]; p < sys.s.Indptr[i+1]; p++ {
			if !gone[i] && !gone[sys.s.Ind[p]] {
				val[p] = sys.s.Val[p]
				out.deg[i] += val[p]
			}
		}
	}
	out.s = sparse.NewCSR(n, n, sys.s.Indptr, sys.s.Ind, val)
	return &out
}

// better reports whether a choice of γ_I with cross-validated balanced
// accuracy sc and macro AUC auc beats the best so far (bestSc, bestAUC):
// a higher balanced accuracy, or the same and a higher AUC.
func better(sc, auc, bestSc, bestAUC float64) bool {
	return sc > bestSc || (sc == bestSc && auc > bestAUC)
}

// macroAUC returns the mean over classes of the one-against-rest area
// under the ROC curve of the scores f (one row per held-out row, one
// column per class) for the rows' classes truth: for class c, the share
// of (row of c, row of another class) pairs that f's column c orders
// right, a tie counting half (Mann and Whitney's rank sum, O(C·m log m)
// for m rows). Classes without rows of their own or of others are left
// out; with none left it returns 0.
func macroAUC(f *mat.Dense, truth []int, classes int) float64 {
	m := len(truth)
	order := make([]int, m)
	var sum float64
	var n int
	for c := range classes {
		var pos int
		for i := range order {
			order[i] = i
			if truth[i] == c {
				pos++
			}
		}
		if pos == 0 || pos == m {
			continue
		}
		slices.SortFunc(order, func(i, j int) int { return cmp.Compare(f.At(i, c), f.At(j, c)) })
		var rankSum float64 // of class c's rows, ties sharing their mean rank (1-based)
		for lo := 0; lo < m; {
			hi := lo + 1
			for hi < m && f.At(order[hi], c) == f.At(order[lo], c) {
				hi++
			}
			mean := float64(lo+hi+1) / 2
			for _, i := range order[lo:hi] {
				if truth[i] == c {
					rankSum += mean
				}
			}
			lo = hi
		}
		p, q := float64(pos), float64(m-pos)
		sum += (rankSum - p*(p+1)/2) / (p * q)
		n++
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

func argmax(v []float64) int {
	best := -1
	for j, x := range v {
		if best < 0 || x > v[best] {
			best = j
		}
	}
	return best
}

// cg solves A(w) = b column by column by conjugate gradients from w = 0
// (A symmetric positive definite, given by apply), and returns the number
// of steps taken.
func cg(w, b *mat.Dense, apply func(dst, w *mat.Dense), maxIter int, tol float64) int {
	d, c := b.Dims()
	r := mat.DenseCopyOf(b)
	p := mat.DenseCopyOf(b)
	ap := mat.NewDense(d, c, nil)
	rr := colDots(nil, r, r)
	stop := make([]float64, c)
	for j := range c {
		stop[j] = tol * tol * rr[j]
	}
	pap := make([]float64, c)
	it := 0
	for ; it < maxIter; it++ {
		done := true
		for j := range c {
			if rr[j] > stop[j] {
				done = false
			}
		}
		if done {
			break
		}
		apply(ap, p)
		colDots(pap, p, ap)
		alpha := make([]float64, c)
		for j := range c {
			if pap[j] > 0 && rr[j] > stop[j] {
				alpha[j] = rr[j] / pap[j]
			}
		}
		for i := range d {
			wr, rrow, prow, aprow := w.RawRowView(i), r.RawRowView(i), p.RawRowView(i), ap.RawRowView(i)
			for j := range c {
				wr[j] += alpha[j] * prow[j]
				rrow[j] -= alpha[j] * aprow[j]
			}
		}
		rrNew := colDots(nil, r, r)
		for i := range d {
			rrow, prow := r.RawRowView(i), p.RawRowView(i)
			for j := range c {
				beta := 0.0
				if rr[j] > 0 {
					beta = rrNew[j] / rr[j]
				}
				prow[j] = rrow[j] + beta*prow[j]
			}
		}
		rr = rrNew
	}
	return it
}

// axpy adds a·x to dst.
func axpy(dst *mat.Dense, a float64, x *mat.Dense) {
	r, _ := dst.Dims()
	for i := range r {
		dr, xr := dst.RawRowView(i), x.RawRowView(i)
		for j, v := range xr {
			dr[j] += a * v
		}
	}
}

// colDots stores the dot products of the columns of a and b in dst.
func colDots(dst []float64, a, b *mat.Dense) []float64 {
	r, c := a.Dims()
	if dst == nil {
		dst = make([]float64, c)
	}
	clear(dst)
	for i := range r {
		ar, br := a.RawRowView(i), b.RawRowView(i)
		for j := range c {
			dst[j] += ar[j] * br[j]
		}
	}
	return dst
}

// Classes returns C, one more than the largest label seen by Fit.
func (lr *LapRLS) Classes() int { return lr.classes }

// GammaIChosen returns the γ_I of the last Fit: GammaI (or its default),
// or the choice that cross-validation picked; 0 means no graph term.
func (lr *LapRLS) GammaIChosen() float64 { return lr.chosen }

// Scores returns the cross-validated balanced accuracy of each of Choices
// in the last Fit (nil without Choices). The slice is owned by lr.
func (lr *LapRLS) Scores() []float64 { return lr.scores }

// Temperature returns the temperature T of the last Fit with Priors: the
// probabilities are softmax(xW/T). It is 1 without Priors.
func (lr *LapRLS) Temperature() float64 { return lr.temp }

// EstimatedPriors returns the class priors of the training pool
// estimated in the last Fit with Priors (nil without): the labeled rows
// counted by their classes, the unlabeled ones by the EM's estimate. The
// slice is owned by lr. Prediction leans on them only if PriorsUsed.
func (lr *LapRLS) EstimatedPriors() []float64 { return lr.prior }

// SharesDistance returns the total variation distance between the class
// shares that the graph fit and the supervised fit predicted over the
// unlabeled training rows in the last Fit (GraphGuard), or NaN where
// GraphGuard did not measure it.
func (lr *LapRLS) SharesDistance() float64 { return lr.shareTV }

// Pooled reports whether Pool pooled the graph and the supervised fits
// in the last Fit (w is then their calibrated scores' mean).
func (lr *LapRLS) Pooled() bool { return lr.pooled }

// MassesMoved reports whether Masses moved the graph fit's class masses
// to the supervised fit's in the last Fit.
func (lr *LapRLS) MassesMoved() bool { return lr.massesMoved }

// Overruled reports whether GraphGuard took the supervised fit in the
// last Fit although cross-validation picked the graph term
// (GammaIChosen is then 0).
func (lr *LapRLS) Overruled() bool { return lr.overruled }

// PriorsUsed reports whether the last Fit's predictions lean on
// EstimatedPriors: false without Priors, and when the estimate collapsed
// a labeled class (priors.go's guard), so that the uniform priors were
// kept.
func (lr *LapRLS) PriorsUsed() bool { return lr.priorsUsed }

// AUCs returns the cross-validated macro AUC (macroAUC) of each of
// Choices in the last Fit, Choices' tie-break; nil without Choices. The
// slice is owned by lr.
func (lr *LapRLS) AUCs() []float64 { return lr.aucs }

// Iterations returns the conjugate-gradient steps of the last Fit.
func (lr *LapRLS) Iterations() int { return lr.iter }

// DecisionTo stores the scores xW (m×C) of the rows of x (m×D) into dst
// and returns it. It panics if x has the wrong width or Fit has not
// succeeded.
func (lr *LapRLS) DecisionTo(dst *mat.Dense, x *sparse.CSR) *mat.Dense {
	if !lr.fitted {
		panic(ErrNotFitted)
	}
	if _, d := x.Dims(); d != lr.d {
		panic(mat.ErrShape)
	}
	if dst == nil {
		dst = &mat.Dense{}
	}
	x.MulDenseTo(dst, &lr.w)
	return dst
}

// PredictTo stores the class of the largest score of each row of x (m×D)
// in dst and returns it; see PredictScoresTo.
func (lr *LapRLS) PredictTo(dst []int, x *sparse.CSR) []int {
	dst, _ = lr.PredictScoresTo(dst, nil, x)
	return dst
}

// PredictScoresTo is PredictTo that also stores each row's largest score
// in score (nil: allocated): about 1 − 1/C for a row like the labeled rows
// of its class, about −1/C for one unlike every class. A row with a
// non-finite entry is predicted −1 with score NaN.
func (lr *LapRLS) PredictScoresTo(dst []int, score []float64, x *sparse.CSR) ([]int, []float64) {
	m, _ := x.Dims()
	dst = intsTo(dst, m)
	score = floatsTo(score, m)
	if r, c := lr.f.Dims(); r != m || c != lr.classes {
		lr.f.Reset()
	}
	lr.DecisionTo(&lr.f, x)
	for i := range m {
		best, bs, bv := -1, math.Inf(-1), math.Inf(-1)
		for j, v := range lr.f.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				best, bs = -1, math.NaN()
				break
			}
			u := v
			if lr.shift != nil { // only when priorsUsed or massesMoved
				u = v/lr.temp + lr.shift[j]
			}
			if u > bv {
				best, bs, bv = j, v, u
			}
		}
		dst[i], score[i] = best, bs
	}
	return dst, score
}
