package classify

import (
	"cmp"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// Calibrated probabilities and class priors for LapRLS (LapRLS.Priors).
//
// LapRLS weighs every labeled class alike, so its scores answer as if the
// classes were equally frequent: where the labeled rows are balanced by
// design (10 per class) and one class is 7% of the documents, it
// over-predicts that class, below always answering the majority
// (BENCHMARKS.md, "Skewed text: the priors estimated, guarded and
// halved"). With Priors set, Fit turns the scores into probabilities
// softmax(f/T), the temperature T fitted by maximum likelihood on the
// cross-validated scores of the labeled rows, and then estimates the
// class priors of the unlabeled training rows. Of two classes labeled
// alike (balanced by design: a rare class and the rest, 10 labels each,
// the case of the skewed sets) it estimates them by mixture proportion
// estimation (mpePriors; Blanchard, Lee and Scott 2010, Scott 2015): the
// labeled rows of a class, scored by the cross-validation that left them
// out, sample that class's own distribution of its probability, and the
// unlabeled rows mix it with the other classes'. The share of unlabeled
// rows at least as sure of class c as the k-th surest of c's n_c labeled
// rows is then at least π(c)·k/n_c, which bounds π(c) from above; the
// bound is tight where the other classes leave the top of class c's
// probabilities alone, as a topic or a genre does, however mixed the
// other classes are. The bounds make the estimate (mpePriors says how).
// Of three labeled classes or more, of two labeled at random (their
// labels carry the priors, and a tenth of 2,000 gives a 7% class 14
// labels, whose bound fell below its share: BENCHMARKS.md, same section),
// and of two with LapRLS.PriorsEM (the rule before, for the ablation), it
// estimates them by the EM of Saerens, Latinne and Decaestecker (2002):
//
//	p'ᵢ(c) ∝ pᵢ(c) · π̂(c)/π₀(c),   π̂(c) ← mean over i of p'ᵢ(c),
//
// repeated to a fixed point, π₀ the uniform priors over the labeled
// classes. The EM weighs every unlabeled row's probabilities: where ten
// labels of a class made of many kinds leave most of its kinds unlabeled,
// their rows' middling probabilities of the other class add up to a
// share of it several times the true one; with many classes of a few
// labels each (Brown's fifteen genres, 3 a genre), a bound rests on three
// scores, and measured there it traded 1 to 4 points of balanced accuracy
// for at most 1.4 of macro-F1 (BENCHMARKS.md, "Skewed text: the priors
// by mixture proportion estimation"). A class without labels gets no
// prior in either. The pool's priors π count the
// labeled rows by their classes and the m unlabeled ones by π̂
// (poolPriors): the labeled rows were taken out of the pool, and a subset
// balanced by design takes most of a rare class's rows with it. Unless
// the estimate has collapsed (trustPriors; on two classes labeled alike a
// collapsed class is raised to the guard's floor instead, floorPriors),
// prediction then adds
// priorsShift·log(π(c)/π₀(c)) to the scores f/T: half the Bayes rule's
// shift for the estimated priors, halfway in log-odds between the rule
// that weighs the classes alike (which balanced accuracy rewards) and the
// Bayes rule (which accuracy rewards), between which macro-F1's best
// threshold lies; and an estimate that is wrong costs half as much. The
// temperature's targets are smoothed as Platt's (see fitTemperature).

// Constants of Priors, measured on eight held-out text sets, eight splits
// each (BENCHMARKS.md, "Skewed text: the priors estimated, guarded and
// halved").
const (
	// priorsShift is the share of the Bayes rule's log-prior shift that
	// prediction adds. The whole shift (1) gained up to 3 points more
	// accuracy on the sets with a rare class, but cost the mails (31%
	// spam) 2.5 points of accuracy where half costs 0.7, and the mails
	// with 7% spam 2.4 points of macro-F1 more.
	priorsShift = 0.5
	// priorsCollapsed: an estimate that puts a labeled class below this
	// fraction of its uniform share 1/P (P labeled classes) has collapsed
	// and is not used. The EM runs to the edge of the simplex when the
	// calibrated probabilities are softer than the scores' separation: on
	// Brown's fifteen genres and the State of the Union's three parties it
	// put several classes at 0 on every split, and the prior shift then
	// cost up to 11 points of accuracy.
	priorsCollapsed = 0.05
	// mpeRank is the fewest labeled rows of a class above the threshold
	// of mpePriors' bound (k): the surest one or two of ten labels can make
	// a threshold that no unlabeled row reaches, and a bound of 0 (from k =
	// 1, accuracy reached always-majority's on 22 of 28 news splits and
	// macro-F1 LinearSVC's on 20, from 3 on 23 and 26: BENCHMARKS.md,
	// "Skewed text: the priors by mixture proportion estimation").
	mpeRank = 3
)

// poolPriors returns the class priors of a training pool whose m
// unlabeled rows have the estimated priors est and whose labeled rows
// number labeled[c] in class c: (m·est(c) + labeled(c)) / (m + ℓ), each
// at least 10⁻⁶.
func poolPriors(est []float64, m int, labeled []float64) []float64 {
	var l float64
	for _, v := range labeled {
		l += v
	}
	pi := make([]float64, len(est))
	for j := range pi {
		pi[j] = max((float64(m)*est[j]+labeled[j])/(float64(m)+l), 1e-6)
	}
	return pi
}

// mpePriors returns the class priors of the unlabeled rows whose
// probabilities are the rows of p (m×C), from the probabilities q (ℓ×C)
// of the labeled rows under the cross-validation that left each out,
// their classes truth: for each class c with labeled[c] > 0, with
// τ₁ ≥ τ₂ ≥ … the probabilities of class c in q's rows of class c (n_c
// of them), the bound
//
//	b(c) = min over k in [min(mpeRank, n_c), n_c] of  #{i: p_i(c) ≥ τ_k}/m  ÷  k/n_c,
//
// at most 1. Bounds that sum to 1 or more are scaled to sum to 1 over the
// labeled classes. Bounds that sum to less are not all bounds: a minimum
// over k of ratios of counts this small is biased low, most for the
// class whose labels sample a broad distribution of probabilities (a
// class made of many kinds, the majority beside a rare one), whose bound
// is also the loosest; so the largest bound takes the shortfall, and a
// rare class keeps its own bound rather than one inflated by the scaling.
// Classes without labels get 10⁻⁶. Where every bound is 0, or without
// rows, it returns a copy of prior0 (no evidence).
func mpePriors(p, q *mat.Dense, truth []int, prior0, labeled []float64) []float64 {
	m, c := p.Dims()
	est := append([]float64(nil), prior0...)
	if m == 0 {
		return est
	}
	bound := make([]float64, c)
	col := make([]float64, m)
	var sum float64
	for j := range c {
		if labeled[j] == 0 {
			continue
		}
		var tau []float64
		for i, t := range truth {
			if t == j {
				tau = append(tau, q.At(i, j))
			}
		}
		if len(tau) == 0 {
			continue
		}
		slices.SortFunc(tau, func(a, b float64) int { return cmp.Compare(b, a) })
		for i := range m {
			col[i] = p.At(i, j)
		}
		slices.Sort(col)
		n := float64(len(tau))
		b := 1.0
		for k := min(mpeRank, len(tau)); k <= len(tau); k++ {
			above, _ := slices.BinarySearch(col, tau[k-1]) // rows below τ_k
			b = min(b, float64(m-above)/float64(m)*n/float64(k))
		}
		bound[j] = b
		sum += b
	}
	if !(sum > 0) {
		return est
	}
	scale, top := 1.0, -1
	if sum >= 1 {
		scale = 1 / sum
	} else {
		top = argmax(bound)
	}
	for j := range c {
		est[j] = 1e-6
		if labeled[j] > 0 {
			est[j] = max(bound[j]*scale, 1e-6)
		}
	}
	if top >= 0 {
		est[top] += 1 - sum
	}
	return est
}

// floorPriors raises each labeled class (labeled[c] > 0) that est puts
// below priorsCollapsed times its uniform share prior0[c] to that floor,
// and scales the other labeled classes down so that the labeled classes'
// estimate keeps its sum. On two classes labeled alike a collapsed estimate
// marks a rare class rather than a failed estimate: the uniform priors
// trustPriors would fall back on over-predict it most, and the Masses
// rule applies to three classes or more (BENCHMARKS.md, "Skewed text: the
// priors by mixture proportion estimation").
func floorPriors(est, prior0, labeled []float64) []float64 {
	out := append([]float64(nil), est...)
	var total, raised, rest float64
	for j, n := range labeled {
		if n == 0 {
			continue
		}
		total += est[j]
		if f := priorsCollapsed * prior0[j]; est[j] < f {
			out[j] = f
			raised += f
		} else {
			rest += est[j]
		}
	}
	if raised == 0 || !(rest > 0) {
		return out
	}
	for j, n := range labeled {
		if n > 0 && out[j] == est[j] {
			out[j] = est[j] * (total - raised) / rest
		}
	}
	return out
}

// trustPriors reports whether prediction should use the estimate
// est of the unlabeled rows' priors rather than the uniform priors prior0
// (positive for the labeled classes, labeled[c] > 0): not when a labeled
// class falls below priorsCollapsed times its uniform share. Without
// labels it reports false.
func trustPriors(est, prior0, labeled []float64) bool {
	lowest := math.Inf(1)
	for j, n := range labeled {
		if n > 0 {
			lowest = min(lowest, est[j]/prior0[j])
		}
	}
	return lowest >= priorsCollapsed && !math.IsInf(lowest, 1)
}

// softmaxRow stores softmax(f/t) of one score row into p.
func softmaxRow(p, f []float64, t float64, shift []float64) {
	m := math.Inf(-1)
	for j, v := range f {
		p[j] = v / t
		if shift != nil {
			p[j] += shift[j]
		}
		m = max(m, p[j])
	}
	var s float64
	for j := range p {
		p[j] = math.Exp(p[j] - m)
		s += p[j]
	}
	for j := range p {
		p[j] /= s
	}
}

// fitTemperature returns the T > 0 that minimizes the cross-entropy of
// softmax(fᵢ/T) for the rows of f (m×C) labeled truth (classes in [0, C))
// against Platt's (1999) smoothed targets: (n_c + 1)/(n_c + 2) on the true
// class c (n_c rows labeled c) and the rest, 1/(n_c + 2), shared by the
// other classes. The smoothing keeps T away from 0 when the labeled rows
// are separated, as a few labels in many dimensions always are; with the
// hard targets T would go to 0 and the probabilities become 0 or 1. The
// search is golden-section over log T in [10⁻⁴, 10²]. Without rows it
// returns 1.
func fitTemperature(f *mat.Dense, truth []int) float64 {
	if len(truth) == 0 {
		return 1
	}
	_, c := f.Dims()
	n := make([]float64, c)
	for _, y := range truth {
		n[y]++
	}
	p := make([]float64, c)
	nll := func(logT float64) float64 {
		t := math.Exp(logT)
		var s float64
		for i, y := range truth {
			softmaxRow(p, f.RawRowView(i), t, nil)
			hit := (n[y] + 1) / (n[y] + 2)
			miss := (1 - hit) / float64(max(c-1, 1))
			for j, v := range p {
				w := miss
				if j == y {
					w = hit
				}
				s -= w * math.Log(max(v, 1e-300))
			}
		}
		return s
	}
	lo, hi := math.Log(1e-4), math.Log(1e2)
	const g = 0.6180339887498949
	a, b := hi-g*(hi-lo), lo+g*(hi-lo)
	fa, fb := nll(a), nll(b)
	for hi-lo > 1e-4 {
		if fa <= fb {
			hi, b, fb = b, a, fa
			a = hi - g*(hi-lo)
			fa = nll(a)
		} else {
			lo, a, fa = a, b, fb
			b = lo + g*(hi-lo)
			fb = nll(b)
		}
	}
	return math.Exp((lo + hi) / 2)
}

// emPriors returns the class priors of the rows whose probabilities
// under the training priors prior0 (length C, positive, summing to 1)
// are the rows of p (m×C), by the EM of Saerens, Latinne and
// Decaestecker (2002), started from prior0 and stopped after maxIter
// steps or once no prior moves by more than tol. A prior is kept at
// least 10⁻⁶ so that no class is ruled out. Without rows it returns a
// copy of prior0.
func emPriors(p *mat.Dense, prior0 []float64, maxIter int, tol float64) []float64 {
	m, c := p.Dims()
	pi := append([]float64(nil), prior0...)
	if m == 0 {
		return pi
	}
	next := make([]float64, c)
	q := make([]float64, c)
	for range maxIter {
		clear(next)
		for i := range m {
			row := p.RawRowView(i)
			var s float64
			for j := range q {
				q[j] = row[j] * pi[j] / prior0[j]
				s += q[j]
			}
			if !(s > 0) {
				continue
			}
			for j := range q {
				next[j] += q[j] / s
			}
		}
		var moved float64
		for j := range pi {
			v := max(next[j]/float64(m), 1e-6)
			moved = max(moved, math.Abs(v-pi[j]))
			pi[j] = v
		}
		if moved <= tol {
			break
		}
	}
	return pi
}
