package main

import (
	"io"
	"strings"
	"testing"
)

// TestWorkerUsage checks the worker's usage errors: exit status 2 and a
// message naming the problem, and for the flags of the retired GNMF step
// what replaces them.
func TestWorkerUsage(t *testing.T) {
	// Without -tags nats, a missing --nats is a usage error.
	var noEmbedded []string
	if !haveEmbeddedNATS {
		noEmbedded = []string{"worker", "--workers", "2"}
	}
	const url = "nats://127.0.0.1:1"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"worker", "--nats", url, "--workers", "0"}, "nothing to do"},
		{[]string{"worker", "--nats", url, "--partitions", "0"}, "--partitions 0"},
		{[]string{"worker", "--nats", url, "--replicas", "7"}, "--replicas 7"},
		{[]string{"worker", "--nats", url, "extra"}, "unexpected argument"},
		{[]string{"worker", "--nats", url, "--in", "x.arrow"}, "stream --nats NATS --in F"},
		{[]string{"worker", "--nats", url, "--rank=20"}, "give --rank to stream --nats"},
		{[]string{"worker", "--nats", url, "-alpha", "3"}, "give --alpha to stream --nats"},
		{noEmbedded, "--nats URL is required"},
	} {
		if c.args == nil {
			continue
		}
		code, _, errs := runCmd(t, c.args...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, errs, c.want)
		}
	}
}

// TestWorkerHelp checks that worker -help has the description, an
// Examples section and the flags, as every command's does, and says that
// --chain is accepted and does nothing.
func TestWorkerHelp(t *testing.T) {
	code, errs, _ := runCmd(t, "worker", "-help") // help on stdout
	if code != 0 {
		t.Errorf("worker -help: exit %d", code)
	}
	for _, want := range []string{"Usage: nmfstream worker", "Examples:", "nmfstream worker --", "-nats", "-partitions", "--chain, once needed"} {
		if !strings.Contains(errs, want) {
			t.Errorf("worker -help lacks %q:\n%s", want, errs)
		}
	}
}

// TestWorkerSnapshotEvery checks worker's --snapshot-every: given, it
// reaches the options; 0 is refused with what to give instead.
func TestWorkerSnapshotEvery(t *testing.T) {
	o, err := parseWorkerFlags([]string{"--nats", "nats://127.0.0.1:1", "--snapshot-every", "7"}, io.Discard)
	if err != nil || o.snapshotEvery != 7 {
		t.Fatalf("--snapshot-every 7: %v, %+v", err, o)
	}
	if _, err := parseWorkerFlags([]string{"--nats", "nats://127.0.0.1:1", "--snapshot-every", "0"}, io.Discard); err == nil || !strings.Contains(err.Error(), "-1: no snapshots") {
		t.Fatalf("--snapshot-every 0: got %v", err)
	}
}
