package sources

import "github.com/nmfstream/nmfstream/record"

// The batch types are defined in package record, so that the stages read
// them without importing the readers. These names keep sources.Batch and
// its relatives readable where a source is at hand.
type (
	// Form is record.Form: the feature form of a source.
	Form = record.Form
	// Batch is record.Batch: a group of consecutive records read from a
	// source. A Batch returned by Source.Batch is valid until the next call
	// to Next or Close: sources reuse its memory. Copy what you keep
	// (Batch.Clone).
	Batch = record.Batch
	// LateLabel is record.LateLabel: a label without features, for a
	// sample seen earlier.
	LateLabel = record.LateLabel
	// Reject is record.Reject: a record that cannot be used, with the reason.
	Reject = record.Reject
	// RecordError is record.Error: the reason a record was rejected.
	RecordError = record.Error
)

// The feature forms, as in package record.
const (
	FormDense  = record.FormDense
	FormSparse = record.FormSparse
	FormText   = record.FormText
)

// batch is the Batch a source fills and hands out, with the methods that
// fill it.
type batch struct{ Batch }

// reset empties b for a batch of form f, keeping its slices' memory.
func (b *batch) reset(f Form) {
	b.Batch = Batch{
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
func (b *batch) addMeta(off int64, id, label string, labeled bool) {
	b.IDs = append(b.IDs, id)
	b.Labels = append(b.Labels, label)
	b.Labeled = append(b.Labeled, labeled)
	b.Offsets = append(b.Offsets, off)
}

// reject appends a reject of the record at off with the formatted problem.
func (b *batch) reject(off int64, id string, format string, args ...any) {
	b.Rejects = append(b.Rejects, record.Rejectf(off, id, format, args...))
}
