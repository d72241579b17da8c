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
	Applied    int     `json:"applied"`
	Expected   int     `json:"expected"`
	IDSumOK    bool    `json:"id_sum_ok"`
	Seconds    float64 `json:"seconds"`
	Accuracy   float64 `json:"accuracy"`
	Partitions int     `json:"partitions"`
	Takeovers  int     `json:"takeovers"`
	Cut        *struct {
		Machine string  `json:"machine"`
		At      int     `json:"predicted_at_cut"`
		Healed  int     `json:"predicted_at_heal"`
		For     float64 `json:"for_s"`
	} `json:"cut"`
}

// TestNetworkCut runs scripts/netlab.sh check: the digits stream through
// stream --nats with two workers on a 3-node NATS cluster (replicas 3), each
// in its own network namespace, once with a worker (the one that worked
// most so far: it holds roles) and once with a NATS node cut off by the
// network (the lab's switch drops every frame from and to it) once 300
// predictions are written, for 6 s, longer than the roles' pinned TTL (2 s),
// then healed. Each run must predict every sample exactly once (one line per
// sample, no id twice) and apply every sample exactly once (the basis's
// sample count and ID sum equal the input's). It needs root, iproute2,
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
		if l.Expected == 0 || l.Samples != l.Expected || l.Predicted != l.Expected || l.Duplicates != 0 {
			t.Errorf("%s cut off: %d samples in the input, %d read by the driver, %d prediction lines, %d ids twice; want one line per sample",
				m, l.Expected, l.Samples, l.Predicted, l.Duplicates)
		}
		if l.Applied != l.Expected || !l.IDSumOK {
			t.Errorf("%s cut off: %d of %d samples applied, ID sum equal: %v; want each applied once", m, l.Applied, l.Expected, l.IDSumOK)
		}
		// The cut fell mid-stream.
		if l.Cut.At < 300 || l.Cut.At >= l.Expected {
			t.Errorf("%s cut off with %d of %d predictions written, want 300 ≤ n < all", m, l.Cut.At, l.Expected)
		}
		// A worker's roles moved to the other: every role taken once at
		// the start (P owners and the coordinator), and at least one again.
		if strings.HasPrefix(m, "w") && l.Takeovers < l.Partitions+2 {
			t.Errorf("worker %s cut off: %d roles taken, want more than the %d of the start", m, l.Takeovers, l.Partitions+1)
		}
		// The predictions still come from a learner: the digits stream
		// scores 0.87–0.89 uncut.
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
