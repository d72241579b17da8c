//go:build nats

package distributed

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/nmfstream/nmfstream/distributed/natsembed"
	"github.com/nmfstream/nmfstream/stages"
)

// TestChainNodeKilled runs the chain with P = 3 partitions on a 3-node
// cluster with every stream and bucket replicated on each node, three
// instances each connected first to its own node and the driver to node
// 0. A third into the stream node 2 is shut down (its instance reconnects
// to another node, the streams elect new leaders), and two thirds in the
// instance that owns most partitions is stopped (the others take its
// partitions over and replay their batches). The driver must still receive
// every batch's answer once, in order, with every sample predicted exactly
// once, and the owners' summed counters must count every record, sample
// and late label exactly once.
func TestChainNodeKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("a 3-node cluster and a node's loss take several seconds")
	}
	const nb, b, P = 30, 10, 3
	servers, err := natsembed.Cluster(t.TempDir(), 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { natsembed.Shutdown(servers) })
	urls := make([]string, 3)
	for i, s := range servers {
		urls[i] = s.ClientURL()
	}
	cfg := Config{Namespace: "nodes", Partitions: P, Replicas: 3, PinnedTTL: time.Second, Warm: 60} // a common start of 10 batches
	settings := []byte(`{"Rank":3,"Seed":4}`)
	// Instance i prefers node i; every connection reconnects to the others.
	rotated := func(i int) string { return strings.Join(append(slices.Clone(urls[i:]), urls[:i]...), ",") }
	i := 0
	ws, cancels, stop := runWorkersOf(t, urls[0], P, func(*nats.Conn) (*Worker, error) {
		nc, err := nats.Connect(rotated(i), append(ClientOptions(), nats.DontRandomize())...)
		if err != nil {
			return nil, err
		}
		t.Cleanup(nc.Close)
		i++
		return NewChainWorker(context.Background(), nc, cfg, testLearner)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	nc, err := nats.Connect(urls[0], ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	d, err := NewChainDriver(ctx, nc, cfg, settings)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	batches := chainBatches(nb, b)
	var first []*stages.Features
	for _, bt := range batches[:15] {
		first = append(first, stages.NewFeatures(bt))
	}
	if err := d.Anchor(ctx, first); err != nil {
		t.Fatal(err)
	}
	predicted := map[string]int{}
	late := 0
	var last *ChainStep
	stopped := -1
	for k, bt := range batches {
		switch k {
		case nb / 3:
			servers[2].Shutdown()
			servers[2].WaitForShutdown()
		case 2 * nb / 3:
			most := 0
			for j, w := range ws {
				if n := len(w.Stats().Held); n > most {
					most, stopped = n, j
				}
			}
			if stopped < 0 {
				t.Fatal("no instance owns a partition")
			}
			cancels[stopped]()
		}
		late += len(bt.LateLabels)
		if _, err := d.Send(ctx, stages.NewFeatures(bt)); err != nil {
			t.Fatalf("batch %d: %v", k, err)
		}
		if last, err = d.Receive(ctx); err != nil {
			t.Fatalf("batch %d: %v", k, err)
		}
		if last.Batch != int64(k) {
			t.Fatalf("answer of batch %d for batch %d", last.Batch, k)
		}
		for _, p := range last.Step.Predictions {
			predicted[p.ID]++
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	for _, bt := range batches {
		for _, id := range bt.IDs {
			if predicted[id] != 1 {
				t.Errorf("sample %s predicted %d times, want once", id, predicted[id])
			}
		}
	}
	if len(predicted) != nb*b {
		t.Errorf("%d ids predicted, %d samples sent", len(predicted), nb*b)
	}
	c := last.Counters
	if c.Records != int64(nb*b+late) || c.Samples != nb*b || c.LateLabels != int64(late) {
		t.Errorf("owners' counters: %d records, %d samples, %d late labels; sent %d, %d, %d", c.Records, c.Samples, c.LateLabels, nb*b+late, nb*b, late)
	}
	takeovers := 0
	for _, w := range ws {
		takeovers += w.Stats().Takeovers
	}
	if takeovers <= P {
		t.Errorf("%d partitions taken in all, want more than the %d of the start (the stopped instance's moved)", takeovers, P)
	}
}
