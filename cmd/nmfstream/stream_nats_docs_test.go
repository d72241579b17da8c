//go:build nats

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"

	"github.com/nmfstream/nmfstream/datasets"
)

// writeBrownStream writes a document stream to path: passages of about 60
// words of the embedded Brown texts of three genres, shuffled (seeded), a
// quarter labeled on arrival and a tenth by a late label 30 records after
// their passage, and every 50th record a document with no usable term
// (white space only), which must be rejected. It returns the number of
// records and of bad ones.
func writeBrownStream(t testing.TB, path string) (records, bad int) {
	t.Helper()
	names, texts, genres, err := datasets.BrownSample()
	if err != nil {
		t.Fatal(err)
	}
	want := map[byte]bool{'a': true, 'j': true, 'n': true} // press: reportage, learned, adventure
	type doc struct{ text, genre string }
	var docs []doc
	for i, text := range texts {
		if !want[names[i][1]] {
			continue
		}
		var cur []string
		for _, w := range strings.Fields(text) {
			cur = append(cur, w)
			if len(cur) >= 60 && (w == "." || w == "?" || w == "!") {
				docs = append(docs, doc{strings.Join(cur, " "), genres[i]})
				cur = nil
			}
		}
	}
	rnd := rand.New(rand.NewPCG(1, 1))
	rnd.Shuffle(len(docs), func(i, j int) { docs[i], docs[j] = docs[j], docs[i] })
	schema := arrow.NewSchema([]arrow.Field{
		field("text", arrow.BinaryTypes.String), field("label", arrow.BinaryTypes.String), field("id", arrow.PrimitiveTypes.Int64),
	}, nil)
	var rows [][]any
	late := map[int][]any{} // record position → late label row
	for i, d := range docs {
		id := int64(i + 1)
		var label any
		switch u := rnd.Float64(); {
		case u < 0.25:
			label = d.genre
		case u < 0.35:
			late[len(rows)+30] = []any{nil, d.genre, id}
		}
		rows = append(rows, []any{d.text, label, id})
		if r, ok := late[len(rows)]; ok {
			rows = append(rows, r)
			delete(late, len(rows)-1)
		}
		if len(rows)%50 == 0 {
			rows = append(rows, []any{"  \t  ", nil, int64(100_000 + i)})
			bad++
		}
	}
	writeArrow(t, path, schema, rows)
	return len(rows), bad
}

// predictionLines returns the number of prediction lines of each id in
// the JSON lines file path.
func predictionLines(t testing.TB, path string) map[string]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r struct{ ID string }
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		lines[r.ID]++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// TestStreamNATSDocuments runs a document stream (Brown passages by genre)
// through stream --nats with one partition and two: the owners' learners
// turn the documents into TF-IDF rows as stream's does; every document
// gets exactly one prediction line, the documents without a usable term
// too (stages.Step.Featureless), which are rejected and counted, the reported accuracy is the
// outside scorer's; with one partition it is the single-machine stream's,
// with two far above a guess.
func TestStreamNATSDocuments(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "brown.arrow")
	records, bad := writeBrownStream(t, in)
	single := decodeSummary(t, []byte(mustRun(t, "stream", "--in", in, "--json")))
	t.Logf("%d records (%d bad); single machine %.4f", records, bad, float64(single.Accuracy))
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprint(p), func(t *testing.T) {
			sum := runStreamNATSChecked(t, in, filepath.Join(dir, fmt.Sprintf("pred%d.jsonl", p)), p, records, bad, bad)
			switch acc := float64(sum.Accuracy); {
			case p == 1 && sum.Accuracy != single.Accuracy:
				t.Errorf("one partition: accuracy %.4f, the single-machine stream %.4f", acc, float64(single.Accuracy))
			case acc < 0.6:
				// Each owner's document frequencies and labels are its
				// partition's; 0.6 is far above the 1/3 of a guess among
				// three balanced genres, so garbled rows fail.
				t.Errorf("%d partitions: accuracy %.4f, the single-machine stream %.4f", p, acc, float64(single.Accuracy))
			}
			t.Logf("%d partitions: accuracy %.4f (%d of %d), single machine %.4f", p, float64(sum.Accuracy), sum.Correct, sum.NScored, float64(single.Accuracy))
		})
	}
}
