package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/nmfstream/nmfstream/distributed/natsembed"
)

// TestWorkerAppliesEverySample runs worker --in on the digits with two
// instances against a server of the test's own: it exits 0 once every
// record is applied, and reports the exact count and a fitted basis.
func TestWorkerAppliesEverySample(t *testing.T) {
	s, err := natsembed.Start(t.TempDir(), "127.0.0.1", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.Shutdown(); s.WaitForShutdown() }()
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

// TestWorkerUsage checks the worker's usage errors: exit status 2 and a
// message naming the problem.
func TestWorkerUsage(t *testing.T) {
	// Without -tags nats, a missing --nats is a usage error given before
	// the input is read.
	var noEmbedded []string
	if !haveEmbeddedNATS {
		noEmbedded = []string{"worker", "--in", "worker_test.go"}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"worker", "--nats", "nats://127.0.0.1:1", "--rank", "0"}, "--rank"},
		{[]string{"worker", "--nats", "nats://127.0.0.1:1", "--workers", "0"}, "nothing to do"},
		{[]string{"worker", "--nats", "nats://127.0.0.1:1", "extra"}, "unexpected argument"},
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
// Examples section and the flags, as every command's does.
func TestWorkerHelp(t *testing.T) {
	code, _, errs := runCmd(t, "worker", "-help")
	if code != 0 {
		t.Errorf("worker -help: exit %d", code)
	}
	for _, want := range []string{"Usage: nmfstream worker", "Examples:", "nmfstream worker --", "-nats", "-staleness"} {
		if !strings.Contains(errs, want) {
			t.Errorf("worker -help lacks %q:\n%s", want, errs)
		}
	}
}
