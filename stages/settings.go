package stages

import (
	"errors"
	"fmt"

	"github.com/nmfstream/nmfstream/record"
)

// SettingError is a Learner setting that cannot take effect with the
// others: the part of the chain it sets does not run, so the value would
// change no prediction.
type SettingError struct {
	// Field is the setting, as the Learner's field ("SpreadCodes") or
	// its model's ("Model.SearchFit").
	Field string
	// With is what it takes effect with, as Field=values, values joined
	// by "|" ("Predictor=graph|spread", "Codes=auto", "Codes=auto|off"),
	// or the name of a field that must be set ("Model.SearchBasis"): the
	// command line names its flags from Field and With.
	With string
	// Fix says what to do, in the Learner's terms.
	Fix string
}

func (e *SettingError) Error() string {
	return fmt.Sprintf("stages: learner: %s has no effect here: %s", e.Field, e.Fix)
}

// withSpreading is SettingError.With of the settings of the spreading
// predictors.
const withSpreading = "Predictor=graph|spread"

// Check returns the Learner's settings that are invalid or would have no
// effect, joined (each a *SettingError, or a plain error for a missing
// Model or a negative count), or nil. LearnFeatures refuses to run with
// any of them, before it changes anything: a setting that is accepted and
// changes nothing is a defect (docs/DESIGN.md §6). The command line makes
// its flags through it (cmd/nmfstream checkCodeUse), naming them.
func (l *Learner) Check() error {
	if l.Model == nil {
		return errNoModel
	}
	var errs []error
	if l.Neighbors < 0 {
		errs = append(errs, errNeighbors)
	}
	spreads := l.Predictor == PredictGraph || l.Predictor == PredictSpread
	if l.Codes == CodesOff && !spreads {
		errs = append(errs, ErrCodesOff)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"SpreadPower", l.SpreadPower}, {"SpreadCodes", l.SpreadCodes}, {"SpreadMetric", l.SpreadMetric}, {"SpreadSweeps", float64(l.SpreadSweeps)}} {
		if f.v != 0 && !spreads {
			errs = append(errs, &SettingError{f.name, withSpreading, "it weighs or sweeps the graph PredictGraph and PredictSpread spread the labels over, and PredictNearest, PredictWalk and PredictPropagate do not: leave it zero, or use PredictGraph"})
		}
	}
	if l.SpreadCodes != 0 && spreads && l.Codes != CodesAuto {
		errs = append(errs, &SettingError{"SpreadCodes", "Codes=auto", "the codes' factor weighs the samples' edges with CodesAuto only: leave it zero, or use CodesAuto"})
	}
	if l.SpreadMetric != 0 && spreads && l.Codes == CodesOnly {
		errs = append(errs, &SettingError{"SpreadMetric", "Codes=auto|off", "the learned metric searches the samples' graph, which CodesOnly does not spread over: leave it zero, or use CodesAuto or CodesOff"})
	}
	switch {
	case l.NoCodeExpert && l.Predictor != PredictGraph:
		errs = append(errs, &SettingError{"NoCodeExpert", "Predictor=graph", "the code-space expert is one of PredictGraph's mixture, which the other predictors do not run: leave it false, or use PredictGraph"})
	case l.NoCodeExpert && l.Codes == CodesOff:
		errs = append(errs, &SettingError{"NoCodeExpert", "Codes=auto|only", "CodesOff reads no codes, so the mixture has no code-space expert to leave out: leave it false, or use CodesAuto or CodesOnly"})
	}
	if l.PriorPower != 0 && l.Predictor != PredictGraph {
		errs = append(errs, &SettingError{"PriorPower", "Predictor=graph", "it scales PredictGraph's mixture, which the other predictors do not run: leave it zero, or use PredictGraph"})
	}
	if l.Model.SearchFit != 0 && (l.Model.SearchBasis <= 0 || l.Model.SearchDim > 0) {
		errs = append(errs, &SettingError{"Model.SearchFit", "Model.SearchBasis", "it chooses the search basis's fit, and Model.SearchBasis is not set (or Model.SearchDim replaces it): leave it zero, or set SearchBasis without SearchDim"})
	}
	return errors.Join(errs...)
}

// The With of CheckForm's errors: the samples a setting takes effect on.
const (
	withSparse     = "sparse rows"
	withSmallDense = "dense rows of at most 256 features"
	mixtureFix     = "it sets PredictGraph's mixture, which only sparse rows (documents) have; dense rows (images) are predicted by the spreading alone: leave it at its zero value for dense rows"
	smallDenseFix  = "the learned metric is fitted on dense rows of at most 256 features only (its graph is rebuilt every batch): leave it zero for sparse rows and wider dense ones"
)

// CheckForm returns the Learner's settings that cannot take effect on the
// samples of a stream of the given form and dimension dim (the dense rows'
// features; 0 when not known, which checks the form alone), joined, each
// a *SettingError whose With names the samples it takes effect on, or
// nil: PriorPower and NoCodeExpert set PredictGraph's mixture, which dense
// rows do not have; SpreadMetric learns its metric on dense rows of at
// most maxMetricDim features only. Check cannot see these, since a
// stream's form is known only from its input: a caller that knows it
// before the first batch (the command line, once it has opened the input)
// calls CheckForm, and refuses to start on an error, as Check's caller
// does (a setting that is accepted and changes nothing is a defect,
// docs/DESIGN.md §6).
func (l *Learner) CheckForm(form record.Form, dim int) error {
	var errs []error
	dense := form == record.FormDense
	if dense && l.PriorPower != 0 {
		errs = append(errs, &SettingError{"PriorPower", withSparse, mixtureFix})
	}
	if dense && l.NoCodeExpert {
		errs = append(errs, &SettingError{"NoCodeExpert", withSparse, mixtureFix})
	}
	if l.SpreadMetric != 0 && (!dense || dim > maxMetricDim) {
		errs = append(errs, &SettingError{"SpreadMetric", withSmallDense, smallDenseFix})
	}
	return errors.Join(errs...)
}
