package sources

import (
	"fmt"
	"strconv"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/sparse"
)

// Form is the feature form of a source: how each record's features are
// given, and so which field of Batch holds them.
type Form int

const (
	// FormDense means dense numeric features (column x, decoded images,
	// IDX and CSV files), in Batch.Dense.
	FormDense Form = iota + 1
	// FormSparse means sparse numeric features (columns indices and values),
	// in Batch.Sparse.
	FormSparse
	// FormText means documents (column text), in Batch.Text.
	FormText
)

func (f Form) String() string {
	switch f {
	case FormDense:
		return "dense"
	case FormSparse:
		return "sparse"
	case FormText:
		return "text"
	}
	return "Form(" + strconv.Itoa(int(f)) + ")"
}

// Batch is a group of consecutive records read from a source. Its sample
// rows are the records that carry usable features, in input order; the other
// records of the group are in LateLabels or Rejects. Every record of the
// group is in exactly one of the three.
//
// A Batch returned by Source.Batch is valid until the next call to Next or
// Close: sources reuse its memory. Copy what you keep.
type Batch struct {
	// Form says which one of Dense, Sparse and Text holds the features.
	Form Form
	// Dense holds the features for FormDense: one row per sample (n×D).
	// It is nil when the batch has no sample rows.
	Dense *mat.Dense
	// Sparse holds the features for FormSparse: one row per sample (n×D),
	// where D is the schema's dim. It is nil when the batch has no sample rows.
	Sparse *sparse.CSR
	// Text holds the documents for FormText, one per sample.
	Text []string

	// IDs holds each sample's id, or "" if the input has no id column or
	// the id is null. Integer ids are formatted in decimal.
	IDs []string
	// Labels holds each sample's label ("" when unlabeled). Integer labels
	// are formatted in decimal.
	Labels []string
	// Labeled reports, per sample, whether it has a label; false means a
	// null label, i.e. an unlabeled sample.
	Labeled []bool
	// Offsets holds each sample's 0-based record position in the whole input.
	Offsets []int64

	// LateLabels lists, in input order, the records with an id and a label
	// but null or empty features: labels for samples seen earlier.
	LateLabels []LateLabel
	// Rejects lists, in input order, the records that cannot be used.
	Rejects []Reject
}

// Len returns the number of sample rows.
func (b *Batch) Len() int { return len(b.Offsets) }

// Records returns the number of input records the batch covers: samples,
// late labels and rejects.
func (b *Batch) Records() int { return len(b.Offsets) + len(b.LateLabels) + len(b.Rejects) }

// reset empties b, keeping its slices' memory.
func (b *Batch) reset(f Form) {
	*b = Batch{
		Form:       f,
		Text:       b.Text[:0],
		IDs:        b.IDs[:0],
		Labels:     b.Labels[:0],
		Labeled:    b.Labeled[:0],
		Offsets:    b.Offsets[:0],
		LateLabels: b.LateLabels[:0],
		Rejects:    b.Rejects[:0],
	}
}

// addMeta appends a sample's id, label and offset.
func (b *Batch) addMeta(off int64, id, label string, labeled bool) {
	b.IDs = append(b.IDs, id)
	b.Labels = append(b.Labels, label)
	b.Labeled = append(b.Labeled, labeled)
	b.Offsets = append(b.Offsets, off)
}

func (b *Batch) reject(off int64, id string, format string, args ...any) {
	b.Rejects = append(b.Rejects, Reject{Offset: off, ID: id, Reason: &RecordError{Offset: off, ID: id, Err: fmt.Errorf(format, args...)}})
}

// LateLabel is a label that arrives without features, for the sample with
// the same ID seen earlier.
type LateLabel struct {
	Offset int64  // 0-based record position in the input
	ID     string // id of the labeled sample
	Label  string // its label
}

// Reject is a record that cannot be used, with the reason.
type Reject struct {
	Offset int64  // 0-based record position in the input
	ID     string // the record's id, or ""
	// Reason is a *RecordError naming the record and the problem.
	Reason error
}

// RecordError is the reason a record was rejected.
type RecordError struct {
	Offset int64  // 0-based record position in the input
	ID     string // the record's id, or ""
	Err    error  // the problem
}

func (e *RecordError) Error() string {
	if e.ID != "" {
		return fmt.Sprintf("sources: record %d (id %q): %v", e.Offset, e.ID, e.Err)
	}
	return fmt.Sprintf("sources: record %d: %v", e.Offset, e.Err)
}

func (e *RecordError) Unwrap() error { return e.Err }
