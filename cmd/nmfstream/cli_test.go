package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nmfstream/nmfstream/sources"
)

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"-version"}, {"version"}} {
		code, out, errs := runCmd(t, args...)
		if code != 0 || !strings.HasPrefix(out, "nmfstream ") || !strings.Contains(out, runtime.Version()) {
			t.Errorf("nmfstream %s: exit %d, stdout %q, stderr %q; want 0 and \"nmfstream <version> … %s\"", args[0], code, out, errs, runtime.Version())
		}
	}
	if code, _, _ := runCmd(t, "version", "now"); code != 2 {
		t.Errorf("version with an argument: exit %d, want 2", code)
	}
}

// syncBuffer is a bytes.Buffer safe for a command writing while the test
// reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runServeBriefly starts serve with args on a free port, waits until it
// listens, stops it as SIGTERM would, and returns its exit status and
// stderr.
func runServeBriefly(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), &out, &errb) }()
	deadline := time.After(60 * time.Second)
	for !strings.Contains(errb.String(), "listening on") {
		select {
		case code := <-done:
			return code, errb.String()
		case <-deadline:
			t.Fatalf("serve did not listen within 60 s: %s", errb.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	cancel()
	return <-done, errb.String()
}

// TestModelSaveCheckpoint checks docs/DESIGN.md §6's one meaning per flag:
// fit --save writes, --model is read and never written, --checkpoint is
// the state of stream and serve; the old spellings still work, with a
// warning.
func TestModelSaveCheckpoint(t *testing.T) {
	dir := t.TempDir()
	train, test, _ := digitsFiles(t, dir, 4)
	fitArgs := []string{"--method", "gnmf", "--rank", "10", "--iters", "30"}

	// fit --model OUT: the deprecated spelling of --save.
	old := filepath.Join(dir, "old.model")
	code, _, errs := runCmd(t, append([]string{"fit", "--train", train, "--model", old}, fitArgs...)...)
	if code != 0 || !strings.Contains(errs, "deprecated") || !strings.Contains(errs, "--save") {
		t.Errorf("fit --model: exit %d, stderr %q; want 0 and a deprecation warning naming --save", code, errs)
	}
	if _, err := sources.LoadModel(old); err != nil {
		t.Errorf("fit --model wrote no model: %v", err)
	}
	m := filepath.Join(dir, "m.model")
	code, _, errs = runCmd(t, append([]string{"fit", "--train", train, "--save", m}, fitArgs...)...)
	if code != 0 || strings.Contains(errs, "deprecated") {
		t.Fatalf("fit --save: exit %d, stderr %q", code, errs)
	}
	if code, _, _ := runCmd(t, "fit", "--train", train, "--save", m, "--model", old); code != 2 {
		t.Errorf("fit with --save and --model: exit %d, want 2", code)
	}
	modelBytes, err := os.ReadFile(m)
	if err != nil {
		t.Fatal(err)
	}

	// stream --model CKPT: the deprecated spelling of --checkpoint.
	streamArgs := []string{"stream", "--in", test, "--rank", "10", "--window", "300", "--json"}
	ck := filepath.Join(dir, "s.ckpt")
	code, _, errs = runCmd(t, append(streamArgs, "--model", ck)...)
	if code != 0 || !strings.Contains(errs, "deprecated") || !strings.Contains(errs, "--checkpoint") {
		t.Errorf("stream --model CKPT: exit %d, stderr %q; want 0 and a deprecation warning naming --checkpoint", code, errs)
	}
	if ok, err := isCheckpoint(ck); !ok {
		t.Errorf("stream --model CKPT wrote no checkpoint: %v", err)
	}
	ck2 := filepath.Join(dir, "s2.ckpt")
	if code, _, errs = runCmd(t, append(streamArgs, "--checkpoint", ck2)...); code != 0 || strings.Contains(errs, "deprecated") {
		t.Errorf("stream --checkpoint: exit %d, stderr %q", code, errs)
	}
	// A fitted model is not a stream's state: stream refuses it, either way.
	if code, _, errs = runCmd(t, append(streamArgs, "--model", m)...); code != 2 || !strings.Contains(errs, "fitted model") {
		t.Errorf("stream --model <fitted model>: exit %d, stderr %q; want 2", code, errs)
	}
	if code, _, errs = runCmd(t, append(streamArgs, "--checkpoint", m)...); code != 1 || !strings.Contains(errs, "not an nmfstream checkpoint") {
		t.Errorf("stream --checkpoint <fitted model>: exit %d, stderr %q; want 1", code, errs)
	}

	// serve --model <fitted model> seeds the service and never writes the
	// model; its state goes to --checkpoint.
	sck := filepath.Join(dir, "serve.ckpt")
	code, errs = runServeBriefly(t, "--model", m, "--checkpoint", sck, "--rank", "10")
	if code != 0 || strings.Contains(errs, "deprecated") {
		t.Errorf("serve --model M --checkpoint C: exit %d, stderr %q", code, errs)
	}
	if ok, err := isCheckpoint(sck); !ok {
		t.Errorf("serve wrote no checkpoint to --checkpoint: %v", err)
	}
	code, errs = runServeBriefly(t, "--model", m, "--rank", "10")
	if code != 0 {
		t.Errorf("serve --model M: exit %d, stderr %q", code, errs)
	}
	// The fitted model's samples are dense: a setting of the documents'
	// mixture would change nothing (checkFormUse).
	code, errs = runServeBriefly(t, "--model", m, "--rank", "10", "--prior-power", "0.3")
	if code != 2 || !strings.Contains(errs, "--prior-power scales the documents' mixture") {
		t.Errorf("serve --model M --prior-power on dense samples: exit %d, stderr %q; want 2", code, errs)
	}
	if now, err := os.ReadFile(m); err != nil || !bytes.Equal(now, modelBytes) {
		t.Errorf("serve changed its --model file (%v)", err)
	}
	if _, err := sources.LoadModel(m); err != nil {
		t.Errorf("the fitted model no longer loads after serve: %v", err)
	}
	// serve --model CKPT: the deprecated spelling of --checkpoint.
	before, _ := os.Stat(ck)
	time.Sleep(10 * time.Millisecond) // a later modification time
	code, errs = runServeBriefly(t, "--model", ck)
	if code != 0 || !strings.Contains(errs, "deprecated") {
		t.Errorf("serve --model CKPT: exit %d, stderr %q; want 0 and a deprecation warning", code, errs)
	}
	if after, err := os.Stat(ck); err != nil || !after.ModTime().After(before.ModTime()) {
		t.Errorf("serve --model CKPT did not save its checkpoint there (%v)", err)
	}
	if code, errs = runServeBriefly(t, "--model", ck, "--checkpoint", sck); code != 2 {
		t.Errorf("serve with a checkpoint as --model and --checkpoint: exit %d, stderr %q; want 2", code, errs)
	}
}

// TestStartChecks checks that a missing input and an output that cannot be
// written are reported before any work, not at the end.
func TestStartChecks(t *testing.T) {
	dir := t.TempDir()
	train, test, _ := digitsFiles(t, dir, 8)
	m := filepath.Join(dir, "m.model")
	mustRun(t, "fit", "--train", train, "--save", m, "--method", "gnmf", "--rank", "5", "--iters", "10")
	nodir := filepath.Join(dir, "no", "such", "dir")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"fit: missing input", []string{"fit", "--train", filepath.Join(dir, "nope.arrow"), "--save", m}, "no such file"},
		{"eval: missing test file", []string{"eval", "--train", train, "--test", filepath.Join(dir, "nope.arrow")}, "--test"},
		{"fit: --save in a missing directory", []string{"fit", "--train", train, "--save", filepath.Join(nodir, "m")}, "does not exist"},
		{"fit: --save is a directory", []string{"fit", "--train", train, "--save", dir}, "is a directory"},
		{"fit: --rejects in a missing directory", []string{"fit", "--train", train, "--save", m, "--rejects", filepath.Join(nodir, "r")}, "--rejects"},
		{"project: --out in a missing directory", []string{"project", "--model", m, "--in", test, "--out", filepath.Join(nodir, "c.arrow")}, "--out"},
		{"classify: missing model", []string{"classify", "--model", filepath.Join(dir, "nope.model"), "--in", test, "--out", filepath.Join(dir, "p.arrow")}, "no such file"},
		{"classify: missing input", []string{"classify", "--model", m, "--in", filepath.Join(dir, "nope.arrow"), "--out", filepath.Join(dir, "p.arrow")}, "no such file"},
		{"stream: missing input", []string{"stream", "--in", filepath.Join(dir, "nope.arrow")}, "no such file"},
		{"stream: --checkpoint in a missing directory", []string{"stream", "--in", test, "--checkpoint", filepath.Join(nodir, "c")}, "--checkpoint"},
		{"stream: --out in a missing directory", []string{"stream", "--in", test, "--out", filepath.Join(nodir, "p.jsonl")}, "--out"},
		{"serve: --checkpoint in a missing directory", []string{"serve", "--addr", "127.0.0.1:0", "--checkpoint", filepath.Join(nodir, "c")}, "--checkpoint"},
		{"serve: --checkpoint is a fitted model", []string{"serve", "--addr", "127.0.0.1:0", "--checkpoint", m}, "not an nmfstream checkpoint"},
	} {
		start := time.Now()
		code, out, errs := runCmd(t, c.args...)
		if code == 0 || out != "" || !strings.Contains(errs, c.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want an error containing %q and no output", c.name, code, out, errs, c.want)
		}
		// Caught at start: nothing is fitted or streamed (either takes
		// seconds on these files; the checks take milliseconds).
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: the error came after %v", c.name, d)
		}
	}
	if _, err := sources.LoadModel(m); err != nil {
		t.Errorf("the model given to serve --checkpoint was damaged: %v", err)
	}
}

// TestCSVColumnFlags reads CSV files through the command line: labels in
// the first column (--label-column 1), no label column at all, an
// unlabeled value, and a text column fitting a document model.
func TestCSVColumnFlags(t *testing.T) {
	dir := t.TempDir()
	rnd := rand.New(rand.NewPCG(1, 1))
	x, y := synthetic(60, 6, rnd)

	// Labels in the first column, −1 for unlabeled (every other record).
	var sb strings.Builder
	labeled := 0
	for i, row := range x {
		lab := "-1"
		if i%2 == 0 {
			lab = fmt.Sprint(y[i])
			labeled++
		}
		sb.WriteString(lab)
		for _, v := range row {
			fmt.Fprintf(&sb, ",%g", v)
		}
		sb.WriteByte('\n')
	}
	first := filepath.Join(dir, "first.csv")
	writeTestFile(t, first, []byte(sb.String()))
	fitJSON := func(args ...string) map[string]any {
		t.Helper()
		out := mustRun(t, append([]string{"fit", "--save", filepath.Join(dir, "m.model"), "--json"}, args...)...)
		var got map[string]any
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("fit --json: %q: %v", out, err)
		}
		return got
	}
	got := fitJSON("--train", first, "--label-column", "1", "--unlabeled", "-1", "--method", "gnmf", "--rank", "3", "--iters", "30")
	if got["n_labeled"] != float64(labeled) || got["features"] != 6.0 || got["classes"] != 3.0 {
		t.Errorf("labels in column 1, -1 unlabeled: %v; want %d labeled, 6 features, 3 classes", got, labeled)
	}
	// Without --unlabeled, −1 is a class of its own.
	got = fitJSON("--train", first, "--label-column", "1", "--method", "gnmf", "--rank", "3", "--iters", "30")
	if got["n_labeled"] != float64(len(x)) || got["classes"] != 4.0 {
		t.Errorf("labels in column 1: %v; want %d labeled, 4 classes", got, len(x))
	}

	// No label column: every column is a feature, no record is labeled,
	// and the ids are row numbers.
	sb.Reset()
	for _, row := range x {
		for j, v := range row {
			if j > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, "%g", v)
		}
		sb.WriteByte('\n')
	}
	none := filepath.Join(dir, "none.csv")
	writeTestFile(t, none, []byte(sb.String()))
	got = fitJSON("--train", none, "--method", "gnmf", "--rank", "3", "--iters", "30")
	if got["n_labeled"] != 0.0 || got["features"] != 6.0 || got["n_train"] != float64(len(x)) {
		t.Errorf("no label column: %v; want 0 labeled, 6 features, %d records", got, len(x))
	}
	codes := filepath.Join(dir, "codes.arrow")
	mustRun(t, "project", "--model", filepath.Join(dir, "m.model"), "--in", none, "--out", codes)
	ids, _, _, _ := readResults(t, codes)
	if len(ids) != len(x) || ids[0] != "0" || ids[len(ids)-1] != fmt.Sprint(len(x)-1) {
		t.Errorf("ids of a CSV without an id column: %q…, want row numbers 0…%d", ids[:min(3, len(ids))], len(x)-1)
	}
	// Supervised methods say that there are no labels.
	if code, _, errs := runCmd(t, "fit", "--train", none, "--save", filepath.Join(dir, "x"), "--method", "dgnmf", "--rank", "3"); code != 1 || !strings.Contains(errs, "labeled") {
		t.Errorf("dgnmf on a CSV without labels: exit %d, stderr %q", code, errs)
	}

	// A text column: the records are documents and the model is a
	// document model (TF-IDF inside).
	topics := [][]string{
		{"graph", "matrix", "factorization", "basis", "codes", "nonnegative", "laplacian", "rank"},
		{"football", "goal", "match", "league", "player", "season", "coach", "score"},
		{"recipe", "butter", "flour", "oven", "sugar", "bake", "dough", "salt"},
	}
	sb.Reset()
	sb.WriteString("id,topic,body\n")
	for i := range 45 {
		c := i % 3
		words := make([]string, 12)
		for k := range words {
			words[k] = topics[c][rnd.IntN(len(topics[c]))]
		}
		fmt.Fprintf(&sb, "doc%d,%s,\"%s\"\n", i, []string{"math", "sport", "food"}[c], strings.Join(words, " "))
	}
	docs := filepath.Join(dir, "docs.csv")
	writeTestFile(t, docs, []byte(sb.String()))
	dm := filepath.Join(dir, "docs.model")
	mustRun(t, "fit", "--train", docs, "--save", dm, "--text-column", "body", "--label-column", "topic", "--method", "gnmf", "--rank", "3", "--iters", "50")
	snap, err := sources.LoadModel(dm)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Form != "text" || snap.Vectorizer == nil || len(snap.Classes) != 3 {
		t.Errorf("document model: form %q, vectorizer %v, classes %q; want text, a vectorizer, 3 classes", snap.Form, snap.Vectorizer != nil, snap.Classes)
	}
	pred := filepath.Join(dir, "docs.pred.arrow")
	out := mustRun(t, "classify", "--model", dm, "--in", docs, "--out", pred, "--text-column", "3", "--label-column", "2")
	if !strings.Contains(out, "accuracy on the 45 labeled records") {
		t.Errorf("classify on the documents: %s", out)
	}
	ids, _, _, _ = readResults(t, pred)
	if len(ids) != 45 || ids[0] != "doc0" {
		t.Errorf("classify ids %q…, want doc0…", ids[:min(3, len(ids))])
	}
	// A column that is not there is a clear error.
	if code, _, errs := runCmd(t, "fit", "--train", docs, "--save", dm, "--text-column", "content"); code != 1 || !strings.Contains(errs, `"content"`) {
		t.Errorf("--text-column content: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := runCmd(t, "fit", "--train", docs, "--save", dm, "--label-column", "0"); code != 2 || !strings.Contains(errs, "from 1") {
		t.Errorf("--label-column 0: exit %d, stderr %q", code, errs)
	}
	// CSV flags on an input that is not CSV would be ignored: an error.
	arrowFile, _, _ := digitsFiles(t, dir, 8)
	if code, _, errs := runCmd(t, "fit", "--train", arrowFile, "--save", dm, "--label-column", "2"); code != 2 || !strings.Contains(errs, "CSV inputs only") {
		t.Errorf("--label-column on Arrow: exit %d, stderr %q", code, errs)
	}

	// stream reads CSV documents too.
	out = mustRun(t, "stream", "--in", docs, "--text-column", "body", "--label-column", "topic", "--rank", "3", "--window", "100", "--json")
	var sum streamSummary
	if err := json.Unmarshal([]byte(out), &sum); err != nil || sum.Samples != 45 || sum.Rejected != 0 {
		t.Errorf("stream on CSV documents: %v: %s", err, out)
	}
}
