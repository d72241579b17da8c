package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nmfstream/nmfstream/sources"
)

// outsideScore scores the arrival predictions in out (stream --out, JSON
// lines) as an outside scorer does: every sample of the input that arrived
// after its first label record and whose label the input reveals counts,
// and a sample without a prediction counts as wrong. It returns the number
// right and the number scored.
func outsideScore(t *testing.T, in, out string) (right, n int) {
	t.Helper()
	src, err := sources.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	firstLabel := int64(-1)
	arrival := map[string]int64{} // sample id → offset
	truth := map[string]string{}
	for src.Next() {
		b := src.Batch()
		for i, id := range b.IDs {
			arrival[id] = b.Offsets[i]
			if b.Labeled[i] {
				truth[id] = b.Labels[i]
				if firstLabel < 0 {
					firstLabel = b.Offsets[i]
				}
			}
		}
		for _, ll := range b.LateLabels {
			truth[ll.ID] = ll.Label
			if firstLabel < 0 {
				firstLabel = ll.Offset
			}
		}
	}
	if err := src.Err(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pred := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r struct {
			ID   string  `json:"id"`
			Pred *string `json:"pred"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		if r.Pred != nil {
			pred[r.ID] = *r.Pred
		}
	}
	for id, label := range truth {
		if off, ok := arrival[id]; !ok || off <= firstLabel {
			continue
		}
		n++
		if pred[id] == label {
			right++
		}
	}
	return right, n
}

// TestStreamAccuracyIsOutsideScore checks that the accuracy stream --json
// reports is what an outside scorer computes from its --out, and that
// every scored sample got a prediction.
func TestStreamAccuracyIsOutsideScore(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "digits.arrow")
	writeDigitsStream(t, in, 0.1, 100)
	out := filepath.Join(dir, "pred.jsonl")
	s := decodeSummary(t, []byte(mustRun(t, "stream", "--in", in, "--out", out, "--window", "1000", "--batch", "50", "--json")))
	right, n := outsideScore(t, in, out)
	if n == 0 {
		t.Fatal("the outside scorer found nothing to score")
	}
	if s.NScored != int64(n) || s.Correct != int64(right) || float64(s.Accuracy) != float64(right)/float64(n) {
		t.Errorf("stream reports %d of %d right (%.4f), the outside scorer %d of %d", s.Correct, s.NScored, float64(s.Accuracy), right, n)
	}
	if s.Unpredicted != 0 {
		t.Errorf("%d scored samples had no prediction", s.Unpredicted)
	}
	if lo, hi := float64(s.AccuracyCI95[0]), float64(s.AccuracyCI95[1]); !(lo < float64(s.Accuracy) && float64(s.Accuracy) < hi) {
		t.Errorf("95%% interval [%.4f, %.4f] does not hold the accuracy %.4f", lo, hi, float64(s.Accuracy))
	}
}

// TestStreamNothingUsable checks that a stream whose every record is
// rejected exits non-zero and says why.
func TestStreamNothingUsable(t *testing.T) {
	in := filepath.Join(t.TempDir(), "bad.csv")
	if err := os.WriteFile(in, []byte("a,b,label\n-1,2,x\n3,-4,y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCmd(t, "stream", "--in", in)
	if code == 0 || !strings.Contains(stderr, "no usable record") {
		t.Errorf("exit %d, stderr %q; want a non-zero exit naming the problem", code, stderr)
	}
	// Label-only records of samples that were rejected are not usable
	// either (stream answers them as records without features).
	late := filepath.Join(t.TempDir(), "late.csv")
	if err := os.WriteFile(late, []byte("id,a,b,label\n1,-1,2,\n2,3,-4,\n1,,,x\n2,,,y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCmd(t, "stream", "--in", late, "--id-column", "id")
	if code == 0 || !strings.Contains(stderr, "no usable record: all 4 records were rejected") {
		t.Errorf("late labels only: exit %d, stderr %q; want a non-zero exit naming the problem", code, stderr)
	}
}

// TestStreamLabelsAfterWindow checks a stream whose labels come later than
// its window is long (100 records against 50): every sample after the
// first label is still answered, and stream --json counts the labels it
// could not learn (unlearned_labels) and says on stderr what learns them.
func TestStreamLabelsAfterWindow(t *testing.T) {
	in := filepath.Join(t.TempDir(), "d.arrow")
	writeDigitsStream(t, in, 0.1, 100)
	code, out, stderr := runCmd(t, "stream", "--in", in, "--window", "50", "--batch", "10", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var s struct {
		Unpredicted int64 `json:"unpredicted"`
		Unlearned   int64 `json:"unlearned_labels"`
		LateLabels  int64 `json:"late_labels"`
	}
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	if s.Unpredicted != 0 || s.Unlearned < s.LateLabels/2 {
		t.Errorf("summary %+v: want no sample unpredicted, most late labels unlearned", s)
	}
	if !strings.Contains(stderr, "came after their sample had left the window") || !strings.Contains(stderr, "--window") {
		t.Errorf("stderr %q: want the unlearned labels told, with --window", stderr)
	}
}

// TestStreamAnswersEmptyLabeledDocuments checks that a document left empty
// but labeled on arrival, with an id no earlier record has, is a record
// of the stream (docs/DESIGN.md §5: a label-only record follows its
// record), not a label waiting for a sample: --out has one line for every
// record, in input order, the empty ones answered.
func TestStreamAnswersEmptyLabeledDocuments(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "e.csv"), filepath.Join(dir, "p.jsonl")
	words := [2][]string{{"goal", "match", "team", "score", "league", "coach"}, {"vote", "party", "senate", "law", "bill", "court"}}
	var b strings.Builder
	b.WriteString("id,label,text\n")
	const n = 200
	for i := range n {
		c, label, text := i%2, "", fmt.Sprintf("%s %s %s", words[i%2][i%6], words[i%2][(i+1)%6], words[i%2][(i+4)%6])
		if i%3 == 0 {
			label = fmt.Sprint(c)
		}
		if i%25 == 7 {
			label, text = fmt.Sprint(c), "" // empty, labeled
		}
		fmt.Fprintf(&b, "%d,%s,%s\n", i, label, text)
	}
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, e := runCmd(t, "stream", "--in", in, "--id-column", "id", "--out", out); code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != n {
		t.Fatalf("%d lines in --out, want one per record, %d", len(lines), n)
	}
	for i, line := range lines {
		var p struct {
			ID   string  `json:"id"`
			Pred *string `json:"pred"`
		}
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			t.Fatal(err)
		}
		if p.ID != fmt.Sprint(i) {
			t.Fatalf("line %d: id %q, want %d (input order)", i, p.ID, i)
		}
		if i%25 == 7 && i > 7 && p.Pred == nil {
			t.Errorf("the empty labeled document %d has no answer", i)
		}
	}
}
