package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/datasets"
	"github.com/nmfstream/nmfstream/sources"
	"github.com/nmfstream/nmfstream/stages"
)

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"fit", "fit", 0}, {"", "abc", 3}, {"fti", "fit", 1}, {"trian", "train", 1},
		{"kitten", "sitting", 3}, {"lables", "labels", 1}, {"stram", "stream", 1}, {"ca", "abc", 3},
	} {
		if got := editDistance(c.a, c.b); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := editDistance(c.b, c.a); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d (symmetric)", c.b, c.a, got, c.want)
		}
	}
	cands := []string{"train", "test", "save", "labels", "label-column", "text-column"}
	for word, want := range map[string]string{"trian": "train", "lables": "labels", "sav": "save", "txt-column": "text-column", "x": "", "zzzzzz": "", "label-col": "label-column"} {
		if got := suggest(word, cands); got != want {
			t.Errorf("suggest(%q) = %q, want %q", word, got, want)
		}
	}
}

// TestHelpOnStdout: help that is asked for is printed on stdout with exit
// status 0 (so that it can be paged); no arguments at all is a usage error
// on stderr.
func TestHelpOnStdout(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}, {"help", "fit"}, {"fit", "--help"}, {"stream", "--in", "x.arrow", "-h"}, {"datasets", "-help"}} {
		code, out, errs := runCmd(t, args...)
		if code != 0 || errs != "" || !strings.Contains(out, "Usage:") {
			t.Errorf("%v: exit %d, stdout %d bytes, stderr %q", args, code, len(out), errs)
		}
	}
	code, out, errs := runCmd(t)
	if code != 2 || out != "" || !strings.Contains(errs, "Usage:") {
		t.Errorf("no arguments: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// TestTypoSuggestions: a mistyped flag or command gets the nearest name and
// a few lines of usage, not the whole help.
func TestTypoSuggestions(t *testing.T) {
	code, _, errs := runCmd(t, "fit", "--trian", "train.arrow", "--save", "m.model")
	if code != 2 || !strings.Contains(errs, `did you mean "--train"?`) || !strings.Contains(errs, "Usage: nmfstream fit --train F") {
		t.Errorf("fit --trian: exit %d, stderr:\n%s", code, errs)
	}
	if n := strings.Count(errs, "\n"); n > 4 {
		t.Errorf("fit --trian: %d lines on stderr, want the usage line only:\n%s", n, errs)
	}
	code, _, errs = runCmd(t, "fti", "--train", "x")
	if code != 2 || !strings.Contains(errs, `did you mean "fit"?`) || strings.Count(errs, "\n") > 3 {
		t.Errorf("fti: exit %d, stderr:\n%s", code, errs)
	}
	code, _, errs = runCmd(t, "help", "stram")
	if code != 2 || !strings.Contains(errs, `did you mean "stream"?`) {
		t.Errorf("help stram: exit %d, stderr:\n%s", code, errs)
	}
	code, _, errs = runCmd(t, "datasets", "digit", "--out", t.TempDir())
	if code != 2 || !strings.Contains(errs, `did you mean "digits"?`) {
		t.Errorf("datasets digit: exit %d, stderr:\n%s", code, errs)
	}
}

// TestDemoRefusesNoLabels: demo --labels 0 (and a rank above the 64
// pixels) is refused before any output.
func TestDemoRefusesNoLabels(t *testing.T) {
	for _, args := range [][]string{{"demo", "--labels", "0"}, {"demo", "--labels", "-3"}, {"demo", "--rank", "65"}, {"demo", "--labels", "500"}} {
		code, out, errs := runCmd(t, args...)
		if code != 2 || out != "" || !strings.Contains(errs, args[1]) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
}

// TestDatasetsDigits: the digits files hold what the help says (two thirds
// in train.arrow with 10 labels per class, the other third labeled in
// test.arrow, every digit once in stream.arrow with a tenth of the labels
// late), and the same seed writes the same bytes.
func TestDatasetsDigits(t *testing.T) {
	dir, dir2 := t.TempDir(), t.TempDir()
	mustRun(t, "datasets", "digits", "--out", dir)
	mustRun(t, "datasets", "digits", "--out", dir2)
	x, _ := datasets.Digits()
	n, _ := x.Dims()
	count := func(name string) (samples, labeled, labelOnly int, ids map[string]int) {
		o := sources.Opener{}
		src, err := o.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		ids = map[string]int{}
		for src.Next() {
			b := src.Batch()
			samples += len(b.IDs)
			for i, l := range b.Labeled {
				ids[b.IDs[i]]++
				if l {
					labeled++
				}
			}
			labelOnly += len(b.LateLabels)
		}
		if err := src.Err(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return samples, labeled, labelOnly, ids
	}
	trN, trL, _, trIDs := count("train.arrow")
	teN, teL, _, teIDs := count("test.arrow")
	stN, stL, stLate, stIDs := count("stream.arrow")
	if trN+teN != n || trL != 10*10 || teL != teN || teN < n/3-10 || teN > n/3+10 {
		t.Errorf("train %d (%d labeled), test %d (%d labeled), want %d in all, 100 labeled in train, a third in test", trN, trL, teN, teL, n)
	}
	for id := range teIDs {
		if trIDs[id] > 0 {
			t.Errorf("digit %s in train.arrow and test.arrow", id)
		}
	}
	if stN != n || len(stIDs) != n || stL != 0 || stLate != (n+5)/10 {
		t.Errorf("stream: %d samples (%d distinct), %d labeled with their sample, %d late labels; want %d, 0, %d", stN, len(stIDs), stL, stLate, n, (n+5)/10)
	}
	for _, f := range []string{"train.arrow", "test.arrow", "stream.arrow"} {
		a, _ := os.ReadFile(filepath.Join(dir, f))
		b, _ := os.ReadFile(filepath.Join(dir2, f))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s: two runs with seed 1 differ (%d and %d bytes)", f, len(a), len(b))
		}
	}
}

// TestTextColumnRemembered: a CSV whose documents are in a column not
// named "text", given only --label-column, is refused with a suggestion of
// --text-column naming that column; fitted with it, the model remembers
// its columns and classify reads the same CSV with no column flags.
func TestTextColumnRemembered(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, "datasets", "brown", "--out", dir)
	b, err := os.ReadFile(filepath.Join(dir, "brown.csv"))
	if err != nil {
		t.Fatal(err)
	}
	body := filepath.Join(dir, "mail.csv")
	if err := os.WriteFile(body, bytes.Replace(b, []byte("id,genre,text"), []byte("id,genre,body"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	m := filepath.Join(dir, "m.model")
	code, _, errs := runCmd(t, "fit", "--train", body, "--label-column", "genre", "--save", m)
	if code == 0 || !strings.Contains(errs, "pass --text-column body") {
		t.Errorf("fit without --text-column: exit %d, stderr:\n%s", code, errs)
	}
	for _, line := range strings.Split(errs, "\n") {
		if n := len([]rune(line)); n > 600 { // a document is about 13,000 characters
			t.Errorf("a line of %d characters on stderr: the summary quotes the whole document", n)
		}
	}
	code, _, errs = runCmd(t, "fit", "--train", body, "--save", m)
	if code == 0 || !strings.Contains(errs, "--label-column genre") {
		t.Errorf("fit without column flags: exit %d, want --label-column genre suggested, stderr:\n%s", code, errs)
	}
	mustRun(t, "fit", "--train", body, "--text-column", "body", "--label-column", "genre", "--rank", "10", "--save", m)
	code, out, errs := runCmd(t, "classify", "--model", m, "--in", body, "--out", filepath.Join(dir, "p.arrow"))
	if code != 0 || !strings.Contains(out, "classified 45 records") || !strings.Contains(out, "accuracy on the 45 labeled records") ||
		!strings.Contains(errs, "--text-column body --label-column genre") {
		t.Errorf("classify on the training CSV: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
}

// TestScoreWindows: windows of n samples score the samples with a known
// class from the first prediction on, a missing prediction counting as
// wrong.
func TestScoreWindows(t *testing.T) {
	ids := []string{"a", "b", "c", "d", "e", "f", "g"}
	classes := []string{"1", "1", "", "2", "2", "1", "2"}
	got := map[string]string{"a": "", "b": "1", "c": "2", "d": "1", "f": "1", "g": "2"} // e: no line
	ws, err := scoreWindows(ids, classes, got, 3)
	if err != nil {
		t.Fatal(err)
	}
	// a is before the first prediction; c has no class.
	wantEnd, wantScored, wantRight := []int{3, 6, 7}, []int{1, 3, 1}, []int{1, 1, 1}
	for w := range wantEnd {
		if ws.End[w] != wantEnd[w] || ws.Scored[w] != wantScored[w] || ws.Right[w] != wantRight[w] {
			t.Fatalf("windows end %v scored %v right %v, want %v %v %v", ws.End, ws.Scored, ws.Right, wantEnd, wantScored, wantRight)
		}
	}
	if ws.NScored != 5 || ws.NRight != 3 || ws.Overall != 0.6 || ws.Acc[1] != 1.0/3 {
		t.Errorf("overall %d of %d (%v), window 2 %v", ws.NRight, ws.NScored, ws.Overall, ws.Acc[1])
	}
	if _, err := scoreWindows(ids, classes, map[string]string{"x": "1"}, 3); err == nil {
		t.Error("predictions of other ids accepted")
	}
}

// TestAccuracyCommand: the stream's predictions scored against the true
// classes of every digit give the demo's figure (every digit after the
// first label, ~0.92), and the PNG is written.
func TestAccuracyCommand(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, "datasets", "digits", "--out", dir)
	in, pred := filepath.Join(dir, "stream.arrow"), filepath.Join(dir, "pred.jsonl")
	mustRun(t, "stream", "--in", in, "--out", pred)
	png := filepath.Join(dir, "acc.png")
	out := mustRun(t, "accuracy", "--in", in, "--pred", "graph="+pred, "--truth", filepath.Join(dir, "digits.arrow"), "--png", png, "--window", "300")
	var acc float64
	var n int
	if _, err := fmt.Sscanf(out, "graph: accuracy %f over %d scored samples", &acc, &n); err != nil || acc < 0.85 || n < 1600 || n > 1797 {
		t.Errorf("accuracy %v over %d (%v):\n%s", acc, n, err, out)
	}
	if strings.Count(out, "  samples ") != 6 {
		t.Errorf("want 6 windows of 300 of the 1797 samples:\n%s", out)
	}
	if st, err := os.Stat(png); err != nil || st.Size() < 1000 {
		t.Errorf("PNG: %v", err)
	}
	// Without --truth only the stream's own late labels are scored.
	out = mustRun(t, "accuracy", "--in", in, "--pred", pred)
	if _, err := fmt.Sscanf(out, "pred: accuracy %f over %d scored samples", &acc, &n); err != nil || n > 180 || n < 100 {
		t.Errorf("without --truth: %d scored (%v):\n%s", n, err, out)
	}
}

// TestTopics: topTerms orders each column's terms by weight and drops
// non-positive ones; the command lists the factors of a model of
// documents and refuses a model of pixels.
func TestTopics(t *testing.T) {
	u := mat.NewDense(4, 2, []float64{
		0.1, 0,
		0.5, 0.2,
		0, 0.9,
		0.3, 0.2,
	})
	topics, err := topTerms(u, []string{"apple", "bank", "cat", "dog"}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(topics[0].Terms, topics[1].Terms); got != "[bank dog apple] [cat bank dog]" {
		t.Errorf("top terms %s", got)
	}
	if _, err := topTerms(u, []string{"a"}, 3); err == nil {
		t.Error("a vocabulary of 1 term for 4 rows accepted")
	}
	dir := t.TempDir()
	mustRun(t, "datasets", "brown", "--out", dir)
	m := filepath.Join(dir, "b.model")
	mustRun(t, "fit", "--train", filepath.Join(dir, "brown.csv"), "--label-column", "genre", "--method", "nmf", "--rank", "6", "--save", m)
	out := mustRun(t, "topics", "--model", m, "--top", "4")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 6 || strings.Count(lines[0], ",") != 3 {
		t.Errorf("topics of a rank-6 model, 4 terms each:\n%s", out)
	}
	train, _, _ := digitsFiles(t, dir, 8)
	mustRun(t, "fit", "--train", train, "--method", "nmf", "--rank", "5", "--save", m)
	if code, _, errs := runCmd(t, "topics", "--model", m); code != 1 || !strings.Contains(errs, "fitted on documents") {
		t.Errorf("topics on a model of pixels: exit %d, %s", code, errs)
	}
}

// TestTopicsCheckpoint: a stream of documents hashes its terms, and
// topics names each hashed column by a term of the input that maps to it:
// hashedTerms' names map back to their columns, no stop word is among
// them, and topics --checkpoint lists every factor of the stream.
func TestTopicsCheckpoint(t *testing.T) {
	// 225 documents (each text in five parts): enough for the online
	// model's first fit (100 samples).
	docs, genres := brownFifths(t)
	var b strings.Builder
	b.WriteString("id,genre,body\n")
	for j, doc := range docs {
		fmt.Fprintf(&b, "d%d-%d,%s,%q\n", j/5, j%5, genres[j], strings.ReplaceAll(doc, `"`, `'`))
	}
	tf := stages.DefaultStreamTFIDF()
	if err := tf.Update(docs[:50]); err != nil {
		t.Fatal(err)
	}
	vocab, err := hashedTerms(tf, docs[:50], tf.Dim())
	if err != nil {
		t.Fatal(err)
	}
	stop := map[string]bool{}
	for _, w := range tf.StopWords {
		stop[w] = true
	}
	named := 0
	for j, term := range vocab {
		if term == "" {
			continue
		}
		named++
		x, err := tf.Transform([]string{term})
		if ind, _ := x.Row(0); err != nil || len(ind) != 1 || ind[0] != j || stop[term] {
			t.Fatalf("column %d named %q, which maps to %v (stop word %v)", j, term, ind, stop[term])
		}
	}
	if named < 1000 {
		t.Errorf("%d columns named by the terms of 50 documents", named)
	}
	dir := t.TempDir()
	in, ckpt := filepath.Join(dir, "parts.csv"), filepath.Join(dir, "run.ckpt")
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "stream", "--in", in, "--text-column", "body", "--label-column", "genre", "--rank", "6", "--checkpoint", ckpt)
	out := mustRun(t, "topics", "--checkpoint", ckpt, "--in", in, "--text-column", "body", "--top", "5")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 6 || strings.Count(lines[5], ",") != 4 {
		t.Errorf("topics of a rank-6 stream, 5 terms each:\n%s", out)
	}
	if code, _, errs := runCmd(t, "topics", "--checkpoint", ckpt); code != 2 || !strings.Contains(errs, "--in") {
		t.Errorf("--checkpoint without --in: exit %d, %s", code, errs)
	}
}

// TestReportTopics: a report on documents lists the top terms of each
// factor, one row per column of U, in report.md and report.json.
func TestReportTopics(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, "datasets", "brown", "--out", dir)
	csv, out := filepath.Join(dir, "brown.csv"), filepath.Join(dir, "rep")
	mustRun(t, "report", "--train", csv, "--test", csv, "--label-column", "genre", "--method", "nmf", "--rank", "6", "--quick", "--out", out)
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(md), "## Top terms of each factor")
	sec, _, _ = strings.Cut(sec, "\n## ")
	if !ok || strings.Count(sec, "\n| ") != 6+1 || !strings.Contains(sec, "| 6 | ") {
		t.Errorf("report.md: want a table of the 6 factors' terms:\n%s", sec)
	}
	if _, err := os.Stat(filepath.Join(out, "confusion.png")); err != nil {
		t.Error(err)
	}
}

// TestAccuracyPeers: the built-in peers replay the input: the raw 1-NN
// predicts each digit from the digits labeled before it (about 0.85 on
// the digits stream, below the stream's graph predictor), the last label
// is right about one time in ten (10 classes in random order); knn on
// documents is refused.
func TestAccuracyPeers(t *testing.T) {
	if got := nearestLabel([][]float64{{0, 0}, {5, 5}, {1, 0}}, []string{"a", "b", "c"}, []float64{0.9, 0.2}); got != "c" {
		t.Errorf("nearest of (0.9, 0.2): %q, want c", got)
	}
	if got := nearestLabel(nil, nil, []float64{1}); got != "" {
		t.Errorf("nearest among none: %q", got)
	}
	dir := t.TempDir()
	mustRun(t, "datasets", "digits", "--out", dir)
	mustRun(t, "datasets", "brown", "--out", dir)
	in, pred := filepath.Join(dir, "stream.arrow"), filepath.Join(dir, "pred.jsonl")
	mustRun(t, "stream", "--in", in, "--out", pred)
	out := mustRun(t, "accuracy", "--in", in, "--pred", "graph="+pred, "--peer", "knn", "--peer", "last", "--truth", filepath.Join(dir, "digits.arrow"))
	acc := map[string]float64{}
	for _, l := range strings.Split(out, "\n") {
		if name, rest, ok := strings.Cut(l, ": accuracy "); ok && !strings.HasPrefix(l, " ") {
			var a float64
			fmt.Sscan(rest, &a)
			acc[name] = a
		}
	}
	if acc["raw 1-NN peer"] < 0.75 || acc["raw 1-NN peer"] >= acc["graph"] || acc["last-label peer"] > 0.2 {
		t.Errorf("accuracies %v: want the 1-NN peer in [0.75, graph's) and the last label under 0.2\n%s", acc, out)
	}
	code, _, errs := runCmd(t, "accuracy", "--in", filepath.Join(dir, "brown.csv"), "--label-column", "genre", "--pred", pred, "--peer", "knn")
	if code == 0 || !strings.Contains(errs, "no dense features") {
		t.Errorf("--peer knn on documents: exit %d, %s", code, errs)
	}
	if code, _, errs := runCmd(t, "accuracy", "--in", in, "--pred", pred, "--peer", "kn"); code != 2 || !strings.Contains(errs, `did you mean "knn"`) {
		t.Errorf("--peer kn: exit %d, %s", code, errs)
	}
}
