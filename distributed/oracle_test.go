//go:build nats

package distributed

import (
	"fmt"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"
)

// TestSynchronousRoundsEqualSingleMachine is the oracle: with Staleness
// zero, the basis after T rounds equals T multiplicative updates of NMF on
// one machine from the same start (U₀, and V₀ the samples coded on U₀),
// to rounding, with 1, 2 and 4 partitions and two workers sharing them.
func TestSynchronousRoundsEqualSingleMachine(t *testing.T) {
	const n, d, k, rounds = 120, 20, 4, 15
	samples := clusteredSamples(n, d, 6, 1)
	for _, parts := range []int{1, 2, 4} {
		t.Run(fmt.Sprint(parts), func(t *testing.T) {
			nc, url := startServer(t)
			cfg := Config{Partitions: parts, Rank: k, Rounds: rounds, Seed: 7, PinnedTTL: time.Second}
			part := publishAll(t, nc, cfg, samples)
			_, _, stop := runWorkers(t, url, cfg, 2)
			st := waitState(t, nc, cfg, 30*time.Second, func(s State) bool { return s.Version == rounds })
			if err := stop(); err != nil {
				t.Fatal(err)
			}

			var idSum uint64
			for _, s := range samples {
				idSum += s.ID
			}
			if st.Samples != n || st.IDSum != idSum || st.Deltas != uint64(parts*rounds) {
				t.Errorf("counters: %d samples (ID sum %d) in %d deltas, want %d (%d) in %d", st.Samples, st.IDSum, st.Deltas, n, idSum, parts*rounds)
			}
			x := rowsOf(samples)
			u := singleMachine(t, x, part, cfg, rounds)
			var diff mat.Dense
			diff.Sub(st.U, u)
			rel := mat.Norm(&diff, 2) / mat.Norm(u, 2)
			if rel > 1e-9 {
				t.Errorf("U differs from the single-machine updates by %.3g (relative)", rel)
			}
			t.Logf("%d partitions, %d rounds: ‖U − U_single‖/‖U_single‖ = %.2g", parts, rounds, rel)
		})
	}
}
