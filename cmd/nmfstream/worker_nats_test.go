//go:build nats

package main

import (
	"encoding/json"
	"testing"
)

// TestWorkerAppliesEverySample runs worker --in on the digits with two
// instances against a server of the test's own: it exits 0 once every
// record is applied, and reports the exact count and a fitted basis.
func TestWorkerAppliesEverySample(t *testing.T) {
	s := testNATS(t)
	train, _, _ := digitsFiles(t, t.TempDir(), 3)
	out := mustRun(t, "worker", "--nats", s.ClientURL(), "--in", train, "--workers", "2", "--rank", "8",
		"--partitions", "3", "--after", "5", "--pinned-ttl", "500ms", "--json")
	var sum workerSummary
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if sum.Samples != uint64(sum.Published) || sum.Published == 0 {
		t.Errorf("applied %d of %d samples", sum.Samples, sum.Published)
	}
	if sum.RelativeError == nil || !(*sum.RelativeError > 0 && *sum.RelativeError < 0.6) {
		t.Errorf("relative error %v, want in (0, 0.6)", sum.RelativeError)
	}
	if sum.Version < 5 {
		t.Errorf("U at version %d, want at least --after 5", sum.Version)
	}
}
