package classify

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// Calibrated probabilities and class priors for LapRLS (LapRLS.Priors).
//
// LapRLS weighs every labeled class alike, so its scores answer as if the
// classes were equally frequent: on a corpus where one class is 7% of the
// documents it over-predicts that class. With Priors set, Fit turns the
// scores into probabilities softmax(f/T), the temperature T fitted by
// maximum likelihood on the cross-validated scores of the labeled rows,
// and then estimates the class priors π of the unlabeled training rows by
// the EM of Saerens, Latinne and Decaestecker (2002): with the training
// priors uniform over the labeled classes,
//
//	p'ᵢ(c) ∝ pᵢ(c) · π(c)/π₀(c),   π(c) ← mean over i of p'ᵢ(c),
//
// repeated to a fixed point. Prediction then adds log(π(c)/π₀(c)) to the
// scores f/T, the Bayes rule for the estimated priors. The temperature's
// targets are smoothed as Platt's (see fitTemperature).

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
