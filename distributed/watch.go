package distributed

import (
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// WorkerWatch counts the live Workers of a namespace from their heartbeats
// (each carries 8 bytes naming its Worker, every quarter of PinnedTTL). A
// Worker is live while its last heartbeat is younger than the namespace's
// PinnedTTL. It is safe for concurrent use; Stop ends it.
type WorkerWatch struct {
	ttl time.Duration
	sub *nats.Subscription

	mu   sync.Mutex
	seen map[string]time.Time // when each Worker's last heartbeat arrived
}

// WatchWorkers starts counting the live Workers of cfg's namespace on nc.
func WatchWorkers(nc *nats.Conn, cfg Config) (*WorkerWatch, error) {
	w := &WorkerWatch{ttl: cfg.pinnedTTL(), seen: map[string]time.Time{}}
	sub, err := nc.Subscribe(cfg.names().tickSubject(), func(m *nats.Msg) {
		if len(m.Data) == 0 {
			return // a Worker of a version that did not name itself
		}
		w.mu.Lock()
		w.seen[string(m.Data)] = time.Now()
		w.mu.Unlock()
	})
	if err != nil {
		return nil, fmt.Errorf("distributed: heartbeats of namespace %q: %w", cfg.namespace(), err)
	}
	w.sub = sub
	return w, nil
}

// Live returns the number of Workers heard within the last PinnedTTL,
// and forgets the others.
func (w *WorkerWatch) Live() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k, t := range w.seen {
		if time.Since(t) > w.ttl {
			delete(w.seen, k)
		}
	}
	return len(w.seen)
}

// Stop ends the watch.
func (w *WorkerWatch) Stop() { w.sub.Unsubscribe() }
