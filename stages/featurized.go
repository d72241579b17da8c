package stages

import (
	"fmt"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/sparse"
	"github.com/nmfstream/nmfstream/record"
)

// Featurized is one batch of records made ready for Learner.LearnFeatures:
// the model rows of its usable samples and the batch's bookkeeping (ids,
// labels, offsets, late labels and rejects). Prepare makes one from a
// record.Batch; a service with features of its own may fill one directly.
//
// Every record of the batch is in exactly one of: a row of X (or a
// document of Text), LateLabels, Rejects or Unusable. Records returns
// their number.
//
// A Featurized owns its memory: it shares none with the batch it was made
// from. LearnFeatures copies what it keeps, so the Featurized may be
// dropped or reused after it returns.
type Featurized struct {
	// X holds the rows of the usable samples (n×Dim, one sample per row),
	// in input order, finite and non-negative (the model refuses other
	// values: LearnFeatures then fails). It is nil when the batch has no
	// usable sample, and when Text is set.
	X model.Data
	// Dim is the number of features of the batch (the columns of its
	// feature matrix), or 0 when it has no feature matrix (a text batch, or
	// one without samples); when X is set, 0 means X's. LearnFeatures
	// rejects every sample of a batch whose dimension differs from the
	// stream's, which the first batch with a dimension fixes.
	Dim int
	// Text holds the documents of a text batch, one per sample, not yet
	// vectorized: their TF-IDF rows depend on the document frequencies of
	// every earlier batch, so LearnFeatures computes them, in stream order,
	// with the Learner's Featurize.TFIDF. X is nil when Text is set.
	Text []string

	// IDs, Labels, Labeled and Offsets describe the samples: one entry per
	// row of X (or document of Text), as in record.Batch. LearnFeatures
	// panics if their lengths, X's rows and Text's length disagree, or if
	// there are samples and neither X nor Text.
	IDs     []string
	Labels  []string
	Labeled []bool
	Offsets []int64

	// LateLabels lists the batch's label-only records, in input order.
	LateLabels []record.LateLabel
	// Rejects lists the records the source rejected, in input order.
	Rejects []record.Reject
	// Unusable lists the samples whose features cannot be used (a negative
	// or non-finite value), in input order. Each Reason is a
	// *record.Error.
	Unusable []record.Reject
}

// Records returns the number of input records f covers: samples, late
// labels, rejects and unusable samples.
func (f *Featurized) Records() int {
	return len(f.Offsets) + len(f.LateLabels) + len(f.Rejects) + len(f.Unusable)
}

// lastOffset returns the largest record offset of f, or −1 when f is empty.
func (f *Featurized) lastOffset() int64 {
	last := int64(-1)
	for _, o := range f.Offsets {
		last = max(last, o)
	}
	for _, x := range f.LateLabels {
		last = max(last, x.Offset)
	}
	for _, x := range f.Rejects {
		last = max(last, x.Offset)
	}
	for _, x := range f.Unusable {
		last = max(last, x.Offset)
	}
	return last
}

// Prepare is the parallel half of featurization, the featurize stage of a
// pipeline: it checks every sample of b (values finite and non-negative)
// and copies the usable rows, in input order, into a new Featurized.
// Text batches are passed through (Featurized.Text), since their TF-IDF
// follows the stream; LearnFeatures vectorizes them. The dimension check
// against the stream is left to LearnFeatures too: which batch fixes it
// depends on the order of the stream.
//
// Prepare reads b and keeps no reference to it: the caller may reuse b
// once Prepare returns. It has no state, so any number of goroutines may
// call it at once (pipeline.Ordered(pipeline.Map("featurize", n, …)) keeps
// the batches in order). Data errors become Unusable entries, not errors.
func Prepare(b *record.Batch) *Featurized {
	f := &Featurized{
		LateLabels: slices.Clone(b.LateLabels),
		Rejects:    slices.Clone(b.Rejects),
	}
	n := b.Len()
	sample := func(i int) {
		f.IDs = append(f.IDs, b.IDs[i])
		f.Labels = append(f.Labels, b.Labels[i])
		f.Labeled = append(f.Labeled, b.Labeled[i])
		f.Offsets = append(f.Offsets, b.Offsets[i])
	}
	unusable := func(i int, err error) {
		off, id := b.Offsets[i], b.IDs[i]
		f.Unusable = append(f.Unusable, record.Reject{Offset: off, ID: id, Reason: &record.Error{Offset: off, ID: id, Err: err}})
	}
	if n == 0 {
		return f
	}
	switch b.Form {
	case record.FormDense:
		if b.Dense == nil {
			return f
		}
		_, f.Dim = b.Dense.Dims()
		var keep []int
		for i := range n {
			if err := checkRow(b.Dense.RawRowView(i)); err != nil {
				unusable(i, err)
				continue
			}
			keep = append(keep, i)
			sample(i)
		}
		if len(keep) == 0 {
			return f
		}
		m := mat.NewDense(len(keep), f.Dim, nil)
		for r, i := range keep {
			copy(m.RawRowView(r), b.Dense.RawRowView(i))
		}
		f.X = model.DenseRows(m)
	case record.FormSparse:
		if b.Sparse == nil {
			return f
		}
		_, f.Dim = b.Sparse.Dims()
		m := sparse.Zeros(0, f.Dim)
		for i := range n {
			ind, val := b.Sparse.Row(i)
			if err := checkRow(val); err != nil {
				unusable(i, err)
				continue
			}
			m.AppendRow(ind, val)
			sample(i)
		}
		if len(f.Offsets) > 0 {
			f.X = model.SparseRows(m)
		}
	case record.FormText:
		f.Text = slices.Clone(b.Text)
		for i := range n {
			sample(i)
		}
	default:
		for i := range n {
			unusable(i, fmt.Errorf("unsupported feature form %v", b.Form))
		}
	}
	return f
}

// check panics if f's lengths disagree (see Featurized.IDs).
func (f *Featurized) check() {
	n := len(f.Offsets)
	if len(f.IDs) != n || len(f.Labels) != n || len(f.Labeled) != n {
		panic(fmt.Sprintf("stages: featurized batch has %d offsets, %d ids, %d labels and %d labeled flags", n, len(f.IDs), len(f.Labels), len(f.Labeled)))
	}
	switch {
	case f.Text != nil && len(f.Text) != n:
		panic(fmt.Sprintf("stages: featurized batch has %d documents and %d samples", len(f.Text), n))
	case f.Text == nil && f.X == nil && n > 0:
		panic(fmt.Sprintf("stages: featurized batch has %d samples and neither X nor Text", n))
	case f.X != nil:
		d, rows := f.X.Dims()
		if rows != n || f.Dim != 0 && d != f.Dim {
			panic(fmt.Sprintf("stages: featurized batch of %d samples has %d rows of %d features, Dim %d", n, rows, d, f.Dim))
		}
	}
}

// rows returns the model rows of f's usable samples, their positions among
// f's samples, and the samples f and the stream's dimension reject, in input
// order. It fixes the stream's dimension and vectorizes text with
// l.Featurize, so it runs on the Learner's goroutine.
func (l *Learner) rows(f *Featurized) (model.Data, []int, []record.Reject) {
	x, keep, bad := l.featureRows(f)
	return l.capClasses(f, x, keep, bad)
}

// featureRows is rows before the class bound (capClasses).
func (l *Learner) featureRows(f *Featurized) (x model.Data, keep []int, bad []record.Reject) {
	reject := func(i int, err error) record.Reject {
		off, id := f.Offsets[i], f.IDs[i]
		return record.Reject{Offset: off, ID: id, Reason: &record.Error{Offset: off, ID: id, Err: err}}
	}
	if f.Text != nil {
		b := &record.Batch{Form: record.FormText, Text: f.Text, Offsets: f.Offsets}
		l.Featurize.maxEntries = l.maxEntries()
		x, keep, errs := l.Featurize.Rows(b)
		for _, err := range errs {
			re := err.(*RowError)
			bad = append(bad, reject(re.Row, re.Err))
		}
		l.capRank()
		return x, keep, mergeRejects(bad, f.Unusable)
	}
	dim := f.Dim
	if f.X != nil {
		dim, _ = f.X.Dims()
	}
	if dim == 0 {
		return nil, nil, f.Unusable
	}
	if l.Featurize.dim == 0 {
		if err := l.admitDim(dim, isDense(f.X)); err != nil {
			return nil, nil, rejectAll(f, err)
		}
		l.Featurize.dim = dim
		l.capRank()
	}
	if dim != l.Featurize.dim {
		// The dimension is checked before the values (Featurize.Rows): every
		// sample of the batch, usable or not, is rejected for it.
		return nil, nil, rejectAll(f, fmt.Errorf("%d features, the stream has %d", dim, l.Featurize.dim))
	}
	if f.X == nil {
		return nil, nil, f.Unusable
	}
	keep = make([]int, len(f.Offsets))
	for i := range keep {
		keep[i] = i
	}
	return f.X, keep, f.Unusable
}

// isDense reports whether x's samples are stored dense (a batch without
// rows counts as dense: the stricter bound).
func isDense(x model.Data) bool {
	_, sp := model.Rows(x).(*sparse.CSR)
	return x == nil || !sp
}

// rejectAll rejects every sample of f, usable or not, for err, in input
// order.
func rejectAll(f *Featurized, err error) []record.Reject {
	var bad []record.Reject
	add := func(off int64, id string) {
		bad = append(bad, record.Reject{Offset: off, ID: id, Reason: &record.Error{Offset: off, ID: id, Err: err}})
	}
	for i, off := range f.Offsets {
		add(off, f.IDs[i])
	}
	for _, u := range f.Unusable {
		add(u.Offset, u.ID)
	}
	slices.SortStableFunc(bad, func(a, b record.Reject) int { return cmpOffset(a.Offset, b.Offset) })
	return bad
}

// mergeRejects merges two lists in input order into a new list.
func mergeRejects(a, b []record.Reject) []record.Reject {
	if len(b) == 0 {
		return a
	}
	out := append(slices.Clone(a), b...)
	slices.SortStableFunc(out, func(x, y record.Reject) int { return cmpOffset(x.Offset, y.Offset) })
	return out
}

func cmpOffset(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
