//go:build nats

package distributed

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/nmfstream/nmfstream/distributed/natsembed"
)

// restartServer stops s, waits down, and starts a server again on the
// same store dir and port; it returns the new server, stopped with the
// test.
func restartServer(t *testing.T, s *server.Server, dir string, down time.Duration) *server.Server {
	t.Helper()
	port := s.Addr().(*net.TCPAddr).Port
	s.Shutdown()
	s.WaitForShutdown()
	time.Sleep(down)
	s2, err := natsembed.Start(dir, "127.0.0.1", port)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s2.Shutdown(); s2.WaitForShutdown() })
	return s2
}

// maxPulls bounds the fetches of one pin over window: one a tick (every
// ttl/4) or a pause (at least ttl/8), whichever is shorter, plus one.
func maxPulls(window, ttl time.Duration) int64 { return int64(window/(ttl/8)) + 1 }

// TestWorkerRetakesAfterRestart: the NATS server stops for two TTLs and
// starts again on the same store and port mid-stream (a one-node server
// keeps its file streams, not the memory stream of the roles' ticks nor
// its consumers). The worker that held the partition makes its role
// consumer anew without spinning (its fetches over the four TTLs after
// the restart are bounded), takes the partition back, and the driver
// receives every later batch's answer, each the one of an uninterrupted
// in-process Learner, bit for bit.
func TestWorkerRetakesAfterRestart(t *testing.T) {
	const nb, b = 20, 10
	dir := t.TempDir()
	s, err := natsembed.Start(dir, "127.0.0.1", 0)
	if err != nil {
		t.Fatal(err)
	}
	url := s.ClientURL()
	ttl := 500 * time.Millisecond
	cfg := Config{Namespace: "restart", Partitions: 1, Rank: 3, PinnedTTL: ttl}
	settings := []byte(`{"Rank":3,"Seed":4}`)
	batches := chainBatches(nb, b)
	want, wantCounters := referenceSteps(t, settings, batches)

	// The worker's and the driver's connections report to one log, with
	// its repeats every 300 ms instead of 30 s.
	var mu sync.Mutex
	var lines []string
	clog := NewConnectionLog(url, func(l string) {
		mu.Lock()
		lines = append(lines, l)
		mu.Unlock()
	})
	clog.every = 300 * time.Millisecond
	opts := append(ClientOptions(), clog.Options()...)
	ws, _, stop := runWorkersOf(t, url, 1, func(*nats.Conn) (*Worker, error) {
		nc, err := nats.Connect(url, opts...)
		if err != nil {
			return nil, err
		}
		t.Cleanup(nc.Close)
		w, err := NewChainWorker(context.Background(), nc, cfg, testLearner)
		if w != nil {
			w.Log = func(l string) { t.Log(l) }
		}
		return w, err
	})
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	ctx, d := startDriver(t, nc, cfg, settings)
	for k := range nb / 2 {
		sendAndCheck(t, ctx, d, k, batches[k], want[k])
	}
	down := time.Now()
	restartServer(t, s, dir, 2*ttl)
	downFor := time.Since(down)
	window := 4 * ttl
	before := ws[0].pulls.Load()
	time.Sleep(window)
	n := ws[0].pulls.Load() - before
	t.Logf("%d fetches in the %v after the restart", n, window)
	if n > maxPulls(window, ttl) {
		t.Errorf("%d fetches of the role's ticks in the %v after the restart, more than %d: a busy loop", n, window, maxPulls(window, ttl))
	}
	for k := nb / 2; k < nb; k++ {
		got := sendAndCheck(t, ctx, d, k, batches[k], want[k])
		if k == nb-1 && got.Counters != wantCounters {
			t.Errorf("counters %+v, the in-process learner's %+v", got.Counters, wantCounters)
		}
	}
	mu.Lock()
	checkConnectionLog(t, lines, url, 1+int(downFor/clog.every)+1)
	mu.Unlock()
	st := ws[0].Stats()
	if !slices.Contains(st.Held, "owner-0") || st.Takeovers < 2 {
		t.Errorf("the worker holds %v after %d takeovers; want owner-0 held again after the restart", st.Held, st.Takeovers)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// TestPinPausesWhileConsumerGone: a role's consumer deleted, and never
// made anew (remake fails), is fetched at a bounded pace: each failed
// fetch is followed by a pause, and remake is tried after each.
func TestPinPausesWhileConsumerGone(t *testing.T) {
	nc, _ := startServer(t)
	ttl := 400 * time.Millisecond
	cfg := Config{Namespace: "gone", Partitions: 1, PinnedTTL: ttl}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := setup(ctx, js, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cons, err := st.roleConsumer(ctx, "gone-owner-0", ttl)
	if err != nil {
		t.Fatal(err)
	}
	if err := js.DeleteStream(ctx, cfg.names().ticks); err != nil {
		t.Fatal(err)
	}
	var pulls, remakes atomic.Int64
	p := newPin(cons, ttl)
	p.pulls = &pulls
	p.remake = func(context.Context) (jetstream.Consumer, error) {
		remakes.Add(1)
		return nil, errors.New("not made anew, on purpose")
	}
	done := make(chan struct{})
	go func() { p.run(ctx); close(done) }()
	window := 5 * ttl
	time.Sleep(window)
	cancel()
	<-done
	if n := pulls.Load(); n == 0 || n > maxPulls(window, ttl) {
		t.Errorf("%d fetches of a consumer that is gone in %v; want 1 to %d", n, window, maxPulls(window, ttl))
	}
	if remakes.Load() == 0 || remakes.Load() > pulls.Load() {
		t.Errorf("%d attempts to make the consumer anew after %d fetches; want 1 to one a fetch", remakes.Load(), pulls.Load())
	}
	t.Logf("%d fetches, %d attempts to make the consumer anew in %v", pulls.Load(), remakes.Load(), window)
}

// checkConnectionLog fails t unless lines are one server's loss reported
// by a ConnectionLog of url: "unreachable since" lines, at least two (the
// loss and a repeat) and at most most, then one "reconnected" line.
func checkConnectionLog(t *testing.T, lines []string, url string, most int) {
	t.Helper()
	t.Logf("connection log: %q", lines)
	unreachable := "NATS server at " + url + " unreachable since "
	n := 0
	for n < len(lines) && strings.HasPrefix(lines[n], unreachable) && strings.HasSuffix(lines[n], "; retrying") {
		n++
	}
	if n < 2 || n > most {
		t.Errorf("%d lines saying the server is unreachable (want 2 to %d): %q", n, most, lines)
	}
	if n != len(lines)-1 || !strings.HasPrefix(lines[n], "NATS server at "+url+" reconnected after ") {
		t.Errorf("the lines after the loss's are %q; want one saying the server reconnected", lines[n:])
	}
}
