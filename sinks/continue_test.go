package sinks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestContinue writes JSON lines, syncs, writes more, then continues from
// the synced length: the lines after it are dropped and new ones follow.
func TestContinue(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.jsonl")
	s, err := Create(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write(Results{IDs: []string{"a", "b"}, Preds: []string{"x", "y"}}); err != nil {
		t.Fatal(err)
	}
	n, err := s.(Syncer).Sync()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write(Results{IDs: []string{"lost"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	c, err := Continue(path, 0, n)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Write(Results{IDs: []string{"c"}, Preds: []string{"z"}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"a","pred":"x","score":null}` + "\n" + `{"id":"b","pred":"y","score":null}` + "\n" + `{"id":"c","pred":"z","score":null}` + "\n"
	if string(b) != want {
		t.Errorf("continued output:\n%s\nwant:\n%s", b, want)
	}
	if _, err := Continue(path, 0, int64(len(b))+1); err == nil {
		t.Error("Continue past the end of the file: no error")
	}
	if _, err := Continue(filepath.Join(t.TempDir(), "p.arrow"), 0, 0); err == nil || !strings.Contains(err.Error(), "JSON lines") {
		t.Errorf("Continue on an Arrow output: %v, want an error suggesting JSON lines", err)
	}
}
