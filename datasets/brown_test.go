package datasets

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestBrown reads a two-file corpus in the Brown layout: words kept, tags
// dropped, genres from cats.txt; a missing file is an error.
func TestBrown(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("cats.txt", "ca01 news\ncb01 editorial\n\n")
	write("ca01", "The/at Fulton/np-tl jury/nn said/vbd ./.\n")
	write("cb01", "Assembly/nn-tl session/nn")
	docs, genres, err := Brown(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"The Fulton jury said .", "Assembly session"}; !slices.Equal(docs, want) {
		t.Errorf("docs %q, want %q", docs, want)
	}
	if want := []string{"news", "editorial"}; !slices.Equal(genres, want) {
		t.Errorf("genres %q, want %q", genres, want)
	}
	os.Remove(filepath.Join(dir, "cb01"))
	if _, _, err := Brown(dir); err == nil {
		t.Error("a missing file: no error")
	}
}

// TestBrownSample reads the embedded texts: 45, three per genre, each of
// more than 2,000 words, the first one the corpus's first news text.
func TestBrownSample(t *testing.T) {
	names, texts, genres, err := BrownSample()
	if err != nil {
		t.Fatal(err)
	}
	if len(texts) != 45 || len(names) != 45 || len(genres) != 45 {
		t.Fatalf("%d texts, %d names, %d genres; want 45", len(texts), len(names), len(genres))
	}
	per := map[string]int{}
	for i, g := range genres {
		per[g]++
		if n := len(strings.Fields(texts[i])); n < 2000 {
			t.Errorf("%s: %d words, want > 2000", names[i], n)
		}
	}
	if len(per) != 15 {
		t.Errorf("%d genres, want 15", len(per))
	}
	for g, n := range per {
		if n != 3 {
			t.Errorf("genre %s: %d texts, want 3", g, n)
		}
	}
	if names[0] != "ca01" || genres[0] != "news" || !strings.HasPrefix(texts[0], "The Fulton County Grand Jury") {
		t.Errorf("first text %s (%s): %.40q", names[0], genres[0], texts[0])
	}
}
