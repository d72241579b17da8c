package pipeline

import (
	"sync"
	"sync/atomic"
)

// Spare lends goroutines that have finished their own work to the parts
// of another goroutine's work. Its Split has Split's contract: it cuts
// [0, n) into up to Pieces contiguous pieces of near-equal size, the same
// way for the same n, runs them on the caller's goroutine, and lets every
// goroutine that is inside Lend at the time take pieces too. It starts no
// goroutine: with no one lending, the caller runs every piece itself.
//
// It is for two pieces of work that run beside each other on two cores,
// one longer than the other (stages.Learner: a model's step beside the
// batch's predictions): the longer one splits its parts through Split, and
// the shorter one calls Lend when it is done. While both run, each keeps
// its core and no part waits for a goroutine that has no core (Split's
// second goroutine would take the predictions' core for a while, and the
// step would wait for it at the end of every part); once the shorter is
// done, its core takes pieces of the longer one's parts. Which goroutine
// runs a piece varies from call to call, so body's result must not depend
// on it (as with Share).
//
// A Spare's Split may be called from one goroutine at a time, and not
// from within its own pieces; Lend from any number. Lend must not be
// called where it would wait for a Split call that only its own goroutine
// could make later (model.Online lends only to a step that has started).
type Spare struct {
	// Pieces is the most pieces a Split cuts. If zero, it defaults to 8.
	Pieces int

	mu   sync.Mutex
	job  *spareJob     // the Split call in progress, nil between calls
	wake chan struct{} // a Split call has started; capacity 1
	once sync.Once
}

// spareJob is one Split call's pieces.
type spareJob struct {
	n, pieces int
	body      func(lo, hi int)
	next      atomic.Int64   // the next piece to take
	lent      sync.WaitGroup // lenders inside run
}

// run takes pieces until none is left.
func (j *spareJob) run() {
	for {
		p := int(j.next.Add(1) - 1)
		if p >= j.pieces {
			return
		}
		j.body(p*j.n/j.pieces, (p+1)*j.n/j.pieces)
	}
}

func (s *Spare) init() { s.once.Do(func() { s.wake = make(chan struct{}, 1) }) }

// Split runs body over [0, n) in pieces (see Spare) and returns once every
// piece has returned. body must not panic.
func (s *Spare) Split(n int, body func(lo, hi int)) {
	pieces := s.Pieces
	if pieces <= 0 {
		pieces = 8
	}
	pieces = min(pieces, n)
	if pieces <= 1 {
		if n > 0 {
			body(0, n)
		}
		return
	}
	s.init()
	j := &spareJob{n: n, pieces: pieces, body: body}
	s.mu.Lock()
	s.job = j
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default: // a wake-up is already waiting
	}
	j.run()
	s.mu.Lock()
	s.job = nil // no lender joins from here on
	s.mu.Unlock()
	j.lent.Wait() // the pieces lenders took
}

// Lend takes pieces of the Split calls made on other goroutines until done
// is closed, and returns then (after the piece it is running, if any).
func (s *Spare) Lend(done <-chan struct{}) {
	s.init()
	for {
		s.help()
		select {
		case <-done:
			return
		case <-s.wake:
		}
	}
}

// help takes pieces of the Split call in progress, if any.
func (s *Spare) help() {
	s.mu.Lock()
	j := s.job
	if j != nil {
		j.lent.Add(1)
	}
	s.mu.Unlock()
	if j != nil {
		j.run()
		j.lent.Done()
	}
}
