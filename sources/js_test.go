package sources

import (
	"path/filepath"
	"slices"
	"testing"
)

// TestJavaScriptArrow reads Arrow IPC streams written by the JavaScript
// Arrow library (testdata/js, made by write.mjs with apache-arrow 17 from
// npm): dense rows as list<float64>, and labels, ids and documents as
// dictionary-encoded strings, its default for strings.
func TestJavaScriptArrow(t *testing.T) {
	for _, c := range []struct {
		file string
		form Form
	}{{"js-dense.arrows", FormDense}, {"js-text.arrows", FormText}} {
		t.Run(c.file, func(t *testing.T) {
			src, err := Open(filepath.Join("testdata", "js", c.file))
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			var ids, labels []string
			var labeled []bool
			var texts []string
			var rows int
			for src.Next() {
				b := src.Batch()
				if b.Form != c.form {
					t.Fatalf("form %v, want %v", b.Form, c.form)
				}
				ids = append(ids, b.IDs...)
				labels = append(labels, b.Labels...)
				labeled = append(labeled, b.Labeled...)
				texts = append(texts, b.Text...)
				if b.Dense != nil {
					r, _ := b.Dense.Dims()
					rows += r
					if c.file == "js-dense.arrows" && b.Dense.At(2, 0) != 4 {
						t.Errorf("x[2][0] = %v, want 4", b.Dense.At(2, 0))
					}
				}
				if len(b.Rejects) > 0 {
					t.Errorf("rejects: %v", b.Rejects[0].Reason)
				}
			}
			if err := src.Err(); err != nil {
				t.Fatal(err)
			}
			if want := []string{"r1", "r2", "r3", "r4"}; !slices.Equal(ids, want) {
				t.Errorf("ids %q, want %q", ids, want)
			}
			if want := []bool{true, false, true, true}; !slices.Equal(labeled, want) {
				t.Errorf("labeled %v, want %v", labeled, want)
			}
			if labels[0] != "a" || labels[2] != "b" || labels[3] != "a" {
				t.Errorf("labels %q, want a, -, b, a", labels)
			}
			if c.form == FormText && (len(texts) != 4 || texts[1] != "a dog ran in the park") {
				t.Errorf("texts %q", texts)
			}
			if c.form == FormDense && rows != 4 {
				t.Errorf("%d dense rows, want 4", rows)
			}
		})
	}
}
