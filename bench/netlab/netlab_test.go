//go:build netns

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// checkLine is the part of a scripts/netlab.sh run's JSON line that the
// failure test reads.
type checkLine struct {
	Samples    int     `json:"samples"`
	Predicted  int     `json:"predicted"`
	Duplicates int     `json:"duplicates"`
	Missing    int     `json:"missing"`
	Unknown    int     `json:"unknown"`
	Expected   int     `json:"expected"`
	Seconds    float64 `json:"seconds"`
	Accuracy   float64 `json:"accuracy"`
	Partitions int     `json:"partitions"`
	Takeovers  int     `json:"takeovers"`
	Cut        *struct {
		Machine string  `json:"machine"`
		At      int     `json:"predicted_at_cut"`
		Healed  int     `json:"predicted_at_heal"`
		For     float64 `json:"for_s"`
		Taken   int     `json:"taken_after"`
	} `json:"cut"`
}

// TestNetworkCut runs scripts/netlab.sh check: the digits stream through
// stream --nats and the chain's owners in two worker processes on a 3-node
// NATS cluster (replicas 3), each in its own network namespace, once with a
// worker (the one that worked most so far: it owns partitions) and once
// with a NATS node cut off by the network (the lab's switch drops every
// frame from and to it) once 300 predictions are written, for 6 s, longer
// than the roles' pinned TTL (2 s), then healed. Each run must predict
// every sample exactly once (one line per sample of the input, by id, no id
// twice, none unknown) and the owners must count every sample once (the
// driver's summed counters). It needs root, iproute2,
// /dev/net/tun and jq; run it with
//
//	sudo go test -tags netns -count=1 -v -timeout 10m ./bench/netlab
func TestNetworkCut(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("netns: needs root to create network namespaces (ip netns add)")
	}
	for _, tool := range []string{"ip", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("netns: needs %s on PATH (iproute2, jq)", tool)
		}
	}
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		t.Skipf("netns: needs /dev/net/tun for the lab's switch: %v", err)
	}
	probe := fmt.Sprintf("nltest%d", os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", probe).CombinedOutput(); err != nil {
		t.Skipf("netns: cannot create a network namespace here: %v: %s", err, bytes.TrimSpace(out))
	}
	exec.Command("ip", "netns", "del", probe).Run()

	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 9*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join("..", "..", "scripts", "netlab.sh"), "check",
		"--dir", dir, "--workers", "2", "--cut-at", "300", "--cut-for", "6")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	t.Logf("netlab.sh check:\n%s%s", stdout.String(), stderr.String())
	if err != nil {
		t.Fatalf("netlab.sh check: %v", err)
	}
	cuts := map[string]bool{}
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		var l checkLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("netlab.sh check printed %q: %v", sc.Text(), err)
		}
		if l.Cut == nil {
			t.Fatalf("a run without a cut: %s", sc.Text())
		}
		m := l.Cut.Machine
		cuts[m[:1]] = true
		if l.Expected == 0 || l.Predicted != l.Expected || l.Duplicates != 0 || l.Missing != 0 || l.Unknown != 0 {
			t.Errorf("%s cut off: %d samples in the input, %d prediction lines, %d ids twice, %d missing, %d unknown; want one line per sample",
				m, l.Expected, l.Predicted, l.Duplicates, l.Missing, l.Unknown)
		}
		if l.Samples != l.Expected {
			t.Errorf("%s cut off: the owners counted %d samples of %d; want each once", m, l.Samples, l.Expected)
		}
		// The cut fell mid-stream.
		if l.Cut.At < 300 || l.Cut.At >= l.Expected {
			t.Errorf("%s cut off with %d of %d predictions written, want 300 ≤ n < all", m, l.Cut.At, l.Expected)
		}
		// A worker's partitions moved to the other: at least one taken
		// over after the cut.
		if strings.HasPrefix(m, "w") && l.Cut.Taken < 1 {
			t.Errorf("worker %s cut off: no partition taken over after the cut", m)
		}
		// The predictions still come from a learner: the digits stream
		// scores 0.89 uncut with two partitions.
		if l.Accuracy < 0.8 {
			t.Errorf("%s cut off: accuracy %.4f, want ≥ 0.8", m, l.Accuracy)
		}
	}
	if !cuts["w"] || !cuts["n"] {
		t.Errorf("runs with cuts of %v, want a worker (w) and a NATS node (n)", cuts)
	}
	out, _ := exec.Command("ip", "netns", "list").Output()
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, fmt.Sprintf("nl%d-", cmd.Process.Pid)) {
			t.Errorf("namespace left behind: %s", l)
		}
	}
}
