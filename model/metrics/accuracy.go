package metrics

import (
	"fmt"
	"math"
)

// Accuracy returns the fraction of samples whose prediction equals their
// truth. Samples with truth −1 (unlabeled) are skipped; a prediction of −1
// ("no label") counts as wrong. It returns NaN when no sample has a truth.
// It panics if the lengths differ.
func Accuracy(pred, truth []int) float64 {
	mustSameLen(pred, truth)
	var n, ok int
	for i, t := range truth {
		if t == -1 {
			continue
		}
		n++
		if pred[i] == t {
			ok++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return float64(ok) / float64(n)
}

// ConfusionMatrix returns the c×c counts m[t][p] of samples with truth t
// predicted p (rows are truths, columns predictions, as in scikit-learn).
// Samples with truth −1 are skipped. A prediction outside [0, c), such as
// −1, is counted in no cell, so row t sums to the number of samples of
// class t only when all of them got a label. It panics if the lengths
// differ, c is negative, or a truth is outside [−1, c).
func ConfusionMatrix(pred, truth []int, c int) [][]int {
	mustSameLen(pred, truth)
	if c < 0 {
		panic(fmt.Sprintf("metrics: negative class count %d", c))
	}
	cells := make([]int, c*c)
	m := make([][]int, c)
	for i := range m {
		m[i] = cells[i*c : (i+1)*c : (i+1)*c]
	}
	for i, t := range truth {
		if t == -1 {
			continue
		}
		if t < 0 || t >= c {
			panic(fmt.Sprintf("metrics: truth %d of sample %d outside [-1, %d)", t, i, c))
		}
		if p := pred[i]; p >= 0 && p < c {
			m[t][p]++
		}
	}
	return m
}

func mustSameLen(pred, truth []int) {
	if len(pred) != len(truth) {
		panic(fmt.Sprintf("metrics: %d predictions for %d truths", len(pred), len(truth)))
	}
}
