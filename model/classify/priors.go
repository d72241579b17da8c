package classify

import (
	"math"

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
// class priors of the unlabeled training rows by the EM of Saerens,
// Latinne and Decaestecker (2002): with the training priors π₀ uniform
// over the labeled classes,
//
//	p'ᵢ(c) ∝ pᵢ(c) · π̂(c)/π₀(c),   π̂(c) ← mean over i of p'ᵢ(c),
//
// repeated to a fixed point; a class without labels is left out (its
// probabilities set to 0 and the rest renormalized), so the EM cannot
// give a prior to a class nobody labeled. The pool's priors π count the
// labeled rows by their classes and the m unlabeled ones by π̂
// (poolPriors): the labeled rows were taken out of the pool, and a subset
// balanced by design takes most of a rare class's rows with it. Unless
// the estimate has collapsed (trustPriors), prediction then adds
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

// trustPriors reports whether prediction should use the EM's estimate
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
