package stages

import (
	"fmt"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/sparse"
	"github.com/nmfstream/nmfstream/record"
)

// The featurize stage, in two halves. NewFeatures, with no state, checks
// each sample of a record.Batch and copies its row into a Features: it
// owns nothing, touches only the batch it reads, costs O(values) per batch,
// and runs on any number of goroutines at once (a pipeline keeps the order).
// Featurize.RowsOf, in stream order on the goroutine that owns the
// Featurize, turns a Features into the model's rows: it owns the stream's
// dimension and the TF-IDF vectorizer (document frequencies), and costs a
// TF-IDF update and transform per text batch. One name per concept:
// Features is a featurized batch, Featurize the stage's state.

// DefaultHashFeatures is the number of hashed TF-IDF columns Featurize uses
// for text when no TFIDF is given. The basis U is dense (D×K) and every
// online step updates it at D·K² flops per U step, so D is kept below
// scikit-learn's 2²⁰. With 2¹⁶ columns a vocabulary of 20,000 terms has
// about a quarter of its terms sharing a column with another
// (1 − e^(−20000/65536)), and the cost per step does not grow with the
// vocabulary. On the SpamAssassin stream 2¹⁴, 2¹⁶ and 2¹⁸ columns scored
// 0.906, 0.918 and 0.924, the last at 3.6 times the time of the others
// (BENCHMARKS.md). Set TFIDF for more.
const DefaultHashFeatures = 1 << 16

// DefaultStreamTFIDF returns the vectorizer Featurize uses for text when no
// TFIDF is given: hashing into DefaultHashFeatures columns, whose meaning
// does not move as the vocabulary grows, scikit-learn's English stop
// words, sublinear tf (1 + ln tf) and l2-normalized rows. Sublinear tf
// lifted the prequential accuracy of the SpamAssassin stream in date order
// from 0.818 to 0.874 (BENCHMARKS.md): a term repeated in a long message
// no longer outweighs the rest of it. With Fallback, a document of stop
// words or symbols alone is learned and predicted, not rejected.
func DefaultStreamTFIDF() *TFIDF {
	return &TFIDF{Hashing: true, NFeatures: DefaultHashFeatures, StopWords: EnglishStopWords(), SublinearTF: true, Fallback: true}
}

// DefaultDocumentTFIDF returns the vectorizer that batch fits (nmfstream
// fit and eval) use for text: a vocabulary of the terms found in at least
// two training documents (MinDF), scikit-learn's English stop words,
// sublinear tf (1 + ln tf), l2-normalized rows and no stemming. Each
// choice was measured on three corpora (Brown genres, SpamAssassin, State
// of the Union parties; BENCHMARKS.md, "Documents").
func DefaultDocumentTFIDF() *TFIDF {
	return &TFIDF{StopWords: EnglishStopWords(), SublinearTF: true, MinDF: DocFreq{Count: 2}}
}

// DefaultMaxNormRatio is Featurize.MaxNormRatio's default,
// model.DefaultMaxNormRatio.
const DefaultMaxNormRatio = model.DefaultMaxNormRatio

// Featurize turns the samples of a record.Batch into rows for the model:
// dense and sparse features pass through after a per-row check, text goes
// through a TF-IDF vectorizer whose document frequencies follow the stream.
//
// The first batch fixes the dimension; a later row of another dimension is
// rejected, not fatal. Featurize is not safe for concurrent use.
type Featurize struct {
	// TFIDF vectorizes FormText batches; Rows calls its Update and then
	// Transform on each batch. If nil, the first text batch sets it to
	// DefaultStreamTFIDF().
	TFIDF *TFIDF
	// MaxDim, if positive, bounds the stream's dimension: a batch of more
	// features is rejected, every record of it, before the model sees it.
	MaxDim int
	// MaxWindowBytes, if positive, bounds 8·D·Window, the bytes of a
	// window of dense samples: a dense batch whose dimension D would
	// exceed it is rejected as a whole before it fixes the stream's.
	MaxWindowBytes int64
	// MaxClasses, if positive, bounds the distinct labels (classes) the
	// stream learns: a labeled sample or a late label that would add a
	// class beyond it is rejected (per-class state takes memory in
	// proportion to the window times the classes). A late label whose
	// sample has not come takes no class while it waits; if it would add
	// one beyond the bound when its sample comes, it is dropped and the
	// sample learned unlabeled.
	MaxClasses int
	// MaxNormRatio bounds a sample's Euclidean norm relative to the
	// window's: a sample whose norm exceeds MaxNormRatio times the
	// geometric mean of the other nonzero norms of the window's samples and
	// of its batch's (model.NormOutliers) is rejected before the model sees it (Learner; a corrupt
	// record, such as a pixel of 10³⁰, would otherwise set the basis and,
	// through the graph's edges, its neighbours' codes while it stays in
	// the window). If zero, it defaults to DefaultMaxNormRatio; a negative
	// value accepts every norm (record.MaxValue still bounds the values).
	// Documents' TF-IDF rows, of unit length, are not bounded.
	MaxNormRatio float64

	dim int
	// maxEntries, if positive, bounds the entries of a text row: the
	// Learner sets it to MaxWindowBytes / (12 · Window), 12 bytes being a
	// sparse entry (index and value), so that a window of text rows stays
	// within MaxWindowBytes.
	maxEntries int
}

// RowError is the reason Featurize cannot use one sample.
type RowError struct {
	Row int   // the sample's index in the batch
	Err error // the problem
}

func (e *RowError) Error() string { return fmt.Sprintf("stages: sample %d: %v", e.Row, e.Err) }
func (e *RowError) Unwrap() error { return e.Err }

// Dim returns the dimension fixed by the first batch, or 0 before it.
func (f *Featurize) Dim() int { return f.dim }

// Rows returns the model rows of b's usable samples, the indices of those
// samples in b (ascending), and a *RowError for each unusable one: a
// negative or non-finite value, a dimension other than the stream's, an
// empty document. x is nil when no sample is usable. x is newly allocated.
func (f *Featurize) Rows(b *record.Batch) (x model.Data, keep []int, bad []error) {
	n := b.Len()
	if n == 0 {
		return nil, nil, nil
	}
	switch b.Form {
	case record.FormDense:
		if b.Dense == nil {
			return nil, nil, nil
		}
		_, d := b.Dense.Dims()
		if f.dim == 0 {
			f.dim = d
		}
		for i := range n {
			if d != f.dim {
				bad = append(bad, &RowError{i, fmt.Errorf("%d features, the stream has %d", d, f.dim)})
				continue
			}
			if err := checkRow(b.Dense.RawRowView(i)); err != nil {
				bad = append(bad, &RowError{i, err})
				continue
			}
			keep = append(keep, i)
		}
		if len(keep) == 0 {
			return nil, nil, bad
		}
		m := mat.NewDense(len(keep), d, nil)
		for r, i := range keep {
			copy(m.RawRowView(r), b.Dense.RawRowView(i))
		}
		return model.DenseRows(m), keep, bad
	case record.FormSparse:
		return f.sparseRows(b.Sparse, n, nil)
	case record.FormText:
		return f.textRows(b.Text, nil)
	}
	for i := range n {
		bad = append(bad, &RowError{i, fmt.Errorf("unsupported feature form %v", b.Form)})
	}
	return nil, nil, bad
}

// textRows is Rows on the documents of a text batch, their hashed columns
// taken from tc when a Hasher with TFIDF's settings made them (nil:
// computed here).
func (f *Featurize) textRows(docs []string, tc *TermColumns) (x model.Data, keep []int, bad []error) {
	if f.TFIDF == nil {
		f.TFIDF = DefaultStreamTFIDF()
	}
	m, err := f.TFIDF.updateTransform(docs, tc)
	if err != nil {
		for i := range docs {
			bad = append(bad, &RowError{i, err})
		}
		return nil, nil, bad
	}
	return f.sparseRows(m, len(docs), errEmptyDoc)
}

var errEmptyDoc = record.NoFeatures("document has no usable term")

// sparseRows keeps the usable rows of m. empty, if not nil, rejects rows
// without entries.
func (f *Featurize) sparseRows(m *sparse.CSR, n int, empty error) (model.Data, []int, []error) {
	if m == nil {
		return nil, nil, nil
	}
	_, d := m.Dims()
	if f.dim == 0 {
		f.dim = d
	}
	var keep []int
	var bad []error
	for i := range n {
		ind, val := m.Row(i)
		switch {
		case d != f.dim:
			bad = append(bad, &RowError{i, fmt.Errorf("%d features, the stream has %d", d, f.dim)})
		case empty != nil && len(ind) == 0:
			bad = append(bad, &RowError{i, empty})
		case f.maxEntries > 0 && len(ind) > f.maxEntries:
			bad = append(bad, &RowError{i, fmt.Errorf("%d distinct terms, over the limit of %d per document (a window of them would exceed --max-window-bytes)", len(ind), f.maxEntries)})
		default:
			if err := checkRow(val); err != nil {
				bad = append(bad, &RowError{i, err})
				continue
			}
			keep = append(keep, i)
		}
	}
	if len(keep) == 0 {
		return nil, nil, bad
	}
	out := sparse.Zeros(0, d)
	for _, i := range keep {
		out.AppendRow(m.Row(i))
	}
	return model.SparseRows(out), keep, bad
}

// RowsOf is the in-order half of the featurize stage: it returns the model
// rows of fb's usable samples, their positions among fb's samples, and the
// samples fb and the stream's dimension reject, in input order. It fixes the
// stream's dimension (the first batch with one) and vectorizes text with
// TFIDF, whose document frequencies follow the stream: it must see the
// batches in stream order, on the goroutine that owns the Featurize
// (in a stream, the Learner's).
// Its cost is a TF-IDF update and transform of the batch's documents; dense
// and sparse rows pass through (NewFeatures copied them).
func (f *Featurize) RowsOf(fb *Features) (x model.Data, keep []int, bad []record.Reject) {
	reject := func(i int, err error) record.Reject {
		off, id := fb.Offsets[i], fb.IDs[i]
		return record.Reject{Offset: off, ID: id, Reason: &record.Error{Offset: off, ID: id, Err: err}}
	}
	if fb.Text != nil {
		var errs []error
		if len(fb.Text) > 0 {
			x, keep, errs = f.textRows(fb.Text, fb.Terms)
		}
		for _, err := range errs {
			re := err.(*RowError)
			bad = append(bad, reject(re.Row, re.Err))
		}
		return x, keep, mergeRejects(bad, fb.Unusable)
	}
	dim := fb.Dim
	if fb.X != nil {
		dim, _ = fb.X.Dims()
	}
	if dim == 0 {
		return nil, nil, fb.Unusable
	}
	if f.dim == 0 {
		f.dim = dim
	}
	if dim != f.dim {
		// The dimension is checked before the values (Featurize.Rows): every
		// sample of the batch, usable or not, is rejected for it.
		err := fmt.Errorf("%d features, the stream has %d", dim, f.dim)
		for i := range fb.Offsets {
			bad = append(bad, reject(i, err))
		}
		for _, u := range fb.Unusable {
			bad = append(bad, record.Reject{Offset: u.Offset, ID: u.ID, Reason: &record.Error{Offset: u.Offset, ID: u.ID, Err: err}})
		}
		slices.SortStableFunc(bad, func(a, b record.Reject) int { return cmpOffset(a.Offset, b.Offset) })
		return nil, nil, bad
	}
	if fb.X == nil {
		return nil, nil, fb.Unusable
	}
	keep = make([]int, len(fb.Offsets))
	for i := range keep {
		keep[i] = i
	}
	return fb.X, keep, fb.Unusable
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

// Features is one batch of records made ready for Learner.LearnFeatures:
// the model rows of its usable samples and the batch's bookkeeping (ids,
// labels, offsets, late labels and rejects). NewFeatures makes one from a
// record.Batch; a service with features of its own may fill one directly.
//
// Every record of the batch is in exactly one of: a row of X (or a
// document of Text), LateLabels, Rejects or Unusable. Records returns
// their number.
//
// A Features owns its memory: it shares none with the batch it was made
// from. LearnFeatures copies what it keeps, so the Features may be
// dropped or reused after it returns.
type Features struct {
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
	// Terms, if set, holds Text's hashed columns, computed by the parallel
	// stage with the Hasher of the Learner's TFIDF (HashText): LearnFeatures
	// then only counts and weighs them. Columns computed with other
	// settings are ignored, and LearnFeatures computes its own.
	Terms *TermColumns

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
func (f *Features) Records() int {
	return len(f.Offsets) + len(f.LateLabels) + len(f.Rejects) + len(f.Unusable)
}

// lastOffset returns the largest record offset of f, or −1 when f is empty.
func (f *Features) lastOffset() int64 {
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

// HashText sets f.Terms to the columns of f.Text under h (nothing when h
// or f.Text is nil): the tokenizing and hashing of a hashing TFIDF's
// UpdateTransform, done in the parallel stage. It reads only f and h.
func (f *Features) HashText(h *Hasher) {
	if h != nil && f.Text != nil {
		f.Terms = h.Columns(f.Text)
	}
}

// NewFeatures is the parallel half of featurization, the featurize stage of a
// pipeline: it checks every sample of b (values finite and non-negative)
// and copies the usable rows, in input order, into a new Features.
// Text batches are passed through (Features.Text), since their TF-IDF
// follows the stream; LearnFeatures vectorizes them. The dimension check
// against the stream is left to LearnFeatures too: which batch fixes it
// depends on the order of the stream.
//
// NewFeatures reads b and keeps no reference to it: the caller may reuse b
// once NewFeatures returns. It has no state, so any number of goroutines may
// call it at once (pipeline.Ordered(pipeline.Map("featurize", n, …)) keeps
// the batches in order). Data errors become Unusable entries, not errors.
func NewFeatures(b *record.Batch) *Features {
	f := &Features{
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

// check panics if f's lengths disagree (see Features.IDs).
func (f *Features) check() {
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

// checkRow returns an error naming the first value of row that a sample
// may not have (negative, not finite, or above record.MaxValue), or nil.
func checkRow(row []float64) error {
	for j, v := range row {
		if !(v >= 0 && v <= record.MaxValue) { // false for NaN
			return fmt.Errorf("value %g at feature %d: features must be non-negative and at most %g (record.MaxValue)", v, j, record.MaxValue)
		}
	}
	return nil
}
