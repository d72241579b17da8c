package distributed

import (
	"context"
	"errors"
	"sync"
	"time"

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

	mu   sync.Mutex
	last time.Time     // when the last tick arrived
	gain chan struct{} // closed when the role is next gained
}

func newPin(cons jetstream.Consumer, ttl time.Duration) *pin {
	return &pin{cons: cons, ttl: ttl, gain: make(chan struct{})}
}

// run pulls the role's ticks until ctx ends.
func (p *pin) run(ctx context.Context) {
	for ctx.Err() == nil {
		if p.may != nil && !p.may() {
			if !sleep(ctx, p.ttl/4) {
				return
			}
			continue
		}
		// Bounded by ctx too, so that a Worker stops at once (not after
		// the fetch's wait of ttl/2) when ctx ends.
		fctx, cancel := context.WithTimeout(ctx, p.ttl/2)
		batch, err := p.cons.Fetch(1, jetstream.FetchContext(fctx), jetstream.FetchPriorityGroup(rolesGroup))
		if err != nil {
			cancel()
			if !sleep(ctx, p.ttl/8) {
				return
			}
			continue
		}
		for range batch.Messages() {
			p.mu.Lock()
			if !p.heldLocked() {
				close(p.gain)
				p.gain = make(chan struct{})
			}
			p.last = time.Now()
			p.mu.Unlock()
		}
		cancel()
		if errors.Is(batch.Error(), jetstream.ErrPinIDMismatch) {
			p.drop()
		}
	}
}

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
