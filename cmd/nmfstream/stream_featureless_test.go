package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStreamFeatureless: a document stream's empty documents are rejected
// (counted, in --rejects with their reason) and still get one line in
// --out, in input order, answered from the labels before them; their late
// labels are scored in stream's own summary, as an outside scorer scores
// --out, where a record without a line counts as wrong.
func TestStreamFeatureless(t *testing.T) {
	dir := t.TempDir()
	in, out, rej := filepath.Join(dir, "d.csv"), filepath.Join(dir, "p.jsonl"), filepath.Join(dir, "r.jsonl")
	topics := [][]string{{"goal", "match", "team", "score", "league", "coach"}, {"market", "stock", "price", "bank", "trade", "profit"}}
	r := rand.New(rand.NewPCG(2, 2))
	var b strings.Builder
	b.WriteString("id,label,text\n")
	var ids []string
	for i := range 200 {
		id := fmt.Sprint("r", i)
		c := i % 2
		var w []string
		for range 8 {
			w = append(w, topics[c][r.IntN(len(topics[c]))])
		}
		text, label := strings.Join(w, " "), ""
		if i%20 == 13 {
			text = "   " // an empty document: the finance class, labeled late
		}
		if i%5 == 0 {
			label = []string{"sport", "finance"}[c]
		}
		fmt.Fprintf(&b, "%s,%s,%s\n", id, label, text)
		ids = append(ids, id)
		if i%20 == 13 {
			fmt.Fprintf(&b, "%s,finance,\n", id) // its late label
		}
	}
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := decodeSummary(t, []byte(mustRun(t, "stream", "--in", in, "--out", out, "--rejects", rej, "--json")))
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got []string
	preds := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var p struct {
			ID   string
			Pred *string
		}
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatal(err)
		}
		got = append(got, p.ID)
		if p.Pred != nil {
			preds[p.ID] = *p.Pred
		}
	}
	if strings.Join(got, " ") != strings.Join(ids, " ") {
		t.Fatalf("--out's ids %v, want every record once, in input order", got)
	}
	rejected, err := os.ReadFile(rej)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(rejected), "empty document"); n != 10 || sum.Rejected != 10 {
		t.Errorf("%d rejects name an empty document, %d rejected; want 10 of each", n, sum.Rejected)
	}
	// r13 saw the labels sport, finance, sport (records 0, 5, 10): the
	// most frequent class, which answered record 10's label right where
	// the recent labels' class did not, is sport (the first of a tie); its
	// own late label, right after it, would have made it finance.
	if preds["r13"] != "sport" {
		t.Errorf("r13 predicted %q, want sport", preds["r13"])
	}
	for i := 33; i < 200; i += 20 {
		if p := preds[fmt.Sprint("r", i)]; p != "sport" && p != "finance" {
			t.Errorf("r%d predicted %q, want a class", i, p)
		}
	}
	// 40 documents labeled with the record and 10 empty ones labeled
	// late, each scored once (the first label is record 0's).
	if sum.Labeled != 49 {
		t.Errorf("%d predictions scored, want 49 (39 labeled documents after the first and 10 empty ones)", sum.Labeled)
	}
}

// TestServeFeatureless: serve answers a record without features with a
// rejection and, among the predictions, with the class shares of the
// labels before it (node −1).
func TestServeFeatureless(t *testing.T) {
	url, stop := startServer(t, attackServer())
	defer func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	}()
	r, next := rand.New(rand.NewPCG(3, 3)), 0
	body := append(goodBody(r, &next, 30), []byte("{\"id\":\"e\"}\n")...)
	code, m := post(t, url, "/v1/records", "application/x-ndjson", body)
	if code != http.StatusOK {
		t.Fatalf("status %d: %v", code, m)
	}
	rejected, _ := m["rejected"].([]any)
	preds, _ := m["predictions"].([]any)
	if len(rejected) != 1 || len(preds) != 31 {
		t.Fatalf("%d rejected, %d predictions; want 1 and 31", len(rejected), len(preds))
	}
	last, _ := preds[30].(map[string]any)
	if last["id"] != "e" || last["node"] != -1.0 || last["pred"] == nil {
		t.Errorf("the last prediction %v, want e's, node -1, a class", last)
	}
}

// TestClassifyFeatureless: classify writes a row for every record, in
// input order: an empty document and one without a term of the model's
// vocabulary are rejected and still answered (the class with the largest
// estimated prior), without a code.
func TestClassifyFeatureless(t *testing.T) {
	dir := t.TempDir()
	train, test := filepath.Join(dir, "train.csv"), filepath.Join(dir, "test.csv")
	out, model := filepath.Join(dir, "p.jsonl"), filepath.Join(dir, "m.model")
	topics := [][]string{{"goal", "match", "team", "score", "league", "coach"}, {"market", "stock", "price", "bank", "trade", "profit"}}
	r := rand.New(rand.NewPCG(6, 6))
	doc := func(c int) string {
		var w []string
		for range 8 {
			w = append(w, topics[c][r.IntN(len(topics[c]))])
		}
		return strings.Join(w, " ")
	}
	var b strings.Builder
	b.WriteString("id,label,text\n")
	for i := range 120 {
		label := ""
		if i%6 == 0 {
			label = []string{"sport", "finance"}[i%2]
		}
		fmt.Fprintf(&b, "t%d,%s,%s\n", i, label, doc(i%2))
	}
	if err := os.WriteFile(train, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	b.WriteString("id,label,text\n")
	fmt.Fprintf(&b, "a,,%s\nempty,, \nb,,%s\nunknown,,zebra quantum violin\nc,,%s\n", doc(0), doc(1), doc(0))
	if err := os.WriteFile(test, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "fit", "--train", train, "--rank", "4", "--save", model)
	mustRun(t, "classify", "--model", model, "--in", test, "--out", out)
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var p struct {
			ID   string
			Pred *string
			Code []float64
		}
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
		featureless := p.ID == "empty" || p.ID == "unknown"
		if p.Pred == nil || (*p.Pred != "sport" && *p.Pred != "finance") || featureless != (p.Code == nil) {
			t.Errorf("record %s: prediction %v, code %v; want a class, and a code unless it has no features", p.ID, p.Pred, p.Code)
		}
	}
	if got := strings.Join(ids, " "); got != "a empty b unknown c" {
		t.Errorf("rows %q, want every record in input order", got)
	}
}
