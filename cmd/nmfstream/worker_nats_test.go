//go:build nats

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// TestWorkerRunsTheChain runs the owners in a worker command, as a user
// on another machine would, and the driver in stream --nats --workers 0:
// the predictions are stream's, byte for byte (one partition), and the
// worker, interrupted, reports a takeover and every prediction it sent.
func TestWorkerRunsTheChain(t *testing.T) {
	s := testNATS(t)
	dir := t.TempDir()
	flags, outS := digitsReference(t, dir)

	wctx, stop := context.WithCancel(context.Background())
	defer stop()
	var wout, werr bytes.Buffer
	wdone := make(chan int, 1)
	go func() {
		wdone <- run(wctx, []string{"worker", "--nats", s.ClientURL(), "--namespace", "wk", "--pinned-ttl", "500ms", "--json"}, &wout, &werr)
	}()

	outN := filepath.Join(dir, "nats.jsonl")
	code, stdout, stderr := runCmd(t, append([]string{"stream", "--nats", s.ClientURL(), "--namespace", "wk", "--workers", "0",
		"--owner-timeout", "30s", "--pinned-ttl", "500ms", "-out", outN}, flags...)...)
	if code != 0 {
		t.Fatalf("stream --nats --workers 0: exit %d: %s", code, stderr)
	}
	sum := decodeSummary(t, []byte(stdout))
	if a, b := readFile(t, outS), readFile(t, outN); !bytes.Equal(a, b) {
		t.Errorf("the worker's predictions differ from stream's (%d and %d bytes)", len(b), len(a))
	}

	stop()
	select {
	case code := <-wdone:
		if code != 0 {
			t.Fatalf("worker: exit %d: %s", code, werr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("worker still runs 30 s after its interrupt")
	}
	var ws workerSummary
	if err := json.Unmarshal(wout.Bytes(), &ws); err != nil {
		t.Fatalf("worker --json printed %q: %v", wout.String(), err)
	}
	if ws.Takeovers < 1 || ws.Partitions != 1 || int64(ws.Samples) != sum.Samples || ws.Batches == 0 {
		t.Errorf("worker summary %+v: want 1 partition taken, and the stream's %d samples predicted", ws, sum.Samples)
	}
	t.Logf("worker: %s", fmt.Sprint(ws))
}

// digitsReference writes the workers' tests' digits stream in dir and runs
// it through stream (one machine): it returns the flags that stream and
// stream --nats share and the path of stream's --out, the reference.
func digitsReference(t *testing.T, dir string) (flags []string, outS string) {
	t.Helper()
	in := filepath.Join(dir, "digits.arrow")
	writeDigitsStream(t, in, 0.2, 30)
	flags = []string{"-in", in, "-json", "-batch", "50", "-window", "300", "-rank", "8", "-seed", "2"}
	outS = filepath.Join(dir, "stream.jsonl")
	if code, _, stderr := runCmd(t, append([]string{"stream", "-out", outS}, flags...)...); code != 0 {
		t.Fatalf("stream: exit %d: %s", code, stderr)
	}
	return flags, outS
}
