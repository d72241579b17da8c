package metrics

import "math"

// McNemar returns the exact two-sided p-value of McNemar's test for two
// classifiers scored on the same samples: b is the number of samples the
// first gets right and the second wrong, c the reverse (samples both get
// right, or both wrong, carry no evidence and are not counted). Under the
// null hypothesis that both are equally accurate, each of the b + c
// discordant samples is a fair coin, so p = min(1, 2·P(X ≤ min(b, c))) for
// X ~ Binomial(b + c, 1/2). It returns 1 when b + c = 0 and panics on a
// negative count.
func McNemar(b, c int) float64 {
	if b < 0 || c < 0 {
		panic("metrics: McNemar: negative count")
	}
	n, k := b+c, min(b, c)
	if n == 0 {
		return 1
	}
	// Σ_{i≤k} C(n, i) / 2ⁿ, each term in logs (n reaches thousands).
	ln := func(x int) float64 { v, _ := math.Lgamma(float64(x + 1)); return v }
	var tail float64
	for i := 0; i <= k; i++ {
		tail += math.Exp(ln(n) - ln(i) - ln(n-i) - float64(n)*math.Ln2)
	}
	return min(1, 2*tail)
}
