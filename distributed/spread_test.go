//go:build nats

package distributed

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nmfstream/nmfstream/stages"
)

// TestChainWorkersSpread: the first worker of a namespace takes all its
// partitions; a second one that comes mid-stream gets half of them
// within a few TTLs (the first gives one up, Worker.mayPull), and the
// stream goes on with every batch answered once and every sample
// predicted once, the moved partition replayed by its new owner.
func TestChainWorkersSpread(t *testing.T) {
	const nb, b, P = 20, 10, 2
	nc, url := startServer(t)
	cfg := Config{Namespace: "spread", Partitions: P, PinnedTTL: 500 * time.Millisecond, Warm: 60} // a common start of 10 batches
	ws1, _, stop1 := runChainWorkers(t, url, cfg, 1)
	defer stop1()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d, err := NewChainDriver(ctx, nc, cfg, []byte(`{"Rank":3,"Seed":4}`))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	batches := chainBatches(nb, b)
	predicted := map[string]int{}
	drive := func(from, to int) {
		for k := from; k < to; k++ {
			if _, err := d.Send(ctx, stages.NewFeatures(batches[k])); err != nil {
				t.Fatal(err)
			}
			got, err := d.Receive(ctx)
			if err != nil || got.Batch != int64(k) {
				t.Fatalf("batch %d: answer %v, %v", k, got, err)
			}
			for _, p := range got.Step.Predictions {
				predicted[p.ID]++
			}
		}
	}
	drive(0, nb/2)
	if h := ws1[0].Stats().Held; len(h) != P {
		t.Fatalf("the only worker holds %v, want all %d partitions", h, P)
	}
	ws2, _, stop2 := runChainWorkers(t, url, cfg, 1)
	defer stop2()
	deadline := time.Now().Add(20 * time.Second)
	for len(ws1[0].Stats().Held) != 1 || len(ws2[0].Stats().Held) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("after 20 s the workers hold %v and %v, want one partition each", ws1[0].Stats().Held, ws2[0].Stats().Held)
		}
		time.Sleep(50 * time.Millisecond)
	}
	drive(nb/2, nb)
	for _, bt := range batches {
		for _, id := range bt.IDs {
			if predicted[id] != 1 {
				t.Errorf("sample %s predicted %d times, want once", id, predicted[id])
			}
		}
	}
	if s := ws2[0].Stats(); s.Takeovers != 1 || s.Rounds < nb/2 {
		t.Errorf("the second worker took %d partitions and answered %d batch shares; want 1, and at least the %d after it came", s.Takeovers, s.Rounds, nb/2)
	}
}

// TestChainWorkersSpreadBeforeADriver: partitions spread while their
// owners still wait for a driver's learner settings (a worker that gives
// a role up must stop its owner, though that owner is waiting for
// something else).
func TestChainWorkersSpreadBeforeADriver(t *testing.T) {
	_, url := startServer(t)
	cfg := Config{Namespace: "early", Partitions: 2, PinnedTTL: 400 * time.Millisecond}
	ws1, _, stop1 := runChainWorkers(t, url, cfg, 1)
	defer stop1()
	deadline := time.Now().Add(10 * time.Second)
	for len(ws1[0].Stats().Held) != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the only worker holds %v, want both partitions", ws1[0].Stats().Held)
		}
		time.Sleep(20 * time.Millisecond)
	}
	ws2, _, stop2 := runChainWorkers(t, url, cfg, 1)
	defer stop2()
	deadline = time.Now().Add(20 * time.Second)
	for len(ws1[0].Stats().Held) != 1 || len(ws2[0].Stats().Held) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("after 20 s the workers hold %v and %v, want one partition each", ws1[0].Stats().Held, ws2[0].Stats().Held)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestMayPullTogether: Workers started together (Expect, Index) pull only
// their own roles (owner-p, p ≡ Index mod Expect) for two TTLs after Run
// starts, whatever count of live Workers they see; after that, the share
// rule (⌈P/live⌉) applies, so another's role is taken.
func TestMayPullTogether(t *testing.T) {
	w := &Worker{cfg: Config{Partitions: 5, PinnedTTL: time.Minute}, held: map[string]bool{}, Expect: 2, Index: 1}
	w.start = time.Now()
	one := func() int { return 1 }
	for p := range 5 {
		if got := w.mayPull(fmt.Sprintf("owner-%d", p), one); got != (p%2 == 1) {
			t.Errorf("at the start: owner-%d pulled %v, want %v", p, got, p%2 == 1)
		}
	}
	w.start = time.Now().Add(-3 * time.Minute)
	for p := range 5 {
		if !w.mayPull(fmt.Sprintf("owner-%d", p), one) {
			t.Errorf("after two TTLs, alone: owner-%d not pulled", p)
		}
	}
}
