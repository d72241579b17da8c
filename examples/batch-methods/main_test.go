package main

import (
	"context"
	"testing"
)

// TestBatchMethodsInPipeline runs the four batch-only methods through the
// example's pipeline on its defaults (seed 1, rank 40, batches of 50) and
// checks that every arriving digit is scored and that each method's codes
// classify them at least as well as measured when the example was written
// (kernel 0.940, multik 0.910, dpca 0.925, ssnmf 0.957: its 1-NN on eval's
// digits split of seed 1, as BENCHMARKS.md's SSNMF table has it), less a
// point.
func TestBatchMethodsInPipeline(t *testing.T) {
	floors := map[string]float64{"kernel": 0.93, "multik": 0.90, "dpca": 0.915, "ssnmf": 0.947}
	for name, floor := range floors {
		r, err := run(context.Background(), name, 40, 50, 1)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if r.n != 599 {
			t.Errorf("%s: %d arriving digits scored, want 599", name, r.n)
		}
		if r.accuracy < floor {
			t.Errorf("%s: accuracy %.4f, floor %.2f", name, r.accuracy, floor)
		}
	}
}

// TestBatchMethodsCancelled: a cancelled context stops the pipeline with
// its error.
func TestBatchMethodsCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := run(ctx, "dpca", 10, 50, 1); err == nil {
		t.Error("cancelled run: no error")
	}
}
