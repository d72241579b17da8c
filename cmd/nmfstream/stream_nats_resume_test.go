//go:build nats

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestStreamNATSKillResume kills `stream --nats` (the driver and the owner
// it runs) with SIGKILL once its predictions run ahead of its last
// checkpoint, runs the same command again on the same server, and checks
// that the resumed run's --out and --rejects are byte for byte those of
// `stream` on one machine (one partition: the same predictions), every
// sample predicted once, and its counters the whole stream's. The resumed
// run's owner takes the partition over from the killed one's snapshot.
func TestStreamNATSKillResume(t *testing.T) {
	u := runUninterrupted(t, "nats")
	dir, bin, args, records, bad, want, wantOut, wantRej := u.dir, u.bin, u.args, u.records, u.bad, u.want, u.out, u.rejects
	s := testNATS(t)

	ckpt := filepath.Join(dir, "driver.ckpt")
	gotOut, gotRej := filepath.Join(dir, "resumed.jsonl"), filepath.Join(dir, "resumed.rejects")
	cargs := append(args, "-nats", s.ClientURL(), "-namespace", "resume", "-pinned-ttl", "500ms", "-snapshot-every", "5",
		"-checkpoint", ckpt, "-checkpoint-every", "200", "-out", gotOut, "-rejects", gotRej)
	cmd := exec.Command(bin, cargs...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		cp, err := loadNATSCheckpoint(ckpt)
		fi, serr := os.Stat(gotOut)
		if err == nil && serr == nil && fi.Size() > cp.Output.OutBytes {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("no checkpoint with the output ahead of it after 90 s")
		}
		time.Sleep(time.Millisecond)
	}
	killHard(t, cmd)
	cp, err := loadNATSCheckpoint(ckpt)
	if err != nil {
		t.Fatal(err)
	}

	again, err := exec.Command(bin, cargs...).Output()
	if err != nil {
		t.Fatalf("resumed run: %v", err)
	}
	got := decodeSummary(t, again)
	if got.ResumedFrom != cp.Records || got.ResumedFrom <= 0 || got.ResumedFrom >= int64(records) {
		t.Fatalf("resumed from record %d of %d, the checkpoint's %d", got.ResumedFrom, records, cp.Records)
	}
	if got.RunRecords != int64(records)-got.ResumedFrom {
		t.Errorf("resumed run sent %d records, want %d", got.RunRecords, int64(records)-got.ResumedFrom)
	}
	t.Logf("killed with a checkpoint at record %d of %d (%d rejected)", got.ResumedFrom, records, bad)
	// The owners' counters are the single machine's; the codes' scores are
	// not reported with --nats, nor the graph's search dimension.
	got.CodeNN1, got.CodeNMI, got.CodeN, got.SearchDims = want.CodeNN1, want.CodeNMI, want.CodeN, want.SearchDims
	sameCounts(t, "resumed run", got, want)
	sameFile(t, gotOut, wantOut, "the single machine's")
	sameFile(t, gotRej, wantRej, "the single machine's")
}

// TestStreamNATSStdinOtherInput is TestCheckpointStdinOtherInput for
// stream --nats: a checkpoint after the first 400 records read on stdin
// refuses a resume on a longer stdin whose record 30 differs, naming it,
// and is left as it was.
func TestStreamNATSStdinOtherInput(t *testing.T) {
	dir := t.TempDir()
	digits := filepath.Join(dir, "digits.arrow")
	writeDigitsStream(t, digits, 0.1, 100)
	first, other := filepath.Join(dir, "first.arrows"), filepath.Join(dir, "other.arrows")
	writeArrowsSpans(t, digits, first, [2]int64{0, 400})
	writeArrowsSpans(t, digits, other, [2]int64{0, 30}, [2]int64{31, 600})
	s := testNATS(t)
	ckpt := filepath.Join(dir, "driver.ckpt")
	args := append(slices.Clone(stdinStreamArgs), "--nats", s.ClientURL(), "--namespace", "stdin", "--checkpoint", ckpt)
	if code, _, stderr := runOnStdin(t, first, args...); code != 0 {
		t.Fatalf("first run: exit %d: %s", code, stderr)
	}
	cp, err := loadNATSCheckpoint(ckpt)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(cp.Input.Fingerprint); n != 400 {
		t.Fatalf("the checkpoint holds the fingerprint of %d records, want the 400 it applied", n)
	}
	good, err := os.ReadFile(ckpt)
	if err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runOnStdin(t, other, args...)
	if code == 0 {
		t.Fatal("resume on another stdin: accepted")
	}
	for _, want := range []string{ckpt + " was taken on another input than stdin", "record 30 differs", "remove the checkpoint"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("resume on another stdin: %q does not say %q", stderr, want)
		}
	}
	if now, err := os.ReadFile(ckpt); err != nil || !bytes.Equal(now, good) {
		t.Errorf("resume on another stdin: the checkpoint changed (%v)", err)
	}
}
