package distributed

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// pin tracks whether this instance holds a role: it keeps pulling the
// role's pinned consumer, and holds the role while the server delivers it
// ticks (the pin moves to another puller when this one stops pulling for
// the consumer's PinnedTTL).
type pin struct {
	cons jetstream.Consumer
	ttl  time.Duration
	// may, if set, reports whether to pull the role's ticks now: a worker
	// that holds its share of the roles stops competing for more, and one
	// that holds more than its share stops pulling one of them, which the
	// server then pins to another after the TTL (Worker.mayPull).
	may func() bool
	// remake, if set, makes the role's consumer anew (and the ticks
	// stream if it is gone), one attempt: run calls it when the consumer
	// no longer exists (distributed/DESIGN.md, "A server restarted").
	remake func(ctx context.Context) (jetstream.Consumer, error)
	// pulls, if set, counts the fetches run issues.
	pulls *atomic.Int64

	mu   sync.Mutex
	last time.Time     // when the last tick arrived
	gain chan struct{} // closed when the role is next gained
}

func newPin(cons jetstream.Consumer, ttl time.Duration) *pin {
	return &pin{cons: cons, ttl: ttl, gain: make(chan struct{})}
}

// run pulls the role's ticks until ctx ends. A fetch that fails (the
// server unreachable, the consumer gone, another instance pinned) is
// followed by a pause, ttl/8 doubling to 2·ttl and back to ttl/8 once a
// tick arrives, so that no failure makes it spin; a consumer that no
// longer exists (a server restarted without its memory streams: every
// fetch is answered at once with "no responders") is made anew (remake).
func (p *pin) run(ctx context.Context) {
	wait := pause{lo: p.ttl / 8, hi: 2 * p.ttl}
	for ctx.Err() == nil {
		if p.may != nil && !p.may() {
			if !sleep(ctx, p.ttl/4) {
				return
			}
			continue
		}
		got, err := p.fetch(ctx)
		if got {
			wait.reset()
		}
		switch {
		case err == nil, ctx.Err() != nil:
			continue
		case errors.Is(err, context.DeadlineExceeded):
			continue // no tick within the fetch's wait: another instance holds the role
		case errors.Is(err, jetstream.ErrPinIDMismatch):
			// Another instance holds the pin (the server ended ours): the
			// client forgot our pin id, so the next fetch waits until the
			// server unpins the role.
			p.drop()
		case consumerGone(err):
			p.drop()
			if !wait.wait(ctx) {
				return
			}
			if p.remake != nil {
				if cons, err := p.remake(ctx); err == nil {
					p.cons = cons
				}
			}
			continue
		}
		if !wait.wait(ctx) {
			return
		}
	}
}

// fetch pulls one tick, waiting at most ttl/2, and reports whether one
// arrived and the fetch's error (nil when the wait ended without a tick
// and without an error).
func (p *pin) fetch(ctx context.Context) (bool, error) {
	// Bounded by ctx too, so that a Worker stops at once (not after the
	// fetch's wait of ttl/2) when ctx ends.
	fctx, cancel := context.WithTimeout(ctx, p.ttl/2)
	defer cancel()
	if p.pulls != nil {
		p.pulls.Add(1)
	}
	batch, err := p.cons.Fetch(1, jetstream.FetchContext(fctx), jetstream.FetchPriorityGroup(rolesGroup))
	if err != nil {
		return false, err
	}
	got := false
	for range batch.Messages() {
		got = true
		p.mu.Lock()
		if !p.heldLocked() {
			close(p.gain)
			p.gain = make(chan struct{})
		}
		p.last = time.Now()
		p.mu.Unlock()
	}
	return got, batch.Error()
}

// consumerGone reports whether err says that a pull consumer, or its
// stream, does not exist (a pull request to a consumer that is gone has
// no responder).
func consumerGone(err error) bool {
	return errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrConsumerNotFound) ||
		errors.Is(err, jetstream.ErrConsumerDeleted) || errors.Is(err, jetstream.ErrStreamNotFound)
}

// pause paces a retry loop: waits from lo doubling to hi, from lo again
// after reset. The zero value waits nothing; set lo and hi.
type pause struct{ lo, hi, cur time.Duration }

// wait sleeps the next pause, and reports whether ctx is still live.
func (b *pause) wait(ctx context.Context) bool {
	if b.cur == 0 {
		b.cur = b.lo
	}
	d := b.cur
	b.cur = min(2*b.cur, b.hi)
	return sleep(ctx, d)
}

func (b *pause) reset() { b.cur = 0 }

func (p *pin) heldLocked() bool { return !p.last.IsZero() && time.Since(p.last) < p.ttl }

// held reports whether the role is held now.
func (p *pin) held() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.heldLocked()
}

// drop forgets the role until the next tick arrives.
func (p *pin) drop() {
	p.mu.Lock()
	p.last = time.Time{}
	p.mu.Unlock()
}

// wait blocks until the role is held or ctx ends, and reports whether it
// is held.
func (p *pin) wait(ctx context.Context) bool {
	for {
		p.mu.Lock()
		if p.heldLocked() {
			p.mu.Unlock()
			return true
		}
		ch := p.gain
		p.mu.Unlock()
		select {
		case <-ctx.Done():
			return false
		case <-ch:
		case <-time.After(p.ttl / 4):
		}
	}
}

// sleep waits d or until ctx ends, and reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// errLost reports that a role's compare-and-set failed: another instance
// holds it.
var errLost = errors.New("distributed: role lost to another instance")
