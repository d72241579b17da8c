package main

import (
	"strings"
	"testing"
)

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
	code, errs, _ := runCmd(t, "worker", "-help") // help on stdout
	if code != 0 {
		t.Errorf("worker -help: exit %d", code)
	}
	for _, want := range []string{"Usage: nmfstream worker", "Examples:", "nmfstream worker --", "-nats", "-staleness"} {
		if !strings.Contains(errs, want) {
			t.Errorf("worker -help lacks %q:\n%s", want, errs)
		}
	}
}
