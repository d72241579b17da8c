//go:build nats

package distributed

import (
	"context"
	"testing"
	"time"
)

// TestNeighborsAcrossPartitions checks the request-reply k-NN: asking
// every partition gives the exact k nearest samples of the whole stream.
func TestNeighborsAcrossPartitions(t *testing.T) {
	const k = 5
	nc, url := startServer(t)
	cfg := Config{Partitions: 4, Rank: 3, Seed: 2, PinnedTTL: time.Second, Idle: 20 * time.Millisecond}
	pub, err := NewPublisher(context.Background(), nc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	samples := clusteredSamples(200, 12, 5, 12)
	if err := pub.Publish(context.Background(), samples); err != nil {
		t.Fatal(err)
	}
	_, _, stop := runWorkers(t, url, cfg, 2)
	defer stop()
	waitState(t, nc, cfg, 20*time.Second, func(s State) bool { return s.Samples == uint64(len(samples)) })
	part, _ := pub.Partitioner(context.Background())
	queries := clusteredSamples(10, 12, 5, 13)
	for _, q := range queries {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		got, err := Neighbors(ctx, nc, cfg, part, q, k, cfg.partitions())
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		want := nearest(samples, &q, k, nil)
		if len(got) != k {
			t.Fatalf("query %d: %d neighbours, want %d", q.ID, len(got), k)
		}
		for i := range want {
			if got[i].ID != want[i].ID || got[i].SqDist != want[i].SqDist {
				t.Errorf("query %d: neighbour %d is sample %d at %g, want %d at %g", q.ID, i, got[i].ID, got[i].SqDist, want[i].ID, want[i].SqDist)
			}
			if got[i].Partition != part.Partition(&samples[got[i].ID-1]) {
				t.Errorf("query %d: sample %d reported from partition %d, it is in %d", q.ID, got[i].ID, got[i].Partition, part.Partition(&samples[got[i].ID-1]))
			}
		}
	}
}
