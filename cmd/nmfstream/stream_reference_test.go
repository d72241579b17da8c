package main

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// TestStreamBatchReference checks --batch-reference: the report compares
// the online factorization with a batch refit of the window (the batch
// objective lower, the gap as the two objectives give it), the refit comes
// after the last prediction (the predictions are those of a run without
// it), and bad uses are refused.
func TestStreamBatchReference(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "d.arrow")
	writeDigitsStream(t, in, 0.1, 100)
	args := []string{"stream", "-in", in, "-rank", "10", "-window", "300", "-method", "ssknmf", "-json"}
	plain, ref := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	code, out, e := runCmd(t, append(args, "-out", plain)...)
	if code != 0 {
		t.Fatal(e)
	}
	if strings.Contains(out, "batch_reference") {
		t.Errorf("a run without --batch-reference reports one: %s", out)
	}
	var online struct {
		CodeNN1 float64 `json:"code_1nn"`
		CodeNMI float64 `json:"code_nmi"`
	}
	if err := json.Unmarshal([]byte(out), &online); err != nil {
		t.Fatal(err)
	}
	code, out, e = runCmd(t, append(args, "-out", ref, "-batch-reference", "25")...)
	if code != 0 {
		t.Fatal(e)
	}
	var sum struct {
		CodeNN1 float64 `json:"code_1nn"`
		CodeNMI float64 `json:"code_nmi"`
		Ref     *struct {
			Iterations      int     `json:"iterations"`
			ObjectiveOnline float64 `json:"objective_online"`
			ObjectiveBatch  float64 `json:"objective_batch"`
			ObjectiveGap    float64 `json:"objective_gap"`
			CodesChange     float64 `json:"codes_change"`
			CodeNN1         float64 `json:"code_1nn"`
			CodeNMI         float64 `json:"code_nmi"`
			Error           string  `json:"error"`
		} `json:"batch_reference"`
	}
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.CodeNN1 != online.CodeNN1 || sum.CodeNMI != online.CodeNMI {
		t.Errorf("code_1nn, code_nmi %v, %v with the refit, %v, %v without: want the online codes' both times", sum.CodeNN1, sum.CodeNMI, online.CodeNN1, online.CodeNMI)
	}
	r := sum.Ref
	switch {
	case r == nil:
		t.Fatalf("no batch_reference in %s", out)
	case r.Iterations < 1 || r.Iterations > 25 || r.Error != "":
		t.Errorf("%d iterations, error %q", r.Iterations, r.Error)
	case !(r.ObjectiveBatch < r.ObjectiveOnline):
		t.Errorf("batch objective %g, online %g: want the refit lower", r.ObjectiveBatch, r.ObjectiveOnline)
	case math.Abs(r.ObjectiveGap-(r.ObjectiveOnline-r.ObjectiveBatch)/r.ObjectiveBatch) > 1e-9:
		t.Errorf("gap %g from objectives %g and %g", r.ObjectiveGap, r.ObjectiveOnline, r.ObjectiveBatch)
	case !(r.CodesChange > 0) || !(r.CodeNN1 > 0.5 && r.CodeNN1 <= 1) || !(r.CodeNMI > 0 && r.CodeNMI <= 1):
		t.Errorf("codes change %g, 1-NN %g, NMI %g", r.CodesChange, r.CodeNN1, r.CodeNMI)
	}
	sameFile(t, ref, plain, "the arrival-time predictions without --batch-reference,")
	if code, _, e := runCmd(t, "stream", "-in", in, "-batch-reference", "-1"); code != 2 || !strings.Contains(e, "--batch-reference") {
		t.Errorf("--batch-reference -1: exit %d, %s", code, e)
	}
	if code, _, e := runCmd(t, "stream", "--nats", "nats://127.0.0.1:1", "-in", in, "-batch-reference", "5"); code != 2 || !strings.Contains(e, "--batch-reference") {
		t.Errorf("--batch-reference with --nats: exit %d, %s", code, e)
	}
}
