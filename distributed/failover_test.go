//go:build nats

package distributed

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/nmfstream/nmfstream/distributed/natsembed"
)

// publishSlowly publishes samples in batches of size b with a pause
// between them, retrying a batch that fails (a node being lost: the IDs
// make the retry store each sample once), and calls mid after half.
func publishSlowly(t *testing.T, pub *Publisher, samples []Sample, b int, mid func()) {
	t.Helper()
	for i := 0; i < len(samples); i += b {
		if i == len(samples)/2/b*b && mid != nil {
			mid()
		}
		batch := samples[i:min(i+b, len(samples))]
		deadline := time.Now().Add(30 * time.Second)
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			err := pub.Publish(ctx, batch)
			cancel()
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("publishing samples from %d: %v", i, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// holder returns the index of the worker that holds role, or -1.
func holder(ws []*Worker, alive []bool, role string) int {
	for i, w := range ws {
		if alive[i] && slices.Contains(w.Stats().Held, role) {
			return i
		}
	}
	return -1
}

// TestOwnerKilled kills the instance holding the coordinator (and the
// partitions it owns) mid-stream: the others take its roles over, and
// every sample is applied exactly once (the counters and the ID sum are
// exact).
func TestOwnerKilled(t *testing.T) {
	const n, d = 400, 16
	nc, url := startServer(t)
	cfg := Config{Partitions: 4, Rank: 3, Staleness: 1, Seed: 3, PinnedTTL: time.Second, Idle: 20 * time.Millisecond, SnapshotEvery: 5}
	pub, err := NewPublisher(context.Background(), nc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	samples := clusteredSamples(n, d, 8, 2)
	ws, cancels, stop := runWorkers(t, url, cfg, 3)
	alive := []bool{true, true, true}
	var killed []string
	publishSlowly(t, pub, samples, 20, func() {
		victim := -1
		deadline := time.Now().Add(10 * time.Second)
		for victim < 0 && time.Now().Before(deadline) {
			victim = holder(ws, alive, "coord")
			time.Sleep(10 * time.Millisecond)
		}
		if victim < 0 {
			t.Fatal("no instance holds the coordinator")
		}
		killed = ws[victim].Stats().Held
		cancels[victim]()
		alive[victim] = false
		killedAt := time.Now()
		// Every role of the victim is held by a live instance again.
		for _, r := range killed {
			for holder(ws, alive, r) < 0 {
				if time.Since(killedAt) > 15*time.Second {
					t.Fatalf("role %s not taken over within 15 s", r)
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
		t.Logf("roles %v of the killed instance held again after %v", killed, time.Since(killedAt).Round(time.Millisecond))
	})
	if len(killed) == 0 {
		t.Fatal("the killed instance held no role")
	}
	var idSum uint64
	for _, s := range samples {
		idSum += s.ID
	}
	st := waitState(t, nc, cfg, 30*time.Second, func(s State) bool { return s.Samples >= n })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if st.Samples != n || st.IDSum != idSum {
		t.Errorf("after killing the holder of %v: %d samples applied (ID sum %d), want %d (%d)", killed, st.Samples, st.IDSum, n, idSum)
	}
}

// TestNodeKilled runs the workers on a 3-node cluster with streams and
// buckets replicated on every node, and shuts a node down mid-stream: the
// workers reconnect to the others and every sample is applied exactly once.
func TestNodeKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("a 3-node cluster and a node's loss take several seconds")
	}
	const n, d = 300, 16
	servers, err := natsembed.Cluster(t.TempDir(), 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { natsembed.Shutdown(servers) })
	urls := servers[0].ClientURL() + "," + servers[1].ClientURL() + "," + servers[2].ClientURL()
	cfg := Config{Partitions: 3, Rank: 3, Staleness: 1, Seed: 5, Replicas: 3, PinnedTTL: time.Second, Idle: 20 * time.Millisecond}
	// The publisher and the control connection use node 0, which stays.
	nc := connect(t, servers[0].ClientURL())
	pub, err := NewPublisher(context.Background(), nc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ws, _, stop := runWorkers(t, urls, cfg, 3)
	defer func() {
		if t.Failed() {
			for i, w := range ws {
				t.Logf("instance %d: %+v", i, w.Stats())
			}
		}
	}()
	samples := clusteredSamples(n, d, 6, 4)
	publishSlowly(t, pub, samples, 20, func() {
		servers[2].Shutdown()
		servers[2].WaitForShutdown()
	})
	var idSum uint64
	for _, s := range samples {
		idSum += s.ID
	}
	st := waitState(t, nc, cfg, 60*time.Second, func(s State) bool { return s.Samples >= n })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if st.Samples != n || st.IDSum != idSum {
		t.Errorf("after losing a node: %d samples applied (ID sum %d), want %d (%d)", st.Samples, st.IDSum, n, idSum)
	}
}
