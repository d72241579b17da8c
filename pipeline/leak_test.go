package pipeline_test

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/reugn/go-streams/flow"
)

// stragglers returns the stacks of the goroutines, other than the calling
// one, that run code of this package or of go-streams. goleak is not a
// dependency; this is the part of it these tests need.
func stragglers() []string {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	gs := strings.Split(string(buf), "\n\n")
	var out []string
	for _, g := range gs[1:] { // gs[0] is the calling goroutine
		if strings.Contains(g, "nmfstream/nmfstream/pipeline.") || strings.Contains(g, "reugn/go-streams") {
			out = append(out, g)
		}
	}
	return out
}

// checkNoLeak records the goroutine count and returns a function, to be
// deferred, that fails t if goroutines of this package or of go-streams are
// still alive, or if there are more goroutines than before. It retries for
// a while because a goroutine that has closed its last channel still needs
// a few scheduler ticks to vanish.
func checkNoLeak(t *testing.T) func() {
	t.Helper()
	before := runtime.NumGoroutine()
	return func() {
		t.Helper()
		deadline := time.Now().Add(2 * time.Second) // generous: -race on 2 cores
		for {
			left := stragglers()
			n := runtime.NumGoroutine()
			if len(left) == 0 && n <= before {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("goroutines: %d before, %d after; leaked:\n%s", before, n, strings.Join(left, "\n\n"))
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// TestLeakCheckerDetects shows that stragglers sees a blocked go-streams
// goroutine, so that the leak checks in the other tests can fail.
func TestLeakCheckerDetects(t *testing.T) {
	pt := flow.NewPassThrough() // starts a goroutine blocked on its inlet
	found := false
	for i := 0; i < 100 && !found; i++ {
		found = len(stragglers()) > 0
		time.Sleep(time.Millisecond)
	}
	if !found {
		t.Error("stragglers did not report a live go-streams goroutine")
	}
	close(pt.In())
	for range pt.Out() {
	}
	defer checkNoLeak(t)()
}
