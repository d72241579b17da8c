package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/nmfstream/nmfstream/datasets"
)

// writeDigitsStream writes the digits, shuffled with seed 1, as an Arrow IPC
// file in stream order: frac of the samples are labeled, each label arriving
// as a label-only record (null x) delay samples after its sample; every
// 97th record is a sample with a negative pixel, which must be rejected.
// It returns the number of records and of bad ones.
func writeDigitsStream(t testing.TB, path string, frac float64, delay int) (records, bad int) {
	return writeDigitsStreamHuge(t, path, frac, delay, 0)
}

// writeDigitsStreamHuge is writeDigitsStream with, when hugeEvery > 0,
// every hugeEvery-th record a sample of 10³⁰ in every pixel, which the
// source accepts and the learner must reject (--max-norm-ratio); those
// count among the bad records.
func writeDigitsStreamHuge(t testing.TB, path string, frac float64, delay, hugeEvery int) (records, bad int) {
	t.Helper()
	x, y := datasets.Digits()
	n, d := x.Dims()
	rnd := rand.New(rand.NewPCG(1, 1))
	perm := rnd.Perm(n)
	labeled := map[int]bool{}
	for _, p := range rnd.Perm(n)[:int(frac*float64(n)+0.5)] {
		labeled[p] = true
	}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "x", Type: arrow.FixedSizeListOf(int32(d), arrow.PrimitiveTypes.Float32), Nullable: true},
		{Name: "label", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	mem := memory.NewGoAllocator()
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	xb := b.Field(0).(*array.FixedSizeListBuilder)
	vb := xb.ValueBuilder().(*array.Float32Builder)
	lb := b.Field(1).(*array.Int64Builder)
	ib := b.Field(2).(*array.Int64Builder)
	sample := func(row []float64, id int64) {
		xb.Append(true)
		for _, v := range row {
			vb.Append(float32(v))
		}
		lb.AppendNull()
		ib.Append(id)
		records++
		if records%97 == 0 {
			// A bad record in the middle of the stream.
			xb.Append(true)
			for j := range row {
				vb.Append(float32(-1 + 0*j))
			}
			lb.AppendNull()
			ib.Append(int64(100000 + records))
			records++
			bad++
		}
		if hugeEvery > 0 && records%hugeEvery == 0 {
			// A corrupt record of another scale.
			xb.Append(true)
			for range row {
				vb.Append(1e30)
			}
			lb.AppendNull()
			ib.Append(int64(200000 + records))
			records++
			bad++
		}
	}
	label := func(id, c int64) {
		xb.AppendNull()
		lb.Append(c)
		ib.Append(id)
		records++
	}
	due := map[int][]int{}
	for t, i := range perm {
		sample(x.RawRowView(i), int64(i))
		if labeled[t] {
			due[t+delay] = append(due[t+delay], i)
		}
		for _, j := range due[t] {
			label(int64(j), int64(y[j]))
		}
		delete(due, t)
	}
	for t := n; len(due) > 0; t++ {
		for _, j := range due[t] {
			label(int64(j), int64(y[j]))
		}
		delete(due, t)
	}
	writeRecordFile(t, path, schema, mem, b)
	return records, bad
}

func decodeSummary(t testing.TB, out []byte) streamSummary {
	t.Helper()
	var s streamSummary
	if err := json.Unmarshal(bytes.TrimSpace(out), &s); err != nil {
		t.Fatalf("stream --json printed %q: %v", out, err)
	}
	return s
}

// sameCounts compares everything but timings and the resume offset.
func sameCounts(t *testing.T, what string, got, want streamSummary) {
	t.Helper()
	got.Seconds, got.RecordsPerSecond, got.RunRecords, got.ResumedFrom = 0, 0, 0, 0
	want.Seconds, want.RecordsPerSecond, want.RunRecords, want.ResumedFrom = 0, 0, 0, 0
	if got != want {
		t.Errorf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}

// uninterrupted is the reference of the kill-and-resume tests: the
// nmfstream binary built in dir, the digits stream written there (records
// records, bad of them rejected), the stream's arguments, and the summary,
// --out and --rejects of one run of it without interruption.
type uninterrupted struct {
	dir, bin     string
	args         []string
	records, bad int
	want         streamSummary
	out, rejects string
}

// runUninterrupted builds nmfstream with the build tags given, writes the
// digits stream (10% labeled, labels 100 late) and runs `stream` on it
// without interruption.
func runUninterrupted(t *testing.T, tags ...string) uninterrupted {
	t.Helper()
	u := uninterrupted{dir: t.TempDir()}
	u.bin = filepath.Join(u.dir, "nmfstream")
	build := []string{"build"}
	if len(tags) > 0 {
		build = append(build, "-tags", strings.Join(tags, ","))
	}
	if out, err := exec.Command("go", append(build, "-o", u.bin, ".")...).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	in := filepath.Join(u.dir, "digits.arrow")
	u.records, u.bad = writeDigitsStream(t, in, 0.1, 100)
	u.args = []string{"stream", "-in", in, "-json", "-batch", "10", "-window", "1000", "-seed", "1"}
	u.out, u.rejects = filepath.Join(u.dir, "whole.jsonl"), filepath.Join(u.dir, "whole.rejects")
	whole, err := exec.Command(u.bin, append(u.args, "-out", u.out, "-rejects", u.rejects)...).Output()
	if err != nil {
		t.Fatalf("uninterrupted run: %v", err)
	}
	u.want = decodeSummary(t, whole)
	if u.want.Records != int64(u.records) || u.want.Rejected != int64(u.bad) {
		t.Fatalf("uninterrupted run: %d records, %d rejected; the file has %d and %d", u.want.Records, u.want.Rejected, u.records, u.bad)
	}
	return u
}

// killHard kills cmd's process with SIGKILL and fails the test unless
// that signal ended it (a run that finished first was too short).
func killHard(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the run was not killed (it ended with %v): the stream is too short for this test", err)
	}
}

// TestStreamKillResume kills `nmfstream stream` with SIGKILL after its
// first checkpoint, runs the same command again, and checks that the
// resumed run ends with exactly the counters and accuracy of an
// uninterrupted run.
func TestStreamKillResume(t *testing.T) {
	u := runUninterrupted(t)
	dir, bin, args, records, want, wantOut, wantRej := u.dir, u.bin, u.args, u.records, u.want, u.out, u.rejects

	ckpt := filepath.Join(dir, "state.ckpt")
	gotOut, gotRej := filepath.Join(dir, "resumed.jsonl"), filepath.Join(dir, "resumed.rejects")
	cargs := append(args, "-checkpoint", ckpt, "-checkpoint-every", "200", "-out", gotOut, "-rejects", gotRej)
	cmd := exec.Command(bin, cargs...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(ckpt); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("no checkpoint after 60 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Kill once the output runs ahead of the last checkpoint, so that the
	// resumed run must drop what was written after it.
	for time.Now().Before(deadline) {
		cp, err := loadCheckpoint(ckpt)
		fi, serr := os.Stat(gotOut)
		if err == nil && serr == nil && fi.Size() > cp.Output.OutBytes {
			break
		}
		time.Sleep(time.Millisecond)
	}
	killHard(t, cmd)

	again, err := exec.Command(bin, cargs...).Output()
	if err != nil {
		t.Fatalf("resumed run: %v", err)
	}
	got := decodeSummary(t, again)
	if got.ResumedFrom <= 0 || got.ResumedFrom >= int64(records) {
		t.Fatalf("resumed from record %d of %d", got.ResumedFrom, records)
	}
	if got.RunRecords != int64(records)-got.ResumedFrom {
		t.Errorf("resumed run applied %d records, want %d", got.RunRecords, int64(records)-got.ResumedFrom)
	}
	t.Logf("killed after a checkpoint at record %d of %d; uninterrupted accuracy %.4f", got.ResumedFrom, records, float64(want.Accuracy))
	sameCounts(t, "resumed run", got, want)
	// The outputs continue where the checkpoint says: no duplicate, no gap.
	sameFile(t, gotOut, wantOut, "the uninterrupted run's")
	sameFile(t, gotRej, wantRej, "the uninterrupted run's")

	// Running it once more resumes at the end: nothing new, same counters.
	final, err := exec.Command(bin, cargs...).Output()
	if err != nil {
		t.Fatal(err)
	}
	end := decodeSummary(t, final)
	if end.RunRecords != 0 {
		t.Errorf("a finished stream applied %d records again", end.RunRecords)
	}
	sameCounts(t, "finished stream", end, want)
	sameFile(t, gotOut, wantOut, "the uninterrupted run's")
	sameFile(t, gotRej, wantRej, "the uninterrupted run's")
}

// TestStreamCancelResume cancels an in-process stream (as SIGINT does),
// checks that it saved a checkpoint on the way out, and that resuming
// gives the uninterrupted result.
func TestStreamCancelResume(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "digits.arrow")
	writeDigitsStream(t, in, 0.1, 100)
	args := []string{"stream", "-in", in, "-json", "-batch", "20", "-window", "500", "-rank", "10"}
	code, out, errs := runCmd(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := decodeSummary(t, []byte(out))

	// A cancellation lands mid-stream, or after the last record (the run
	// then exits non-zero with every record applied: nothing to resume),
	// depending on the machine's speed: shorter waits until one lands
	// mid-stream.
	ckpt := filepath.Join(dir, "c.ckpt")
	var part streamSummary
	landed := false
	for _, wait := range []time.Duration{300 * time.Millisecond, 100 * time.Millisecond, 30 * time.Millisecond, 10 * time.Millisecond} {
		os.Remove(ckpt)
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		var ob, eb bytes.Buffer
		code = run(ctx, append(args, "-checkpoint", ckpt, "-checkpoint-every", "0"), &ob, &eb)
		cancel()
		if code == 0 {
			continue // finished before the cancellation
		}
		part = decodeSummary(t, ob.Bytes())
		if part.Records > want.Records {
			t.Fatalf("cancelled run applied %d of %d records", part.Records, want.Records)
		}
		if part.Records > 0 && part.Records < want.Records {
			landed = true
			break
		}
	}
	if !landed {
		t.Skip("no cancellation landed mid-stream; nothing to resume")
	}
	code, out, errs = runCmd(t, append(args, "-checkpoint", ckpt)...)
	if code != 0 {
		t.Fatalf("resume: exit %d: %s", code, errs)
	}
	got := decodeSummary(t, []byte(out))
	if got.ResumedFrom != part.Records {
		t.Errorf("resumed from %d, the cancelled run applied %d", got.ResumedFrom, part.Records)
	}
	sameCounts(t, "resumed after cancel", got, want)
}

// TestStreamFlags checks usage errors and the checkpoint's configuration
// taking precedence.
func TestStreamFlags(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "d.arrow")
	writeDigitsStream(t, in, 0.1, 100)
	if code, _, _ := runCmd(t, "stream"); code != 2 {
		t.Errorf("no -in: exit %d, want 2", code)
	}
	if code, _, _ := runCmd(t, "stream", "-in", in, "-predictor", "magic"); code != 2 {
		t.Errorf("bad predictor: exit %d, want 2", code)
	}
	if code, _, e := runCmd(t, "stream", "-in", in, "-revisit", "sometimes"); code != 2 || !strings.Contains(e, "want changed, neighbors or none") {
		t.Errorf("bad -revisit: exit %d (%s), want 2 and the choices", code, e)
	}
	if code, _, e := runCmd(t, "stream", "-in", in, "-search-fit", "pca"); code != 2 || !strings.Contains(e, "want svd or nmf") {
		t.Errorf("bad -search-fit: exit %d (%s), want 2 and the choices", code, e)
	}
	ckpt := filepath.Join(dir, "c")
	out := filepath.Join(dir, "p.arrow")
	prof, tr := filepath.Join(dir, "cpu.prof"), filepath.Join(dir, "trace.out")
	if code, _, e := runCmd(t, "stream", "-in", in, "-checkpoint", ckpt, "-rank", "10", "-window", "300", "-out", out, "-json", "-cpuprofile", prof, "-trace", tr); code != 0 {
		t.Fatal(e)
	}
	if st, err := os.Stat(prof); err != nil || st.Size() == 0 {
		t.Errorf("-cpuprofile: %v, %v", st, err)
	}
	if b, err := os.ReadFile(tr); err != nil || !bytes.HasPrefix(b, []byte("go 1.")) {
		t.Errorf("-trace: %v, want an execution trace (\"go 1.…\" header)", err)
	}
	if code, _, e := runCmd(t, "stream", "-in", in, "-checkpoint", ckpt, "-rank", "12"); code != 2 {
		t.Errorf("rank differing from the checkpoint: exit %d (%s), want 2", code, e)
	}
	if code, _, e := runCmd(t, "stream", "-in", in, "-checkpoint", ckpt, "-rank", "10", "-window", "300", "-revisit", "none"); code != 2 || !strings.Contains(e, "-revisit") {
		t.Errorf("-revisit differing from the checkpoint: exit %d (%s), want 2", code, e)
	}
	if code, _, e := runCmd(t, "stream", "-in", in, "-checkpoint", ckpt, "-rank", "10", "-window", "300", "-search-fit", "nmf"); code != 2 || !strings.Contains(e, "-search-fit") {
		t.Errorf("-search-fit differing from the checkpoint: exit %d (%s), want 2", code, e)
	}
	ids, _, preds, scores := readResults(t, out)
	if len(ids) < 1700 || len(preds) != len(ids) || len(scores) != len(ids) {
		t.Errorf("predictions file: %d ids, %d preds, %d scores", len(ids), len(preds), len(scores))
	}
}

// TestStreamQ checks that --q reaches the online model of n2s2l (its
// checkpointed state keeps the q its first fit took, not the default's
// max(classes, 3K/4)), that a checkpoint taken with another q refuses to
// resume, and that a q outside 1 ≤ q < K is refused.
func TestStreamQ(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "d.arrow")
	writeDigitsStream(t, in, 0.1, 100)
	for _, q := range []int{0, 13} {
		ckpt := filepath.Join(dir, "c"+strconv.Itoa(q))
		args := []string{"stream", "-in", in, "-rank", "20", "-window", "300", "-method", "n2s2l", "-checkpoint", ckpt}
		if q > 0 {
			args = append(args, "-q", strconv.Itoa(q))
		}
		if code, _, e := runCmd(t, args...); code != 0 {
			t.Fatal(e)
		}
		cp, err := loadCheckpoint(ckpt)
		if err != nil {
			t.Fatal(err)
		}
		want := q
		if q == 0 {
			want = 15 // 3K/4: no label reaches the first fit of this stream
		}
		if got := cp.State.Online.Q; got != want {
			t.Errorf("-q %d: the model took q = %d, want %d", q, got, want)
		}
	}
	if code, _, e := runCmd(t, "stream", "-in", in, "-rank", "20", "-window", "300", "-method", "n2s2l", "-checkpoint", filepath.Join(dir, "c13"), "-q", "7"); code != 2 || !strings.Contains(e, "q") {
		t.Errorf("resume with another -q: exit %d, %s", code, e)
	}
	for _, bad := range []string{"-1", "20", "40"} {
		if code, _, e := runCmd(t, "stream", "-in", in, "-rank", "20", "-q", bad); code != 2 || !strings.Contains(e, "-q") {
			t.Errorf("-q %s: exit %d, %s", bad, code, e)
		}
		if code, _, e := runCmd(t, "serve", "-rank", "20", "-q", bad); code != 2 || !strings.Contains(e, "-q") {
			t.Errorf("serve -q %s: exit %d, %s", bad, code, e)
		}
	}
}
