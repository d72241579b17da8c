package sources

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/sparse"
)

// Reader reads a Source's batches one at a time, each a copy the caller
// owns, in the shape of pipeline.Reader: it is the decode stage of a
// pipeline (pipeline.From("records", sources.NewReader(src))). A copy is
// needed because a Source reuses a batch's memory on the next call to Next
// while a pipeline reads ahead.
//
// A Reader is not safe for concurrent use; a pipeline reads it from one
// goroutine. It does not close its Source: the Source's owner does.
type Reader struct {
	// Skip is the offset of the first record to read: the batches of
	// records before it are skipped, as when a stream resumes from a
	// checkpoint (stages.Counters.Offset). A batch with records on both
	// sides of Skip is an error, since the input then differs from the one
	// the checkpoint was made from. The default, 0, reads every record.
	Skip int64

	src Source
}

// NewReader returns a Reader of src.
func NewReader(src Source) *Reader { return &Reader{src: src} }

// Read returns a copy of the next batch, io.EOF at the end of the source,
// or the error that stopped it. It checks ctx between batches only: a
// Source's Next takes no context.
func (r *Reader) Read(ctx context.Context) (*Batch, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !r.src.Next() {
			if err := r.src.Err(); err != nil {
				return nil, err
			}
			return nil, io.EOF
		}
		b := r.src.Batch()
		first, last := b.span()
		if last < r.Skip {
			continue
		}
		if first < r.Skip {
			return nil, fmt.Errorf("sources: resume offset %d falls inside a batch (records %d..%d): the input changed", r.Skip, first, last)
		}
		return b.Clone(), nil
	}
}

// span returns the smallest and largest record offsets of b
// (math.MaxInt64 and −1 when b is empty).
func (b *Batch) span() (first, last int64) {
	first, last = math.MaxInt64, -1
	for _, o := range b.Offsets {
		first, last = min(first, o), max(last, o)
	}
	for _, x := range b.LateLabels {
		first, last = min(first, x.Offset), max(last, x.Offset)
	}
	for _, x := range b.Rejects {
		first, last = min(first, x.Offset), max(last, x.Offset)
	}
	return first, last
}

// Clone returns a deep copy of b that shares no memory with it.
func (b *Batch) Clone() *Batch {
	c := &Batch{
		Form:       b.Form,
		Text:       slices.Clone(b.Text),
		IDs:        slices.Clone(b.IDs),
		Labels:     slices.Clone(b.Labels),
		Labeled:    slices.Clone(b.Labeled),
		Offsets:    slices.Clone(b.Offsets),
		LateLabels: slices.Clone(b.LateLabels),
		Rejects:    slices.Clone(b.Rejects),
	}
	if b.Dense != nil {
		c.Dense = mat.DenseCopyOf(b.Dense)
	}
	if b.Sparse != nil {
		n, d := b.Sparse.Dims()
		m := sparse.Zeros(0, d)
		for i := range n {
			m.AppendRow(b.Sparse.Row(i))
		}
		c.Sparse = m
	}
	return c
}
