package stages

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/sparse"
	"github.com/nmfstream/nmfstream/record"
)

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
	// proportion to the window times the classes).
	MaxClasses int

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
		if f.TFIDF == nil {
			f.TFIDF = DefaultStreamTFIDF()
		}
		if err := f.TFIDF.Update(b.Text); err != nil {
			for i := range n {
				bad = append(bad, &RowError{i, err})
			}
			return nil, nil, bad
		}
		m, err := f.TFIDF.Transform(b.Text)
		if err != nil {
			for i := range n {
				bad = append(bad, &RowError{i, err})
			}
			return nil, nil, bad
		}
		return f.sparseRows(m, n, errEmptyDoc)
	}
	for i := range n {
		bad = append(bad, &RowError{i, fmt.Errorf("unsupported feature form %v", b.Form)})
	}
	return nil, nil, bad
}

var errEmptyDoc = errors.New("document has no usable term")

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

func checkRow(row []float64) error {
	for j, v := range row {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("value %g at feature %d: features must be finite and non-negative", v, j)
		}
	}
	return nil
}
