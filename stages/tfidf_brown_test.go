package stages

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/nmfstream/nmfstream/datasets"
	"github.com/nmfstream/nmfstream/internal/cputime"
	"github.com/nmfstream/nmfstream/internal/testenv"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// brownDir returns the folder of the tagged Brown corpus (500 files ca01 …
// cr09, as scripts/fetch-data.sh leaves them): testenv.Data's brown. It
// skips tb when the corpus is missing.
func brownDir(tb testing.TB) string {
	tb.Helper()
	return filepath.Dir(testenv.Data(tb, "brown", "ca01"))
}

// brownCorpus reads every Brown document of dir (files c<genre><nn>, sorted
// by name) and preprocesses it as testdata/make_tfidf_golden.py and
// testdata/bench_tfidf.py do: split on Python whitespace, keep what precedes
// the last '/' of each token (the part-of-speech tag goes), join with single
// spaces.
func brownCorpus(tb testing.TB, dir string) (names, texts []string) {
	tb.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range ents {
		n := e.Name()
		if len(n) == 4 && n[0] == 'c' && isASCIIDigit(n[2]) && isASCIIDigit(n[3]) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	var sb strings.Builder
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			tb.Fatal(err)
		}
		if !utf8.Valid(data) {
			tb.Fatalf("%s: not UTF-8", n)
		}
		sb.Reset()
		for i, tok := range strings.FieldsFunc(string(data), isPySpace) {
			if k := strings.LastIndexByte(tok, '/'); k >= 0 {
				tok = tok[:k]
			}
			if i > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(tok)
		}
		texts = append(texts, sb.String())
	}
	return names, texts
}

func isASCIIDigit(c byte) bool { return '0' <= c && c <= '9' }

// isPySpace reports whether Python's str.split() splits at r: Unicode
// White_Space plus the ASCII separators U+001C–U+001F.
func isPySpace(r rune) bool { return unicode.IsSpace(r) || 0x1c <= r && r <= 0x1f }

// TestBrownCorpusPreprocessing checks that brownCorpus gives exactly the 45
// golden documents written by make_tfidf_golden.py (the first three of each
// genre), so the 500-document benchmark and bench_tfidf.py see the same text.
func TestBrownCorpusPreprocessing(t *testing.T) {
	names, texts := brownCorpus(t, brownDir(t))
	if len(texts) != 500 {
		t.Fatalf("got %d Brown documents, want 500", len(texts))
	}
	var in struct{ Names, Texts []string }
	var err error
	if in.Names, in.Texts, _, err = datasets.BrownSample(); err != nil {
		t.Fatal(err)
	}
	byName := make(map[string]string, len(names))
	for i, n := range names {
		byName[n] = texts[i]
	}
	for i, n := range in.Names {
		if got := byName[n]; got != in.Texts[i] {
			t.Errorf("%s: preprocessed text differs from the golden one (%d vs %d bytes)", n, len(got), len(in.Texts[i]))
		}
	}
}

// benchTFIDF benchmarks FitTransform and Transform of the golden settings
// (English stop words, MinDF 2, MaxDF 0.9, sublinear tf) on texts, reporting
// documents per second of wall-clock time (docs/s) and of process CPU time
// (cpu-docs/s, which a busy machine disturbs less; with GOMAXPROCS=1 it is
// the rate on one core, garbage collection included) and, so that runs can
// be checked against scikit-learn's, the vocabulary size and the number of
// stored entries.
func benchTFIDF(b *testing.B, texts []string) {
	newV := func() *TFIDF {
		return &TFIDF{StopWords: EnglishStopWords(), MinDF: DocFreq{Count: 2}, MaxDF: DocFreq{Fraction: 0.9}, SublinearTF: true}
	}
	b.Run("FitTransform", func(b *testing.B) {
		b.ReportAllocs()
		var v *TFIDF
		var nnz int
		c0, _ := cputime.Used()
		for b.Loop() {
			v = newV()
			x, err := v.FitTransform(texts)
			if err != nil {
				b.Fatal(err)
			}
			nnz = x.NNZ()
		}
		reportRates(b, len(texts), c0)
		b.ReportMetric(float64(v.Dim()), "terms")
		b.ReportMetric(float64(nnz), "nnz")
	})
	b.Run("Transform", func(b *testing.B) {
		v := newV()
		if err := v.Fit(texts); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		var x sparse.CSR
		c0, _ := cputime.Used()
		for b.Loop() {
			if err := v.TransformTo(&x, texts); err != nil {
				b.Fatal(err)
			}
		}
		reportRates(b, len(texts), c0)
	})
}

// reportRates reports docs/s and, when the CPU time is known, cpu-docs/s
// for b.N passes over n documents, the loop having started at CPU time c0.
func reportRates(b *testing.B, n int, c0 time.Duration) {
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "docs/s")
	if c1, ok := cputime.Used(); ok && c1 > c0 {
		b.ReportMetric(float64(b.N*n)/(c1-c0).Seconds(), "cpu-docs/s")
	}
}

// BenchmarkTFIDF500Brown runs benchTFIDF on the full Brown corpus (500
// documents, about 2,000 words each), skipped when the corpus is not on
// disk; see brownDir. testdata/bench_tfidf.py times scikit-learn on the same
// documents and runs this benchmark in the same session, for the ratio.
func BenchmarkTFIDF500Brown(b *testing.B) {
	_, texts := brownCorpus(b, brownDir(b))
	benchTFIDF(b, texts)
}

// TestTFIDFConcurrentTransform runs TransformTo from several goroutines on
// one fitted TFIDF (documented as safe between mutations; run with -race)
// and checks that each gets the rows of a lone Transform.
func TestTFIDFConcurrentTransform(t *testing.T) {
	texts := brownTexts(t)
	for _, v := range []*TFIDF{
		{StopWords: EnglishStopWords(), SublinearTF: true},
		{StopWords: EnglishStopWords(), Stem: true},
		{Hashing: true, NFeatures: 1 << 12, StopWords: EnglishStopWords()},
	} {
		if err := v.Fit(texts); err != nil {
			t.Fatal(err)
		}
		want, err := v.Transform(texts)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]sparse.CSR, 4)
		errs := make([]error, len(got))
		var wg sync.WaitGroup
		for g := range got {
			wg.Go(func() {
				// Reuse: a first call on other documents, then the real one.
				if errs[g] = v.TransformTo(&got[g], texts[:g+1]); errs[g] == nil {
					errs[g] = v.TransformTo(&got[g], texts)
				}
			})
		}
		wg.Wait()
		for g := range got {
			if errs[g] != nil {
				t.Fatal(errs[g])
			}
			compareCSR(t, &got[g], want)
		}
	}
}

// TestTFIDFRowCounting checks that the two ways appendRow counts terms
// (a dense count slice, or sorting the terms when there are too many
// columns for one) give the same rows.
func TestTFIDFRowCounting(t *testing.T) {
	texts := brownTexts(t)
	v := &TFIDF{StopWords: EnglishStopWords(), SublinearTF: true}
	if err := v.Fit(texts); err != nil {
		t.Fatal(err)
	}
	dense, sorted := sparse.Zeros(0, v.Dim()), sparse.Zeros(0, v.Dim())
	wd, ws := newRowWork(v.Dim()), rowWork{}
	if wd.count == nil {
		t.Fatal("no dense count slice for a vocabulary of", v.Dim())
	}
	a := v.analyzer(true)
	for _, doc := range texts {
		wd.cols = v.columns(wd.cols[:0], a, doc, false)
		ws.cols = append(ws.cols[:0], wd.cols...)
		v.appendRow(dense, &wd)
		v.appendRow(sorted, &ws)
	}
	compareCSR(t, dense, sorted)
	for j, c := range wd.count {
		if c != 0 {
			t.Fatalf("count[%d] = %d after the rows, want 0", j, c)
		}
	}
}
