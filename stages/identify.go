package stages

import (
	"fmt"
	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/sparse"
	"github.com/nmfstream/nmfstream/record"
	"gonum.org/v1/gonum/mat"
)

// Identified is a batch after the identify stage: the samples to add to the
// model, with their rows, and the labels the batch brings for samples it
// does not add. It owns its slices; X may share memory with the rows the
// identify stage was given.
type Identified struct {
	// X holds the rows of the samples to add (n×D, in input order), nil
	// when there are none.
	X model.Data
	// IDs, Labels, Labeled and Offsets describe the samples to add, one
	// entry per row of X, as in record.Batch.
	IDs     []string
	Labels  []string
	Labeled []bool
	Offsets []int64
	// Late holds the labels that arrive without a new sample: those of the
	// batch's duplicates and its label-only records (record.LateLabel).
	Late []record.LateLabel
	// Duplicates lists the offsets of the samples skipped because their id
	// was in the window or earlier in the batch.
	Duplicates []int64
	// LateLabels is the number of the batch's label-only records in Late.
	LateLabels int
}

// Identify is the identify stage: it sorts the usable samples of f (rows x,
// the samples at positions keep of f, as Featurize.RowsOf returns them)
// into new samples and duplicates, by record id: a sample whose non-empty
// id is live in the window, or repeated earlier in the batch, is a
// duplicate, skipped, and its label (if any) becomes a late label. It reads
// the window and f and changes neither; it costs O(n) map lookups and a
// copy of the new samples' rows when some are skipped.
func (w *Window) Identify(f *Features, x model.Data, keep []int) *Identified {
	id := &Identified{}
	inBatch := map[string]bool{}
	var fresh []int // positions in keep
	for p, i := range keep {
		rid := f.IDs[i]
		if rid != "" {
			if _, ok := w.byID[rid]; ok || inBatch[rid] {
				id.Duplicates = append(id.Duplicates, f.Offsets[i])
				if f.Labeled[i] {
					id.Late = append(id.Late, record.LateLabel{Offset: f.Offsets[i], ID: rid, Label: f.Labels[i]})
				}
				continue
			}
			inBatch[rid] = true
		}
		fresh = append(fresh, p)
		id.IDs = append(id.IDs, rid)
		id.Labels = append(id.Labels, f.Labels[i])
		id.Labeled = append(id.Labeled, f.Labeled[i])
		id.Offsets = append(id.Offsets, f.Offsets[i])
	}
	switch {
	case len(fresh) == 0:
	case len(fresh) < len(keep):
		id.X = subRows(x, fresh)
	default:
		id.X = x
	}
	id.Late = append(id.Late, f.LateLabels...)
	id.LateLabels = len(f.LateLabels)
	return id
}

// subRows returns the rows of x at positions pos.
func subRows(x model.Data, pos []int) model.Data {
	switch r := model.Rows(x).(type) {
	case *mat.Dense:
		_, d := r.Dims()
		m := mat.NewDense(len(pos), d, nil)
		for i, p := range pos {
			copy(m.RawRowView(i), r.RawRowView(p))
		}
		return model.DenseRows(m)
	case *sparse.CSR:
		_, d := r.Dims()
		m := sparse.Zeros(0, d)
		for _, p := range pos {
			m.AppendRow(r.Row(p))
		}
		return model.SparseRows(m)
	}
	panic(fmt.Sprintf("stages: unsupported rows %T", x))
}
