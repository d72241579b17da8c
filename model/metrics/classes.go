package metrics

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// ClassScores holds per-class scores of predictions against truths, and
// their means over the classes with a sample.
type ClassScores struct {
	// Support holds the number of samples of each class (with a truth),
	// predicted or not.
	Support []int
	// Recall holds, per class, the share of its samples predicted right;
	// NaN for a class without samples.
	Recall []float64
	// Precision holds, per class, the share of the predictions of that
	// class that are right; 0 for a class never predicted right.
	Precision []float64
	// F1 holds, per class, 2·precision·recall/(precision+recall); 0 for a
	// class never predicted right, NaN for a class without samples.
	F1 []float64
	// BalancedAccuracy is the mean Recall over the classes with samples,
	// NaN if there are none.
	BalancedAccuracy float64
	// MacroF1 is the mean F1 over the classes with samples, NaN if there
	// are none.
	MacroF1 float64
}

// PerClass returns the per-class scores of pred against truth, classes in
// [0, c). Samples with truth −1 are skipped; a prediction outside [0, c),
// such as −1, counts as wrong. It panics as ConfusionMatrix does.
func PerClass(pred, truth []int, c int) ClassScores {
	conf := ConfusionMatrix(pred, truth, c)
	rows := make([][]int, c)
	for t := range rows {
		rows[t] = append(conf[t], 0) // the last column: no prediction in [0, c)
	}
	for i, t := range truth {
		if p := pred[i]; t >= 0 && (p < 0 || p >= c) {
			rows[t][c]++
		}
	}
	return PerClassOf(rows)
}

// PerClassOf returns the per-class scores of a confusion matrix: conf[t][p]
// counts the samples of class t predicted p, for C classes, and each row
// may carry one more column, the samples of class t left without a
// prediction. It does not retain conf.
func PerClassOf[T ~int | ~int64](conf [][]T) ClassScores {
	c := len(conf)
	s := ClassScores{
		Support:   make([]int, c),
		Recall:    make([]float64, c),
		Precision: make([]float64, c),
		F1:        make([]float64, c),
	}
	predicted := make([]float64, c)
	for i := range c {
		for j, v := range conf[i] {
			s.Support[i] += int(v)
			if j < c {
				predicted[j] += float64(v)
			}
		}
	}
	var rec, f1 float64
	k := 0
	for i := range c {
		if s.Support[i] == 0 {
			s.Recall[i], s.F1[i] = math.NaN(), math.NaN()
			continue
		}
		k++
		tp := float64(conf[i][i])
		r := tp / float64(s.Support[i])
		s.Recall[i] = r
		rec += r
		if tp > 0 {
			p := tp / predicted[i]
			s.Precision[i] = p
			s.F1[i] = 2 * p * r / (p + r)
			f1 += s.F1[i]
		}
	}
	if k == 0 {
		s.BalancedAccuracy, s.MacroF1 = math.NaN(), math.NaN()
		return s
	}
	s.BalancedAccuracy, s.MacroF1 = rec/float64(k), f1/float64(k)
	return s
}

// Hoyer returns the mean Hoyer sparsity of the columns of u (D×K, D > 1),
// (√D − ‖u‖₁/‖u‖₂)/(√D − 1) on absolute values: 0 for a column of equal
// entries, 1 for a column with one non-zero. Zero columns are skipped; it
// returns NaN if every column is zero. P. O. Hoyer, "Non-negative matrix
// factorization with sparseness constraints", JMLR 5, 2004.
func Hoyer(u mat.Matrix) float64 {
	d, k := u.Dims()
	sq := math.Sqrt(float64(d))
	var sum float64
	var n int
	for j := range k {
		var l1, l2 float64
		for i := range d {
			v := math.Abs(u.At(i, j))
			l1 += v
			l2 += v * v
		}
		if l2 == 0 {
			continue
		}
		sum += (sq - l1/math.Sqrt(l2)) / (sq - 1)
		n++
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}
