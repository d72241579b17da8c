package pipeline

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
)

// defaultBuffer is the capacity of the channels between steps when
// Pipeline.Buffer is zero: enough to absorb jitter between neighbouring
// stages, small enough that a stalled sink stops the source quickly.
const defaultBuffer = 16

// Pipeline is a linear streaming pipeline: one Source, any number of Stages
// applied in order, and any number of Sinks, each of which receives every
// item that leaves the last stage. New builds it and starts nothing; Run
// runs it once.
//
// The exported fields are optional and must not be changed while Run runs.
type Pipeline struct {
	// Buffer is the capacity of each channel between two steps. It bounds,
	// with the stages' parallelism, how far the source can read ahead of a
	// slow sink. If zero, it defaults to 16; it must not be negative.
	Buffer int

	// Rejects receives a Rejection for every item that a source, stage or
	// sink rejected (see Reject). Its item type must accept Rejection. Writes
	// to it are serialized by the pipeline, and Flush and Close follow the
	// same rules as for the other sinks. If zero (the default), rejected
	// items are only counted.
	Rejects Sink

	src    Source
	stages []Stage
	sinks  []Sink

	counters []*counter // source, stages..., sinks...
	started  atomic.Bool
}

// New returns a pipeline that reads src, applies stages in order and writes
// what leaves the last stage to every sink in sinks. It starts no goroutine.
// Types and names are checked by Run.
func New(src Source, stages []Stage, sinks ...Sink) *Pipeline {
	p := &Pipeline{
		src:    src,
		stages: append([]Stage(nil), stages...),
		sinks:  append([]Sink(nil), sinks...),
	}
	p.counters = append(p.counters, &counter{name: src.name})
	for _, s := range p.stages {
		p.counters = append(p.counters, &counter{name: s.name})
	}
	for _, s := range p.sinks {
		p.counters = append(p.counters, &counter{name: s.name})
	}
	return p
}

// Stats returns a snapshot of the counters of the source, of each stage in
// order and of each sink in order. It is safe to call at any time, from any
// goroutine, including while Run runs.
func (p *Pipeline) Stats() []StageStats {
	st := make([]StageStats, len(p.counters))
	for i, c := range p.counters {
		st[i] = c.snapshot()
	}
	return st
}

// Rejected returns the number of items rejected so far by the source, the
// stages and the sinks. It is safe to call while Run runs.
func (p *Pipeline) Rejected() int64 {
	var n int64
	for _, c := range p.counters {
		n += c.rejected.Load()
	}
	return n
}

// check verifies names and types before anything starts.
func (p *Pipeline) check() error {
	if p.src.read == nil {
		return errors.New("pipeline: zero Source")
	}
	if p.Buffer < 0 {
		return fmt.Errorf("pipeline: negative Buffer: %d", p.Buffer)
	}
	seen := map[string]bool{p.src.name: true}
	unique := func(name string) error {
		if name == "" {
			return errors.New("pipeline: zero Stage or Sink")
		}
		if seen[name] {
			return fmt.Errorf("pipeline: duplicate name %q", name)
		}
		seen[name] = true
		return nil
	}
	prev, prevName := p.src.typ, p.src.name
	for _, s := range p.stages {
		if err := unique(s.name); err != nil {
			return err
		}
		if !compatible(prev, s.in) {
			return fmt.Errorf("pipeline: stage %q: input from %q: %w", s.name, prevName, &TypeError{Got: prev, Want: s.in})
		}
		prev, prevName = s.out, s.name
	}
	for _, s := range p.sinks {
		if err := unique(s.name); err != nil {
			return err
		}
		if !compatible(prev, s.typ) {
			return fmt.Errorf("pipeline: sink %q: input from %q: %w", s.name, prevName, &TypeError{Got: prev, Want: s.typ})
		}
	}
	if r := p.Rejects; r.write != nil {
		if err := unique(r.name); err != nil {
			return err
		}
		if want := reflect.TypeFor[Rejection](); !compatible(want, r.typ) {
			return fmt.Errorf("pipeline: sink %q: rejects: %w", r.name, &TypeError{Got: want, Want: r.typ})
		}
	}
	return nil
}

// Run runs the pipeline until the source is exhausted, ctx is cancelled, or
// a fatal error occurs, and returns only after every goroutine it started
// has exited. Run may be called once; later calls return an error.
//
// It returns nil after a soft stop: the source returned io.EOF, every item
// went through, and the sinks flushed and closed without error. It returns
// ctx.Err() after a hard stop caused by ctx. Otherwise it returns the first
// fatal error, wrapped once with where it happened:
//
//	pipeline: source "name": …
//	pipeline: stage "name": …
//	pipeline: sink "name": …
//
// A type mismatch between neighbouring steps is reported before anything
// starts (no item is read), as an error wrapping a *TypeError.
func (p *Pipeline) Run(ctx context.Context) error {
	if !p.started.CompareAndSwap(false, true) {
		return errors.New("pipeline: Run called twice")
	}
	if err := p.check(); err != nil {
		// Nothing started, but Run still owns the sinks: close them, as
		// every other path does.
		for _, k := range append(p.sinks, p.Rejects) {
			if k.close != nil {
				k.close()
			}
		}
		return err
	}
	buf := p.Buffer
	if buf == 0 {
		buf = defaultBuffer
	}

	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r := &run{ctx: rctx, cancel: cancel}
	if p.Rejects.write != nil {
		r.rejects = &p.Rejects
	}

	// Build every adapter before starting any of them; constructors start
	// nothing, so this is where the go-streams operators get built too.
	src := &sourceAdapter{r: r, src: &p.src, c: p.counters[0], out: make(chan any, buf)}
	ads := make([]*adapter, len(p.stages))
	for i := range p.stages {
		ads[i] = newAdapter(r, &p.stages[i], p.counters[1+i], buf)
	}
	snk := &sinkAdapter{
		r:     r,
		sinks: p.sinks,
		cs:    p.counters[1+len(p.stages):],
		in:    make(chan any, buf),
		done:  make(chan struct{}),
	}
	src.start()
	for _, a := range ads {
		a.start()
	}
	snk.start()

	// Wire source → stages → sink with go-streams' own Via/To. To blocks
	// until the sink goroutine has finished.
	if len(ads) == 0 {
		r.forward(src.Out(), snk.In())
		snk.AwaitCompletion()
	} else {
		f := src.Via(ads[0])
		for _, a := range ads[1:] {
			f = f.Via(a)
		}
		f.To(snk)
	}
	r.wg.Wait()

	if snk.completed {
		// Soft stop: everything went through. A cancellation racing with the
		// end does not undo that.
		return r.finishRejects(true)
	}
	err := context.Cause(rctx)
	if ctx.Err() != nil && err == context.Cause(ctx) {
		err = ctx.Err()
	}
	r.finishRejects(false)
	return err
}

// run is the state shared by the goroutines of one Run. It lives exactly as
// long as one call to Run, so holding that call's ctx here is the
// call-scoped case that "no ctx in structs" allows (Go blog, "Contexts and
// structs", 2021); it is never stored beyond Run.
type run struct {
	ctx    context.Context // cancelled on a fatal error or when the caller's ctx is
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup // every goroutine the pipeline starts itself

	rejMu   sync.Mutex // serializes writes to rejects
	rejects *Sink      // nil if rejects are only counted
}

// fail stops the run with err. The first cause wins: later calls, including
// those that only report the consequences of the first, change nothing.
func (r *run) fail(err error) { r.cancel(err) }

// send delivers v on ch unless the run stops first. It reports whether v
// was delivered.
func (r *run) send(ch chan<- any, v any) bool {
	select {
	case ch <- v:
		return true
	case <-r.ctx.Done():
		return false
	}
}

// forward starts a goroutine that copies from to to, and closes to when
// from is closed. After a hard stop it keeps receiving from (discarding) so
// that the goroutine sending on from is never left blocked.
func (r *run) forward(from <-chan any, to chan<- any) {
	r.wg.Go(func() {
		defer close(to)
		for v := range from {
			if r.ctx.Err() == nil {
				r.send(to, v)
			}
		}
	})
}

// handle deals with err returned for item x by the step counted by c: a
// rejection is counted and written to the rejects sink, anything else fails
// the run. kind is "source", "stage" or "sink".
func (r *run) handle(c *counter, kind string, x any, err error) {
	if reason, ok := isReject(err); ok {
		c.rejected.Add(1)
		if err := r.reject(Rejection{Stage: c.name, Item: x, Err: reason}); err != nil {
			r.fail(fmt.Errorf("pipeline: sink %q: %w", r.rejects.name, err))
		}
		return
	}
	r.fail(fmt.Errorf("pipeline: %s %q: %w", kind, c.name, err))
}

// reject writes rj to the rejects sink, if any. It may be called from any
// of the pipeline's goroutines.
func (r *run) reject(rj Rejection) error {
	if r.rejects == nil {
		return nil
	}
	r.rejMu.Lock()
	defer r.rejMu.Unlock()
	return r.rejects.write(r.ctx, rj)
}

// finishRejects flushes (after a soft stop) and closes the rejects sink. It
// runs after every goroutine has exited, so it needs no lock.
func (r *run) finishRejects(flush bool) error {
	s := r.rejects
	if s == nil {
		return nil
	}
	var err error
	if flush && s.flush != nil {
		if ferr := s.flush(r.ctx); ferr != nil {
			err = fmt.Errorf("pipeline: sink %q: flush: %w", s.name, ferr)
		}
	}
	if s.close != nil {
		if cerr := s.close(); cerr != nil && err == nil {
			err = fmt.Errorf("pipeline: sink %q: close: %w", s.name, cerr)
		}
	}
	if !flush {
		return nil
	}
	return err
}
