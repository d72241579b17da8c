package model

import "sync"

// pendingStep is the numerical rest of an online step that
// PartialFitDeferred returned: run once, by whichever caller comes first,
// the others waiting for it to end.
type pendingStep struct {
	once sync.Once
	run  func()
}

// do runs the step unless it has run or is running, and returns once it
// has run.
func (p *pendingStep) do() { p.once.Do(p.run) }

// settle makes sure the last PartialFitDeferred's step has run: the
// methods that read or write U, V or the statistics call it first.
func (o *Online) settle() {
	if p := o.pending; p != nil {
		p.do()
	}
}
