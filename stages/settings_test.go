package stages

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/record"
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

// TestLearnerCheckForm checks CheckForm: the documents' mixture settings
// are refused on dense rows only, the learned metric on sparse rows, text
// and dense rows wider than maxMetricDim (not on rows of unknown width),
// each by name, and the defaults pass on every form.
func TestLearnerCheckForm(t *testing.T) {
	for _, c := range []struct {
		name  string
		set   func(l *Learner)
		form  record.Form
		dim   int
		field string // "" for accepted
	}{
		{"prior power on dense rows", func(l *Learner) { l.PriorPower = 0.3 }, record.FormDense, 64, "PriorPower"},
		{"no prior power on dense rows", func(l *Learner) { l.PriorPower = -1 }, record.FormDense, 0, "PriorPower"},
		{"prior power on documents", func(l *Learner) { l.PriorPower = 0.3 }, record.FormText, 0, ""},
		{"prior power on sparse rows", func(l *Learner) { l.PriorPower = 0.3 }, record.FormSparse, 100, ""},
		{"no code expert on dense rows", func(l *Learner) { l.NoCodeExpert = true }, record.FormDense, 64, "NoCodeExpert"},
		{"no code expert on documents", func(l *Learner) { l.NoCodeExpert = true }, record.FormText, 0, ""},
		{"metric on documents", func(l *Learner) { l.SpreadMetric = 1 }, record.FormText, 0, "SpreadMetric"},
		{"metric on sparse rows", func(l *Learner) { l.SpreadMetric = 1 }, record.FormSparse, 100, "SpreadMetric"},
		{"metric on wide dense rows", func(l *Learner) { l.SpreadMetric = 1 }, record.FormDense, maxMetricDim + 1, "SpreadMetric"},
		{"metric on the widest dense rows it takes", func(l *Learner) { l.SpreadMetric = 1 }, record.FormDense, maxMetricDim, ""},
		{"metric on dense rows of unknown width", func(l *Learner) { l.SpreadMetric = 1 }, record.FormDense, 0, ""},
		{"defaults on dense rows", func(*Learner) {}, record.FormDense, 784, ""},
		{"defaults on documents", func(*Learner) {}, record.FormText, 0, ""},
	} {
		l := newDigitsLearner(0)
		c.set(l)
		err := l.CheckForm(c.form, c.dim)
		var se *SettingError
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%s: %v, want accepted", c.name, err)
		case c.field != "" && (!errors.As(err, &se) || se.Field != c.field):
			t.Errorf("%s: %v, want a SettingError on %s", c.name, err, c.field)
		}
	}
	if !strings.Contains(withSmallDense, strconv.Itoa(maxMetricDim)) {
		t.Errorf("CheckForm's With %q does not name maxMetricDim %d", withSmallDense, maxMetricDim)
	}
}
