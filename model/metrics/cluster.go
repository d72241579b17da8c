package metrics

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// contingency counts the pairs (truth, pred) over samples with truth ≠ −1.
// Rows index the sorted distinct truths, columns the sorted distinct
// predictions. It returns the table and the number of samples counted.
func contingency(pred, truth []int) (table [][]float64, n int) {
	mustSameLen(pred, truth)
	var ts, ps []int
	for i, t := range truth {
		if t != -1 {
			ts = append(ts, t)
			ps = append(ps, pred[i])
		}
	}
	ti, pi := index(ts), index(ps)
	table = make([][]float64, len(ti))
	for i := range table {
		table[i] = make([]float64, len(pi))
	}
	for k, t := range ts {
		table[ti[t]][pi[ps[k]]]++
	}
	return table, len(ts)
}

// index maps each distinct value of v to its rank among them.
func index(v []int) map[int]int {
	s := slices.Clone(v)
	slices.Sort(s)
	s = slices.Compact(s)
	m := make(map[int]int, len(s))
	for i, x := range s {
		m[x] = i
	}
	return m
}

// ClusteringAccuracy returns the accuracy of pred after the best one-to-one
// relabeling of its clusters onto the classes of truth, found with the
// Hungarian algorithm (see Assign): max over matchings Σ n_{class,cluster}
// divided by n. Cluster and class ids are arbitrary ints; clusters left
// unmatched (more clusters than classes) count as wrong. Samples with truth
// −1 are skipped. It returns NaN when no sample has a truth, and panics if
// the lengths differ.
func ClusteringAccuracy(pred, truth []int) float64 {
	table, n := contingency(pred, truth)
	if n == 0 {
		return math.NaN()
	}
	cost := mat.NewDense(len(table), len(table[0]), nil)
	for i, row := range table {
		for j, v := range row {
			cost.Set(i, j, -v) // maximize matches
		}
	}
	var hit float64
	for i, j := range Assign(cost) {
		if j >= 0 {
			hit += table[i][j]
		}
	}
	return hit / float64(n)
}

// NMI returns the normalized mutual information of two labelings,
// I(pred; truth) / ((H(pred) + H(truth))/2), the arithmetic normalization
// that is scikit-learn's default (normalized_mutual_info_score). It is
// symmetric, invariant to renaming labels, 1 for identical partitions and
// near 0 for independent ones. As in scikit-learn, two one-cluster
// labelings give 1 and a zero mutual information gives 0. Samples with
// truth −1 are skipped. It returns NaN when no sample has a truth, and
// panics if the lengths differ.
func NMI(pred, truth []int) float64 {
	table, n := contingency(pred, truth)
	if n == 0 {
		return math.NaN()
	}
	r, c := len(table), len(table[0])
	if r == 1 && c == 1 {
		return 1
	}
	nf := float64(n)
	a := make([]float64, r) // truth marginals
	b := make([]float64, c) // pred marginals
	for i, row := range table {
		for j, v := range row {
			a[i] += v
			b[j] += v
		}
	}
	var mi float64
	for i, row := range table {
		for j, v := range row {
			if v > 0 {
				mi += v / nf * math.Log(nf*v/(a[i]*b[j]))
			}
		}
	}
	// Rounding leaves |mi| ≈ 1e-16 for exactly independent labelings, which
	// would otherwise come out as a tiny nonzero NMI (or 0/0 if an entropy
	// is zero); scikit-learn returns 0 here too.
	if math.Abs(mi) < 1e-12 {
		return 0
	}
	return mi / ((entropy(a, nf) + entropy(b, nf)) / 2)
}

func entropy(counts []float64, n float64) float64 {
	var h float64
	for _, v := range counts {
		if v > 0 {
			p := v / n
			h -= p * math.Log(p)
		}
	}
	return h
}
