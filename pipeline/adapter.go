package pipeline

import (
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/reugn/go-streams"
	"github.com/reugn/go-streams/flow"
)

// This file is the one place where go-streams meets the typed, context-aware
// world. go-streams operators pass chan any, have no error path, ignore
// contexts, and start goroutines when they are built. The adapters below
// make that safe:
//
//   - every channel send made by the pipeline's own goroutines is a select
//     on the run's ctx, and every channel is closed by its only sender;
//   - every consumer keeps receiving until its input is closed, discarding
//     after a hard stop, so that no sender (ours or go-streams') is left
//     blocked on a send that has no select;
//   - errors travel beside the items (result.err) out of the go-streams
//     operator and are turned into a rejection or a cancellation by the
//     adapter's drain goroutine;
//   - go-streams operators are built in start, which Run calls.
//
// A go-streams operator's goroutines exit right after they close its output
// channel; drain returns only when it sees that close, and Run waits for
// drain, so Run also outlives them (by the few instructions between the
// close and the goroutine's exit).

// sourceAdapter reads a Source from one goroutine into its outlet.
type sourceAdapter struct {
	r   *run
	src *Source
	c   *counter
	out chan any
}

var _ streams.Source = (*sourceAdapter)(nil)

// Out returns the channel the source's items are sent on.
func (s *sourceAdapter) Out() <-chan any { return s.out }

// Via streams the source's items to next, and returns next.
func (s *sourceAdapter) Via(next streams.Flow) streams.Flow {
	s.r.forward(s.out, next.In())
	return next
}

func (s *sourceAdapter) start() { s.r.wg.Go(s.read) }

func (s *sourceAdapter) read() {
	defer close(s.out)
	for s.r.ctx.Err() == nil {
		v, err := s.src.read(s.r.ctx)
		if errors.Is(err, io.EOF) {
			return
		}
		s.c.in.Add(1)
		if err != nil {
			s.r.handle(s.c, "source", v, err)
			if _, ok := isReject(err); ok {
				continue
			}
			return
		}
		if !s.r.send(s.out, v) {
			return
		}
		s.c.out.Add(1)
	}
}

// adapter runs one Stage on a go-streams operator (flow.Map for per-item
// stages, flow.Batch for Batch) between two bounded channels of its own:
//
//	in → feed → op.In() ⇒ go-streams ⇒ op.Out() → drain → out
type adapter struct {
	r      *run
	st     *Stage
	c      *counter
	in     chan any      // the inlet; closed by the upstream forwarder
	out    chan any      // the outlet; closed by drain
	window chan struct{} // Ordered per-item stages: bounds items inside the stage
	op     streams.Flow  // built by start
}

var _ streams.Flow = (*adapter)(nil)

func newAdapter(r *run, st *Stage, c *counter, buf int) *adapter {
	a := &adapter{r: r, st: st, c: c, in: make(chan any, buf), out: make(chan any)}
	if st.ordered && st.size == 0 {
		a.window = make(chan struct{}, 2*st.parallelism)
	}
	return a
}

// In returns the stage's inlet.
func (a *adapter) In() chan<- any { return a.in }

// Out returns the stage's outlet.
func (a *adapter) Out() <-chan any { return a.out }

// Via streams the stage's output to next, and returns next.
func (a *adapter) Via(next streams.Flow) streams.Flow {
	a.r.forward(a.out, next.In())
	return next
}

// To streams the stage's output to sink and blocks until the sink has
// completed.
func (a *adapter) To(sink streams.Sink) {
	a.r.forward(a.out, sink.In())
	sink.AwaitCompletion()
}

// start builds the go-streams operator, which starts its goroutines, and
// starts feed and drain.
func (a *adapter) start() {
	if a.st.size > 0 {
		interval := a.st.interval
		if interval <= 0 {
			// flow.Batch needs a positive ticker period; ~292 years
			// means "never" here.
			interval = time.Duration(math.MaxInt64)
		}
		a.op = flow.NewBatch[item](a.st.size, interval)
	} else {
		ctx, apply := a.r.ctx, a.st.apply
		a.op = flow.NewMap(func(it item) result {
			if ctx.Err() != nil {
				// Hard stop: skip the work, the result is discarded.
				return result{seq: it.seq}
			}
			res := apply(ctx, it.v)
			res.seq = it.seq
			return res
		}, a.st.parallelism)
	}
	a.r.wg.Go(a.feed)
	a.r.wg.Go(a.drain)
}

// feed moves items from the inlet into the operator, numbering them and, for
// an Ordered stage, taking a window slot for each. It closes the operator's
// inlet when its own inlet is closed.
func (a *adapter) feed() {
	opIn := a.op.In()
	defer close(opIn)
	var seq uint64
	for x := range a.in {
		if a.r.ctx.Err() != nil {
			continue // keep draining so the upstream is never blocked
		}
		a.c.in.Add(1)
		if a.st.accept != nil {
			if err := a.st.accept(x); err != nil {
				a.r.fail(fmt.Errorf("pipeline: stage %q: %w", a.st.name, err))
				continue
			}
		}
		if a.window != nil {
			select {
			case a.window <- struct{}{}:
			case <-a.r.ctx.Done():
				continue
			}
		}
		if a.r.send(opIn, item{seq: seq, v: x}) {
			seq++
		}
	}
}

// drain receives everything the operator emits until it closes its outlet,
// restores input order for an Ordered stage, and passes outputs on,
// rejections to the rejects sink and errors to fail. After a hard stop it
// discards what it receives.
func (a *adapter) drain() {
	defer close(a.out)
	var next uint64
	var pending map[uint64]result
	if a.window != nil {
		pending = make(map[uint64]result, cap(a.window))
	}
	for x := range a.op.Out() {
		if a.r.ctx.Err() != nil {
			continue
		}
		if a.st.size > 0 {
			a.emit(a.st.collect(x.([]item)))
			continue
		}
		res := x.(result)
		if pending == nil {
			a.deliver(res)
			continue
		}
		pending[res.seq] = res
		for {
			res, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			<-a.window // never blocks: feed took this slot for the item
			a.deliver(res)
		}
	}
}

// deliver passes on the outputs of one per-item result, or handles its error.
func (a *adapter) deliver(res result) {
	if res.err != nil {
		a.r.handle(a.c, "stage", res.in, res.err)
		return
	}
	switch res.kind {
	case one:
		a.emit(res.one)
	case many:
		for _, v := range res.many {
			if !a.emit(v) {
				return
			}
		}
	}
}

func (a *adapter) emit(v any) bool {
	if !a.r.send(a.out, v) {
		return false
	}
	a.c.out.Add(1)
	return true
}

// sinkAdapter writes every item it receives to each sink in turn, from one
// goroutine, and flushes and closes them at the end.
type sinkAdapter struct {
	r     *run
	sinks []Sink
	cs    []*counter
	in    chan any
	done  chan struct{} // closed when consume returns

	// completed is set by consume after a soft stop in which every sink
	// flushed and closed without error. Read it after done is closed.
	completed bool
}

var _ streams.Sink = (*sinkAdapter)(nil)

// In returns the sinks' shared inlet.
func (s *sinkAdapter) In() chan<- any { return s.in }

// AwaitCompletion blocks until every item has been written, or discarded
// after a hard stop, and the sinks are flushed and closed.
func (s *sinkAdapter) AwaitCompletion() { <-s.done }

func (s *sinkAdapter) start() { s.r.wg.Go(s.consume) }

func (s *sinkAdapter) consume() {
	defer close(s.done)
	ctx := s.r.ctx
	for x := range s.in {
		if ctx.Err() != nil {
			continue // discard, so the upstream is never blocked
		}
		for i, k := range s.sinks {
			c := s.cs[i]
			c.in.Add(1)
			if err := k.write(ctx, x); err != nil {
				s.r.handle(c, "sink", x, err)
				if ctx.Err() != nil {
					break // a fatal error: the other sinks need not see x
				}
				continue
			}
			c.out.Add(1)
		}
	}
	if ctx.Err() != nil {
		s.closeAll()
		return
	}
	for _, k := range s.sinks {
		if k.flush == nil {
			continue
		}
		if err := k.flush(ctx); err != nil {
			s.r.fail(fmt.Errorf("pipeline: sink %q: flush: %w", k.name, err))
			s.closeAll()
			return
		}
	}
	if err := s.closeAll(); err != nil {
		s.r.fail(err)
		return
	}
	s.completed = true
}

// closeAll closes every sink that is an io.Closer and returns the first
// error.
func (s *sinkAdapter) closeAll() error {
	var first error
	for _, k := range s.sinks {
		if k.close == nil {
			continue
		}
		if err := k.close(); err != nil && first == nil {
			first = fmt.Errorf("pipeline: sink %q: close: %w", k.name, err)
		}
	}
	return first
}
