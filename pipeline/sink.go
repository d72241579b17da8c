package pipeline

import (
	"context"
	"io"
	"reflect"
)

// Sink is where a Pipeline's items go, with the item type erased. Build one
// with To. Building it starts nothing; Run writes to it from a single
// goroutine.
type Sink struct {
	name  string
	typ   reflect.Type
	write func(ctx context.Context, x any) error
	flush func(ctx context.Context) error // nil unless the Writer is a Flusher
	close func() error                    // nil unless the Writer is an io.Closer
}

// Name returns the name given to the sink's constructor.
func (s Sink) Name() string { return s.name }

// Writer is the typed item writer behind a Sink. Write consumes one item;
// an error made with Reject rejects that item and the stream continues, any
// other error fails the run. Write should return promptly once ctx is done.
//
// A Writer may also implement Flusher and io.Closer; see To.
type Writer[T any] interface {
	Write(ctx context.Context, x T) error
}

// WriteFunc adapts a function to the Writer interface.
type WriteFunc[T any] func(ctx context.Context, x T) error

// Write calls f(ctx, x).
func (f WriteFunc[T]) Write(ctx context.Context, x T) error { return f(ctx, x) }

// Flusher is implemented by Writers that buffer. The pipeline calls Flush
// once, after the source reached io.EOF and every item was written.
type Flusher interface {
	Flush(ctx context.Context) error
}

// To returns a Sink that writes items to w.
//
// Ownership: a Pipeline that runs the Sink owns w for the duration of Run.
// If w is a Flusher, Flush is called once at a soft stop (io.EOF), and never
// after a hard stop (cancellation or a fatal error). If w is an io.Closer,
// Close is called exactly once by Run, on every path (even when Run fails
// its type check before starting); its error fails an otherwise successful
// run. To panics if name is empty.
func To[T any](name string, w Writer[T]) Sink {
	if name == "" {
		panic("pipeline: empty sink name")
	}
	s := Sink{
		name: name,
		typ:  reflect.TypeFor[T](),
		write: func(ctx context.Context, x any) error {
			v, ok := as[T](x)
			if !ok {
				return mismatch[T](x)
			}
			return w.Write(ctx, v)
		},
	}
	if f, ok := w.(Flusher); ok {
		s.flush = f.Flush
	}
	if c, ok := w.(io.Closer); ok {
		s.close = c.Close
	}
	return s
}
