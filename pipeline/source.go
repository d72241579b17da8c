package pipeline

import (
	"context"
	"io"
	"reflect"
)

// Source is where a Pipeline's items come from, with the item type erased.
// Build one with From, FromChan, FromScanner or FromSlice. Building it starts nothing;
// Run reads it from a single goroutine.
type Source struct {
	name string
	typ  reflect.Type
	read func(ctx context.Context) (any, error)
}

// Name returns the name given to the source's constructor.
func (s Source) Name() string { return s.name }

// Reader is the typed item reader behind a Source, in the style of
// arrio.Reader. Read returns the next item, or io.EOF (and no item) at the
// end of the stream, which is a soft stop: the pipeline drains, flushes the
// sinks and Run returns nil. An error made with Reject skips one bad record
// and the reading goes on; any other error fails the run.
//
// Read should return promptly once ctx is done: Run waits for it.
type Reader[T any] interface {
	Read(ctx context.Context) (T, error)
}

// ReadFunc adapts a function to the Reader interface.
type ReadFunc[T any] func(ctx context.Context) (T, error)

// Read calls f(ctx).
func (f ReadFunc[T]) Read(ctx context.Context) (T, error) { return f(ctx) }

// Scanner is the typed iterator behind FromScanner, in the style of
// bufio.Scanner and array.RecordReader: Next advances and reports whether
// there is an item, Item returns it, and Err reports the error that stopped
// Next (nil at a clean end).
type Scanner[T any] interface {
	Next() bool
	Item() T
	Err() error
}

// From returns a Source that reads items from r. It panics if name is empty.
func From[T any](name string, r Reader[T]) Source {
	if name == "" {
		panic("pipeline: empty source name")
	}
	return Source{
		name: name,
		typ:  reflect.TypeFor[T](),
		read: func(ctx context.Context) (any, error) { return r.Read(ctx) },
	}
}

// FromScanner returns a Source that reads items from s. A clean end of s
// (Next false, Err nil) is io.EOF; an error from Err fails the run unless it
// was made with Reject.
//
// Next takes no context, so the pipeline can only check for cancellation
// between items: a Next that blocks (on a network read, say) delays Run's
// return until it unblocks. Close the underlying reader on cancellation
// (context.AfterFunc) if that matters. FromScanner panics if name is empty.
func FromScanner[T any](name string, s Scanner[T]) Source {
	done := false
	return From(name, ReadFunc[T](func(context.Context) (T, error) {
		var zero T
		if done {
			return zero, io.EOF
		}
		if s.Next() {
			return s.Item(), nil
		}
		done = true
		if err := s.Err(); err != nil {
			return zero, err
		}
		return zero, io.EOF
	}))
}

// FromChan returns a Source that yields the values received on ch, in
// order, and io.EOF once ch is closed: a soft stop, so every value received
// goes through and the sinks are flushed. It is how a service feeds a
// pipeline from other goroutines (HTTP handlers, say): they send on ch, and
// Run reads it from its one source goroutine.
//
// The pipeline never closes ch; its sender does, when there is nothing
// more to send. Values left in a buffered ch after a hard stop are not
// read. A send on ch blocks while the pipeline is busy (that is its
// backpressure), so senders should select on their own context too.
// FromChan panics if name is empty.
func FromChan[T any](name string, ch <-chan T) Source {
	return From(name, ReadFunc[T](func(ctx context.Context) (T, error) {
		select {
		case v, ok := <-ch:
			if !ok {
				var zero T
				return zero, io.EOF
			}
			return v, nil
		case <-ctx.Done():
			var zero T
			return zero, ctx.Err()
		}
	}))
}

// FromSlice returns a Source that yields the elements of items in order,
// then io.EOF. The pipeline does not copy items. FromSlice panics if name is
// empty.
func FromSlice[T any](name string, items []T) Source {
	i := 0
	return From(name, ReadFunc[T](func(context.Context) (T, error) {
		if i == len(items) {
			var zero T
			return zero, io.EOF
		}
		i++
		return items[i-1], nil
	}))
}
