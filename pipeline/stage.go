package pipeline

import (
	"context"
	"fmt"
	"reflect"
	"time"
)

// Stage is one typed step of a Pipeline with its input and output types
// erased. Build one with Map, Filter, FlatMap or Batch (optionally wrapped in
// Ordered). A Stage is an inert description: building it starts nothing, and
// the same Stage may be used in several pipelines.
type Stage struct {
	name        string
	in, out     reflect.Type
	parallelism int
	ordered     bool

	// apply runs a per-item stage (Map, Filter, FlatMap) on one item. It
	// makes the checked conversion of x to the declared input type.
	apply func(ctx context.Context, x any) result

	// size > 0 marks a Batch stage.
	size     int
	interval time.Duration
	// accept checks that x has the declared input type.
	accept func(x any) error
	// collect turns the buffered items into the typed output batch []T.
	collect func(b []item) any
}

// Name returns the name given to the stage's constructor.
func (s Stage) Name() string { return s.name }

// resultKind says how many outputs a per-item result carries.
type resultKind uint8

const (
	none resultKind = iota // filtered out, skipped after cancellation, or failed
	one                    // result.one holds the single output
	many                   // result.many holds zero or more outputs
)

// item is what a stage adapter sends into its go-streams operator: the value
// and its sequence number within the stage (used by Ordered).
type item struct {
	seq uint64
	v   any
}

// result is what a per-item stage's go-streams operator sends out.
type result struct {
	seq  uint64
	kind resultKind
	one  any
	many []any
	in   any   // the input, kept so that a rejection can report it
	err  error // a plain error (fatal) or a *RejectError
}

func checkStage(name string, parallelism int) {
	if name == "" {
		panic("pipeline: empty stage name")
	}
	if parallelism < 1 {
		panic(fmt.Sprintf("pipeline: stage %q: nonpositive parallelism: %d", name, parallelism))
	}
}

// Map returns a stage that applies fn to every item and passes on its
// result.
//
// parallelism is the number of goroutines calling fn. With parallelism 1 the
// output order is the input order (go-streams Map semantics); with more,
// items may be reordered unless the stage is wrapped in Ordered. fn must be
// safe for concurrent use when parallelism > 1.
//
// If fn returns an error made with Reject, the item is rejected and the
// stream continues; any other error fails the run. fn should return promptly
// once ctx is done. Map panics if name is empty or parallelism < 1.
func Map[In, Out any](name string, parallelism int, fn func(ctx context.Context, x In) (Out, error)) Stage {
	checkStage(name, parallelism)
	return Stage{
		name:        name,
		in:          reflect.TypeFor[In](),
		out:         reflect.TypeFor[Out](),
		parallelism: parallelism,
		apply: func(ctx context.Context, x any) result {
			v, ok := as[In](x)
			if !ok {
				return result{err: mismatch[In](x), in: x}
			}
			o, err := fn(ctx, v)
			if err != nil {
				return result{err: err, in: x}
			}
			return result{kind: one, one: o}
		},
	}
}

// Filter returns a stage that passes on the items for which keep returns
// true and drops the others. A dropped item is not a rejection: it is counted
// as in but not out. Errors, parallelism and panics are as for Map.
func Filter[T any](name string, parallelism int, keep func(ctx context.Context, x T) (bool, error)) Stage {
	checkStage(name, parallelism)
	return Stage{
		name:        name,
		in:          reflect.TypeFor[T](),
		out:         reflect.TypeFor[T](),
		parallelism: parallelism,
		apply: func(ctx context.Context, x any) result {
			v, ok := as[T](x)
			if !ok {
				return result{err: mismatch[T](x), in: x}
			}
			k, err := keep(ctx, v)
			if err != nil {
				return result{err: err, in: x}
			}
			if !k {
				return result{}
			}
			return result{kind: one, one: x}
		},
	}
}

// FlatMap returns a stage that passes on each element of the slice fn
// returns, in slice order; an empty slice drops the item. The pipeline keeps
// no reference to the slice after passing its elements on. Errors,
// parallelism and panics are as for Map.
func FlatMap[In, Out any](name string, parallelism int, fn func(ctx context.Context, x In) ([]Out, error)) Stage {
	checkStage(name, parallelism)
	return Stage{
		name:        name,
		in:          reflect.TypeFor[In](),
		out:         reflect.TypeFor[Out](),
		parallelism: parallelism,
		apply: func(ctx context.Context, x any) result {
			v, ok := as[In](x)
			if !ok {
				return result{err: mismatch[In](x), in: x}
			}
			os, err := fn(ctx, v)
			if err != nil {
				return result{err: err, in: x}
			}
			outs := make([]any, len(os))
			for i, o := range os {
				outs[i] = o
			}
			return result{kind: many, many: outs}
		},
	}
}

// Batch returns a stage that groups items of type T into batches []T, in
// arrival order, using go-streams flow.Batch. A batch is emitted when it
// holds size items, when no item has arrived for interval (go-streams resets
// its timer on every item, so interval is an idle timeout, not a deadline),
// and at the end of the stream (a final, possibly short, batch). An interval
// ≤ 0 means batches are cut by count and end of stream only.
//
// Each emitted batch is a new slice owned by the receiver. After a hard stop
// the partial batch is discarded. Batch panics if name is empty or size < 1.
func Batch[T any](name string, size int, interval time.Duration) Stage {
	checkStage(name, 1)
	if size < 1 {
		panic(fmt.Sprintf("pipeline: stage %q: nonpositive batch size: %d", name, size))
	}
	return Stage{
		name:        name,
		in:          reflect.TypeFor[T](),
		out:         reflect.TypeFor[[]T](),
		parallelism: 1,
		size:        size,
		interval:    interval,
		accept: func(x any) error {
			if _, ok := as[T](x); !ok {
				return mismatch[T](x)
			}
			return nil
		},
		collect: func(b []item) any {
			out := make([]T, len(b))
			for i, it := range b {
				out[i], _ = as[T](it.v) // checked by accept
			}
			return out
		},
	}
}

// Ordered returns s changed so that its outputs leave in input order even
// when s.parallelism > 1. Items are numbered on entry and held in a reorder
// buffer on exit; at most 2×parallelism items are inside the stage at once,
// which bounds that buffer, so a slow item stalls the stage instead of
// letting the buffer grow. A Batch stage is always ordered.
func Ordered(s Stage) Stage {
	s.ordered = true
	return s
}
