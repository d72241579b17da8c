package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAccuracyDuplicateIDs scores a stream whose id "a" comes back as a
// sample with another label: accuracy skips it as stream does (a
// duplicate, not a sample), so it scores 3 samples (a, b, c), not 4 (the
// duplicate was scored with the first "a"'s prediction); and where the
// first "d" has no label, the duplicate's labels it.
func TestAccuracyDuplicateIDs(t *testing.T) {
	dir := t.TempDir()
	in, pred := filepath.Join(dir, "s.csv"), filepath.Join(dir, "p.jsonl")
	if err := os.WriteFile(in, []byte("id,label,x\na,0,1\nb,1,2\na,1,1\nc,1,3\nd,,4\nd,0,4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pred, []byte(`{"id":"a","pred":"0"}`+"\n"+`{"id":"b","pred":"0"}`+"\n"+`{"id":"c","pred":"1"}`+"\n"+`{"id":"d","pred":"0"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCmd(t, "accuracy", "--in", in, "--pred", pred, "--id-column", "id")
	if code != 0 || !strings.Contains(out, "accuracy 0.7500 over 4 scored samples") {
		t.Errorf("exit %d: %q %q; want a, c and d right (d by its duplicate's label), b wrong, the duplicate of a not scored", code, out, errs)
	}
}

// TestAccuracyTruthConflicts scores a stream against a --truth file that
// gives one of its labeled samples another class: the input's label is
// scored, and a warning names the sample and both classes.
func TestAccuracyTruthConflicts(t *testing.T) {
	dir := t.TempDir()
	in, truth, pred := filepath.Join(dir, "s.csv"), filepath.Join(dir, "t.csv"), filepath.Join(dir, "p.jsonl")
	for path, body := range map[string]string{
		in:    "id,label,x\na,0,1\nb,,2\n",
		truth: "id,label,x\na,1,1\nb,1,2\n",
		pred:  `{"id":"a","pred":"0"}` + "\n" + `{"id":"b","pred":"1"}` + "\n",
	} {
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errs := runCmd(t, "accuracy", "--in", in, "--truth", truth, "--pred", pred, "--id-column", "id")
	if code != 0 || !strings.Contains(out, "accuracy 1.0000 over 2 scored samples") || !strings.Contains(errs, `1 labeled samples of`) || !strings.Contains(errs, `id a: "0"`) {
		t.Errorf("exit %d: %q %q; want both right (a by the input's label) and a warning naming a", code, out, errs)
	}
}
