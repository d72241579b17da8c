//go:build nats

package main

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"testing"
)

// TestStreamNATSPrequential runs the digits stream through stream --nats
// with one instance on one partition and three on three, against a server
// of the test's own: every usable sample gets exactly one prediction line,
// the bad records are rejected and counted, the counters are exact (every
// sample applied to the statistics), the reported accuracy is the outside
// scorer's, and it is within 5 points of the single-machine stream's.
func TestStreamNATSPrequential(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "digits.arrow")
	records, bad := writeDigitsStream(t, in, 0.1, 100)
	single := decodeSummary(t, []byte(mustRun(t, "stream", "--in", in, "--json")))
	for _, p := range []int{1, 3} {
		t.Run(fmt.Sprint(p), func(t *testing.T) {
			sum := runStreamNATSChecked(t, in, filepath.Join(dir, fmt.Sprintf("pred%d.jsonl", p)), p, records, bad)
			// 0.05: the partitions' graphs drop the edges between partitions,
			// and labels reach predictions a step later than on one machine.
			if math.Abs(float64(sum.Accuracy)-float64(single.Accuracy)) > 0.05 {
				t.Errorf("accuracy %.4f, the single-machine stream %.4f", float64(sum.Accuracy), float64(single.Accuracy))
			}
			t.Logf("%d partitions: accuracy %.4f (%d of %d), single machine %.4f", p, float64(sum.Accuracy), sum.Correct, sum.NScored, float64(single.Accuracy))
		})
	}
}

// runStreamNATSChecked runs stream --nats on in with p instances and p partitions
// against a server of its own, writing predictions to out, and checks what
// every run must give: records records of which bad are rejected, every
// sample applied and no label for an unknown sample, exactly one
// prediction line per sample, and the reported score equal to the outside
// scorer's. It returns the run's summary.
func runStreamNATSChecked(t *testing.T, in, out string, p, records, bad int) streamNATSSummary {
	t.Helper()
	s := testNATS(t)
	raw := mustRun(t, "stream", "--nats", s.ClientURL(), "--in", in, "--out", out,
		"--workers", fmt.Sprint(p), "--partitions", fmt.Sprint(p), "--pinned-ttl", "500ms", "--json")
	var sum streamNATSSummary
	if err := json.Unmarshal([]byte(raw), &sum); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	if sum.Records != int64(records) || sum.Rejected != int64(bad) || sum.Samples+sum.LateLabels+sum.Rejected != sum.Records {
		t.Errorf("%d records (%d rejected, %d samples, %d late labels), want %d records with %d rejected",
			sum.Records, sum.Rejected, sum.Samples, sum.LateLabels, records, bad)
	}
	if sum.Applied != uint64(sum.Samples) || sum.UnknownLabels != 0 {
		t.Errorf("%d samples applied of %d published; %d labels for unknown samples", sum.Applied, sum.Samples, sum.UnknownLabels)
	}
	lines := predictionLines(t, out)
	if len(lines) != int(sum.Samples) {
		t.Errorf("%d ids with a prediction line, want one for each of %d samples", len(lines), sum.Samples)
	}
	for id, c := range lines {
		if c != 1 {
			t.Errorf("sample %s has %d prediction lines", id, c)
		}
	}
	right, n := outsideScore(t, in, out)
	if sum.NScored != int64(n) || sum.Correct != int64(right) {
		t.Errorf("stream reports %d of %d right, the outside scorer %d of %d", sum.Correct, sum.NScored, right, n)
	}
	return sum
}
