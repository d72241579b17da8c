package stages

import (
	"errors"
	"testing"

	"github.com/nmfstream/nmfstream/model"
)

// TestLearnerCheck checks that every setting that cannot take effect with
// the others is refused, by name, before the Learner changes anything, and
// that the settings that do take effect pass.
func TestLearnerCheck(t *testing.T) {
	refused := []struct {
		name  string
		set   func(l *Learner)
		field string // "" for the plain errors
		want  error
	}{
		{"power with nearest", func(l *Learner) { l.Predictor, l.SpreadPower = PredictNearest, 10 }, "SpreadPower", nil},
		{"codes factor with walk", func(l *Learner) { l.Predictor, l.SpreadCodes = PredictWalk, 4 }, "SpreadCodes", nil},
		{"metric with propagate", func(l *Learner) { l.Predictor, l.SpreadMetric = PredictPropagate, 1 }, "SpreadMetric", nil},
		{"sweeps with nearest", func(l *Learner) { l.Predictor, l.SpreadSweeps = PredictNearest, 5 }, "SpreadSweeps", nil},
		{"codes factor with CodesOff", func(l *Learner) { l.Codes, l.SpreadCodes = CodesOff, 4 }, "SpreadCodes", nil},
		{"codes factor with CodesOnly", func(l *Learner) { l.Codes, l.SpreadCodes = CodesOnly, -1 }, "SpreadCodes", nil},
		{"metric with CodesOnly", func(l *Learner) { l.Codes, l.SpreadMetric = CodesOnly, 1 }, "SpreadMetric", nil},
		{"search fit without a basis", func(l *Learner) { l.Model.SearchFit = model.SearchFitNMF }, "Model.SearchFit", nil},
		{"search fit with SearchDim", func(l *Learner) {
			l.Model.SearchFit, l.Model.SearchBasis, l.Model.SearchDim = model.SearchFitNMF, 10, 8
		}, "Model.SearchFit", nil},
		{"CodesOff with nearest", func(l *Learner) { l.Codes, l.Predictor = CodesOff, PredictNearest }, "", ErrCodesOff},
		{"negative neighbours", func(l *Learner) { l.Neighbors = -1 }, "", errNeighbors},
	}
	recs, _ := digitsStream(0.1, 100)
	first := batches(recs, 10)[0]
	for _, c := range refused {
		l := newDigitsLearner(0)
		c.set(l)
		err := l.Check()
		var se *SettingError
		switch {
		case c.want != nil && !errors.Is(err, c.want):
			t.Errorf("%s: Check() = %v, want %v", c.name, err, c.want)
		case c.field != "" && (!errors.As(err, &se) || se.Field != c.field):
			t.Errorf("%s: Check() = %v, want a SettingError on %s", c.name, err, c.field)
		}
		if _, lerr := l.Learn(first); lerr == nil || l.Counters().Records != 0 || l.Model.Started() {
			t.Errorf("%s: Learn ran (error %v, %d records counted)", c.name, lerr, l.Counters().Records)
		}
	}
	accepted := []struct {
		name string
		set  func(l *Learner)
	}{
		{"defaults", func(*Learner) {}},
		{"spread with its settings", func(l *Learner) {
			l.Predictor, l.SpreadPower, l.SpreadCodes, l.SpreadSweeps = PredictSpread, 10, 2, 4
		}},
		{"CodesOff spreading raw weights", func(l *Learner) { l.Codes, l.SpreadPower = CodesOff, 10 }},
		{"CodesOnly with its power", func(l *Learner) { l.Codes, l.SpreadPower = CodesOnly, 10 }},
		{"nearest with neighbours", func(l *Learner) { l.Predictor, l.Neighbors = PredictNearest, 3 }},
		{"search fit with a basis", func(l *Learner) { l.Model.SearchBasis, l.Model.SearchFit = 10, model.SearchFitNMF }},
	}
	for _, c := range accepted {
		l := newDigitsLearner(0)
		c.set(l)
		if err := l.Check(); err != nil {
			t.Errorf("%s: Check() = %v, want nil", c.name, err)
		}
		if _, err := l.Learn(first); err != nil {
			t.Errorf("%s: Learn: %v", c.name, err)
		}
	}
}
