package stages

import (
	"strings"
	"testing"

	"github.com/nmfstream/nmfstream/sources"
)

// TestTFIDFMaxDim: the TF-IDF dimension is bounded: a hashed NFeatures
// above MaxDim is an error before the document frequencies are allocated,
// Fit refuses a vocabulary above it, and Update stops growing one at it.
func TestTFIDFMaxDim(t *testing.T) {
	for _, n := range []int{sources.DefaultMaxDim + 1, 1 << 40} {
		tf := &TFIDF{Hashing: true, NFeatures: n}
		if err := tf.Update([]string{"a b"}); err == nil || !strings.Contains(err.Error(), "MaxDim") {
			t.Errorf("NFeatures %d: err = %v, want one naming MaxDim", n, err)
		}
	}
	if err := (&TFIDF{Hashing: true, NFeatures: 64, MaxDim: 64}).Update([]string{"a b"}); err != nil {
		t.Errorf("NFeatures = MaxDim: %v", err)
	}

	docs := []string{"alpha beta gamma", "delta epsilon", "zeta eta theta iota"}
	if err := (&TFIDF{MaxDim: 5}).Fit(docs); err == nil || !strings.Contains(err.Error(), "MaxDim") {
		t.Errorf("Fit of 9 terms with MaxDim 5: err = %v", err)
	}
	tf := &TFIDF{MaxDim: 5}
	for _, d := range docs {
		if err := tf.Update([]string{d}); err != nil {
			t.Fatal(err)
		}
	}
	if tf.Dim() != 5 {
		t.Errorf("Dim after Update = %d, want MaxDim 5", tf.Dim())
	}
	m, err := tf.Transform(docs)
	if err != nil {
		t.Fatal(err)
	}
	if _, c := m.Dims(); c != 5 {
		t.Errorf("Transform has %d columns, want 5", c)
	}
	if err := (&TFIDF{MaxDim: -1}).Fit(docs); err == nil {
		t.Error("negative MaxDim: no error")
	}
}
