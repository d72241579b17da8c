//go:build nats

package distributed

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nmfstream/nmfstream/distributed/natsembed"
)

// TestNamespaceRefusesOtherSettings checks that the first instance of a
// namespace stores its settings and that a later one with other settings
// is refused, the error naming each differing setting with the
// namespace's value, while one with the same settings (defaults spelled
// out or not) joins.
func TestNamespaceRefusesOtherSettings(t *testing.T) {
	nc, _ := startServer(t)
	ctx := context.Background()
	first := Config{Namespace: "cfg", Rank: 4, Partitions: 2, Alpha: 100, Window: 500}
	if _, err := NewChainWorker(ctx, nc, first, testLearner); err != nil {
		t.Fatal(err)
	}
	same := first
	same.GraphK, same.Sweeps = 5, 1 // the defaults, spelled out
	if _, err := NewChainWorker(ctx, nc, same, testLearner); err != nil {
		t.Fatalf("same settings refused: %v", err)
	}
	other := first
	other.Partitions, other.Alpha, other.Staleness = 4, 0, 1
	_, err := NewChainWorker(ctx, nc, other, testLearner)
	if err == nil {
		t.Fatal("an instance with other partitions, alpha and staleness joined")
	}
	for _, want := range []string{`"cfg"`, "partitions 4 (the namespace's: 2)", "alpha 0 (the namespace's: 100)", "staleness 1 (the namespace's: 0)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "rank") || strings.Contains(err.Error(), "window") {
		t.Errorf("error %q names settings that agree", err)
	}
	got, ok, err := StoredConfig(ctx, nc, Config{Namespace: "cfg", Rank: 1})
	if err != nil || !ok {
		t.Fatalf("stored config: %v, %v", ok, err)
	}
	if got.Partitions != 2 || got.Alpha != 100 || got.Window != 500 || got.Rank != 4 {
		t.Errorf("stored config %+v, want the first instance's", got)
	}
	if _, ok, err := StoredConfig(ctx, nc, Config{Namespace: "fresh", Rank: 1}); ok || err != nil {
		t.Errorf("a new namespace has a stored config: %v, %v", ok, err)
	}
}

// TestWorkersStartedTogether starts three instances at once on a new
// namespace of a 3-node cluster with 3 replicas, each on its own node:
// every one must come up (creating the streams and buckets concurrently
// used to fail with "context deadline exceeded").
func TestWorkersStartedTogether(t *testing.T) {
	servers, err := natsembed.Cluster(t.TempDir(), 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { natsembed.Shutdown(servers) })
	cfg := Config{Namespace: "together", Rank: 3, Partitions: 3, Replicas: 3}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, len(servers))
	for i, s := range servers {
		nc := connect(t, s.ClientURL())
		wg.Go(func() {
			_, errs[i] = NewChainWorker(ctx, nc, cfg, testLearner)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("instance %d: %v", i, err)
		}
	}
}

// TestAwaitWorker checks that AwaitWorker reports while no worker runs on
// the namespace and returns once one does.
func TestAwaitWorker(t *testing.T) {
	nc, url := startServer(t)
	cfg := Config{Namespace: "await", Rank: 2, Partitions: 1, PinnedTTL: 400 * time.Millisecond}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var reports int
	var stop func() error
	defer func() {
		if stop != nil {
			if err := stop(); err != nil {
				t.Error(err)
			}
		}
	}()
	err := AwaitWorker(ctx, nc, cfg, 100*time.Millisecond, func(time.Duration) {
		reports++
		if reports == 3 {
			_, _, stop = runChainWorkers(t, url, cfg, 1)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if reports < 3 {
		t.Errorf("%d reports before the worker started, want 3", reports)
	}
	short, cancelShort := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancelShort()
	if err := AwaitWorker(short, nc, Config{Namespace: "nobody", Rank: 1}, 50*time.Millisecond, func(time.Duration) {}); err == nil {
		t.Error("a namespace without workers has a live worker")
	}
}

// TestAdoptConfig checks that AdoptConfig takes the namespace's value of
// each setting not given, keeps the given ones, and leaves a default that
// already agrees unresolved (the Config is unchanged when all agree).
func TestAdoptConfig(t *testing.T) {
	nc, _ := startServer(t)
	ctx := context.Background()
	stored := Config{Namespace: "adopt", Rank: 5, Partitions: 3, Alpha: 2, Staleness: 1}
	if _, err := NewChainWorker(ctx, nc, stored, testLearner); err != nil {
		t.Fatal(err)
	}
	mine := Config{Namespace: "adopt", Rank: 9, Partitions: 1, Alpha: 2}
	got, ok, err := AdoptConfig(ctx, nc, mine, func(name string) bool { return name == "rank" })
	if err != nil || !ok {
		t.Fatalf("%v, %v", ok, err)
	}
	want := mine
	want.Partitions, want.Staleness = 3, 1
	if got != want {
		t.Errorf("adopted %+v, want %+v", got, want)
	}
	same := Config{Namespace: "adopt", Rank: 5, Partitions: 3, Alpha: 2, Staleness: 1}
	if got, _, err := AdoptConfig(ctx, nc, same, func(string) bool { return false }); err != nil || got != same {
		t.Errorf("a config that agrees became %+v (%v)", got, err)
	}
}
