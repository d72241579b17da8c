package main

import (
	"errors"
	"fmt"
	"slices"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/sources"
	"github.com/nmfstream/nmfstream/stages"
)

// inputShape returns the form of the samples of src, opened on the input
// path, and, for dense samples, their dimension: that of the first batch
// with samples of a second reading of path, which leaves src unread. dim
// is 0 for other forms, for standard input ("-", which cannot be read
// twice) and for an input without samples.
func inputShape(csvf csvFlags, path string, batch int, src sources.Source) (form record.Form, dim int, err error) {
	if form, err = src.Form(); err != nil || form != record.FormDense || path == "-" {
		return form, 0, err
	}
	peek, err := csvf.openStream(path, batch)
	if err != nil {
		return form, 0, err
	}
	defer peek.Close()
	for peek.Next() {
		if b := peek.Batch(); b.Dense != nil {
			_, dim = b.Dense.Dims()
			break
		}
	}
	return form, dim, peek.Err()
}

// seedForm returns the form of the training samples a fitted model seeds
// serve's learner with (the model's vectorizer, sparse or dense rows) and,
// for dense ones, their dimension; ok is false without samples.
func seedForm(s *model.Snapshot) (form record.Form, dim int, ok bool) {
	switch {
	case s.TrainDense != nil:
		_, dim = s.TrainDense.Dims()
		return record.FormDense, dim, true
	case s.TrainSparse != nil && s.Vectorizer != nil:
		return record.FormText, 0, true
	case s.TrainSparse != nil:
		return record.FormSparse, 0, true
	}
	return 0, 0, false
}

// checkFormUse refuses the settings of c that cannot take effect on an
// input's samples of form and dimension dim (inputShape; 0 when not known):
// the learner's own (stages.Learner.CheckForm, worded by formFlags); a
// --search-basis other than the default where neither it nor the default
// applies, and a --search-fit other than the default where the basis does
// not apply (model.SearchBasisApplies: dense samples of ten times its rank
// features or more); a --graph-metric other than auto on documents, whose
// TF-IDF rows have unit length, so that the Euclidean distance and the
// cosine find the same neighbours, and a --max-norm-ratio other than the
// default there, where no row is bounded (stages.Learner's capNorms). Each
// would change no prediction.
func checkFormUse(c onlineConfig, form record.Form, dim int) error {
	var errs []error
	for _, e := range joined(c.learner().CheckForm(form, dim)) {
		var se *stages.SettingError
		if errors.As(e, &se) {
			if msg, ok := formFlags[se.Field]; ok {
				e = fmt.Errorf("%w: %s", errUsage, msg)
			}
		}
		errs = append(errs, e)
	}
	dense := form == record.FormDense
	if !dense || dim > 0 {
		applies := func(rank int) bool { return model.SearchBasisApplies(rank, !dense, dim) }
		what := "sparse samples"
		switch form {
		case record.FormDense:
			what = fmt.Sprintf("dense samples of %d features", dim)
		case record.FormText:
			what = "documents"
		}
		if c.SearchBasis != model.DefaultSearchBasis && !applies(c.SearchBasis) && !applies(model.DefaultSearchBasis) {
			errs = append(errs, fmt.Errorf("%w: --search-basis %d changes nothing on %s: a search basis applies to dense samples of at least 10 times its rank features; drop it", errUsage, c.SearchBasis, what))
		}
		if model.SearchFit(c.SearchFit) != model.SearchFitSVD && !applies(c.SearchBasis) {
			errs = append(errs, fmt.Errorf("%w: --search-fit changes nothing on %s, where no search basis applies (dense samples of at least 10 times --search-basis features): drop it", errUsage, what))
		}
	}
	if form == record.FormText && c.GraphMetric != 0 {
		errs = append(errs, fmt.Errorf("%w: --graph-metric changes nothing on documents: their TF-IDF rows have unit length, so the Euclidean distance and the cosine find the same neighbours; drop it", errUsage))
	}
	if form == record.FormText && model.NormRatio(c.MaxNormRatio) != stages.DefaultMaxNormRatio {
		errs = append(errs, fmt.Errorf("%w: --max-norm-ratio changes nothing on documents: their TF-IDF rows have unit length, and are not bounded; drop it", errUsage))
	}
	return errors.Join(errs...)
}

// formFlags words CheckForm's stages.SettingError by its Field for the
// command line, naming the flag.
var formFlags = map[string]string{
	"PriorPower":   "--prior-power scales the documents' mixture, and dense samples (images) have none: their answer is the spreading's; drop it",
	"NoCodeExpert": "--code-expert=false leaves an expert out of the documents' mixture, and dense samples (images) have none: their answer is the spreading's; drop it",
	"SpreadMetric": "--spread-metric learns a metric on dense samples of at most 256 features only (the graph rebuilt every step): drop it for documents, sparse rows and wider images",
}

// trainFormFlags are the flags of fit, eval and report that act on
// training records of some forms only: the text flags on documents
// (their vectorizer), the document classifier's on sparse rows and
// documents, the dense products' and the dense classifier's on dense rows,
// the norms' bound on all but documents (whose TF-IDF rows have unit
// length: input's capNorms).
var trainFormFlags = []struct {
	flag  string
	forms []record.Form
	what  string // the records it acts on, for the message
}{
	{"min-df", []record.Form{record.FormText}, "documents (their TF-IDF vectorizer)"},
	{"stem", []record.Form{record.FormText}, "documents (their TF-IDF vectorizer)"},
	{"stop-words", []record.Form{record.FormText}, "documents (their TF-IDF vectorizer)"},
	{"sublinear-tf", []record.Form{record.FormText}, "documents (their TF-IDF vectorizer)"},
	{"doc-codes", []record.Form{record.FormText, record.FormSparse}, "documents and sparse rows (their LapRLS classifier)"},
	{"priors", []record.Form{record.FormText, record.FormSparse}, "documents and sparse rows (their LapRLS classifier)"},
	{"self-training", []record.Form{record.FormDense}, "dense rows (their kernel classifier)"},
	{"precision", []record.Form{record.FormDense}, "dense rows (their products)"},
	{"float32", []record.Form{record.FormDense}, "dense rows (their products)"},
	{"max-norm-ratio", []record.Form{record.FormDense, record.FormSparse}, "dense and sparse rows (documents' TF-IDF rows have unit length)"},
}

// checkTrainForm refuses the flags in given (givenFlags) that change
// nothing on training records of form (trainFormFlags), naming each and
// the records it acts on.
func checkTrainForm(given map[string]bool, form record.Form) error {
	var errs []error
	for _, f := range trainFormFlags {
		if given[f.flag] && !slices.Contains(f.forms, form) {
			errs = append(errs, fmt.Errorf("%w: --%s changes nothing on %s records: it acts on %s; drop it", errUsage, f.flag, formName(form), f.what))
		}
	}
	return errors.Join(errs...)
}
