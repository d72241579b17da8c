package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nmfstream/nmfstream/pipeline"
)

// collector is a sink that records what it receives and whether and when it
// was flushed and closed.
type collector[T any] struct {
	mu      sync.Mutex
	items   []T
	flushes int
	closes  int
	// flushedAt and closedAt are len(items) when Flush and Close ran, or -1.
	flushedAt, closedAt int
	// closedAfterFlush records the order of the two calls.
	closedAfterFlush bool
}

func newCollector[T any]() *collector[T] { return &collector[T]{flushedAt: -1, closedAt: -1} }

func (c *collector[T]) Write(_ context.Context, x T) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.items = append(c.items, x)
	return nil
}

func (c *collector[T]) Flush(context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.flushes++
	c.flushedAt = len(c.items)
	return nil
}

func (c *collector[T]) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closes++
	c.closedAt = len(c.items)
	c.closedAfterFlush = c.flushes > 0
	return nil
}

func (c *collector[T]) got() []T {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.items)
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// forever returns a source of 0, 1, 2, … that never ends by itself, and the
// number of items it has produced.
func forever() (pipeline.Source, *atomic.Int64) {
	var n atomic.Int64
	return pipeline.From("forever", pipeline.ReadFunc[int](func(ctx context.Context) (int, error) {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		return int(n.Add(1) - 1), nil
	})), &n
}

// jitter sleeps a random time of up to 200µs, so that items processed
// concurrently finish out of order.
func jitter(r *rand.Rand, mu *sync.Mutex) {
	mu.Lock()
	d := time.Duration(r.IntN(200)) * time.Microsecond
	mu.Unlock()
	time.Sleep(d)
}

func TestOrder(t *testing.T) {
	const n = 500
	want := make([]int, n)
	for i := range want {
		want[i] = 3 * (i + 1)
	}
	for _, tc := range []struct {
		name        string
		parallelism int
		ordered     bool
		wantOrder   bool
	}{
		{"parallelism1", 1, false, true},
		{"ordered4", 4, true, true},
		// The control: the same jitter with 4 unordered workers must
		// reorder, or the two cases above would pass for any code.
		{"unordered4", 4, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer checkNoLeak(t)()
			r := rand.New(rand.NewPCG(1, 1))
			var mu sync.Mutex
			mid := pipeline.Map("slow", tc.parallelism, func(_ context.Context, x int) (int, error) {
				jitter(r, &mu)
				return x * 3, nil
			})
			if tc.ordered {
				mid = pipeline.Ordered(mid)
			}
			out := newCollector[int]()
			p := pipeline.New(pipeline.FromSlice("ints", seq(n)), []pipeline.Stage{
				pipeline.Map("inc", 1, func(_ context.Context, x int) (int, error) { return x + 1, nil }),
				mid,
			}, pipeline.To("out", out))
			if err := p.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			got := out.got()
			if slices.Equal(got, want) != tc.wantOrder {
				t.Errorf("in order = %v, want %v", !tc.wantOrder, tc.wantOrder)
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("items differ from the input (len %d, want %d)", len(got), n)
			}
		})
	}
}

func TestExactlyOnceParallel(t *testing.T) {
	defer checkNoLeak(t)()
	const n = 10000
	out := newCollector[int]()
	p := pipeline.New(pipeline.FromSlice("ints", seq(n)), []pipeline.Stage{
		pipeline.Map("double", 4, func(_ context.Context, x int) (int, error) { return 2 * x, nil }),
		// Each x becomes x and x+1: all of 0 … 2n-1 exactly once.
		pipeline.FlatMap("split", 3, func(_ context.Context, x int) ([]int, error) { return []int{x, x + 1}, nil }),
		pipeline.Filter("all", 2, func(_ context.Context, x int) (bool, error) { return x >= 0, nil }),
	}, pipeline.To("out", out))
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := out.got()
	seen := make([]int, 2*n)
	for _, x := range got {
		if x < 0 || x >= 2*n {
			t.Fatalf("unexpected item %d", x)
		}
		seen[x]++
	}
	for x, c := range seen {
		if c != 1 {
			t.Fatalf("item %d arrived %d times", x, c)
		}
	}
	want := []pipeline.StageStats{
		{Name: "ints", In: n, Out: n},
		{Name: "double", In: n, Out: n},
		{Name: "split", In: n, Out: 2 * n},
		{Name: "all", In: 2 * n, Out: 2 * n},
		{Name: "out", In: 2 * n, Out: 2 * n},
	}
	if got := p.Stats(); !reflect.DeepEqual(got, want) {
		t.Errorf("Stats:\ngot  %+v\nwant %+v", got, want)
	}
}

var errBoom = errors.New("boom")

func TestStageErrorMidStream(t *testing.T) {
	for _, tc := range []struct {
		name        string
		parallelism int
		ordered     bool
	}{
		{"parallelism1", 1, false},
		{"parallelism4", 4, false},
		{"ordered4", 4, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer checkNoLeak(t)()
			src, produced := forever()
			bad := pipeline.Map("explode", tc.parallelism, func(_ context.Context, x int) (int, error) {
				if x == 500 {
					return 0, errBoom
				}
				return x, nil
			})
			if tc.ordered {
				bad = pipeline.Ordered(bad)
			}
			out := newCollector[[]int]()
			p := pipeline.New(src, []pipeline.Stage{
				pipeline.Map("before", 2, func(_ context.Context, x int) (int, error) { return x, nil }),
				bad,
				pipeline.Batch[int]("batch", 7, time.Millisecond),
			}, pipeline.To("out", out))
			err := p.Run(context.Background())
			if !errors.Is(err, errBoom) {
				t.Fatalf("Run = %v, want %v", err, errBoom)
			}
			if want := `pipeline: stage "explode": boom`; err.Error() != want {
				t.Errorf("Run = %q, want %q", err, want)
			}
			if out.flushes != 0 || out.closes != 1 {
				t.Errorf("sink flushed %d and closed %d times, want 0 and 1", out.flushes, out.closes)
			}
			if n := produced.Load(); n < 500 {
				t.Errorf("source produced %d items, want at least 501", n)
			}
		})
	}
}

func TestSourceError(t *testing.T) {
	defer checkNoLeak(t)()
	i := 0
	src := pipeline.From("flaky", pipeline.ReadFunc[int](func(context.Context) (int, error) {
		if i == 10 {
			return 0, errBoom
		}
		i++
		return i, nil
	}))
	p := pipeline.New(src, []pipeline.Stage{
		pipeline.Map("id", 2, func(_ context.Context, x int) (int, error) { return x, nil }),
	}, pipeline.To("out", newCollector[int]()))
	err := p.Run(context.Background())
	if want := `pipeline: source "flaky": boom`; err == nil || err.Error() != want || !errors.Is(err, errBoom) {
		t.Fatalf("Run = %v, want %q", err, want)
	}
}

func TestSinkError(t *testing.T) {
	defer checkNoLeak(t)()
	src, _ := forever()
	p := pipeline.New(src, nil, pipeline.To("picky", pipeline.WriteFunc[int](func(_ context.Context, x int) error {
		if x == 100 {
			return errBoom
		}
		return nil
	})))
	err := p.Run(context.Background())
	if want := `pipeline: sink "picky": boom`; err == nil || err.Error() != want {
		t.Fatalf("Run = %v, want %q", err, want)
	}
}

func TestReject(t *testing.T) {
	defer checkNoLeak(t)()
	const n = 100
	errOdd := errors.New("odd")
	src := pipeline.From("ints", pipeline.ReadFunc[int](func() func(context.Context) (int, error) {
		i := 0
		return func(context.Context) (int, error) {
			if i == n {
				return 0, io.EOF
			}
			i++
			if i == 50 {
				return -1, pipeline.Reject(errors.New("unreadable"))
			}
			return i, nil
		}
	}()))
	rejects := newCollector[pipeline.Rejection]()
	out := newCollector[int]()
	p := pipeline.New(src, []pipeline.Stage{
		pipeline.Map("evens", 3, func(_ context.Context, x int) (int, error) {
			if x%2 == 1 {
				// Wrapped again: errors.As must still find the rejection.
				return 0, fmt.Errorf("check: %w", pipeline.Reject(errOdd))
			}
			return x, nil
		}),
	}, pipeline.To("out", pipeline.WriteFunc[int](func(ctx context.Context, x int) error {
		if x == 10 {
			return pipeline.Reject(errBoom)
		}
		return out.Write(ctx, x)
	})))
	p.Rejects = pipeline.To("rejects", rejects)
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	// 1 … 100 without 50 (rejected by the source), 50 odd numbers (rejected
	// by the stage) and 10 (rejected by the sink).
	got := out.got()
	slices.Sort(got)
	var want []int
	for x := 2; x <= n; x += 2 {
		if x != 50 && x != 10 {
			want = append(want, x)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("sink got %v\nwant %v", got, want)
	}
	wantStats := []pipeline.StageStats{
		{Name: "ints", In: n, Out: n - 1, Rejected: 1},
		{Name: "evens", In: n - 1, Out: n/2 - 1, Rejected: n / 2},
		{Name: "out", In: n/2 - 1, Out: n/2 - 2, Rejected: 1},
	}
	if got := p.Stats(); !reflect.DeepEqual(got, wantStats) {
		t.Errorf("Stats:\ngot  %+v\nwant %+v", got, wantStats)
	}
	if got := p.Rejected(); got != n/2+2 {
		t.Errorf("Rejected() = %d, want %d", got, n/2+2)
	}
	rj := rejects.got()
	if len(rj) != n/2+2 {
		t.Fatalf("rejects sink got %d rejections, want %d", len(rj), n/2+2)
	}
	byStage := map[string]int{}
	for _, r := range rj {
		byStage[r.Stage]++
		switch r.Stage {
		case "evens":
			if x := r.Item.(int); x%2 != 1 || r.Err != errOdd {
				t.Errorf("stage rejection %+v, want an odd item and %v", r, errOdd)
			}
		case "ints":
			if r.Item.(int) != -1 || r.Err.Error() != "unreadable" {
				t.Errorf("source rejection %+v", r)
			}
		case "out":
			if r.Item.(int) != 10 || r.Err != errBoom {
				t.Errorf("sink rejection %+v", r)
			}
		}
	}
	if want := map[string]int{"ints": 1, "evens": n / 2, "out": 1}; !reflect.DeepEqual(byStage, want) {
		t.Errorf("rejections by stage %v, want %v", byStage, want)
	}
	if rejects.flushes != 1 || rejects.closes != 1 {
		t.Errorf("rejects sink flushed %d and closed %d times, want 1 and 1", rejects.flushes, rejects.closes)
	}
}

func TestCancel(t *testing.T) {
	for _, tc := range []struct {
		name string
		// work is the middle stage; it must honour ctx.
		work func(ctx context.Context, x int) (int, error)
	}{
		{"busy", func(ctx context.Context, x int) (int, error) {
			select {
			case <-time.After(100 * time.Microsecond):
			case <-ctx.Done():
			}
			return x, nil
		}},
		// A stage stuck until ctx is done: cancellation must unblock it.
		{"stuck", func(ctx context.Context, x int) (int, error) {
			if x >= 50 {
				<-ctx.Done()
				return 0, ctx.Err()
			}
			return x, nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer checkNoLeak(t)()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			src, _ := forever()
			var received atomic.Int64
			arrived := make(chan struct{})
			var signal sync.Once
			out := newCollector[[]int]()
			p := pipeline.New(src, []pipeline.Stage{
				pipeline.Ordered(pipeline.Map("work", 4, tc.work)),
				pipeline.Batch[int]("batch", 5, 0),
			}, pipeline.To("out", pipeline.WriteFunc[[]int](func(ctx context.Context, b []int) error {
				if received.Add(int64(len(b))) >= 40 {
					// Close, not a non-blocking send: the "stuck" case
					// delivers only 50 items, so a signal must not be lost.
					signal.Do(func() { close(arrived) })
				}
				return nil
			})), pipeline.To("flushcheck", out))
			errc := make(chan error, 1)
			go func() { errc <- p.Run(ctx) }()
			select {
			case <-arrived:
			case err := <-errc:
				t.Fatalf("Run = %v before the cancellation", err)
			}
			cancel()
			start := time.Now()
			select {
			case err := <-errc:
				if err != context.Canceled {
					t.Errorf("Run = %v, want %v", err, context.Canceled)
				}
			case <-time.After(time.Second): // promptly: the stages react within microseconds
				t.Fatal("Run did not return within 1s of the cancellation")
			}
			t.Logf("Run returned %v after the cancellation", time.Since(start))
			if out.flushes != 0 || out.closes != 1 {
				t.Errorf("sink flushed %d and closed %d times, want 0 and 1", out.flushes, out.closes)
			}
		})
	}
}

func TestCancelCause(t *testing.T) {
	defer checkNoLeak(t)()
	ctx, cancel := context.WithCancelCause(context.Background())
	src, n := forever()
	p := pipeline.New(src, []pipeline.Stage{
		pipeline.Map("id", 1, func(_ context.Context, x int) (int, error) {
			if x == 10 {
				cancel(errBoom)
			}
			return x, nil
		}),
	})
	err := p.Run(ctx)
	// Run reports ctx.Err(), like the standard library; the cause stays
	// available from the caller's ctx.
	if err != context.Canceled || context.Cause(ctx) != errBoom {
		t.Errorf("Run = %v (cause %v), want %v (cause %v)", err, context.Cause(ctx), context.Canceled, errBoom)
	}
	if n.Load() < 10 {
		t.Errorf("source produced %d items", n.Load())
	}
}

func TestCancelledBeforeRun(t *testing.T) {
	defer checkNoLeak(t)()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	src, n := forever()
	out, rejects := newCollector[int](), newCollector[pipeline.Rejection]()
	p := pipeline.New(src, []pipeline.Stage{
		pipeline.Map("id", 2, func(_ context.Context, x int) (int, error) { return x, nil }),
	}, pipeline.To("out", out))
	p.Rejects = pipeline.To("rejects", rejects)
	if err := p.Run(ctx); err != context.Canceled {
		t.Errorf("Run = %v, want %v", err, context.Canceled)
	}
	if n.Load() != 0 {
		t.Errorf("source read %d items from a cancelled run", n.Load())
	}
	for name, c := range map[string][2]int{"out": {out.flushes, out.closes}, "rejects": {rejects.flushes, rejects.closes}} {
		if c != [2]int{0, 1} {
			t.Errorf("sink %s flushed %d and closed %d times, want 0 and 1", name, c[0], c[1])
		}
	}
}

func TestCheckFailureClosesSinks(t *testing.T) {
	out := newCollector[string]()
	p := pipeline.New(pipeline.FromSlice("ints", seq(3)), nil, pipeline.To("out", out))
	if err := p.Run(context.Background()); err == nil {
		t.Fatal("Run accepted ints for a string sink")
	}
	if out.closes != 1 || out.flushes != 0 || len(out.items) != 0 {
		t.Errorf("sink: %d items, flushed %d, closed %d times; want 0, 0, 1", len(out.items), out.flushes, out.closes)
	}
}

func TestBackPressure(t *testing.T) {
	defer checkNoLeak(t)()
	const (
		buffer = 4
		par    = 2
		total  = 10000
	)
	// Every place an item can wait, with Buffer = 4 and parallelism 2:
	//   source: the reader's item + its channel + the forwarder's item      B+2
	//   Map:    inlet + feed's item + one per worker + drain's item
	//           + the forwarder's item                                      B+p+3
	//   Ordered Map: as Map, but the window admits 2p items                 B+2p+3
	//   sink:   inlet + the item being written                              B+1
	const bound = (buffer + 2) + (buffer + par + 3) + (buffer + 2*par + 3) + (buffer + 1)
	var read atomic.Int64
	src := pipeline.From("counted", pipeline.ReadFunc[int](func(context.Context) (int, error) {
		n := read.Add(1)
		if n > total {
			read.Add(-1)
			return 0, io.EOF
		}
		return int(n), nil
	}))
	release := make(chan struct{})
	first := make(chan struct{})
	var got atomic.Int64
	p := pipeline.New(src, []pipeline.Stage{
		pipeline.Map("a", par, func(_ context.Context, x int) (int, error) { return x, nil }),
		pipeline.Ordered(pipeline.Map("b", par, func(_ context.Context, x int) (int, error) { return x, nil })),
	}, pipeline.To("slow", pipeline.WriteFunc[int](func(ctx context.Context, x int) error {
		if got.Add(1) == 1 {
			close(first)
			<-release
		}
		return nil
	})))
	p.Buffer = buffer
	errc := make(chan error, 1)
	go func() { errc <- p.Run(context.Background()) }()
	<-first
	// Wait until the source stops advancing.
	last := int64(-1)
	for n := read.Load(); n != last; n = read.Load() {
		last = n
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("source read %d items ahead of a stalled sink (bound %d)", last, bound)
	if last > bound {
		t.Errorf("source read %d items while the sink was stalled, want at most %d", last, bound)
	}
	close(release)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if got.Load() != total {
		t.Errorf("sink got %d items, want %d", got.Load(), total)
	}
}

func TestTypeMismatch(t *testing.T) {
	t.Run("static", func(t *testing.T) {
		defer checkNoLeak(t)()
		var read atomic.Int64
		src := pipeline.From("ints", pipeline.ReadFunc[int](func(context.Context) (int, error) {
			read.Add(1)
			return 1, nil
		}))
		p := pipeline.New(src, []pipeline.Stage{
			pipeline.Map("itoa", 1, func(_ context.Context, x int) (string, error) { return fmt.Sprint(x), nil }),
			pipeline.Map("square", 1, func(_ context.Context, x int) (int, error) { return x * x, nil }),
		})
		err := p.Run(context.Background())
		var te *pipeline.TypeError
		if !errors.As(err, &te) {
			t.Fatalf("Run = %v, want a *TypeError", err)
		}
		if te.Got != reflect.TypeFor[string]() || te.Want != reflect.TypeFor[int]() {
			t.Errorf("TypeError = %+v, want got string, want int", te)
		}
		if want := `pipeline: stage "square": input from "itoa": type mismatch: got string, want int`; err.Error() != want {
			t.Errorf("Run = %q, want %q", err, want)
		}
		if read.Load() != 0 {
			t.Errorf("source read %d items before the type check", read.Load())
		}
	})
	t.Run("dynamic", func(t *testing.T) {
		defer checkNoLeak(t)()
		src, _ := forever()
		p := pipeline.New(src, []pipeline.Stage{
			// Declares any, so only the items can tell.
			pipeline.Map("loose", 2, func(_ context.Context, x int) (any, error) {
				if x == 300 {
					return "three hundred", nil
				}
				return x, nil
			}),
			pipeline.Map("strict", 2, func(_ context.Context, x int) (int, error) { return x, nil }),
		})
		err := p.Run(context.Background())
		var te *pipeline.TypeError
		if !errors.As(err, &te) || te.Got != reflect.TypeFor[string]() {
			t.Fatalf("Run = %v, want a *TypeError for a string", err)
		}
		if want := `pipeline: stage "strict": type mismatch: got string, want int`; err.Error() != want {
			t.Errorf("Run = %q, want %q", err, want)
		}
	})
	t.Run("sink", func(t *testing.T) {
		defer checkNoLeak(t)()
		p := pipeline.New(pipeline.FromSlice("anys", []any{1, 2, "3"}), nil,
			pipeline.To("ints", pipeline.WriteFunc[int](func(context.Context, int) error { return nil })))
		err := p.Run(context.Background())
		if want := `pipeline: sink "ints": type mismatch: got string, want int`; err == nil || err.Error() != want {
			t.Errorf("Run = %v, want %q", err, want)
		}
	})
	t.Run("batch", func(t *testing.T) {
		defer checkNoLeak(t)()
		p := pipeline.New(pipeline.FromSlice("anys", []any{1, 2, 3.5}), []pipeline.Stage{
			pipeline.Batch[int]("batch", 2, 0),
		})
		err := p.Run(context.Background())
		if want := `pipeline: stage "batch": type mismatch: got float64, want int`; err == nil || err.Error() != want {
			t.Errorf("Run = %v, want %q", err, want)
		}
	})
	t.Run("nil interface", func(t *testing.T) {
		// A nil error passes to a stage that takes error: not a mismatch.
		defer checkNoLeak(t)()
		out := newCollector[error]()
		p := pipeline.New(pipeline.FromSlice("errs", []error{nil, errBoom}), []pipeline.Stage{
			pipeline.Map("id", 1, func(_ context.Context, e error) (error, error) { return e, nil }),
		}, pipeline.To("out", out))
		if err := p.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := out.got(); len(got) != 2 || got[0] != nil || got[1] != errBoom {
			t.Errorf("got %v, want [<nil> boom]", got)
		}
	})
}

func TestEOFFlushesSinks(t *testing.T) {
	defer checkNoLeak(t)()
	const n = 1000
	a, b := newCollector[int](), newCollector[int]()
	p := pipeline.New(pipeline.FromSlice("ints", seq(n)), []pipeline.Stage{
		pipeline.Map("id", 3, func(_ context.Context, x int) (int, error) { return x, nil }),
	}, pipeline.To("a", a), pipeline.To("b", b))
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]*collector[int]{"a": a, "b": b} {
		if len(c.items) != n {
			t.Errorf("sink %s got %d items, want %d", name, len(c.items), n)
		}
		if c.flushes != 1 || c.flushedAt != n {
			t.Errorf("sink %s: flushed %d times, after %d items; want once after %d", name, c.flushes, c.flushedAt, n)
		}
		if c.closes != 1 || !c.closedAfterFlush {
			t.Errorf("sink %s: closed %d times (after flush: %v), want once after flush", name, c.closes, c.closedAfterFlush)
		}
	}
}

// failingFlusher fails its Flush or Close.
type failingFlusher struct{ flushErr, closeErr error }

func (f *failingFlusher) Write(context.Context, int) error { return nil }
func (f *failingFlusher) Flush(context.Context) error      { return f.flushErr }
func (f *failingFlusher) Close() error                     { return f.closeErr }

func TestFlushCloseErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		w    *failingFlusher
		want string
	}{
		{"flush", &failingFlusher{flushErr: errBoom}, `pipeline: sink "f": flush: boom`},
		{"close", &failingFlusher{closeErr: errBoom}, `pipeline: sink "f": close: boom`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer checkNoLeak(t)()
			p := pipeline.New(pipeline.FromSlice("ints", seq(10)), nil, pipeline.To("f", tc.w))
			if err := p.Run(context.Background()); err == nil || err.Error() != tc.want || !errors.Is(err, errBoom) {
				t.Errorf("Run = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestBatch(t *testing.T) {
	t.Run("count", func(t *testing.T) {
		defer checkNoLeak(t)()
		out := newCollector[[]int]()
		p := pipeline.New(pipeline.FromSlice("ints", seq(10)), []pipeline.Stage{
			pipeline.Batch[int]("batch", 3, 0),
		}, pipeline.To("out", out))
		if err := p.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		want := [][]int{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {9}}
		if got := out.got(); !reflect.DeepEqual(got, want) {
			t.Errorf("batches %v, want %v", got, want)
		}
	})
	t.Run("time", func(t *testing.T) {
		// The source pauses after 3 items until the sink has a batch: only
		// the idle timer can cut that batch.
		defer checkNoLeak(t)()
		gotBatch := make(chan struct{})
		i := 0
		src := pipeline.From("pausing", pipeline.ReadFunc[int](func(ctx context.Context) (int, error) {
			if i == 3 {
				select {
				case <-gotBatch:
				case <-time.After(5 * time.Second):
					return 0, errors.New("no batch within 5s")
				}
			}
			if i == 5 {
				return 0, io.EOF
			}
			i++
			return i, nil
		}))
		out := newCollector[[]int]()
		p := pipeline.New(src, []pipeline.Stage{
			pipeline.Batch[int]("batch", 100, 50*time.Millisecond), // idle 50ms: far longer than the gap between items 4 and 5
		}, pipeline.To("out", pipeline.WriteFunc[[]int](func(ctx context.Context, b []int) error {
			if len(out.got()) == 0 {
				close(gotBatch)
			}
			return out.Write(ctx, b)
		})))
		if err := p.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		want := [][]int{{1, 2, 3}, {4, 5}}
		if got := out.got(); !reflect.DeepEqual(got, want) {
			t.Errorf("batches %v, want %v", got, want)
		}
	})
}

func TestScanner(t *testing.T) {
	defer checkNoLeak(t)()
	out := newCollector[string]()
	sc := &wordScanner{words: strings.Fields("a b c")}
	p := pipeline.New(pipeline.FromScanner("words", sc), nil, pipeline.To("out", out))
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := out.got(); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("got %v", got)
	}
	sc = &wordScanner{words: []string{"a"}, err: errBoom}
	err := pipeline.New(pipeline.FromScanner("words", sc), nil).Run(context.Background())
	if want := `pipeline: source "words": boom`; err == nil || err.Error() != want {
		t.Errorf("Run = %v, want %q", err, want)
	}
}

type wordScanner struct {
	words []string
	cur   string
	err   error
}

func (s *wordScanner) Next() bool {
	if len(s.words) == 0 {
		return false
	}
	s.cur, s.words = s.words[0], s.words[1:]
	return true
}
func (s *wordScanner) Item() string { return s.cur }
func (s *wordScanner) Err() error   { return s.err }

func TestMisuse(t *testing.T) {
	id := pipeline.Map("id", 1, func(_ context.Context, x int) (int, error) { return x, nil })
	src := func() pipeline.Source { return pipeline.FromSlice("src", seq(3)) }
	for _, tc := range []struct {
		name string
		p    func() *pipeline.Pipeline
		want string
	}{
		{"duplicate", func() *pipeline.Pipeline { return pipeline.New(src(), []pipeline.Stage{id, id}) },
			`pipeline: duplicate name "id"`},
		{"zero stage", func() *pipeline.Pipeline { return pipeline.New(src(), []pipeline.Stage{{}}) },
			`pipeline: zero Stage or Sink`},
		{"zero source", func() *pipeline.Pipeline { return pipeline.New(pipeline.Source{}, nil) },
			`pipeline: zero Source`},
		{"negative buffer", func() *pipeline.Pipeline {
			p := pipeline.New(src(), nil)
			p.Buffer = -1
			return p
		}, `pipeline: negative Buffer: -1`},
		{"rejects type", func() *pipeline.Pipeline {
			p := pipeline.New(src(), nil)
			p.Rejects = pipeline.To("rejects", newCollector[int]())
			return p
		}, `pipeline: sink "rejects": rejects: type mismatch: got pipeline.Rejection, want int`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.p().Run(context.Background()); err == nil || err.Error() != tc.want {
				t.Errorf("Run = %v, want %q", err, tc.want)
			}
		})
	}
	t.Run("twice", func(t *testing.T) {
		p := pipeline.New(src(), nil)
		if err := p.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := p.Run(context.Background()); err == nil {
			t.Error("second Run succeeded")
		}
	})
	for name, f := range map[string]func(){
		"parallelism": func() { pipeline.Map("m", 0, func(_ context.Context, x int) (int, error) { return x, nil }) },
		"batch size":  func() { pipeline.Batch[int]("b", 0, 0) },
		"empty name":  func() { pipeline.Filter("", 1, func(context.Context, int) (bool, error) { return true, nil }) },
	} {
		t.Run("panic "+name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			f()
		})
	}
}

// TestStatsWhileRunning reads the counters concurrently with a run; -race
// checks that this is safe.
func TestStatsWhileRunning(t *testing.T) {
	defer checkNoLeak(t)()
	p := pipeline.New(pipeline.FromSlice("ints", seq(5000)), []pipeline.Stage{
		pipeline.Map("id", 2, func(_ context.Context, x int) (int, error) { return x, nil }),
	}, pipeline.To("out", newCollector[int]()))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for p.Stats()[2].Out < 5000 {
			runtime.Gosched()
		}
	}()
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-done
	// After Run the counters are final: every record reached the sink.
	if got := p.Stats()[2].Out; got != 5000 {
		t.Errorf("sink counted %d records after Run, want 5000", got)
	}
}
