package sources

import "github.com/nmfstream/nmfstream/record"

// batch is the Batch a source fills and hands out, with the methods that
// fill it.
type batch struct{ record.Batch }

// reset empties b for a batch of form f, keeping its slices' memory.
func (b *batch) reset(f record.Form) {
	b.Batch = record.Batch{
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

// rejectNoFeatures appends a reject of the record at off, which has no
// features, with the problem (record.NoFeatures). id is the id a sample
// there would have had (its offset in decimal where the source gives
// those), since the record still gets an arrival prediction by it
// (stages.Step.Featureless).
func (b *batch) rejectNoFeatures(off int64, id, problem string) {
	b.rejectErr(off, id, record.NoFeatures(problem))
}

// rejectErr appends a reject of the record at off with the problem err.
func (b *batch) rejectErr(off int64, id string, err error) {
	b.Rejects = append(b.Rejects, record.Reject{Offset: off, ID: id, Reason: &record.Error{Offset: off, ID: id, Err: err}})
}

// reject appends a reject of the record at off with the formatted problem.
func (b *batch) reject(off int64, id string, format string, args ...any) {
	b.Rejects = append(b.Rejects, record.Rejectf(off, id, format, args...))
}
