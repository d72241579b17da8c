package distributed

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Worker is one instance of the chain's owners on a namespace (made by
// NewChainWorker). It competes for every role (the owner of each of the P
// partitions) and runs the Learner of each partition it holds (chain.go).
//
// A Worker's methods are safe for concurrent use.
type Worker struct {
	// Log, if set before Run, receives one line for each role the worker
	// takes ("<role> taken") and stops holding ("<role> released": given
	// up to spread the roles, or lost), one for each failure of a role
	// that it retries (a lost node, a leader election): the role and the
	// error, one when a chain owner starts on its partition (the
	// batches its snapshot restored), and one when a role's consumer,
	// gone with a server's restart, is made anew (and one when the first
	// attempt fails). It is called from the roles' goroutines and must be
	// safe for concurrent use.
	Log func(line string)
	// SnapshotEvery, if set before Run, is the number of batches between
	// a chain owner's snapshots of its Learner (chain_snapshot.go): a
	// takeover replays at most about that many. If zero, 100; negative
	// disables them (a takeover replays the partition from its first
	// batch).
	SnapshotEvery int
	// Expect and Index, if Expect is set before Run, say that this Worker
	// is Index (0 ≤ Index < Expect) of Expect Workers of the namespace
	// started together (the --workers of a driver): for two TTLs after Run
	// starts, mayPull pulls only the roles owner-<p> with p ≡ Index (mod
	// Expect), so that the roles spread at once instead of going to the
	// first Worker and moving later (each move a replay of the partition).
	// After that it pulls by the live Workers' count only, so a role of one
	// that never came, or stopped, is taken by the others.
	Expect, Index int

	cfg Config
	nc  *nats.Conn
	js  jetstream.JetStream
	st  *store

	mu    sync.Mutex
	stats Stats
	held  map[string]bool
	// over is when the worker started holding more than its share of the
	// roles (zero when it does not): mayPull releases one after 2 TTLs.
	over  time.Time
	start time.Time // when Run started (Expect)
	beat  []byte    // the payload of its heartbeats: 8 random bytes naming this instance (WorkerWatch)

	// newLearner builds each owned partition's Learner (chain.go).
	newLearner NewLearner

	// pulls counts the fetches of every role's pin (pin.pulls).
	pulls atomic.Int64
}

// Stats counts a Worker's work since it started.
type Stats struct {
	// Held lists the roles held now: "owner-<p>".
	Held []string
	// Takeovers counts the roles this instance gained (and rebuilt by
	// replaying the partition's batches).
	Takeovers int
	// Rounds counts the batch shares its owners learned and answered
	// (replays included), Samples the predictions in those answers.
	Rounds, Samples int
	// Skipped counts the batch messages its owners could not read and
	// skipped (errBadMessage).
	Skipped int
}

// newWorker returns a worker for cfg on nc, without its learner
// (NewChainWorker sets it). It creates the ticks stream, the model bucket
// and the object store of cfg's namespace if they do not exist, and
// stores or checks the namespace's settings.
func newWorker(ctx context.Context, nc *nats.Conn, cfg Config) (*Worker, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("distributed: %w", err)
	}
	st, err := setup(ctx, js, cfg)
	if err != nil {
		return nil, err
	}
	beat := binary.BigEndian.AppendUint64(nil, rand.Uint64())
	return &Worker{cfg: cfg, nc: nc, js: js, st: st, held: map[string]bool{}, beat: beat}, nil
}

// Stats returns a copy of the worker's counters.
func (w *Worker) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.stats
	s.Held = nil
	for r, ok := range w.held {
		if ok {
			s.Held = append(s.Held, r)
		}
	}
	return s
}

// Run works until ctx ends or a role meets corrupt data, and returns after
// every goroutine it started has ended: nil when ctx ended, else the error
// that stopped it (never nil: a worker that stops on its own says why).
func (w *Worker) Run(parent context.Context) error {
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	ttl := w.cfg.pinnedTTL()
	w.mu.Lock()
	w.start = time.Now()
	w.mu.Unlock()
	type role struct {
		name string
		work func(ctx context.Context, p *pin) error
	}
	live, err := WatchWorkers(w.nc, w.cfg)
	if err != nil {
		return err
	}
	defer live.Stop()
	var roles []role
	for i := range w.cfg.partitions() {
		own := func(ctx context.Context, p *pin) error { return w.ownChain(ctx, p, i) }
		roles = append(roles, role{fmt.Sprintf("owner-%d", i), own})
	}
	var wg sync.WaitGroup
	for _, r := range roles {
		cons, err := w.st.roleConsumer(ctx, w.st.n.ns+"-"+r.name, ttl)
		if err != nil {
			cancel(err)
			break
		}
		p := newPin(cons, ttl)
		p.pulls = &w.pulls
		p.may = func() bool { return w.mayPull(r.name, live.Live) }
		p.remake = w.remake(r.name, ttl)
		wg.Go(func() { p.run(ctx) })
		wg.Go(func() {
			wait := pause{lo: ttl / 4, hi: 4 * ttl}
			for ctx.Err() == nil {
				if !p.wait(ctx) {
					return
				}
				w.setHeld(r.name, true)
				if w.Log != nil {
					w.Log(fmt.Sprintf("namespace %q: %s taken", w.cfg.namespace(), r.name))
				}
				err := w.hold(ctx, p, r.work)
				w.setHeld(r.name, false)
				if w.Log != nil && ctx.Err() == nil {
					w.Log(fmt.Sprintf("namespace %q: %s released", w.cfg.namespace(), r.name))
				}
				switch {
				case err == nil, errors.Is(err, errLost), ctx.Err() != nil:
					wait.reset()
				case errors.Is(err, errCorrupt):
					cancel(err)
					return
				default:
					// A failing server (a lost node, a leader election, a
					// restart): keep the role if the pin stays, and retry
					// after a pause, ttl/4 doubling to 4·ttl while it fails.
					if w.Log != nil {
						w.Log(fmt.Sprintf("namespace %q: %s: %v; retrying", w.cfg.namespace(), r.name, err))
					}
					wait.wait(ctx)
				}
			}
		})
	}
	// Ticks start once the role consumers exist (they deliver only ticks
	// published after their creation), so the first one assigns the free
	// roles at once.
	wg.Go(func() { w.tick(ctx, ttl/4) })
	wg.Wait()
	// Only the caller's end is a clean stop. A cause of our own is returned
	// even when it wraps a deadline (a role consumer not made within its
	// attempt): returning nil for it let a `worker` process exit silently.
	if parent.Err() != nil {
		return nil
	}
	if err := context.Cause(ctx); err != nil {
		return fmt.Errorf("distributed: namespace %q: worker stopped: %w", w.cfg.namespace(), err)
	}
	return nil
}

// remake returns the pin.remake of role: it makes the role's consumer
// anew and logs it, and logs the first of the attempts that fail in a row.
// It is called from the role's pin.run only.
func (w *Worker) remake(role string, ttl time.Duration) func(context.Context) (jetstream.Consumer, error) {
	failing := false
	return func(ctx context.Context) (jetstream.Consumer, error) {
		cons, err := w.st.remakeRoleConsumer(ctx, w.cfg.ticksStream(), w.st.n.ns+"-"+role, ttl)
		switch {
		case err == nil:
			failing = false
			w.logf("namespace %q: %s: its consumer was gone (a server restarted?) and is made anew", w.cfg.namespace(), role)
		case !failing:
			failing = true
			w.logf("namespace %q: %s: its consumer is gone and was not made anew: %v; retrying", w.cfg.namespace(), role, err)
		}
		return cons, err
	}
}

// errCorrupt marks a message that cannot be decoded or applied: a bug or
// a foreign writer, which retrying cannot fix.
var errCorrupt = errors.New("distributed: corrupt message")

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errCorrupt}, args...)...)
}

// errBadMessage marks a batch message an owner cannot read (headers that
// are not the chain's, chunks that do not fit, a share that does not
// decode): it is logged, counted (Stats.Skipped) and skipped, so that one
// message, a foreign writer's or damaged, cannot stop a partition's owner
// and every owner that takes it after it.
var errBadMessage = errors.New("distributed: unreadable batch message")

func badMessage(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errBadMessage}, args...)...)
}

// hold runs work on a role while its pin p is held: work's context ends
// when ctx ends or p is lost (a role given up by mayPull, or taken by
// another), so that work ends even while it waits for something else (an
// owner waiting for the learner settings). It returns errLost when p was
// lost and ctx is live, else work's error.
func (w *Worker) hold(ctx context.Context, p *pin, work func(context.Context, *pin) error) error {
	hctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lost := make(chan bool, 1)
	go func() {
		for sleep(hctx, p.ttl/4) {
			if !p.held() {
				cancel()
				lost <- true
				return
			}
		}
		lost <- false
	}()
	err := work(hctx, p)
	cancel()
	if <-lost && ctx.Err() == nil {
		return errLost
	}
	return err
}

// mayPull reports whether the worker should pull role's ticks now, so
// that the P partitions spread over the live workers (counted by their
// heartbeats, live): with n live, a worker's share is ⌈P/n⌉. It pulls a
// role it holds, unless it has held more than its share for two TTLs and
// role is the last (by name) of those it holds: it then stops pulling it,
// and the server pins it to a worker under its share after the TTL (the
// new owner replays the partition's batches). It pulls a role it does not
// hold only while under its share. Roles are not spread at once: the
// first worker of a namespace takes them all, and gives them up one at a
// time as others come, unless they were started together (Expect).
func (w *Worker) mayPull(role string, live func() int) bool {
	P := w.cfg.partitions()
	n := max(live(), 1)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.Expect > 1 && time.Since(w.start) < 2*w.cfg.pinnedTTL() {
		var p int
		if _, err := fmt.Sscanf(role, "owner-%d", &p); err == nil {
			return p%w.Expect == w.Index
		}
	}
	share := (P + n - 1) / n
	h, lastHeld := 0, ""
	for r, ok := range w.held {
		if ok {
			h++
			lastHeld = max(lastHeld, r)
		}
	}
	if !w.held[role] {
		return h < share
	}
	if h <= share {
		w.over = time.Time{}
		return true
	}
	if w.over.IsZero() {
		w.over = time.Now()
	}
	return role != lastHeld || time.Since(w.over) < 2*w.cfg.pinnedTTL()
}

func (w *Worker) setHeld(role string, ok bool) {
	w.mu.Lock()
	w.held[role] = ok
	if ok {
		w.stats.Takeovers++
	}
	w.mu.Unlock()
}

// tick publishes a heartbeat now and every d: the roles' pinned consumers deliver
// them to their holders, and an unpinned role goes to the next puller that
// receives one.
func (w *Worker) tick(ctx context.Context, d time.Duration) {
	// The first at once: a free role is taken without waiting d. A failed
	// tick (a node being lost) is harmless: the next one follows.
	for w.nc.Publish(w.st.n.tickSubject(), w.beat); sleep(ctx, d); {
		w.nc.Publish(w.st.n.tickSubject(), w.beat)
	}
}

// maxResets bounds the attempts of an ordered consumer to recreate itself
// after a server fault (by default it retries forever, deaf to the
// context): past them its fetch fails, and the owner makes it anew
// (chain_resume.go).
const maxResets = 3
