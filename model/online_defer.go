package model

import (
	"sync"
	"sync/atomic"
)

// pendingStep is the numerical rest of an online step that
// PartialFitDeferred returned: run once, by whichever caller comes first,
// the others waiting for it to end.
type pendingStep struct {
	once    sync.Once
	run     func()
	started atomic.Bool   // run has begun
	done    chan struct{} // closed once run has returned
}

// do runs the step unless it has run or is running, and returns once it
// has run.
func (p *pendingStep) do() {
	p.once.Do(func() {
		p.started.Store(true)
		p.run()
		close(p.done)
	})
}

// finished reports whether the step has returned.
func (p *pendingStep) finished() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// settle makes sure the last PartialFitDeferred's step has run: the
// methods that read or write U, V or the statistics call it first. While
// another goroutine runs the step, the caller lends itself to the step's
// parts (Lend) until it returns; a step no one has started runs on the
// caller's goroutine.
func (o *Online) settle() {
	if p := o.pending; p != nil {
		if o.Lend != nil && p.started.Load() {
			o.Lend(p.done)
		}
		p.do()
	}
}

// Settle waits for the step the last PartialFitDeferred returned, running
// it if no one has started it (lending the caller's goroutine to its parts
// with Lend while another runs it). Every method that reads or writes U,
// V or the statistics settles first; Settle is for a caller that only
// needs the step done, as a stream does before it reads its clock at the
// end.
func (o *Online) Settle() { o.settle() }
