package stages

import "github.com/nmfstream/nmfstream/model/metrics"

// confusion counts scored predictions by true class (rows) and predicted
// class (columns); the last column counts missing predictions. It grows
// as classes appear.
type confusion struct {
	n [][]int64
}

// add counts one prediction pred (a class, or negative for none) of a
// sample of class truth.
func (m *confusion) add(truth, pred int) {
	c := max(truth, pred) + 1
	m.grow(c)
	if pred < 0 {
		pred = len(m.n)
	}
	m.n[truth][pred]++
}

// grow makes m cover c classes, moving the missing column to the end.
func (m *confusion) grow(c int) {
	if c <= len(m.n) {
		return
	}
	old := len(m.n)
	for i := range m.n {
		row := make([]int64, c+1)
		copy(row, m.n[i][:old])
		row[c] = m.n[i][old]
		m.n[i] = row
	}
	for len(m.n) < c {
		m.n = append(m.n, make([]int64, c+1))
	}
}

// Scores summarizes the scored arrival predictions of a stream per class.
type Scores struct {
	// BalancedAccuracy is the mean over the classes with a scored sample of
	// the share of that class's samples predicted right (recall), NaN
	// before any scored sample.
	BalancedAccuracy float64
	// MacroF1 is the mean over the classes with a scored sample of
	// 2·precision·recall/(precision+recall), a class never predicted having
	// precision 0; NaN before any scored sample.
	MacroF1 float64
}

// Scores returns the per-class summary of the scored predictions (those
// Counters.Labeled counts).
func (l *Learner) Scores() Scores {
	return l.conf.scores()
}

func (m *confusion) scores() Scores {
	s := metrics.PerClassOf(m.n)
	return Scores{BalancedAccuracy: s.BalancedAccuracy, MacroF1: s.MacroF1}
}
