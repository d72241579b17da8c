package stages

import (
	"math"

	"github.com/nmfstream/nmfstream/model/metrics"
)

// Scorer is the prequential scorer of a stream, the one place its
// accuracy is computed (Learner's, and stream --nats's): each arrival
// prediction is scored once, when its sample's label is known, against that
// label (Dawid's prequential protocol, docs/DESIGN.md). It owns the scoring
// counters (Counters.Labeled, Correct, Unpredicted, Early) and the
// confusion matrix behind Scores; Score costs O(1), amortized over the
// classes' growth. The zero Scorer is ready to use. A Scorer is not safe
// for concurrent use.
type Scorer struct {
	c    Counters  // Learner keeps its other counters here too
	conf confusion // scored predictions by true and predicted class
}

// NoPrediction and BeforeLabels are the predicted classes Score takes for a
// missing prediction: one made after a label of the stream was known,
// which counts as wrong, and one made before any, which is not scored
// (Counters.Early).
const (
	NoPrediction = -1
	BeforeLabels = -2
)

// Score scores an arrival prediction of class pred (a class index,
// NoPrediction or BeforeLabels) against the sample's true class truth
// (a class index, not negative).
func (s *Scorer) Score(pred, truth int) {
	if pred == BeforeLabels {
		s.c.Early++
		return
	}
	s.c.Labeled++
	switch {
	case pred < 0:
		s.c.Unpredicted++
	case pred == truth:
		s.c.Correct++
	}
	s.conf.add(truth, pred)
}

// Counters returns the scoring counters: Labeled, Correct, Unpredicted and
// Early (the others are zero for a Scorer of its own).
func (s *Scorer) Counters() Counters { return s.c }

// Scores returns the per-class summary of the scored predictions.
func (s *Scorer) Scores() Scores { return s.conf.scores() }

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
func (l *Learner) Scores() Scores { return l.sc.Scores() }

func (m *confusion) scores() Scores {
	s := metrics.PerClassOf(m.n)
	return Scores{BalancedAccuracy: s.BalancedAccuracy, MacroF1: s.MacroF1}
}

// Counters are a Learner's running totals. They are part of its state and
// cover the whole stream across checkpoints.
type Counters struct {
	// Records counts input records consumed: samples, late labels,
	// duplicates and rejects.
	Records int64 `json:"records"`
	// Samples counts samples added to the model.
	Samples int64 `json:"samples"`
	// Rejected counts records that could not be used.
	Rejected int64 `json:"rejected"`
	// Duplicates counts samples skipped because their id was in the window.
	Duplicates int64 `json:"duplicates"`
	// LateLabels counts label-only records.
	LateLabels int64 `json:"late_labels"`
	// Labeled counts the arrival predictions scored against a known
	// label: every sample whose label the learner learned (with it or
	// later) and that arrived after the first label of the stream.
	Labeled int64 `json:"labeled"`
	// Correct counts the scored predictions that were right.
	Correct int64 `json:"correct"`
	// Unpredicted counts the scored samples that got no prediction; they
	// count as wrong.
	Unpredicted int64 `json:"unpredicted"`
	// Early counts the samples whose label the learner learned but that
	// arrived before any label was known: nothing could be predicted for
	// them, and they are not scored.
	Early int64 `json:"early"`
	// Offset is one past the input offset of the last record applied: where
	// a resumed stream starts.
	Offset int64 `json:"offset"`
}

// Accuracy returns the prequential accuracy Correct/Labeled, in which a
// scored sample without a prediction counts as wrong, or NaN before any
// scored sample. It is what an outside scorer computes from the arrival
// predictions of every labeled sample after the first label.
func (c Counters) Accuracy() float64 {
	if c.Labeled == 0 {
		return math.NaN()
	}
	return float64(c.Correct) / float64(c.Labeled)
}

// Interval returns the Wilson score interval of Accuracy at confidence
// z standard normal deviates (1.96 for 95%), or NaNs before any scored
// sample (Wilson, "Probable inference, the law of succession, and
// statistical inference", JASA 22(158), 1927).
func (c Counters) Interval(z float64) (lo, hi float64) {
	if c.Labeled == 0 {
		return math.NaN(), math.NaN()
	}
	n := float64(c.Labeled)
	p := float64(c.Correct) / n
	den := 1 + z*z/n
	mid := (p + z*z/(2*n)) / den
	half := z * math.Sqrt(p*(1-p)/n+z*z/(4*n*n)) / den
	return max(0, mid-half), min(1, mid+half)
}
