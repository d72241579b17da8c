package distributed

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Worker is one instance of a distributed factorization. It competes for
// every role (the P partition owners and the coordinator), does the work
// of the roles it holds, and watches the basis U.
//
// A Worker's methods are safe for concurrent use.
type Worker struct {
	// Log, if set before Run, receives one line for each failure of a
	// role that the worker retries (a lost node, a leader election): the
	// role and the error; and one for each role it takes (a chain owner:
	// the batches its snapshot restored). It is called from the roles' goroutines and must
	// be safe for concurrent use.
	Log func(line string)
	// SnapshotEvery, if set before Run, is the number of batches between
	// a chain owner's snapshots of its Learner (chain_snapshot.go): a
	// takeover replays at most about that many. If zero, 100; negative
	// disables them (a takeover replays the partition from its first
	// batch).
	SnapshotEvery int

	cfg Config
	nc  *nats.Conn
	js  jetstream.JetStream
	st  *store

	mu      sync.Mutex
	cur     *basis        // latest basis seen by the watcher
	changed chan struct{} // closed when cur changes
	stats   Stats
	held    map[string]bool
	beat    []byte // the payload of its heartbeats: 8 random bytes naming this instance (WorkerWatch)

	// newLearner, set by NewChainWorker, makes the owners run the chain
	// (chain.go) instead of their own GNMF step, and no coordinator.
	newLearner NewLearner
}

// Stats counts a Worker's work since it started.
type Stats struct {
	// Held lists the roles held now: "coord" and "owner-<p>".
	Held []string
	// Takeovers counts the roles this instance gained (and rebuilt).
	Takeovers int
	// Rounds counts the owner rounds it published, Samples the samples
	// they added.
	Rounds, Samples int
	// Versions counts the basis versions it published as coordinator.
	Versions int
	// Version is the latest version of U it has seen.
	Version uint64
}

// NewWorker returns a worker for cfg on nc. It creates the streams, bucket
// and object store of cfg's namespace if they do not exist.
func NewWorker(ctx context.Context, nc *nats.Conn, cfg Config) (*Worker, error) {
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
	return &Worker{cfg: cfg, nc: nc, js: js, st: st, changed: make(chan struct{}), held: map[string]bool{}, beat: beat}, nil
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
	if w.cur != nil {
		s.Version = w.cur.Version
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
	type role struct {
		name string
		work func(ctx context.Context, p *pin) error
	}
	var roles []role
	if w.newLearner == nil {
		roles = append(roles, role{"coord", func(ctx context.Context, p *pin) error { return w.coordinate(ctx, p) }})
	}
	for i := range w.cfg.partitions() {
		own := func(ctx context.Context, p *pin) error { return w.own(ctx, p, i) }
		if w.newLearner != nil {
			own = func(ctx context.Context, p *pin) error { return w.ownChain(ctx, p, i) }
		}
		roles = append(roles, role{fmt.Sprintf("owner-%d", i), own})
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := w.watch(ctx); err != nil {
			cancel(err)
		}
	})
	for _, r := range roles {
		cons, err := w.st.roleConsumer(ctx, w.st.n.ns+"-"+r.name, ttl)
		if err != nil {
			cancel(err)
			break
		}
		p := newPin(cons, ttl)
		wg.Go(func() { p.run(ctx) })
		wg.Go(func() {
			for ctx.Err() == nil {
				if !p.wait(ctx) {
					return
				}
				w.setHeld(r.name, true)
				err := r.work(ctx, p)
				w.setHeld(r.name, false)
				switch {
				case err == nil, errors.Is(err, errLost), ctx.Err() != nil:
				case errors.Is(err, errCorrupt):
					cancel(err)
					return
				default:
					// A failing server (a lost node, a leader election): keep
					// the role if the pin stays, and retry after a pause.
					if w.Log != nil {
						w.Log(fmt.Sprintf("namespace %q: %s: %v; retrying", w.cfg.namespace(), r.name, err))
					}
					sleep(ctx, ttl/4)
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

// errCorrupt marks a message that cannot be decoded or applied: a bug or
// a foreign writer, which retrying cannot fix.
var errCorrupt = errors.New("distributed: corrupt message")

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errCorrupt}, args...)...)
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

// watch follows the basis key and keeps cur at its latest value.
func (w *Worker) watch(ctx context.Context) error {
	for ctx.Err() == nil {
		kw, err := w.st.model.Watch(ctx, keyBasis)
		if err != nil {
			sleep(ctx, 100*time.Millisecond)
			continue
		}
		for e := range kw.Updates() {
			if e == nil || e.Operation() != jetstream.KeyValuePut {
				continue
			}
			raw, err := w.st.resolve(ctx, e.Value())
			if errors.Is(err, jetstream.ErrObjectNotFound) {
				continue // replaced by newer versions, which follow
			}
			if errors.Is(err, errCorrupt) {
				kw.Stop()
				return fmt.Errorf("basis revision %d: %w", e.Revision(), err)
			}
			if err != nil {
				break // a failing server: watch again, from the latest value
			}
			b, err := decodeBasis(raw)
			if err != nil {
				kw.Stop()
				return corrupt("basis revision %d: %v", e.Revision(), err)
			}
			w.setBasis(b)
		}
		kw.Stop()
		sleep(ctx, 10*time.Millisecond)
	}
	return nil
}

// setBasis records b if it is newer than what the watcher has seen.
func (w *Worker) setBasis(b *basis) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cur != nil && b.Version <= w.cur.Version {
		return
	}
	w.cur = b
	close(w.changed)
	w.changed = make(chan struct{})
}

// waitBasis returns the latest basis once its version is at least v, or
// nil when ctx ends or p is lost.
func (w *Worker) waitBasis(ctx context.Context, p *pin, v int64) *basis {
	for {
		w.mu.Lock()
		cur, ch := w.cur, w.changed
		w.mu.Unlock()
		if cur != nil && int64(cur.Version) >= v {
			return cur
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ch:
		case <-time.After(w.cfg.pinnedTTL() / 4):
			if !p.held() {
				return nil
			}
		}
	}
}

// maxResets bounds the attempts of an ordered consumer to recreate itself
// after a server fault (by default it retries forever, deaf to the
// context): past them its fetch fails, and the role rebuilds from the
// logs once the servers answer again.
const maxResets = 3

// drain reads the messages cons has now, in order, calling f on each until
// f returns stop or an error; it returns once a pull finds nothing more.
func drain(cons jetstream.Consumer, f func(m jetstream.Msg) (stop bool, err error)) error {
	for {
		batch, err := cons.FetchNoWait(256)
		if err != nil {
			return err
		}
		n := 0
		for m := range batch.Messages() {
			n++
			stop, err := f(m)
			if err != nil || stop {
				return err
			}
		}
		if err := batch.Error(); err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
	}
}
