package main

import (
	"bytes"
	"crypto/sha256"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/nmfstream/nmfstream/sinks"
	"github.com/nmfstream/nmfstream/stages"
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

// writeArrowsSpans writes the records [lo, hi) of each span of the Arrow
// IPC file src, in order, as the Arrow IPC stream dst: what stream reads
// on stdin.
func writeArrowsSpans(t *testing.T, src, dst string, spans ...[2]int64) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r, err := ipc.NewFileReader(in, ipc.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rec, err := r.Record(0)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	w := ipc.NewWriter(out, ipc.WithSchema(r.Schema()), ipc.WithAllocator(mem))
	for _, s := range spans {
		part := rec.NewSlice(s[0], s[1])
		err := w.Write(part)
		part.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// runOnStdin runs nmfstream with args and the file at path as its standard
// input (stream --in -), and returns the exit status, stdout and stderr.
func runOnStdin(t *testing.T, path string, args ...string) (int, string, string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	old := os.Stdin
	os.Stdin = f
	defer func() { os.Stdin = old }()
	return runCmd(t, args...)
}

// stdinStreamArgs are the stream arguments of the stdin resume tests.
var stdinStreamArgs = []string{"stream", "--in", "-", "--json", "--batch", "20", "--window", "300", "--rank", "10", "--seed", "1"}

// TestCheckpointStdinOtherInput takes a checkpoint after the first 400
// records of the digits stream read on stdin, then resumes it on stdin
// inputs that differ from it from record 30 on (as long as the
// checkpoint's offset, or longer): each is refused, naming the checkpoint, stdin and record 30, with advice,
// and leaves the checkpoint as it was. Nothing but the fingerprint of the
// records before the offset tells these inputs apart (stdin has no path,
// size or first MiB to compare).
func TestCheckpointStdinOtherInput(t *testing.T) {
	dir := t.TempDir()
	digits := filepath.Join(dir, "digits.arrow")
	writeDigitsStream(t, digits, 0.1, 100)
	first := filepath.Join(dir, "first.arrows")
	writeArrowsSpans(t, digits, first, [2]int64{0, 400})
	ckpt := filepath.Join(dir, "state.ckpt")
	args := append(slices.Clone(stdinStreamArgs), "--checkpoint", ckpt)
	if code, _, stderr := runOnStdin(t, first, args...); code != 0 {
		t.Fatalf("first run: exit %d: %s", code, stderr)
	}
	good, err := os.ReadFile(ckpt)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := loadCheckpoint(ckpt)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(cp.Input.Fingerprint); n != 400 {
		t.Fatalf("the checkpoint holds the fingerprint of %d records, want the 400 before its offset", n)
	}
	for _, c := range []struct {
		name  string
		spans [][2]int64
	}{
		{"record 30 moved to the end, as long", [][2]int64{{0, 30}, {31, 400}, {30, 31}}},
		{"record 30 dropped, longer", [][2]int64{{0, 30}, {31, 600}}},
		{"records 30 and 31 swapped, longer", [][2]int64{{0, 30}, {31, 32}, {30, 31}, {32, 500}}},
	} {
		other := filepath.Join(dir, "other.arrows")
		writeArrowsSpans(t, digits, other, c.spans...)
		if err := os.WriteFile(ckpt, good, 0o644); err != nil { // each case on the first run's checkpoint
			t.Fatal(err)
		}
		code, _, stderr := runOnStdin(t, other, args...)
		if code == 0 {
			t.Errorf("resume on another stdin (%s): accepted", c.name)
			continue
		}
		for _, want := range []string{"stream: " + ckpt + " was taken on another input than stdin", "record 30 differs", "pass the same input", "remove the checkpoint"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("resume on another stdin (%s): %q does not say %q", c.name, stderr, want)
			}
		}
		if now, err := os.ReadFile(ckpt); err != nil || !bytes.Equal(now, good) {
			t.Errorf("resume on another stdin (%s): the checkpoint changed (%v)", c.name, err)
		}
	}
}

// checkpointV3 is checkpoint as builds before inputID.Fingerprint wrote
// it: gob matches fields by name, so its files are those builds' files.
type checkpointV3 struct {
	Version int
	Config  onlineConfig
	Input   struct {
		Path   string
		Size   int64
		Prefix [sha256.Size]byte
	}
	Output outputState
	State  *stages.LearnerState
	WALSeq uint64
	Recent []predictionJSON
}

// stdinResume is the run TestCheckpointStdinResume resumes: stream with
// args on stdin from the file stdin, and what an uninterrupted run of it
// gives (want, its --out wantOut and --rejects wantRej).
type stdinResume struct {
	stdin, ckpt, out, rejects string
	args                      []string
	wantOut, wantRej          string
	want                      streamSummary
}

// check runs r, which must resume at record 400 from r.ckpt, and checks
// its counters and outputs against the uninterrupted run's, and that its
// checkpoint holds the fingerprint of all 600 records; then runs it once
// more, which must find nothing to do and change nothing.
func (r stdinResume) check(t *testing.T, what string) {
	t.Helper()
	code, out, stderr := runOnStdin(t, r.stdin, r.args...)
	if code != 0 {
		t.Fatalf("%s: exit %d: %s", what, code, stderr)
	}
	got := decodeSummary(t, []byte(out))
	if got.ResumedFrom != 400 || got.RunRecords != r.want.Records-400 {
		t.Errorf("%s: resumed from record %d and applied %d, want 400 and %d", what, got.ResumedFrom, got.RunRecords, r.want.Records-400)
	}
	sameCounts(t, what, got, r.want)
	sameFile(t, r.out, r.wantOut, "the uninterrupted run's")
	sameFile(t, r.rejects, r.wantRej, "the uninterrupted run's")
	cp, err := loadCheckpoint(r.ckpt)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(cp.Input.Fingerprint); n != 600 {
		t.Errorf("%s: the checkpoint holds the fingerprint of %d records, want 600", what, n)
	}
	code, out, stderr = runOnStdin(t, r.stdin, r.args...)
	if code != 0 {
		t.Fatalf("%s, run once more: exit %d: %s", what, code, stderr)
	}
	if end := decodeSummary(t, []byte(out)); end.RunRecords != 0 {
		t.Errorf("%s, run once more: applied %d records again", what, end.RunRecords)
	} else {
		sameCounts(t, what+", run once more", end, r.want)
	}
	sameFile(t, r.out, r.wantOut, "the uninterrupted run's")
	sameFile(t, r.rejects, r.wantRej, "the uninterrupted run's")
}

// TestCheckpointStdinResume streams the first 400 records of the digits
// stream on stdin with a checkpoint, then resumes it on stdin with the
// first 600, and checks that the resumed run's counters, --out and
// --rejects are those of an uninterrupted run on the 600, byte for byte;
// that running it once more finds nothing to do and changes nothing (the
// resumed run's own checkpoint checks out); and that the first checkpoint
// as an older build wrote it, without a fingerprint, resumes the same way
// and leaves a checkpoint with one.
func TestCheckpointStdinResume(t *testing.T) {
	dir := t.TempDir()
	digits := filepath.Join(dir, "digits.arrow")
	writeDigitsStream(t, digits, 0.1, 100)
	part, whole := filepath.Join(dir, "part.arrows"), filepath.Join(dir, "whole.arrows")
	writeArrowsSpans(t, digits, part, [2]int64{0, 400})
	writeArrowsSpans(t, digits, whole, [2]int64{0, 600})
	r := stdinResume{stdin: whole, ckpt: filepath.Join(dir, "state.ckpt"), out: filepath.Join(dir, "got.jsonl"), rejects: filepath.Join(dir, "got.rejects"),
		wantOut: filepath.Join(dir, "want.jsonl"), wantRej: filepath.Join(dir, "want.rejects")}
	code, out, stderr := runOnStdin(t, whole, append(slices.Clone(stdinStreamArgs), "--out", r.wantOut, "--rejects", r.wantRej)...)
	if code != 0 {
		t.Fatalf("uninterrupted run: exit %d: %s", code, stderr)
	}
	r.want = decodeSummary(t, []byte(out))

	r.args = append(slices.Clone(stdinStreamArgs), "--checkpoint", r.ckpt, "--out", r.out, "--rejects", r.rejects)
	if code, _, stderr := runOnStdin(t, part, r.args...); code != 0 {
		t.Fatalf("first run: exit %d: %s", code, stderr)
	}
	good, err := os.ReadFile(r.ckpt)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := loadCheckpoint(r.ckpt)
	if err != nil {
		t.Fatal(err)
	}
	old := checkpointV3{Version: cp.Version, Config: cp.Config, Output: cp.Output, State: cp.State}
	old.Input.Path = cp.Input.Path
	oldCkpt := filepath.Join(dir, "old.ckpt")
	if err := sinks.SaveCheckpoint(oldCkpt, checkpointVersion, old); err != nil {
		t.Fatal(err)
	}
	r.check(t, "resumed run")

	// The older checkpoint, in the same place: the outputs are cut back
	// to its lengths and continued.
	b, err := os.ReadFile(oldCkpt)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("Fingerprint")) || !bytes.Contains(good, []byte("Fingerprint")) {
		t.Fatal("the older checkpoint names a fingerprint, or the new one none")
	}
	if err := os.WriteFile(r.ckpt, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if cp, err := loadCheckpoint(r.ckpt); err != nil || cp.Input.Fingerprint != nil || cp.State == nil {
		t.Fatalf("the older checkpoint reads as %+v, %v; want no fingerprint", cp, err)
	}
	r.check(t, "resumed from an older checkpoint")
}
