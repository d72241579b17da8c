// Command scalemodel prints the cost model of distributed/DESIGN.md: the
// messages, bytes and staleness per second of the distributed learner for
// a stream of samples across N machines, from the sizes of its messages
// (distributed/codec.go) and a compute rate per machine.
//
// Usage:
//
//	go run ./distributed/cmd/scalemodel [-samples 1e8] [-dim 1e5] [-nnz 100] [-rank 50] [-gflops 10] [-round 1s] [-staleness 2]
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"text/tabwriter"
	"time"
)

func main() {
	samples := flag.Float64("samples", 1e8, "samples in the stream")
	dim := flag.Float64("dim", 1e5, "dimension D")
	nnz := flag.Float64("nnz", 100, "nonzero entries per sample (D for dense data)")
	rank := flag.Float64("rank", 50, "rank K")
	gflops := flag.Float64("gflops", 10, "sustained GFlop/s of one machine (all its cores)")
	round := flag.Duration("round", time.Second, "length of a round (an owner's batch)")
	stale := flag.Int("staleness", 2, "staleness bound s, in rounds")
	perMachine := flag.Int("partitions-per-machine", 8, "virtual partitions per machine")
	initSweeps := flag.Float64("init-sweeps", 10, "sweeps coding a new sample")
	refresh := flag.Float64("refresh", 1, "older codes swept per new sample (Refresh / new samples per round)")
	flag.Parse()

	d, z, k := *dim, *nnz, *rank
	tr := round.Seconds()
	// Flops of one sweep of one code: XᵀU on its nonzeros, V·UᵀU; and of
	// its statistics: x vᵀ into B, v vᵀ into A (twice for a changed code:
	// old out, new in).
	sweep := 2*z*k + 2*k*k
	stats := 2*z*k + k*k
	perSample := *initSweeps*sweep + stats + *refresh*(sweep+2*stats)
	sampleBytes := 26 + 12*z
	if z >= d {
		sampleBytes = 26 + 8*d
	}
	basisBytes := 41 + 8 + 8*d*k

	fmt.Printf("%.0e samples, D = %.0e, %.0f nonzeros each, K = %.0f, %.0f GFlop/s per machine, rounds of %v, staleness %d\n\n",
		*samples, d, z, k, *gflops, *round, *stale)
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "machines\tpartitions\tsamples/s\thours for all\tmsgs/s in\tMB/s in\tdeltas/s\tMB/s deltas\tMB/s U fan-out\tcoordinator busy\tstaleness bound (s)\t")
	for _, n := range []float64{1, 4, 16, 64} {
		p := n * float64(*perMachine)
		rate := n * *gflops * 1e9 / perSample
		// One round of a partition: b new samples, refresh·b older ones.
		b := rate * tr / p
		changed := b * (1 + *refresh)
		// Rows of ΔB: the union of the changed samples' features.
		rows := d * (1 - math.Pow(1-z/d, changed))
		deltaBytes := 77 + 8*k*k + rows*(4+8*k) + changed*(4+8*k)
		deltasPerSec := p / tr
		// The coordinator adds each delta's rows, and steps U once per
		// round: U·A (2DK²) and the update (2DK).
		coordFlops := deltasPerSec*(rows*k+k*k) + (2*d*k*k+2*d*k)/tr
		busy := coordFlops / (*gflops * 1e9 / 4) // one core of a machine
		fmt.Fprintf(w, "%.0f\t%.0f\t%.3g\t%.3g\t%.3g\t%.3g\t%.3g\t%.3g\t%.3g\t%.0f%%\t%.3g\t\n",
			n, p, rate, *samples/rate/3600,
			rate+deltasPerSec+n/tr+n*4*(p+1), // samples, deltas, U versions to N watchers, ticks to P+1 roles
			rate*sampleBytes/1e6, deltasPerSec, deltasPerSec*deltaBytes/1e6, n*basisBytes/tr/1e6,
			100*busy, float64(*stale)*tr)
	}
	w.Flush()
	fmt.Printf("\nmsgs/s in counts samples, deltas, basis versions delivered to every machine's watcher and role ticks (4 per second per\n" +
		"machine and role); U fan-out is the dense basis sent to every machine once per round, the term that bounds N.\n" +
		"The coordinator's share is of one core; staleness is the bound s × round length, the age of the U a delta is computed on.\n")
}
