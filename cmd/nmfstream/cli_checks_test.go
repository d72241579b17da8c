package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nmfstream/nmfstream/datasets"
)

// TestStreamRefusesBadValues checks that stream refuses, as usage errors
// (exit 2) naming the flag, values its learner cannot take or would
// ignore: a negative --vote (it panicked with --predictor walk and gave
// every prediction null with nearest and propagate), weights that are not
// numbers, --forget outside [0, 1), negative counts, --neighbors not below
// a bounded --window, a method that cannot learn online (named with the
// others that cannot), --alpha, --beta or --q that the method does not
// read, --max-dim ≤ 0, "-" for outputs that must be files, and settings of
// a part of the predictor that the chosen one does not run (checkCodeUse).
func TestStreamRefusesBadValues(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "d.arrow")
	writeDigitsStream(t, in, 0.1, 100)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--predictor", "walk", "--vote", "-1"}, "--vote"},
		{[]string{"--predictor", "nearest", "--vote", "-1"}, "--vote"},
		{[]string{"--spread-metric", "NaN"}, "--spread-metric"},
		{[]string{"--spread-metric", "Inf"}, "--spread-metric"},
		{[]string{"--spread-metric", "-1"}, "--spread-metric"},
		{[]string{"--forget", "2"}, "--forget"},
		{[]string{"--forget", "1"}, "--forget"},
		{[]string{"--forget", "-1"}, "--forget"},
		{[]string{"--forget", "NaN"}, "--forget"},
		{[]string{"--sweeps", "-1"}, "--sweeps"},
		{[]string{"--spread-power", "NaN"}, "--spread-power"},
		{[]string{"--spread-codes", "NaN"}, "--spread-codes"},
		{[]string{"--search-basis", "-1"}, "--search-basis"},
		{[]string{"--search-dim", "-1"}, "--search-dim"},
		{[]string{"--checkpoint", filepath.Join(dir, "c"), "--checkpoint-every", "-1"}, "--checkpoint-every"},
		{[]string{"--alpha", "NaN"}, "--alpha"},
		{[]string{"--beta", "NaN", "--method", "ssknmf"}, "--beta"},
		{[]string{"--max-norm-ratio", "NaN"}, "--max-norm-ratio"},
		{[]string{"--max-norm-ratio", "0.5"}, "--max-norm-ratio 0.5: want a ratio above 1"},
		{[]string{"--max-norm-ratio", "1"}, "--max-norm-ratio 1: want a ratio above 1"},
		{[]string{"--neighbors", "20", "--window", "10", "--batch", "10"}, "--neighbors 20 needs a larger --window than 10"},
		{[]string{"--method", "gnmf", "--beta", "50"}, "method gnmf does not read --beta (n2s2l, nge, ssknmf do)"},
		{[]string{"--method", "gnmf", "--q", "5"}, "method gnmf does not read --q"},
		{[]string{"--method", "nmf", "--alpha", "50"}, "method nmf does not read --alpha"},
		{[]string{"--method", "dgnmf", "--beta", "5"}, "method dgnmf does not read --beta"},
		{[]string{"--method", "ssnmf"}, `method "ssnmf" cannot learn online (dpca, kernel, multik, ssnmf are batch only: use fit)`},
		{[]string{"--max-dim", "0"}, "-max-dim"},
		{[]string{"--max-dim", "-5"}, "-max-dim"},
		{[]string{"--checkpoint", "-"}, "--checkpoint -"},
		{[]string{"--rejects", "-"}, "--rejects -"},
		// Settings of a part of the predictor that does not run.
		{[]string{"--predictor", "nearest", "--spread-power", "5"}, "--spread-power weighs the graph predictor's edges"},
		{[]string{"--predictor", "walk", "--spread-codes", "20"}, "--spread-codes weighs the graph predictor's edges"},
		{[]string{"--predictor", "propagate", "--spread-metric", "1"}, "--spread-metric weighs the graph predictor's edges"},
		{[]string{"--codes", "off", "--spread-codes", "20"}, "--spread-codes weighs the samples' edges by their codes with --codes auto only"},
		{[]string{"--codes", "only", "--spread-codes", "-1"}, "--spread-codes weighs the samples' edges by their codes with --codes auto only"},
		{[]string{"--codes", "only", "--spread-metric", "1"}, "--spread-metric learns the samples' graph"},
		{[]string{"--search-dim", "16", "--search-basis", "20"}, "--search-dim replaces the search basis"},
		{[]string{"--search-dim", "16", "--search-fit", "nmf"}, "--search-dim replaces the search basis"},
		{[]string{"--codes", "off", "--search-basis", "20"}, "--codes off searches the raw samples"},
		{[]string{"--predictor", "spread", "--code-expert=false"}, "--code-expert=false leaves an expert out of the graph predictor's mixture"},
		{[]string{"--codes", "off", "--code-expert=false"}, "--codes off reads no codes, so the mixture has no code-space expert"},
		{[]string{"--code-expert=maybe"}, "-code-expert"},
		{[]string{"--predictor", "nearest", "--prior-power", "0.3"}, "--prior-power scales the graph predictor's mixture"},
		{[]string{"--prior-power", "NaN"}, "--prior-power"},
	} {
		code, _, e := runCmd(t, append([]string{"stream", "--in", in, "--out", filepath.Join(dir, "p.jsonl")}, c.args...)...)
		if code != 2 || !strings.Contains(e, c.want) {
			t.Errorf("stream %s: exit %d, %q; want exit 2 naming %q", strings.Join(c.args, " "), code, e, c.want)
		}
	}
	if _, err := os.Stat("-"); err == nil {
		t.Errorf("a file called - was created")
	}
	// What the methods read stays accepted, and --checkpoint-every 0
	// (a checkpoint at the end only).
	for _, args := range [][]string{
		{"--method", "n2s2l", "--q", "5", "--beta", "3", "--alpha", "2", "--rank", "20"},
		{"--method", "ssknmf", "--beta", "3", "--forget", "0.5"},
		{"--predictor", "spread", "--spread-power", "5", "--spread-codes", "8", "--spread-metric", "1", "--search-basis", "6"},
		{"--codes", "only", "--spread-power", "5", "--search-basis", "6", "--search-fit", "nmf"},
		{"--codes", "off", "--spread-power", "5", "--spread-metric", "1"},
		{"--checkpoint", filepath.Join(dir, "ok.ckpt"), "--checkpoint-every", "0", "--rank", "10"},
	} {
		if code, _, e := runCmd(t, append([]string{"stream", "--in", in, "--window", "300"}, args...)...); code != 0 {
			t.Errorf("stream %s: exit %d, %s", strings.Join(args, " "), code, e)
		}
	}
}

// TestStreamRefusesByForm checks that stream refuses, before it writes
// anything, the settings that change nothing on its input's samples
// (checkFormUse): the documents' mixture on images, the learned metric on
// documents and on images of more than 256 features, a search basis
// where neither its rank nor the default's applies to the images' features, and
// the graph's metric and the norms' bound on documents; and that it accepts
// each where it acts.
func TestStreamRefusesByForm(t *testing.T) {
	dir := t.TempDir()
	digits := filepath.Join(dir, "d.arrow")
	writeDigitsStream(t, digits, 0.1, 100)
	wide, docs := filepath.Join(dir, "wide.csv"), filepath.Join(dir, "docs.csv") // wide: 420 features
	rnd := rand.New(rand.NewPCG(1, 2))
	var w, d strings.Builder
	w.WriteString("label")
	for j := range 420 {
		fmt.Fprintf(&w, ",f%d", j)
	}
	d.WriteString("label,text\n")
	words := [2][]string{{"goal", "match", "team", "score", "league"}, {"vote", "party", "senate", "law", "bill"}}
	for i := range 200 {
		c := i % 2
		fmt.Fprintf(&w, "\n%d", c)
		for j := range 420 {
			fmt.Fprintf(&w, ",%.3f", rnd.Float64()+float64(c*(j%2)))
		}
		fmt.Fprintf(&d, "%d,%s %s %s\n", c, words[c][i%5], words[c][(i+1)%5], words[c][(i+3)%5])
	}
	writeTestFile(t, wide, []byte(w.String()+"\n"))
	writeTestFile(t, docs, []byte(d.String()))
	for _, c := range []struct {
		in   string
		args []string
		want string // "" for accepted
	}{
		{digits, []string{"--prior-power", "0.3"}, "--prior-power scales the documents' mixture, and dense samples (images) have none"},
		{digits, []string{"--code-expert=false"}, "--code-expert=false leaves an expert out of the documents' mixture"},
		{digits, []string{"--search-basis", "20"}, "--search-basis 20 changes nothing on dense samples of 64 features"},
		{digits, []string{"--search-basis", "0"}, "--search-basis 0 changes nothing on dense samples of 64 features"},
		{digits, []string{"--search-fit", "nmf"}, "--search-fit changes nothing on dense samples of 64 features"},
		{wide, []string{"--spread-metric", "1"}, "--spread-metric learns a metric on dense samples of at most 256 features"},
		{docs, []string{"--spread-metric", "1"}, "--spread-metric learns a metric on dense samples of at most 256 features"},
		{docs, []string{"--graph-metric", "cosine"}, "--graph-metric changes nothing on documents"},
		{docs, []string{"--search-basis", "20"}, "--search-basis 20 changes nothing on documents"},
		{docs, []string{"--max-norm-ratio", "-1"}, "--max-norm-ratio changes nothing on documents"},
		{digits, []string{"--max-norm-ratio", "-1"}, ""},
		{digits, []string{"--spread-metric", "1", "--search-basis", "6", "--search-fit", "nmf"}, ""},
		{wide, []string{"--search-basis", "20", "--graph-metric", "cosine"}, ""},
		{wide, []string{"--search-basis", "0"}, ""},  // the default's basis applies: none changes the search
		{wide, []string{"--search-basis", "50"}, ""}, // too wide for 420 features, but the default's applies
		{docs, []string{"--prior-power", "0.3", "--code-expert=false"}, ""},
	} {
		out := filepath.Join(dir, "p.jsonl")
		os.Remove(out)
		code, _, e := runCmd(t, append([]string{"stream", "--in", c.in, "--out", out, "--window", "300", "--batch", "50"}, c.args...)...)
		_, statErr := os.Stat(out)
		switch {
		case c.want == "" && code != 0:
			t.Errorf("stream --in %s %s: exit %d, %s", filepath.Base(c.in), strings.Join(c.args, " "), code, e)
		case c.want != "" && (code != 2 || !strings.Contains(e, c.want)):
			t.Errorf("stream --in %s %s: exit %d, %q; want exit 2 naming %q", filepath.Base(c.in), strings.Join(c.args, " "), code, e, c.want)
		case c.want != "" && statErr == nil:
			t.Errorf("stream --in %s %s: refused, but wrote --out", filepath.Base(c.in), strings.Join(c.args, " "))
		}
	}
}

// TestStreamResumeKeepsForm checks that a resumed stream goes on with its
// checkpoint's settings without checkFormUse: a checkpoint written by a
// build that accepted a setting its input's form has no part for (here
// --prior-power on images, set in the checkpoint) is resumed, not refused,
// while a fresh run with the setting is refused.
func TestStreamResumeKeepsForm(t *testing.T) {
	dir := t.TempDir()
	in, ckpt := filepath.Join(dir, "d.arrow"), filepath.Join(dir, "c.ckpt")
	writeDigitsStream(t, in, 0.1, 100)
	if code, _, e := runCmd(t, "stream", "--in", in, "--checkpoint", ckpt, "--window", "300"); code != 0 {
		t.Fatalf("first run: exit %d, %s", code, e)
	}
	cp, err := loadCheckpoint(ckpt)
	if err != nil {
		t.Fatal(err)
	}
	cp.Config.PriorPower = 0.3
	if err := saveCheckpoint(ckpt, cp); err != nil {
		t.Fatal(err)
	}
	if code, _, e := runCmd(t, "stream", "--in", in, "--checkpoint", ckpt); code != 0 {
		t.Errorf("resumed from a checkpoint with --prior-power on images: exit %d, %s", code, e)
	}
	if code, _, e := runCmd(t, "stream", "--in", in, "--window", "300", "--prior-power", "0.3"); code != 2 || !strings.Contains(e, "--prior-power") {
		t.Errorf("a fresh run with --prior-power on images: exit %d, %q; want refused", code, e)
	}
}

// TestEvalRefusesByForm checks that eval (and so fit and report, which
// read their training records alike) refuses, once it has read the
// training records' form, the flags that act on other forms only
// (checkTrainForm), naming each, and accepts them where they act; and
// classify alike, from its fitted model's training records.
func TestEvalRefusesByForm(t *testing.T) {
	dir := t.TempDir()
	_, y := datasets.Digits()
	label := func(i int) string { return fmt.Sprint(y[i]) }
	dtr, dte := filepath.Join(dir, "dtr.csv"), filepath.Join(dir, "dte.csv")
	var tr, te []int
	for i := range 300 {
		if i < 200 {
			tr = append(tr, i)
		} else {
			te = append(te, i)
		}
	}
	writeCSV(t, dtr, tr, label)
	writeCSV(t, dte, te, label)
	words := [2][]string{{"goal", "match", "team", "score", "league", "coach"}, {"vote", "party", "senate", "law", "bill", "court"}}
	doc := func(b *strings.Builder, i int, labeled bool) {
		c := i % 2
		l := ""
		if labeled {
			l = fmt.Sprint(c)
		}
		fmt.Fprintf(b, "%s,%s %s %s\n", l, words[c][i%6], words[c][(i+1)%6], words[c][(i+3)%6])
	}
	var trb, teb strings.Builder
	trb.WriteString("label,text\n")
	teb.WriteString("label,text\n")
	for i := range 60 {
		doc(&trb, i, i < 24)
		doc(&teb, i+1, true)
	}
	ttr, tte := filepath.Join(dir, "ttr.csv"), filepath.Join(dir, "tte.csv")
	writeTestFile(t, ttr, []byte(trb.String()))
	writeTestFile(t, tte, []byte(teb.String()))
	for _, c := range []struct {
		train, test string
		args        []string
		want        string // "" for accepted
	}{
		{dtr, dte, []string{"--min-df", "3"}, "--min-df changes nothing on dense records: it acts on documents"},
		{dtr, dte, []string{"--stem", "--sublinear-tf=false"}, "--stem changes nothing on dense records"},
		{dtr, dte, []string{"--doc-codes", "off"}, "--doc-codes changes nothing on dense records"},
		{dtr, dte, []string{"--priors", "uniform"}, "--priors changes nothing on dense records"},
		{ttr, tte, []string{"--self-training", "joint"}, "--self-training changes nothing on text records: it acts on dense rows"},
		{ttr, tte, []string{"--precision", "float32"}, "--precision changes nothing on text records"},
		{ttr, tte, []string{"--max-norm-ratio", "5"}, "--max-norm-ratio changes nothing on text records"},
		{dtr, dte, []string{"--self-training", "joint", "--max-norm-ratio", "5", "--precision", "float32"}, ""},
		{ttr, tte, []string{"--min-df", "1", "--stem", "--priors", "uniform", "--doc-codes", "off"}, ""},
	} {
		code, _, e := runCmd(t, append([]string{"eval", "--train", c.train, "--test", c.test, "--rank", "4", "--iters", "10", "--neighbors", "3"}, c.args...)...)
		switch {
		case c.want == "" && code != 0:
			t.Errorf("eval --train %s %s: exit %d, %s", filepath.Base(c.train), strings.Join(c.args, " "), code, e)
		case c.want != "" && (code != 2 || !strings.Contains(e, c.want)):
			t.Errorf("eval --train %s %s: exit %d, %q; want exit 2 naming %q", filepath.Base(c.train), strings.Join(c.args, " "), code, e, c.want)
		}
	}
	// classify: the fitted model's training records fix the form.
	m := filepath.Join(dir, "d.model")
	if code, _, e := runCmd(t, "fit", "--train", dtr, "--save", m, "--rank", "4", "--iters", "10", "--neighbors", "3"); code != 0 {
		t.Fatalf("fit: exit %d, %s", code, e)
	}
	out := filepath.Join(dir, "c.jsonl")
	if code, _, e := runCmd(t, "classify", "--model", m, "--in", dte, "--out", out, "--priors", "uniform"); code != 2 || !strings.Contains(e, "--priors changes nothing on dense records") {
		t.Errorf("classify --priors on a model of dense records: exit %d, %q; want refused", code, e)
	}
	if code, _, e := runCmd(t, "classify", "--model", m, "--in", dte, "--out", out, "--self-training", "joint"); code != 0 {
		t.Errorf("classify --self-training on a model of dense records: exit %d, %s", code, e)
	}
}

// writeCSV writes a CSV of the digits' rows rows with header id,label,f0…,
// the label of row i given by label (""for none).
func writeCSV(t *testing.T, path string, rows []int, label func(i int) string) {
	t.Helper()
	x, _ := datasets.Digits()
	_, d := x.Dims()
	var b strings.Builder
	b.WriteString("id,label")
	for j := range d {
		fmt.Fprintf(&b, ",f%d", j)
	}
	b.WriteByte('\n')
	for _, i := range rows {
		fmt.Fprintf(&b, "%d,%s", i, label(i))
		for _, v := range x.RawRowView(i) {
			fmt.Fprintf(&b, ",%g", v)
		}
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFitRefusesBadValues checks fit's refusals before any work: --alpha
// and --beta that are not finite numbers, --alpha or --beta the method does
// not read, --max-dim ≤ 0, "-" as --save or --rejects, --graph-metric not
// auto, euclidean or cosine or named for a method that searches no graph
// of the records; and, after reading the file, --graph-metric named for
// documents, --neighbors not below the number of training records (the
// graph's own error named neither) and training records all zero.
func TestFitRefusesBadValues(t *testing.T) {
	dir := t.TempDir()
	_, y := datasets.Digits()
	train := filepath.Join(dir, "tr.csv")
	writeCSV(t, train, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, func(i int) string { return fmt.Sprint(y[i]) })
	save := filepath.Join(dir, "m.model")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--alpha", "NaN"}, 2, "--alpha NaN"},
		{[]string{"--beta", "Inf"}, 2, "--beta +Inf"},
		{[]string{"--max-norm-ratio", "0.9"}, 2, "--max-norm-ratio 0.9: want a ratio above 1"},
		{[]string{"--max-norm-ratio", "NaN"}, 2, "--max-norm-ratio NaN"},
		{[]string{"--method", "gnmf", "--beta", "50"}, 2, "method gnmf does not read --beta"},
		{[]string{"--method", "nmf", "--alpha", "50"}, 2, "method nmf does not read --alpha"},
		{[]string{"--method", "dpca", "--alpha", "1"}, 2, "method dpca does not read --alpha"},
		{[]string{"--max-dim", "0"}, 2, "-max-dim"},
		{[]string{"--save", "-"}, 2, "--save -"},
		{[]string{"--rejects", "-"}, 2, "--rejects -"},
		{[]string{"--method", "gnmf", "--neighbors", "12"}, 2, "--neighbors 12 needs more training records than 12 (the file has 12): lower --neighbors"},
		{[]string{"--method", "ssknmf", "--neighbors", "15"}, 2, "--neighbors 15 needs more training records than 15 (the file has 12)"},
		{[]string{"--graph-metric", "manhattan"}, 2, `--graph-metric "manhattan": want auto, euclidean or cosine`},
		{[]string{"--method", "kernel", "--graph-metric", "cosine"}, 2, "--graph-metric cosine: method kernel with --projector graph searches no k-NN graph"},
		{[]string{"--method", "dpca", "--graph-metric", "euclidean"}, 2, "method dpca"},
		{[]string{"--method", "nmf", "--projector", "nnls", "--graph-metric", "cosine"}, 2, "method nmf with --projector nnls searches no k-NN graph"},
	} {
		args := append([]string{"fit", "--train", train, "--save", save, "--rank", "3", "--iters", "5"}, c.args...)
		code, _, e := runCmd(t, args...)
		if code != c.code || !strings.Contains(e, c.want) {
			t.Errorf("fit %s: exit %d, %q; want exit %d with %q", strings.Join(c.args, " "), code, e, c.code, c.want)
		}
	}
	if _, err := os.Stat("-"); err == nil {
		t.Errorf("a file called - was created")
	}
	if code, _, e := runCmd(t, "fit", "--train", train, "--save", save, "--rank", "3", "--iters", "5", "--method", "ssnmf", "--alpha", "2", "--beta", "3"); code != 0 {
		t.Errorf("ssnmf reads --alpha and --beta: exit %d, %s", code, e)
	}

	docs := filepath.Join(dir, "docs.csv")
	if err := os.WriteFile(docs, []byte("label,text\na,red apples and pears\nb,blue skies and seas\na,apples are red\nb,the sea is blue\n,pears and apples\n,seas and skies\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"euclidean", "cosine"} {
		code, _, e := runCmd(t, "fit", "--train", docs, "--save", save, "--rank", "2", "--iters", "5", "--method", "gnmf", "--neighbors", "2", "--graph-metric", m)
		if code != 2 || !strings.Contains(e, "--graph-metric "+m+": the training records are documents") {
			t.Errorf("fit --graph-metric %s on documents: exit %d, %q; want a usage error", m, code, e)
		}
	}
	if code, _, e := runCmd(t, "fit", "--train", docs, "--save", save, "--rank", "2", "--iters", "5", "--method", "gnmf", "--neighbors", "2"); code != 0 {
		t.Errorf("fit on documents with --graph-metric auto: exit %d, %s", code, e)
	}
	if code, _, e := runCmd(t, "fit", "--train", docs, "--save", save, "--rank", "2", "--min-df", "7"); code != 2 || !strings.Contains(e, "--min-df 7: "+docs+" has 6 training documents") {
		t.Errorf("fit --min-df 7 on 6 documents: exit %d, %q; want a usage error naming the count", code, e)
	}

	zeros := filepath.Join(dir, "zeros.csv")
	if err := os.WriteFile(zeros, []byte("a,b,c\n0,0,0\n0,0,0\n0,0,0\n0,0,0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, e := runCmd(t, "fit", "--train", zeros, "--save", save, "--rank", "1", "--method", "nmf")
	if code == 0 || !strings.Contains(e, "every training record is zero: nothing to factorize") {
		t.Errorf("fit on zeros: exit %d, %q", code, e)
	}
}

// TestDatasetsArgs checks that datasets refuses a --stream-labeled that
// is not a number (it panicked) and arguments beyond the data set's name
// (one after the flags was ignored; one before them made --out look
// missing), before writing anything.
func TestDatasetsArgs(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "d")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"digits", "--out", out, "--stream-labeled", "NaN"}, "--stream-labeled NaN"},
		{[]string{"digits", "--out", out, "brown"}, `unexpected argument "brown"`},
		{[]string{"digits", "brown", "--out", out}, `unexpected argument "brown"`},
	} {
		code, _, e := runCmd(t, append([]string{"datasets"}, c.args...)...)
		if code != 2 || !strings.Contains(e, c.want) {
			t.Errorf("datasets %s: exit %d, %q; want exit 2 with %q", strings.Join(c.args, " "), code, e, c.want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s was created", out)
	}
}

// TestReportOutIsAFile checks that report refuses an --out that is a file
// (or under one) before fitting.
func TestReportOutIsAFile(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "afile")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{f, filepath.Join(f, "sub")} {
		code, _, e := runCmd(t, "report", "--quick", "--out", out)
		if code != 2 || !strings.Contains(e, "is a file, want a directory") {
			t.Errorf("report --out %s: exit %d, %q", out, code, e)
		}
	}
}

// TestStreamNoRecords checks that stream exits non-zero on an input with
// no record (docs/DESIGN.md §6), as fit does.
func TestStreamNoRecords(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"empty.csv": "", "header.csv": "a,b,label\n"} {
		in := filepath.Join(dir, name)
		if err := os.WriteFile(in, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, e := runCmd(t, "stream", "--in", in)
		if code == 0 || !strings.Contains(e, "no records") {
			t.Errorf("stream --in %s: exit %d, %q", name, code, e)
		}
	}
}

// TestStreamRankAboveDim checks that a stream whose --rank exceeds its
// dimension (learned at the dimension: stages' capRank) writes its Arrow
// codes at the learned rank, not null, and reports that rank.
func TestStreamRankAboveDim(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "d.arrow")
	writeDigitsStream(t, in, 0.1, 100)
	out := filepath.Join(dir, "p.arrow")
	code, so, e := runCmd(t, "stream", "--in", in, "--out", out, "--rank", "70", "--window", "300", "--json")
	if code != 0 {
		t.Fatal(e)
	}
	if s := decodeSummary(t, []byte(so)); s.Rank != 64 {
		t.Errorf("--json rank %d, want 64 (the digits' pixels)", s.Rank)
	}
	ids, codes, _, _ := readResults(t, out)
	coded := 0
	for _, c := range codes {
		if len(c) != 64 {
			t.Fatalf("codes of %d values, want 64", len(c))
		}
		for _, v := range c {
			if v != 0 {
				coded++
				break
			}
		}
	}
	if coded < len(ids)-300 {
		t.Errorf("%d of %d rows coded", coded, len(ids))
	}
}

// TestOutStdoutSummary checks that with --out - (the Arrow stream on
// standard output) stream, project and classify print their summary on
// stderr, not after the binary stream, and that a dpca model, whose
// codes are linear, says so and refuses --projector.
func TestOutStdoutSummary(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "d.arrow")
	writeDigitsStream(t, in, 0.1, 100)
	train, test, _ := digitsFiles(t, dir, 4)
	mdl := filepath.Join(dir, "m.model")
	mustRun(t, "fit", "--train", train, "--save", mdl, "--method", "dpca", "--rank", "5")
	stdout := os.Stdout
	f, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout = f
	defer func() { os.Stdout = stdout; f.Close() }()
	for _, args := range [][]string{
		{"stream", "--in", in, "--out", "-", "--window", "300", "--rank", "10", "--json"},
		{"project", "--model", mdl, "--in", test, "--out", "-"},
		{"classify", "--model", mdl, "--in", test, "--out", "-"},
	} {
		code, so, e := runCmd(t, args...)
		if code != 0 || so != "" || e == "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q: want the summary on stderr", strings.Join(args, " "), code, so, e)
		}
		if args[0] == "stream" && !json.Valid([]byte(strings.TrimSpace(e[strings.LastIndex(strings.TrimSpace(e), "\n")+1:]))) {
			t.Errorf("stream --json's summary on stderr: %q", e)
		}
		if args[0] == "project" && !strings.Contains(e, "linear projection") {
			t.Errorf("project of a dpca model: %q, want it to say linear projection", e)
		}
	}
	code, _, e := runCmd(t, "project", "--model", mdl, "--in", test, "--out", filepath.Join(dir, "c.jsonl"), "--projector", "nnls")
	if code != 2 || !strings.Contains(e, "--projector nnls") {
		t.Errorf("project --projector nnls of a dpca model: exit %d, %q", code, e)
	}
}

// TestEvalUnseenClasses checks that eval warns of test labels the
// training file does not have, and counts their records in --json.
func TestEvalUnseenClasses(t *testing.T) {
	dir := t.TempDir()
	_, y := datasets.Digits()
	var tr, te []int
	for i := range 300 {
		if y[i] < 5 {
			tr = append(tr, i)
		}
	}
	unseen := 0
	for i := 300; i < 400; i++ {
		te = append(te, i)
		if y[i] >= 5 {
			unseen++
		}
	}
	train, test := filepath.Join(dir, "tr.csv"), filepath.Join(dir, "te.csv")
	writeCSV(t, train, tr, func(i int) string { return fmt.Sprint(y[i]) })
	writeCSV(t, test, te, func(i int) string { return fmt.Sprint(y[i]) })
	code, so, e := runCmd(t, "eval", "--train", train, "--test", test, "--method", "gnmf", "--rank", "5", "--iters", "20", "--json")
	if code != 0 {
		t.Fatal(e)
	}
	var sum map[string]any
	if err := json.Unmarshal([]byte(so), &sum); err != nil {
		t.Fatal(err)
	}
	if sum["n_test_unseen"] != float64(unseen) || !strings.Contains(e, fmt.Sprintf("%d labeled records have 5 classes the model does not know", unseen)) {
		t.Errorf("n_test_unseen %v, want %d; stderr %q", sum["n_test_unseen"], unseen, e)
	}
}

// TestStreamOpenErrorNamesInput checks that stream names its input when
// the file cannot be opened as one (it said only "not a valid Arrow IPC
// stream").
func TestStreamOpenErrorNamesInput(t *testing.T) {
	in := filepath.Join(t.TempDir(), "garbage.arrow")
	if err := os.WriteFile(in, []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCmd(t, "stream", "--in", in); code == 0 || !strings.Contains(stderr, in+": ") {
		t.Errorf("stream on a file that is not Arrow: exit %d, %q; want the path named", code, stderr)
	}
}

// TestOwnerTimeoutNeedsSeparateWorkers: --owner-timeout bounds the wait for
// a separate worker, so with owners in the process (--workers 1) it is a
// usage error naming it, before any connection.
func TestOwnerTimeoutNeedsSeparateWorkers(t *testing.T) {
	in := filepath.Join(t.TempDir(), "x.csv")
	if err := os.WriteFile(in, []byte("a,b,label\n1,2,x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCmd(t, "stream", "--nats", "nats://127.0.0.1:1", "--workers", "1", "--owner-timeout", "5s", "--in", in)
	if code != 2 || !strings.Contains(stderr, "--owner-timeout") {
		t.Errorf("exit %d, stderr %q; want a usage error naming --owner-timeout", code, stderr)
	}
}
