package pipeline_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nmfstream/nmfstream/pipeline"
)

// TestFromChanCancel cancels a run whose source waits on an empty channel
// that is never closed: Run returns ctx.Err() promptly and leaves no
// goroutine behind.
func TestFromChanCancel(t *testing.T) {
	defer checkNoLeak(t)()
	in := make(chan int)
	got := make(chan int, 10)
	p := pipeline.New(
		pipeline.FromChan("requests", in),
		[]pipeline.Stage{pipeline.Ordered(pipeline.Map("id", 2, func(_ context.Context, x int) (int, error) { return x, nil }))},
		pipeline.To("out", pipeline.WriteFunc[int](func(_ context.Context, x int) error { got <- x; return nil })),
	)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	in <- 7
	if x := <-got; x != 7 {
		t.Errorf("got %d, want 7", x)
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run returned %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}
