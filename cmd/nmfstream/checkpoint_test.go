package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nmfstream/nmfstream/sinks"
)

// TestCheckpointIntegrity streams the digits with a checkpoint, then checks
// that every single flipped byte of the checkpoint (sampled through the
// file) is reported as corrupt or not a checkpoint, never loaded; that a
// truncated one is refused; and that resuming on another input is refused
// with advice while the same input resumes.
func TestCheckpointIntegrity(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "digits.arrow")
	writeDigitsStream(t, in, 0.1, 100)
	ckpt := filepath.Join(dir, "state.ckpt")
	mustRun(t, "stream", "--in", in, "--checkpoint", ckpt, "--window", "300", "--json")
	good, err := os.ReadFile(ckpt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := loadCheckpoint(ckpt); err != nil {
		t.Fatalf("the checkpoint as written: %v", err)
	}
	bad := filepath.Join(dir, "bad.ckpt")
	for _, at := range []int{0, 17, 20, 100, len(good) / 3, len(good) / 2, len(good) - 40, len(good) - 1} {
		b := append([]byte(nil), good...)
		b[at] ^= 0x10
		if err := os.WriteFile(bad, b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := loadCheckpoint(bad)
		if err == nil || !(strings.Contains(err.Error(), "corrupt") || strings.Contains(err.Error(), "not an nmfstream checkpoint") || strings.Contains(err.Error(), "version")) {
			t.Errorf("byte %d flipped: %v, want an error saying the checkpoint is corrupt", at, err)
		}
	}
	if err := os.WriteFile(bad, good[:len(good)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := loadCheckpoint(bad); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Errorf("truncated: %v, want corrupt", err)
	}

	other := filepath.Join(dir, "other.arrow")
	writeDigitsStream(t, other, 0.2, 50)
	code, _, stderr := runCmd(t, "stream", "--in", other, "--checkpoint", ckpt, "--window", "300")
	if code == 0 || !strings.Contains(stderr, "another input") {
		t.Errorf("resume on another input: exit %d, %q; want a refusal naming the inputs", code, stderr)
	}
	if code, _, stderr := runCmd(t, "stream", "--in", in, "--checkpoint", ckpt, "--window", "300"); code != 0 {
		t.Errorf("resume on the same input: exit %d: %s", code, stderr)
	}
}

// TestCheckpointOfTheOtherDriver checks that stream refuses a stream --nats
// checkpoint with advice, rather than a bare version number.
func TestCheckpointOfTheOtherDriver(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nats.ckpt")
	if err := sinks.SaveCheckpoint(path, natsCheckpointVersion, natsCheckpoint{}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	_, err = readCheckpoint(f, fi.Size(), path)
	if err == nil || !strings.Contains(err.Error(), "resume it with --nats") {
		t.Fatalf("got %v, want advice to resume with --nats", err)
	}
}
