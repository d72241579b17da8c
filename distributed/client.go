package distributed

import (
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// ClientPingInterval and ClientMaxPingsOut bound how long a client takes to
// notice that its server is cut off: the client pings every
// ClientPingInterval and drops the connection, then reconnects to another
// node of the cluster, after ClientMaxPingsOut pings without an answer,
// about 6 s in all. nats.go's defaults (2 minutes, 2 pings) let a worker
// or a driver whose node lost the network stall the stream for minutes
// (BENCHMARKS.md, "Machines in network namespaces").
const (
	ClientPingInterval = 2 * time.Second
	ClientMaxPingsOut  = 3
)

// ClientOptions are the connection options of nmfstream's NATS clients
// (workers, stream --nats and serve --nats): reconnect forever, 100 ms
// apart, and detect a dead connection within about 6 s.
func ClientOptions() []nats.Option {
	return []nats.Option{
		nats.MaxReconnects(-1),
		nats.ReconnectWait(100 * time.Millisecond),
		nats.PingInterval(ClientPingInterval),
		nats.MaxPingsOutstanding(ClientMaxPingsOut),
	}
}

// ConnectionReportEvery is how often a ConnectionLog repeats that the
// server is still unreachable.
const ConnectionReportEvery = 30 * time.Second

// ConnectionLog reports on a process's log when its NATS connections to
// one server (or cluster) lose it and when they have it back: once when
// the first loses it ("NATS server at URL unreachable since T; retrying",
// T in UTC), again every ConnectionReportEvery while one is still without
// it, and "NATS server at URL reconnected after D" once every connection
// that lost it is back (or closed). A connection that the process closes
// is not reported. Options adds it to a connection's options; it is safe
// for concurrent use (nats.go calls it from each connection's goroutine).
type ConnectionLog struct {
	url   string
	logf  func(line string)
	every time.Duration

	mu    sync.Mutex
	down  map[*nats.Conn]bool // the connections without their server
	since time.Time           // when the first of down lost it
	said  time.Time           // when the last "unreachable" line was written
}

// NewConnectionLog returns a ConnectionLog of the connections to url (as
// the command line gave it) that writes each line with logf.
func NewConnectionLog(url string, logf func(line string)) *ConnectionLog {
	return &ConnectionLog{url: url, logf: logf, every: ConnectionReportEvery, down: map[*nats.Conn]bool{}}
}

// Options returns the connection options that report to l: nats.go's
// disconnect, reconnect-error, reconnect and closed handlers.
func (l *ConnectionLog) Options() []nats.Option {
	return []nats.Option{
		nats.DisconnectErrHandler(func(nc *nats.Conn, _ error) { l.lost(nc) }),
		nats.ReconnectErrHandler(func(*nats.Conn, error) { l.still() }),
		nats.ReconnectHandler(func(nc *nats.Conn) { l.back(nc, false) }),
		nats.ClosedHandler(func(nc *nats.Conn) { l.back(nc, true) }),
	}
}

func (l *ConnectionLog) lost(nc *nats.Conn) {
	if nc.IsClosed() {
		return // closed by the process, not lost
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.down[nc] = true
	if len(l.down) == 1 {
		l.since = time.Now()
		l.sayLocked()
	}
}

// still repeats the report every l.every while a connection is down.
func (l *ConnectionLog) still() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.down) > 0 && time.Since(l.said) >= l.every {
		l.sayLocked()
	}
}

func (l *ConnectionLog) sayLocked() {
	l.said = time.Now()
	l.logf(fmt.Sprintf("NATS server at %s unreachable since %s; retrying", l.url, l.since.UTC().Format(time.RFC3339)))
}

// back forgets nc's loss: it reconnected, or was closed.
func (l *ConnectionLog) back(nc *nats.Conn, closed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.down[nc] {
		return
	}
	delete(l.down, nc)
	if len(l.down) == 0 && !closed {
		l.logf(fmt.Sprintf("NATS server at %s reconnected after %v", l.url, time.Since(l.since).Round(time.Second)))
	}
}
