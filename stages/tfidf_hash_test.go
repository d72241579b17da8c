package stages

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/record"
)

// TestHasherColumns checks that documents hashed by a Hasher (as the
// featurize stage does) give the rows and the document frequencies of
// UpdateTransform bit for bit, over batches in turn: stop words, a
// document of stop words only and one of punctuation (Fallback), an empty
// one, case kept or not, with stemming. The Hasher's columns are the ones
// taken (their key is the TFIDF's); columns made under other settings
// (another NFeatures, other stop words) are ignored, not used.
func TestHasherColumns(t *testing.T) {
	batches := [][]string{
		{"The cat sat on the mat.", "the of and", "?!", "", "Dogs RUN quickly; the dog runs"},
		{"A second batch, with the cat again", "running runners run", "  ", "Ünïcödé wörds — and ÇASE"},
	}
	settings := []func() *TFIDF{
		DefaultStreamTFIDF,
		func() *TFIDF {
			return &TFIDF{Hashing: true, NFeatures: 1 << 10, KeepCase: true, Stem: true, StopWords: []string{"the", "and"}, Fallback: true}
		},
		func() *TFIDF { return &TFIDF{Hashing: true, NFeatures: 97, SublinearTF: true} },
	}
	for si, mk := range settings {
		plain, hashed := mk(), mk()
		h := hashed.Hasher()
		other := (&TFIDF{Hashing: true, NFeatures: 1 << 12, StopWords: EnglishStopWords(), Fallback: true}).Hasher()
		for bi, docs := range batches {
			want, err := plain.UpdateTransform(docs)
			if err != nil {
				t.Fatal(err)
			}
			tc := h.Columns(docs)
			if bi == 1 {
				tc = other.Columns(docs) // another setting's columns: not to be used
			} else if hashed.fitted && tc.key != hashed.hashKey() || !hashed.fitted && tc.key != hashed.keyFor(hashed.nFeatures()) {
				t.Fatalf("settings %d: the Hasher's columns would not be taken (their key: %d columns)", si, tc.key.n)
			}
			got, err := hashed.updateTransform(docs, tc)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Indptr, want.Indptr) || !slices.Equal(got.Ind, want.Ind) || !slices.Equal(got.Val, want.Val) {
				t.Errorf("settings %d, batch %d: rows from the Hasher's columns differ from UpdateTransform's", si, bi)
			}
			if !slices.Equal(hashed.df, plain.df) || hashed.n != plain.n {
				t.Errorf("settings %d, batch %d: document frequencies differ", si, bi)
			}
		}
	}
	if (&TFIDF{}).Hasher() != nil {
		t.Error("a vocabulary TFIDF has a Hasher")
	}
}

// TestLearnFeaturesTerms checks that a Learner given Features with Terms
// (HashText) takes them and learns a text stream as one given the
// documents alone: the same predictions, batch after batch.
func TestLearnFeaturesTerms(t *testing.T) {
	docs := []string{"cheap pills buy now", "meeting at noon tomorrow", "buy cheap watches now", "lunch meeting moved",
		"win money now cheap", "project meeting notes", "cheap cheap cheap offer", "notes from the lunch"}
	labels := []string{"spam", "ham", "spam", "ham", "spam", "ham", "spam", "ham"}
	run := func(hash bool) []Prediction {
		l := &Learner{Model: &model.Online{Rank: 4, Graph: graph.KNN{K: 3, Metric: graph.Cosine}, InitSize: 8, Src: rand.NewPCG(1, 1)}}
		var h *Hasher
		if hash {
			h = DefaultStreamTFIDF().Hasher()
		}
		var out []Prediction
		for lo := 0; lo < 40; lo += 4 {
			b := &record.Batch{Form: record.FormText}
			for i := lo; i < lo+4; i++ {
				b.Text = append(b.Text, docs[i%len(docs)])
				b.IDs = append(b.IDs, "")
				b.Labels = append(b.Labels, labels[i%len(docs)])
				b.Labeled = append(b.Labeled, i%3 == 0)
				b.Offsets = append(b.Offsets, int64(i))
			}
			f := NewFeatures(b)
			f.HashText(h)
			if hash && f.Terms == nil {
				t.Fatal("HashText set no columns")
			}
			st, err := l.LearnFeatures(f)
			if err != nil {
				t.Fatal(err)
			}
			if hash && f.Terms.key != l.Featurize.TFIDF.hashKey() {
				t.Fatal("the Learner's TFIDF does not take the Hasher's columns")
			}
			out = append(out, st.Predictions...)
		}
		return out
	}
	a, b := run(false), run(true)
	same := func(x, y Prediction) bool {
		return x.Label == y.Label && (x.Score == y.Score || math.IsNaN(x.Score) && math.IsNaN(y.Score))
	}
	if len(a) != 40 || !slices.EqualFunc(a, b, same) {
		t.Errorf("predictions differ with the hashed columns: %v against %v", b, a)
	}
}
