package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckPreds: a prediction file is counted against the samples' ids:
// a repeated id, an id that is no sample and a sample without a line are
// each counted, and a line without an id is an error naming the line.
func TestCheckPreds(t *testing.T) {
	want := map[string]bool{"1": true, "2": true, "3": true, "4": true}
	path := filepath.Join(t.TempDir(), "p.jsonl")
	lines := `{"id":"1","pred":"a","score":0.5}
{"id":"2","pred":null,"score":0}
{"id":"2","pred":"b","score":0.1}
{"id":"9","pred":"a","score":0.2}
`
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := checkPreds(want, path)
	if err != nil {
		t.Fatal(err)
	}
	if c != (predCheck{Samples: 4, Predicted: 4, Duplicates: 1, Missing: 2, Unknown: 1}) {
		t.Errorf("counted %+v; want 4 samples, 4 lines, 1 repeated, 2 missing (3 and 4), 1 unknown (9)", c)
	}
	if err := os.WriteFile(path, []byte(lines+"{\"pred\":\"a\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := checkPreds(want, path); err == nil || !strings.Contains(err.Error(), "line 5") {
		t.Errorf("a line without an id: %v, want an error naming line 5", err)
	}
}
