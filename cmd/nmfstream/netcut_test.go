//go:build netns

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/nmfstream/nmfstream/internal/testenv"
)

// TestNetworkCutChain runs scripts/nats-netcut.sh: a 3-node NATS cluster,
// three `worker --chain` and the driver `stream --nats`, each machine in a
// network namespace of its own, and the MNIST 10k stream; once 3,000
// predictions are written, the worker that holds the partition, then (a
// second run) NATS node 0, is cut off the network for 8 s and healed. Every
// run must end with --out byte for byte the uninterrupted run's (every
// sample predicted exactly once) and its counters exact; cutting the owner
// must move its partition to another worker. It needs root, ip, jq and the
// fetched MNIST, and takes a few minutes: build tag netns.
//
//	go test -tags netns -count=1 -v -timeout 20m -run TestNetworkCutChain ./cmd/nmfstream
func TestNetworkCutChain(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	for _, c := range []string{"ip", "jq", "bc"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Skipf("needs %s", c)
		}
	}
	testenv.Data(t, "mnist", "t10k-images-idx3-ubyte")
	dir := t.TempDir()
	cmd := exec.Command(filepath.Join("..", "..", "scripts", "nats-netcut.sh"), "--dir", dir, "--cut", "worker node", "--partitions", "1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	t.Logf("nats-netcut.sh: %s\n%s", out, stderr.String())
	type result struct {
		Cut        string `json:"cut"`
		Victim     string `json:"victim"`
		Exit       int    `json:"exit"`
		AtCut      int    `json:"predictions_at_cut"`
		Lines      int    `json:"prediction_lines"`
		RefLines   int    `json:"reference_lines"`
		Twice      int    `json:"ids_twice"`
		Identical  bool   `json:"identical_to_uninterrupted"`
		Counters   bool   `json:"counters_exact"`
		RolesTaken int    `json:"roles_taken"`
	}
	var runs []result
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var r result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		runs = append(runs, r)
	}
	if len(runs) != 2 {
		t.Fatalf("%d runs reported, want 2 (exit: %v)", len(runs), err)
	}
	for _, r := range runs {
		if r.Exit != 0 || !r.Identical || !r.Counters || r.Twice != 0 || r.Lines != r.RefLines {
			t.Errorf("%s %s cut: exit %d, %d prediction lines of %d, %d ids twice, identical %v, counters exact %v",
				r.Cut, r.Victim, r.Exit, r.Lines, r.RefLines, r.Twice, r.Identical, r.Counters)
		}
		if r.AtCut == 0 || r.AtCut >= r.RefLines {
			t.Errorf("%s cut at %d predictions of %d: not mid-stream", r.Cut, r.AtCut, r.RefLines)
		}
		if r.Cut == "worker" && r.RolesTaken < 2 {
			t.Errorf("the owner was cut off and %d roles were taken in all: the partition did not move", r.RolesTaken)
		}
	}
	if err != nil {
		t.Errorf("nats-netcut.sh: %v", err)
	}
}
