package sources

import (
	"path/filepath"
	"slices"
	"testing"
)

// TestRustArrow reads the Arrow IPC streams and Parquet files written by
// arrow-rs and the Rust parquet crate (testdata/rust, made by write.mjs
// with parquet-wasm, their WebAssembly build on npm): dense rows as
// fixed_size_list<float32>[4] with int64 labels, one row unlabeled and one
// a late label (an id seen before, a label, a null x); documents with
// string labels and int64 ids.
func TestRustArrow(t *testing.T) {
	for _, file := range []string{"rust-dense.arrows", "rust-dense.parquet"} {
		t.Run(file, func(t *testing.T) {
			src, err := Open(filepath.Join("testdata", "rust", file))
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			if f, err := src.Form(); err != nil || f != FormDense {
				t.Fatalf("form %v (%v), want dense", f, err)
			}
			c := readAll(t, src)
			if err := src.Err(); err != nil {
				t.Fatal(err)
			}
			if want := []string{"r1", "r2", "r3", "r4"}; !slices.Equal(c.ids, want) {
				t.Errorf("ids %q, want %q", c.ids, want)
			}
			if want := []bool{true, false, true, true}; !slices.Equal(c.labeled, want) {
				t.Errorf("labeled %v, want %v", c.labeled, want)
			}
			if c.labels[0] != "1" || c.labels[2] != "2" || c.labels[3] != "1" {
				t.Errorf("labels %q, want 1, -, 2, 1", c.labels)
			}
			if want := [][]float64{{0, 1, 2, 3}, {1, 1, 1, 1}, {4, 3, 2, 1}, {0, 2, 2, 0}}; !slices.EqualFunc(c.dense, want, slices.Equal) {
				t.Errorf("x = %v, want %v", c.dense, want)
			}
			if want := []LateLabel{{Offset: 3, ID: "r2", Label: "2"}}; !slices.Equal(c.late, want) {
				t.Errorf("late labels %v, want %v", c.late, want)
			}
			if len(c.rejects) > 0 {
				t.Errorf("rejects: %v", c.rejects[0].Reason)
			}
		})
	}
	for _, file := range []string{"rust-text.arrows", "rust-text.parquet"} {
		t.Run(file, func(t *testing.T) {
			src, err := Open(filepath.Join("testdata", "rust", file))
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			if f, err := src.Form(); err != nil || f != FormText {
				t.Fatalf("form %v (%v), want text", f, err)
			}
			c := readAll(t, src)
			if err := src.Err(); err != nil {
				t.Fatal(err)
			}
			if want := []string{"the cat sat on the mat", "a dog ran in the park", "cats and dogs play", "the park is green"}; !slices.Equal(c.text, want) {
				t.Errorf("texts %q, want %q", c.text, want)
			}
			if want := []string{"1", "2", "3", "4"}; !slices.Equal(c.ids, want) {
				t.Errorf("ids %q, want %q", c.ids, want)
			}
			if want := []bool{true, false, true, true}; !slices.Equal(c.labeled, want) {
				t.Errorf("labeled %v, want %v", c.labeled, want)
			}
			if c.labels[0] != "pets" || c.labels[2] != "pets" || c.labels[3] != "parks" {
				t.Errorf("labels %q, want pets, -, pets, parks", c.labels)
			}
			if len(c.rejects) > 0 {
				t.Errorf("rejects: %v", c.rejects[0].Reason)
			}
		})
	}
}
