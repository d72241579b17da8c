package sources

import (
	"context"
	"fmt"
	"github.com/nmfstream/nmfstream/record"
	"io"
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
	// the checkpoint was made from, and so is an input that ends before
	// Skip (stdin, whose identity a checkpoint cannot hold, included). The
	// default, 0, reads every record.
	Skip int64

	src  Source
	seen int64 // one past the last record offset read or skipped
}

// NewReader returns a Reader of src.
func NewReader(src Source) *Reader { return &Reader{src: src} }

// Read returns a copy of the next batch, io.EOF at the end of the source,
// or the error that stopped it. It checks ctx between batches only: a
// Source's Next takes no context.
func (r *Reader) Read(ctx context.Context) (*record.Batch, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !r.src.Next() {
			if err := r.src.Err(); err != nil {
				return nil, err
			}
			if r.seen < r.Skip {
				return nil, fmt.Errorf("sources: the input ended after %d records, before the resume offset %d: it is not the input the checkpoint was taken on (pass that input, or remove the checkpoint to start over)", r.seen, r.Skip)
			}
			return nil, io.EOF
		}
		b := r.src.Batch()
		first, last := b.Span()
		r.seen = max(r.seen, last+1)
		if last < r.Skip {
			continue
		}
		if first < r.Skip {
			return nil, fmt.Errorf("sources: resume offset %d falls inside a batch (records %d..%d): the input changed", r.Skip, first, last)
		}
		return b.Clone(), nil
	}
}
