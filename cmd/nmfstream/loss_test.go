package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestFitLoss fits with the KL loss, and checks that a method that fits
// the Frobenius loss only refuses it with a usage error.
func TestFitLoss(t *testing.T) {
	dir := t.TempDir()
	train, test, _ := digitsFiles(t, dir, 300)
	out := mustRun(t, "eval", "--train", train, "--test", test, "--method", "gnmf", "--loss", "kl", "--rank", "10", "--iters", "30", "--json")
	if !strings.Contains(out, `"accuracy"`) {
		t.Errorf("eval --loss kl printed %q", out)
	}
	code, _, stderr := runCmd(t, "fit", "--train", train, "--save", filepath.Join(dir, "m"), "--method", "dpca", "--loss", "kl")
	if code != 2 || !strings.Contains(stderr, "Frobenius loss only") {
		t.Errorf("fit --method dpca --loss kl: exit %d, %q; want a usage error", code, stderr)
	}
	if code, _, _ := runCmd(t, "fit", "--train", train, "--save", filepath.Join(dir, "m"), "--loss", "l1"); code != 2 {
		t.Errorf("fit --loss l1: exit %d, want 2", code)
	}
}
