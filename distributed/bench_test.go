//go:build nats

package distributed

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkRounds measures synchronous rounds (versions of U) per second
// and the samples per second they carry, for 1 and 3 instances sharing 6
// partitions on one loopback server. On 2 cores the instances share the
// same cores: this measures the protocol's overhead, not a speed-up.
func BenchmarkRounds(b *testing.B) {
	for _, workers := range []int{1, 3} {
		b.Run(fmt.Sprintf("instances=%d", workers), func(b *testing.B) {
			const n, d, rounds = 600, 64, 30
			samples := clusteredSamples(n, d, 12, 1)
			for b.Loop() {
				b.StopTimer()
				nc, url := startServer(b)
				cfg := Config{Partitions: 6, Rank: 10, Rounds: rounds, Seed: 1, PinnedTTL: time.Second}
				pub, err := NewPublisher(context.Background(), nc, cfg)
				if err != nil {
					b.Fatal(err)
				}
				if err := pub.Publish(context.Background(), samples); err != nil {
					b.Fatal(err)
				}
				ws, _, stop := runWorkers(b, url, cfg, workers)
				// Time from every role held to the last version.
				for {
					held := 0
					for _, w := range ws {
						held += len(w.Stats().Held)
					}
					if held == cfg.partitions()+1 {
						break
					}
					time.Sleep(5 * time.Millisecond)
				}
				st0 := waitState(b, nc, cfg, time.Minute, func(State) bool { return true })
				b.StartTimer()
				start := time.Now()
				st := waitState(b, nc, cfg, time.Minute, func(s State) bool { return s.Version == rounds })
				el := time.Since(start)
				b.StopTimer()
				if err := stop(); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(st.Version-st0.Version)/el.Seconds(), "versions/s")
				b.ReportMetric(float64(st.Deltas)/float64(st.Version), "deltas/version")
				b.StartTimer()
			}
		})
	}
}
