package datasets

import (
	"os"
	"path/filepath"
	"slices"
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
