package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLoadCSVSet reads a small image set: classes numbered in order of
// first appearance, values kept as written, blank lines skipped; a short
// line, a negative, infinite or unreadable value and an empty class are
// errors naming their line.
func TestLoadCSVSet(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "set.csv")
	if err := os.WriteFile(path, []byte("b,0,0.5,1\n\na,0.25,0,0\nb,1,1,0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	x, y, err := loadCSVSet(path)
	if err != nil {
		t.Fatal(err)
	}
	if n, d := x.Dims(); n != 3 || d != 3 {
		t.Fatalf("%d×%d samples, want 3×3", n, d)
	}
	if want := []int{0, 1, 0}; !slices.Equal(y, want) {
		t.Errorf("classes %v, want %v", y, want)
	}
	if x.At(1, 0) != 0.25 || x.At(0, 1) != 0.5 || x.At(2, 1) != 1 {
		t.Errorf("values %v, want the file's", x.RawMatrix().Data)
	}
	for _, c := range []struct{ body, want string }{
		{"a,1,2\nb,1\n", ":2: 1 values, want 2"},
		{"a,1,2\nb,1,-1\n", ":2: value 2 is \"-1\""},
		{"a,1,2\n,1,1\n", ":2: empty class"},
		{"a,1,x\n", ":1: value 2 is \"x\""},
		{"a,1,inf\n", ":1: value 2 is \"inf\""},
		{"\n", "no samples"},
	} {
		if err := os.WriteFile(path, []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := loadCSVSet(path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one with %q", c.body, err, c.want)
		}
	}
}

// TestLoadTSV reads a small corpus in file order, and refuses a line
// without a tab, or with an empty class or text, naming the line.
func TestLoadTSV(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.tsv")
	if err := os.WriteFile(path, []byte("earn\tw1 w2 w2\n\ngrain\tw3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	docs, err := loadTSV(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 2 || docs[0].class != "earn" || docs[0].text != "w1 w2 w2" || docs[1].class != "grain" || docs[1].text != "w3" {
		t.Fatalf("documents %+v, want earn \"w1 w2 w2\" then grain \"w3\"", docs)
	}
	if _, ok, err := loadText("tsv:" + path); !ok || err != nil {
		t.Errorf("loadText(tsv:…) = %v, %v; want a text corpus", ok, err)
	}
	for _, body := range []string{"earn w1\n", "\tw1\n", "earn\t \n"} {
		if err := os.WriteFile(path, []byte("a\tb\n"+body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := loadTSV(path); err == nil || !strings.Contains(err.Error(), ":2:") {
			t.Errorf("%q: error %v, want one naming line 2", body, err)
		}
	}
}
