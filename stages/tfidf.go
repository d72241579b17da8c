package stages

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/kljensen/snowball/english"

	"github.com/nmfstream/nmfstream/model/sparse"
)

// ErrNotFitted is returned by TFIDF.Transform before Fit, Update or
// UnmarshalBinary.
var ErrNotFitted = errors.New("stages: tfidf: not fitted")

// Norm selects the row normalization of TFIDF.Transform.
type Norm int

const (
	// NormL2 scales each non-empty row to unit Euclidean norm (the default,
	// scikit-learn's norm='l2').
	NormL2 Norm = iota
	// NormL1 scales each non-empty row to unit sum of absolute values.
	NormL1
	// NormNone leaves rows unscaled (norm=None).
	NormNone
)

// DocFreq bounds the document frequency of a vocabulary term, either as an
// absolute number of documents (Count, like an int min_df/max_df in
// scikit-learn) or as a proportion of the documents (Fraction in [0, 1], like
// a float). At most one of the two may be set; the zero DocFreq means the
// field's default.
type DocFreq struct {
	Count    int
	Fraction float64
}

func (d DocFreq) set() bool { return d.Count != 0 || d.Fraction != 0 }

// bound returns the document count that d stands for among n documents.
func (d DocFreq) bound(n int, name string) (float64, error) {
	switch {
	case d.Count != 0 && d.Fraction != 0:
		return 0, fmt.Errorf("stages: tfidf: %s sets both Count and Fraction", name)
	case d.Count < 0:
		return 0, fmt.Errorf("stages: tfidf: %s.Count = %d is negative", name, d.Count)
	case d.Fraction < 0 || d.Fraction > 1 || math.IsNaN(d.Fraction):
		return 0, fmt.Errorf("stages: tfidf: %s.Fraction = %g is outside [0, 1]", name, d.Fraction)
	case d.Count != 0:
		return float64(d.Count), nil
	}
	return d.Fraction * float64(n), nil
}

// TFIDF turns documents into TF-IDF rows, as scikit-learn's TfidfVectorizer
// does with its default analyzer (word unigrams), or as HashingVectorizer
// followed by TfidfTransformer when Hashing is set.
//
// A document is lower-cased (unless KeepCase), split into tokens by Tokenize,
// stripped of StopWords, and stemmed if Stem is set. The term frequency tf of
// a term in a document is its count, or 1 + ln(count) with SublinearTF. With
// n documents seen and df of them containing the term,
//
//	idf = ln((1 + n) / (1 + df)) + 1   (smooth, the default)
//	idf = ln(n / df) + 1               (NoSmoothIDF)
//
// and the row value is tf·idf, then the row is normalized by Norm. These are
// scikit-learn's formulas; the golden test checks them to 1e-6.
//
// Columns: without Hashing, Fit builds a vocabulary sorted alphabetically (by
// byte order, which is Unicode code point order, as Python sorts), column j
// is the j-th term, and terms outside it are ignored by Transform. Update
// appends new terms at the end instead, in order of first appearance, so
// that columns stay stable along a stream; the vocabulary then grows without
// bound. With Hashing, column j collects every term whose MurmurHash3 maps to
// j (scikit-learn's HashingVectorizer with alternate_sign=False, so values stay
// non-negative for NMF), and the dimension is fixed at NFeatures.
//
// Streams: Update adds documents to the counts n and df without forgetting
// earlier ones, so idf is always computed from running document frequencies
// over everything seen by Fit and Update so far. Rows transformed at
// different times therefore use slightly different idf weights; the columns
// (and so the meaning of a row) do not change.
//
// Configuration fields must not change after Fit or Update. A TFIDF is not
// safe for concurrent mutation (Fit, Update, UnmarshalBinary), but any number
// of goroutines may call Transform concurrently between mutations.
type TFIDF struct {
	// KeepCase disables lower-casing (scikit-learn's lowercase=False).
	// The default, false, lower-cases with strings.ToLower.
	KeepCase bool
	// StopWords lists the terms to drop, compared after lower-casing and
	// before stemming. Nil, the default, drops none; EnglishStopWords gives
	// scikit-learn's 'english' list.
	StopWords []string
	// Stem applies the Snowball English stemmer
	// (github.com/kljensen/snowball/english) to each kept token.
	Stem bool
	// MinDF drops, in Fit, terms found in fewer documents than this.
	// The default is Count 1 (keep all). Hashing mode does not support it.
	MinDF DocFreq
	// MaxDF drops, in Fit, terms found in more documents than this.
	// The default is Fraction 1 (keep all). Hashing mode does not support it.
	MaxDF DocFreq
	// SublinearTF replaces tf by 1 + ln(tf).
	SublinearTF bool
	// NoSmoothIDF uses ln(n/df) + 1 instead of the smoothed idf. In hashing
	// mode a column never seen (df = 0) is then given the idf of df = 1 to
	// stay finite.
	NoSmoothIDF bool
	// Norm normalizes rows. The default is NormL2.
	Norm Norm
	// Hashing maps terms to NFeatures columns by hashing instead of keeping
	// a vocabulary.
	Hashing bool
	// NFeatures is the number of columns in hashing mode. If zero, it
	// defaults to 1<<20, as in scikit-learn. It must not be negative.
	NFeatures int

	fitted bool
	stop   map[string]struct{}
	vocab  map[string]int // term → column, without Hashing
	terms  []string       // column → term, without Hashing
	df     []int64        // column → number of documents containing it
	n      int64          // documents seen
}

const defaultNFeatures = 1 << 20 // scikit-learn HashingVectorizer's default

// Dim returns the number of columns of Transform's output: the vocabulary
// size, or NFeatures in hashing mode. It is 0 before fitting.
func (t *TFIDF) Dim() int {
	if !t.fitted {
		return 0
	}
	if t.Hashing {
		return t.nFeatures()
	}
	return len(t.terms)
}

func (t *TFIDF) nFeatures() int {
	if t.NFeatures == 0 {
		return defaultNFeatures
	}
	return t.NFeatures
}

// Vocabulary returns the term of each column, as a new slice. It returns nil
// in hashing mode, where columns have no single term.
func (t *TFIDF) Vocabulary() []string {
	if t.Hashing {
		return nil
	}
	return slices.Clone(t.terms)
}

// NDocs returns the number of documents seen by Fit and Update.
func (t *TFIDF) NDocs() int64 { return t.n }

// IDF stores the current idf weight of each column into dst and returns it.
// If dst is nil a new slice is allocated; otherwise it must have length Dim,
// or IDF panics.
func (t *TFIDF) IDF(dst []float64) []float64 {
	d := t.Dim()
	if dst == nil {
		dst = make([]float64, d)
	} else if len(dst) != d {
		panic("stages: tfidf: IDF: wrong dst length")
	}
	for j := range dst {
		dst[j] = t.idf(j)
	}
	return dst
}

func (t *TFIDF) idf(j int) float64 {
	n, df := float64(t.n), float64(t.df[j])
	if !t.NoSmoothIDF {
		return math.Log((1+n)/(1+df)) + 1
	}
	if df == 0 {
		df = 1 // a hashed column never seen; see NoSmoothIDF
	}
	return math.Log(n/df) + 1
}

// Reset forgets the fitted state, keeping the configuration.
func (t *TFIDF) Reset() {
	t.fitted, t.stop, t.vocab, t.terms, t.df, t.n = false, nil, nil, nil, nil, 0
}

func (t *TFIDF) check() error {
	if t.NFeatures < 0 {
		return fmt.Errorf("stages: tfidf: NFeatures = %d is negative", t.NFeatures)
	}
	if t.Norm < NormL2 || t.Norm > NormNone {
		return fmt.Errorf("stages: tfidf: unknown Norm %d", t.Norm)
	}
	if t.Hashing && (t.MinDF.set() || t.MaxDF.set()) {
		return errors.New("stages: tfidf: MinDF and MaxDF need a vocabulary; unset them or Hashing")
	}
	return nil
}

func (t *TFIDF) start() {
	t.stop = make(map[string]struct{}, len(t.StopWords))
	for _, w := range t.StopWords {
		t.stop[w] = struct{}{}
	}
	if t.Hashing {
		t.df = make([]int64, t.nFeatures())
	} else {
		t.vocab = make(map[string]int)
	}
	t.fitted = true
}

// analyze appends the terms of doc (lower-cased, tokenized, stop words
// removed, stemmed) to dst.
func (t *TFIDF) analyze(dst []string, doc string) []string {
	if !t.KeepCase {
		doc = strings.ToLower(doc)
	}
	start := len(dst)
	dst = Tokenize(dst, doc)
	kept := dst[:start]
	for _, w := range dst[start:] {
		if _, ok := t.stop[w]; ok {
			continue
		}
		if t.Stem {
			// Stop words were removed above, so the stemmer must not skip its own.
			w = english.Stem(w, true)
		}
		kept = append(kept, w)
	}
	return kept
}

// Fit learns the vocabulary (unless Hashing) and the document frequencies
// from docs, replacing any earlier state. Without Hashing, terms outside
// [MinDF, MaxDF] are dropped, and it is an error if no term remains.
func (t *TFIDF) Fit(docs []string) error {
	if err := t.check(); err != nil {
		return err
	}
	t.Reset()
	if t.Hashing {
		return t.Update(docs)
	}
	lo, err := t.MinDF.bound(len(docs), "MinDF")
	if err != nil {
		return err
	}
	hi := float64(len(docs))
	if t.MaxDF.set() {
		if hi, err = t.MaxDF.bound(len(docs), "MaxDF"); err != nil {
			return err
		}
	}
	if hi < lo {
		return fmt.Errorf("stages: tfidf: MaxDF (%g documents) is below MinDF (%g documents)", hi, lo)
	}
	t.start()
	counts := make(map[string]int64)
	seen := make(map[string]struct{})
	var toks []string
	for _, doc := range docs {
		toks = t.analyze(toks[:0], doc)
		clear(seen)
		for _, w := range toks {
			if _, ok := seen[w]; !ok {
				seen[w] = struct{}{}
				counts[w]++
			}
		}
	}
	for w, c := range counts {
		if f := float64(c); f >= lo && f <= hi {
			t.terms = append(t.terms, w)
		}
	}
	if len(t.terms) == 0 {
		t.Reset()
		return errors.New("stages: tfidf: no terms remain after MinDF and MaxDF; lower MinDF or raise MaxDF")
	}
	sort.Strings(t.terms)
	t.df = make([]int64, len(t.terms))
	for j, w := range t.terms {
		t.vocab[w] = j
		t.df[j] = counts[w]
	}
	t.n = int64(len(docs))
	return nil
}

// Update adds docs to the running document frequencies, for streams. Without
// Hashing, terms not yet in the vocabulary get new columns at the end, so
// Dim grows; MinDF and MaxDF are not applied. Update on an unfitted TFIDF
// starts from empty counts.
func (t *TFIDF) Update(docs []string) error {
	if err := t.check(); err != nil {
		return err
	}
	if !t.fitted {
		t.start()
	}
	var toks []string
	seen := make(map[int]struct{})
	for _, doc := range docs {
		toks = t.analyze(toks[:0], doc)
		clear(seen)
		for _, w := range toks {
			j := t.column(w, true)
			if _, ok := seen[j]; !ok {
				seen[j] = struct{}{}
				t.df[j]++
			}
		}
	}
	t.n += int64(len(docs))
	return nil
}

// column returns the column of term w, or -1 if it has none. With grow set,
// a missing vocabulary term gets a new column.
func (t *TFIDF) column(w string, grow bool) int {
	if t.Hashing {
		return hashIndex(w, len(t.df))
	}
	j, ok := t.vocab[w]
	if !ok {
		if !grow {
			return -1
		}
		j = len(t.terms)
		t.vocab[w] = j
		t.terms = append(t.terms, w)
		t.df = append(t.df, 0)
	}
	return j
}

// Transform returns the TF-IDF rows of docs as a len(docs)×Dim matrix.
// A document with no known term gives an empty row, which callers that
// factorize should treat as unusable. Transform does not change t.
func (t *TFIDF) Transform(docs []string) (*sparse.CSR, error) {
	if !t.fitted {
		return nil, ErrNotFitted
	}
	m := sparse.Zeros(0, t.Dim())
	var (
		toks []string
		ind  []int
		val  []float64
	)
	tf := make(map[int]float64)
	for _, doc := range docs {
		toks = t.analyze(toks[:0], doc)
		clear(tf)
		for _, w := range toks {
			if j := t.column(w, false); j >= 0 {
				tf[j]++
			}
		}
		ind, val = ind[:0], val[:0]
		for j := range tf {
			ind = append(ind, j)
		}
		slices.Sort(ind)
		var norm float64
		for _, j := range ind {
			v := tf[j]
			if t.SublinearTF {
				v = 1 + math.Log(v)
			}
			v *= t.idf(j)
			val = append(val, v)
			switch t.Norm {
			case NormL2:
				norm += v * v
			case NormL1:
				norm += math.Abs(v)
			}
		}
		if t.Norm == NormL2 {
			norm = math.Sqrt(norm)
		}
		if t.Norm != NormNone && norm > 0 {
			for p := range val {
				val[p] /= norm
			}
		}
		m.AppendRow(ind, val)
	}
	return m, nil
}

// FitTransform is Fit followed by Transform on the same documents.
func (t *TFIDF) FitTransform(docs []string) (*sparse.CSR, error) {
	if err := t.Fit(docs); err != nil {
		return nil, err
	}
	return t.Transform(docs)
}
