//go:build nats

package distributed

import (
	"context"
	"strconv"
	"sync"
	"testing"
)

// TestUpdateSharedIsAtomic has publishers on separate connections add to
// one shared counter at once: every increment counts exactly once (the
// compare-and-set redoes a refused update on the newer value), an update
// that declines to write leaves the value, and a bad key is an error.
func TestUpdateSharedIsAtomic(t *testing.T) {
	_, url := startServer(t)
	cfg := Config{Rank: 2, Namespace: "shared"}
	ctx := context.Background()
	const writers, each = 4, 15
	pubs := make([]*Publisher, writers)
	for i := range pubs {
		p, err := NewPublisher(ctx, connect(t, url), cfg)
		if err != nil {
			t.Fatal(err)
		}
		pubs[i] = p
	}
	add := func(old []byte) ([]byte, bool, error) {
		n := 0
		if old != nil {
			var err error
			if n, err = strconv.Atoi(string(old)); err != nil {
				return nil, false, err
			}
		}
		return []byte(strconv.Itoa(n + 1)), true, nil
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for _, p := range pubs {
		wg.Go(func() {
			for range each {
				if err := p.UpdateShared(ctx, "count", add); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var got []byte
	read := func(old []byte) ([]byte, bool, error) { got = old; return nil, false, nil }
	if err := pubs[0].UpdateShared(ctx, "count", read); err != nil {
		t.Fatal(err)
	}
	if want := strconv.Itoa(writers * each); string(got) != want {
		t.Errorf("counter %q after %d increments, want %s", got, writers*each, want)
	}
	if err := pubs[0].UpdateShared(ctx, "no.dots", read); err == nil {
		t.Error("key with a dot accepted")
	}
}
