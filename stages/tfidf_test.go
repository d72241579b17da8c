package stages

import (
	"compress/gzip"
	"encoding/json"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/nmfstream/nmfstream/datasets"
	"github.com/nmfstream/nmfstream/model/sparse"
)

type goldenConfig struct {
	Name       string          `json:"name"`
	Params     json.RawMessage `json:"params"`
	Vocabulary []string        `json:"vocabulary"`
	NFeatures  int             `json:"n_features"`
	Indptr     []int           `json:"indptr"`
	Indices    []int           `json:"indices"`
	Data       []float64       `json:"data"`
}

func readGzipJSON(t testing.TB, path string, v any) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.NewDecoder(zr).Decode(v); err != nil {
		t.Fatal(err)
	}
}

// brownTexts returns the 45 preprocessed Brown corpus documents that
// testdata/make_tfidf_golden.py vectorized (datasets.BrownSample).
func brownTexts(t testing.TB) []string {
	_, texts, _, err := datasets.BrownSample()
	if err != nil {
		t.Fatal(err)
	}
	if len(texts) != 45 {
		t.Fatalf("got %d Brown texts, want 45", len(texts))
	}
	return texts
}

// goldenVectorizers are the Go settings equal to the scikit-learn settings
// of make_tfidf_golden.py, by config name.
func goldenVectorizers() map[string]*TFIDF {
	return map[string]*TFIDF{
		"english_min2_max0.9_sublinear": {
			StopWords: EnglishStopWords(), MinDF: DocFreq{Count: 2}, MaxDF: DocFreq{Fraction: 0.9}, SublinearTF: true,
		},
		"nosmooth_nonorm_max30": {NoSmoothIDF: true, Norm: NormNone, MaxDF: DocFreq{Count: 30}},
		"l1_min0.1":             {Norm: NormL1, MinDF: DocFreq{Fraction: 0.1}},
		"hashing_2p18_english_sublinear": {
			Hashing: true, NFeatures: 1 << 18, StopWords: EnglishStopWords(), SublinearTF: true,
		},
	}
}

func TestTFIDFGoldenSklearn(t *testing.T) {
	texts := brownTexts(t)
	var golden struct {
		Sklearn string         `json:"sklearn"`
		Configs []goldenConfig `json:"configs"`
	}
	readGzipJSON(t, "testdata/tfidf_golden.json.gz", &golden)
	vecs := goldenVectorizers()
	if len(golden.Configs) != len(vecs) {
		t.Fatalf("golden file has %d configs, test knows %d", len(golden.Configs), len(vecs))
	}
	for _, g := range golden.Configs {
		t.Run(g.Name, func(t *testing.T) {
			v := vecs[g.Name]
			if v == nil {
				t.Fatalf("no Go settings for golden config %q", g.Name)
			}
			got, err := v.FitTransform(texts)
			if err != nil {
				t.Fatal(err)
			}
			if g.Vocabulary != nil && !slices.Equal(v.Vocabulary(), g.Vocabulary) {
				gv := v.Vocabulary()
				t.Fatalf("vocabulary differs: got %d terms (first %q), want %d (first %q)",
					len(gv), gv[:min(5, len(gv))], len(g.Vocabulary), g.Vocabulary[:min(5, len(g.Vocabulary))])
			}
			want := sparse.NewCSR(len(g.Indptr)-1, g.NFeatures, g.Indptr, g.Indices, g.Data)
			compareCSR(t, got, want)
		})
	}
}

// compareCSR checks that got and want have the same shape and pattern and
// values within 1e-6 (scikit-learn computes in float64 too, so the only
// differences are summation order and libm ulps, far below 1e-6).
func compareCSR(t *testing.T, got, want *sparse.CSR) {
	t.Helper()
	const tol = 1e-6
	gr, gc := got.Dims()
	wr, wc := want.Dims()
	if gr != wr || gc != wc {
		t.Fatalf("dims: got %d×%d, want %d×%d", gr, gc, wr, wc)
	}
	if got.NNZ() != want.NNZ() {
		t.Errorf("nnz: got %d, want %d", got.NNZ(), want.NNZ())
	}
	bad := 0
	for i := 0; i < wr; i++ {
		gi, gv := got.Row(i)
		wi, wv := want.Row(i)
		if !slices.Equal(gi, wi) {
			t.Errorf("row %d: column pattern differs (%d vs %d entries)", i, len(gi), len(wi))
			continue
		}
		for p := range wv {
			if math.Abs(gv[p]-wv[p]) > tol {
				if bad++; bad <= 5 {
					t.Errorf("(%d, %d): got %.10g, want %.10g", i, wi[p], gv[p], wv[p])
				}
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d values differ by more than %g", bad, tol)
	}
}

func TestTokenize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"a b c", nil},
		{"Hello, world! x_y 42 a1", []string{"Hello", "world", "x_y", "42", "a1"}},
		{"don't stop-words", []string{"don", "stop", "words"}},
		{"naïve café Ωμέγα", []string{"naïve", "café", "Ωμέγα"}},
		// U+0301 (combining acute, Mn) is not \w in Python, so it splits.
		{"cafe\u0301s", []string{"cafe"}},
		{"日本語 ½x", []string{"日本語", "½x"}},
		{"\xff\xfeab", []string{"ab"}},
	} {
		if got := Tokenize(nil, c.in); !slices.Equal(got, c.want) {
			t.Errorf("Tokenize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestMurmur3(t *testing.T) {
	// Values of sklearn.utils.murmurhash3_32(key, seed=0) (scikit-learn 1.2.1).
	for _, c := range []struct {
		key  string
		want int32
	}{
		{"", 0},
		{"foo", -156908512},
		{"hello", 613153351},
		{"The quick brown fox", 1621279277},
	} {
		if got := murmur3(c.key, 0); got != c.want {
			t.Errorf("murmur3(%q) = %d, want %d", c.key, got, c.want)
		}
	}
}

func TestTFIDFStemAndStopWords(t *testing.T) {
	v := &TFIDF{StopWords: EnglishStopWords(), Stem: true, Norm: NormNone}
	if err := v.Fit([]string{"The runners were running", "A runner runs"}); err != nil {
		t.Fatal(err)
	}
	want := []string{"run", "runner"}
	if got := v.Vocabulary(); !slices.Equal(got, want) {
		t.Fatalf("vocabulary = %q, want %q", got, want)
	}
}

func TestTFIDFErrors(t *testing.T) {
	docs := []string{"alpha beta", "beta gamma"}
	for name, v := range map[string]*TFIDF{
		"both count and fraction": {MinDF: DocFreq{Count: 1, Fraction: 0.5}},
		"fraction above 1":        {MaxDF: DocFreq{Fraction: 1.5}},
		"max below min":           {MinDF: DocFreq{Count: 2}, MaxDF: DocFreq{Count: 1}},
		"nothing left":            {MinDF: DocFreq{Count: 3}},
		"hashing with min df":     {Hashing: true, MinDF: DocFreq{Count: 2}},
		"negative features":       {Hashing: true, NFeatures: -1},
		"unknown norm":            {Norm: 7},
	} {
		if err := v.Fit(docs); err == nil {
			t.Errorf("%s: Fit succeeded, want an error", name)
		}
	}
	var v TFIDF
	if _, err := v.Transform(docs); err != ErrNotFitted {
		t.Errorf("Transform before Fit: err = %v, want ErrNotFitted", err)
	}
}

// TestTFIDFUpdate checks the streaming path: Update on chunks equals one
// Update on everything (running document frequencies), columns of earlier
// terms stay put, and unknown terms give empty rows.
func TestTFIDFUpdate(t *testing.T) {
	texts := brownTexts(t)
	for _, hashing := range []bool{false, true} {
		one := &TFIDF{Hashing: hashing, NFeatures: 1 << 16, StopWords: EnglishStopWords()}
		chunked := &TFIDF{Hashing: hashing, NFeatures: 1 << 16, StopWords: EnglishStopWords()}
		if err := one.Update(texts); err != nil {
			t.Fatal(err)
		}
		var firstVocab []string
		for i := 0; i < len(texts); i += 10 {
			if err := chunked.Update(texts[i:min(i+10, len(texts))]); err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				firstVocab = chunked.Vocabulary()
			}
		}
		if !hashing && !slices.Equal(chunked.Vocabulary()[:len(firstVocab)], firstVocab) {
			t.Errorf("Update moved existing vocabulary columns")
		}
		if one.NDocs() != 45 || chunked.NDocs() != 45 {
			t.Errorf("NDocs = %d, %d, want 45", one.NDocs(), chunked.NDocs())
		}
		a, err := one.Transform(texts)
		if err != nil {
			t.Fatal(err)
		}
		b, err := chunked.Transform(texts)
		if err != nil {
			t.Fatal(err)
		}
		compareCSR(t, a, b)

		// Against a batch Fit with the same terms, a single Update gives the
		// same values; only the column order differs without hashing.
		fit := &TFIDF{Hashing: hashing, NFeatures: 1 << 16, StopWords: EnglishStopWords()}
		c, err := fit.FitTransform(texts)
		if err != nil {
			t.Fatal(err)
		}
		if hashing {
			compareCSR(t, a, c)
		} else if math.Abs(a.SqNorm()-c.SqNorm()) > 1e-9 || a.NNZ() != c.NNZ() {
			t.Errorf("Update and Fit disagree: nnz %d vs %d", a.NNZ(), c.NNZ())
		}

		empty, err := one.Transform([]string{"zzzzqqq xxyyzz"})
		if err != nil {
			t.Fatal(err)
		}
		if !hashing && empty.NNZ() != 0 {
			t.Errorf("unknown terms gave %d entries", empty.NNZ())
		}
	}
}

func TestTFIDFMarshalRoundTrip(t *testing.T) {
	texts := brownTexts(t)
	for name, v := range goldenVectorizers() {
		v.Stem = true
		if err := v.Fit(texts[:30]); err != nil {
			t.Fatal(err)
		}
		if err := v.Update(texts[30:40]); err != nil {
			t.Fatal(err)
		}
		data, err := v.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var u TFIDF
		if err := u.UnmarshalBinary(data); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if u.Dim() != v.Dim() || u.NDocs() != v.NDocs() || !slices.Equal(u.Vocabulary(), v.Vocabulary()) {
			t.Errorf("%s: state differs after round trip", name)
		}
		a, _ := v.Transform(texts[40:])
		b, err := u.Transform(texts[40:])
		if err != nil {
			t.Fatal(err)
		}
		compareCSR(t, b, a)
		if len(data) > 1<<20 {
			t.Errorf("%s: %d bytes encoded", name, len(data))
		}
	}
	var u TFIDF
	if err := u.UnmarshalBinary([]byte("not gob")); err == nil {
		t.Error("UnmarshalBinary accepted garbage")
	}
}

// BenchmarkTFIDF45Brown runs benchTFIDF on the 45 golden Brown documents
// (about 2,000 words each).
func BenchmarkTFIDF45Brown(b *testing.B) {
	benchTFIDF(b, brownTexts(b))
}

// TestTFIDFFallback checks the columns Fallback gives to documents without
// a term (their stop words, else their characters), that it leaves other
// documents alone and white space empty, and that it survives a round trip.
func TestTFIDFFallback(t *testing.T) {
	const n = 1 << 10
	docs := []string{
		"graph regularized factorization", // terms: no fallback
		"To be, or not to be",             // stop words only
		"😀 😀 !",                           // no token of two word characters
		" \t\n",                           // white space
	}
	cols := func(ind []int) []int { return slices.Compact(slices.Sorted(slices.Values(ind))) }
	hash := func(terms ...string) []int {
		var c []int
		for _, w := range terms {
			c = append(c, hashIndex(w, n))
		}
		return cols(c)
	}
	want := [][]int{
		hash("graph", "regularized", "factorization"),
		hash("to", "be", "or", "not"),
		hash("😀", "!"),
		nil,
	}
	plain := &TFIDF{Hashing: true, NFeatures: n, StopWords: EnglishStopWords()}
	fb := &TFIDF{Hashing: true, NFeatures: n, StopWords: EnglishStopWords(), Fallback: true}
	for _, v := range []*TFIDF{plain, fb} {
		if err := v.Update(docs); err != nil {
			t.Fatal(err)
		}
	}
	mp, err := plain.Transform(docs)
	if err != nil {
		t.Fatal(err)
	}
	b, err := fb.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back TFIDF
	if err := back.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	for _, v := range []*TFIDF{fb, &back} {
		m, err := v.Transform(docs)
		if err != nil {
			t.Fatal(err)
		}
		for i := range docs {
			ind, _ := m.Row(i)
			if got := cols(ind); !slices.Equal(got, want[i]) {
				t.Errorf("document %q: columns %v, want %v", docs[i], got, want[i])
			}
		}
		// Without fallback the first document's row is the same, the
		// others empty.
		for i := range docs {
			pi, pv := mp.Row(i)
			fi, fv := m.Row(i)
			if i == 0 && (!slices.Equal(pi, fi) || !slices.Equal(pv, fv)) {
				t.Errorf("document %q: fallback changed a row with terms", docs[i])
			}
			if i > 0 && len(pi) != 0 {
				t.Errorf("document %q: %d columns without fallback, want none", docs[i], len(pi))
			}
		}
	}
}

// TestTFIDFUpdateTransform checks that UpdateTransform gives, batch after
// batch, the rows and document frequencies of Update followed by
// Transform, bit for bit: with hashing (the stream's vectorizer, whose
// Fallback codes a document of stop words), with a growing vocabulary,
// and with stemming; documents of stop words only and empty ones included.
func TestTFIDFUpdateTransform(t *testing.T) {
	texts := append(brownTexts(t), "the of and", "", "a brand new word: zyzzogeton")
	configs := map[string]func() *TFIDF{
		"stream":     DefaultStreamTFIDF,
		"vocabulary": func() *TFIDF { return &TFIDF{StopWords: EnglishStopWords(), SublinearTF: true} },
		"stem":       func() *TFIDF { return &TFIDF{StopWords: EnglishStopWords(), Stem: true} },
	}
	for name, mk := range configs {
		two, one := mk(), mk()
		for i := 0; i < len(texts); i += 7 {
			docs := texts[i:min(i+7, len(texts))]
			if err := two.Update(docs); err != nil {
				t.Fatal(err)
			}
			want, err := two.Transform(docs)
			if err != nil {
				t.Fatal(err)
			}
			got, err := one.UpdateTransform(docs)
			if err != nil {
				t.Fatal(err)
			}
			wr, wc := want.Dims()
			gr, gc := got.Dims()
			if wr != gr || wc != gc || !slices.Equal(want.Indptr, got.Indptr) || !slices.Equal(want.Ind, got.Ind) || !slices.Equal(want.Val, got.Val) {
				t.Fatalf("%s, documents %d–%d: UpdateTransform's rows differ from Update + Transform's (%d×%d, nnz %d against %d×%d, nnz %d)",
					name, i, i+len(docs)-1, gr, gc, got.NNZ(), wr, wc, want.NNZ())
			}
			if !slices.Equal(one.df, two.df) || one.NDocs() != two.NDocs() {
				t.Fatalf("%s, documents %d–%d: document frequencies differ", name, i, i+len(docs)-1)
			}
		}
	}
}
