package distributed

import (
	"fmt"
	"hash/fnv"
	"io"
	"strconv"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/sparse"
	"github.com/nmfstream/nmfstream/stages"
)

// PartitionOf returns the partition (of p) of a record of the chain: by
// the FNV-1a hash of its id, so that a sample, its duplicates and its late
// labels meet at one owner; a record without an id by its offset. It is
// not locality-preserving: each partition's graph holds a uniform share of
// the stream (distributed/DESIGN.md, "The chain on the owners").
func PartitionOf(id string, offset int64, p int) int {
	if p <= 1 {
		return 0
	}
	h := fnv.New64a()
	if id != "" {
		io.WriteString(h, id)
	} else {
		io.WriteString(h, "#"+strconv.FormatInt(offset, 10))
	}
	return int(h.Sum64() % uint64(p))
}

// SplitFeatures returns the p shares of f, one per partition (PartitionOf),
// each in f's input order; with one partition it returns f itself. A
// share may be empty. The shares copy f's rows. Rows other than dense or
// sparse (model.DenseRows, SparseRows) are an error.
func SplitFeatures(f *stages.Features, p int) ([]*stages.Features, error) {
	if p <= 1 {
		return []*stages.Features{f}, nil
	}
	dest := make([]int, len(f.Offsets))
	for i, off := range f.Offsets {
		dest[i] = PartitionOf(f.IDs[i], off, p)
	}
	out, err := shareOut(f, p, dest)
	if err != nil {
		return nil, err
	}
	for _, ll := range f.LateLabels {
		s := out[PartitionOf(ll.ID, ll.Offset, p)]
		s.LateLabels = append(s.LateLabels, ll)
	}
	return out, nil
}

// shareOut returns f's p shares with sample i in share dest[i], in f's
// input order, rejects and unusable records by PartitionOf, and no late
// label (the caller places those). The shares copy f's rows.
func shareOut(f *stages.Features, p int, dest []int) ([]*stages.Features, error) {
	out := make([]*stages.Features, p)
	pos := make([][]int, p) // sample positions of f per partition
	for q := range out {
		out[q] = &stages.Features{Dim: f.Dim}
	}
	for i, q := range dest {
		pos[q] = append(pos[q], i)
		appendSample(out[q], f, i)
	}
	for _, r := range f.Rejects {
		s := out[PartitionOf(r.ID, r.Offset, p)]
		s.Rejects = append(s.Rejects, r)
	}
	for _, r := range f.Unusable {
		s := out[PartitionOf(r.ID, r.Offset, p)]
		s.Unusable = append(s.Unusable, r)
	}
	if f.X != nil {
		for q, s := range out {
			if len(pos[q]) > 0 {
				var err error
				if s.X, err = rowsAt(f.X, pos[q]); err != nil {
					return nil, err
				}
			}
		}
	}
	return out, nil
}

// appendSample appends f's sample i to s: its id, label, offset and, for
// text, its document (its row is rowsAt's to copy).
func appendSample(s, f *stages.Features, i int) {
	s.IDs, s.Labels = append(s.IDs, f.IDs[i]), append(s.Labels, f.Labels[i])
	s.Labeled, s.Offsets = append(s.Labeled, f.Labeled[i]), append(s.Offsets, f.Offsets[i])
	if f.Text != nil {
		s.Text = append(s.Text, f.Text[i])
	}
}

// rowsAt returns a copy of the rows pos of x.
func rowsAt(x model.Data, pos []int) (model.Data, error) {
	switch r := model.Rows(x).(type) {
	case *mat.Dense:
		_, d := r.Dims()
		m := mat.NewDense(len(pos), d, nil)
		for k, i := range pos {
			copy(m.RawRowView(k), r.RawRowView(i))
		}
		return model.DenseRows(m), nil
	case *sparse.CSR:
		_, d := r.Dims()
		m := sparse.Zeros(0, d)
		for _, i := range pos {
			ind, val := r.Row(i)
			m.AppendRow(append([]int(nil), ind...), append([]float64(nil), val...))
		}
		return model.SparseRows(m), nil
	default:
		return nil, fmt.Errorf("distributed: batch rows of type %T (want dense or sparse)", r)
	}
}
