package stages

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/nmfstream/nmfstream/model/sparse"
	"github.com/nmfstream/nmfstream/record"
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
	// Fallback, in hashing mode, gives a document that has no term a row
	// all the same: its stop words are its terms, or, when it has no token
	// of two word characters, its characters other than white space (each
	// lower-cased unless KeepCase). A short post made of stop words ("not
	// for me") or of emoji is then learned and predicted instead of being
	// rejected as empty. A document of white space alone stays empty.
	Fallback bool
	// MaxDim bounds Dim, the columns of the output, which a model turns
	// into a dense D×K basis. If zero, it defaults to record.DefaultMaxDim
	// (2²⁰). In hashing mode an NFeatures above it is an error. Without
	// Hashing, Fit fails if more terms than MaxDim remain after MinDF and
	// MaxDF, and Update stops adding columns once the vocabulary holds
	// MaxDim terms: later new terms are ignored, as Transform ignores
	// unknown terms. It must not be negative.
	MaxDim int

	fitted bool
	hkey   hashKey // the settings a hashing TFIDF's columns depend on (hashKey), set at its first use after start
	stop   map[string]struct{}
	vocab  termTable // term → column, without Hashing
	terms  []string  // column → term, without Hashing
	df     []int64   // column → number of documents containing it
	n      int64     // documents seen
	idfs   []float64 // column → idf, without Hashing; see cacheIDF
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
	t.fitted, t.stop, t.vocab, t.terms, t.df, t.n, t.idfs = false, nil, termTable{}, nil, nil, 0, nil
}

func (t *TFIDF) maxDim() int {
	if t.MaxDim == 0 {
		return record.DefaultMaxDim
	}
	return t.MaxDim
}

func (t *TFIDF) check() error {
	if t.NFeatures < 0 {
		return fmt.Errorf("stages: tfidf: NFeatures = %d is negative", t.NFeatures)
	}
	if t.MaxDim < 0 {
		return fmt.Errorf("stages: tfidf: MaxDim = %d is negative", t.MaxDim)
	}
	if t.Hashing && t.nFeatures() > t.maxDim() {
		return fmt.Errorf("stages: tfidf: NFeatures = %d exceeds MaxDim = %d; raise MaxDim if the model can hold a basis that wide", t.nFeatures(), t.maxDim())
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
	t.hkey = hashKey{}
	t.stop = make(map[string]struct{}, len(t.StopWords))
	for _, w := range t.StopWords {
		t.stop[w] = struct{}{}
	}
	if t.Hashing {
		t.df = make([]int64, t.nFeatures())
	}
	t.fitted = true
}

// analyzer returns an analyzer with t's settings. Without stops, it keeps
// stop words, for callers that drop them otherwise.
func (t *TFIDF) analyzer(stops bool) *analyzer {
	a := &analyzer{keepCase: t.KeepCase, stem: t.Stem}
	if stops && len(t.stop) > 0 {
		a.stop = t.stop
	}
	return a
}

// cacheIDF stores the idf weight of every column, after a mutation, so that
// Transform does not compute a logarithm per entry. Hashing mode, whose
// NFeatures columns are mostly empty, computes them per entry instead.
func (t *TFIDF) cacheIDF() {
	t.idfs = nil
	if !t.Hashing && t.fitted {
		t.idfs = make([]float64, len(t.df))
		for j := range t.idfs {
			t.idfs[j] = t.idf(j)
		}
	}
}

// Fit learns the vocabulary (unless Hashing) and the document frequencies
// from docs, replacing any earlier state. Without Hashing, terms outside
// [MinDF, MaxDF] are dropped, and it is an error if no term remains.
func (t *TFIDF) Fit(docs []string) error {
	_, _, _, err := t.fit(docs, false)
	return err
}

// fit is Fit. With keep set and without Hashing, it also returns the terms
// of every document as temporary ids, toks[ptr[i]:ptr[i+1]] for document i,
// and the column of each temporary id (remap[id], or -1 if the term was
// dropped), so that FitTransform reads every document once.
func (t *TFIDF) fit(docs []string, keep bool) (toks []int32, ptr []int, remap []int32, err error) {
	if err := t.check(); err != nil {
		return nil, nil, nil, err
	}
	t.Reset()
	if t.Hashing {
		return nil, nil, nil, t.Update(docs)
	}
	lo, hi, err := t.dfBounds(len(docs))
	if err != nil {
		return nil, nil, nil, err
	}
	t.start()
	terms, df, toks, ptr := t.countTerms(docs, keep)
	var cols []int32 // temporary ids of the kept terms
	for id, c := range df {
		if f := float64(c); f >= lo && f <= hi {
			cols = append(cols, int32(id))
		}
	}
	if len(cols) == 0 {
		t.Reset()
		return nil, nil, nil, errors.New("stages: tfidf: no terms remain after MinDF and MaxDF; lower MinDF or raise MaxDF")
	}
	if len(cols) > t.maxDim() {
		t.Reset()
		return nil, nil, nil, fmt.Errorf("stages: tfidf: %d terms remain, above MaxDim = %d; raise MinDF, use Hashing or raise MaxDim", len(cols), t.maxDim())
	}
	slices.SortFunc(cols, func(a, b int32) int { return strings.Compare(terms[a], terms[b]) })
	remap = make([]int32, len(terms))
	for id := range remap {
		remap[id] = -1
	}
	t.terms = make([]string, len(cols))
	t.df = make([]int64, len(cols))
	for j, id := range cols {
		remap[id] = int32(j)
		t.terms[j], t.df[j] = terms[id], df[id]
	}
	t.vocab.reserve(len(t.terms))
	for j, w := range t.terms {
		put(&t.vocab, w, int32(j))
	}
	t.n = int64(len(docs))
	t.cacheIDF()
	return toks, ptr, remap, nil
}

// dfBounds returns the document counts MinDF and MaxDF stand for in a fit
// of n documents.
func (t *TFIDF) dfBounds(n int) (lo, hi float64, err error) {
	if lo, err = t.MinDF.bound(n, "MinDF"); err != nil {
		return 0, 0, err
	}
	hi = float64(n)
	if t.MaxDF.set() {
		if hi, err = t.MaxDF.bound(n, "MaxDF"); err != nil {
			return 0, 0, err
		}
	}
	if hi < lo {
		return 0, 0, fmt.Errorf("stages: tfidf: MaxDF (%g documents) is below MinDF (%g documents)", hi, lo)
	}
	return lo, hi, nil
}

// countTerms returns every term of docs (stop words dropped) by a
// temporary id, its order of first appearance, and the number of documents
// holding each; with keep, also the documents' tokens as temporary ids
// (toks) and where each document's start (ptr, one more than docs).
func (t *TFIDF) countTerms(docs []string, keep bool) (terms []string, df []int64, toks []int32, ptr []int) {
	// ids maps every term seen to a temporary id (its order of first
	// appearance). Without stemming, stop words are entered first with id
	// -1, so that one map lookup per token both drops stop words and finds
	// the term; with stemming the analyzer drops them before stemming.
	var ids termTable
	ids.reserve(1 << 12)
	if !t.Stem {
		for w := range t.stop {
			put(&ids, w, -1)
		}
	}
	var last []int32 // temporary id → 1 + the last document counted in df
	if keep {
		ptr = make([]int, 1, len(docs)+1)
	}
	a := t.analyzer(t.Stem)
	for d, doc := range docs {
		a.reset(doc)
		for a.next() {
			id, ok := get(&ids, a.term)
			if !ok {
				id = int32(len(terms))
				put(&ids, a.term, id)
				terms = append(terms, string(a.term))
				df = append(df, 0)
				last = append(last, 0)
			}
			if id < 0 {
				continue
			}
			if last[id] != int32(d+1) {
				last[id] = int32(d + 1)
				df[id]++
			}
			if keep {
				toks = append(toks, id)
			}
		}
		if keep {
			ptr = append(ptr, len(toks))
		}
	}
	return terms, df, toks, ptr
}

// Update adds docs to the running document frequencies, for streams. Without
// Hashing, terms not yet in the vocabulary get new columns at the end, so
// Dim grows; MinDF and MaxDF are not applied. Update on an unfitted TFIDF
// starts from empty counts.
func (t *TFIDF) Update(docs []string) error {
	_, _, err := t.addDocs(docs, nil)
	return err
}

// UpdateTransform is Update followed by Transform on the same documents,
// reading each document once: the rows and the document frequencies are
// those of the two calls, bit for bit. Each document's columns are taken
// as Update takes them (a term new to the vocabulary gets its column
// first), which are the columns Transform then finds: without Hashing or
// Stem, Transform's analyzer keeps the stop words but the vocabulary,
// which has none, drops them.
func (t *TFIDF) UpdateTransform(docs []string) (*sparse.CSR, error) {
	return t.updateTransform(docs, nil)
}

// updateTransform is UpdateTransform with the documents' hashed columns
// taken from tc when a Hasher of t's settings made them for docs (nil:
// computed here).
func (t *TFIDF) updateTransform(docs []string, tc *TermColumns) (*sparse.CSR, error) {
	cols, ptr, err := t.addDocs(docs, tc)
	if err != nil {
		return nil, err
	}
	m := sparse.Zeros(0, t.Dim())
	w := newRowWork(t.Dim())
	for i := range docs {
		w.cols = append(w.cols[:0], cols[ptr[i]:ptr[i+1]]...)
		t.appendRow(m, &w)
	}
	return m, nil
}

// addDocs is Update; it also returns the columns of every term of each
// document, sorted, document i's at cols[ptr[i]:ptr[i+1]]: tc's, when it
// holds docs' columns under t's settings (TermColumns), else computed.
func (t *TFIDF) addDocs(docs []string, tc *TermColumns) (cols []int32, ptr []int, err error) {
	if err := t.check(); err != nil {
		return nil, nil, err
	}
	if !t.fitted {
		t.start()
	}
	if tc != nil && len(tc.ptr) == len(docs)+1 && t.Hashing && tc.key == t.hashKey() {
		cols, ptr = tc.cols, tc.ptr
	} else {
		a := t.analyzer(true)
		ptr = make([]int, 1, len(docs)+1)
		for _, doc := range docs {
			start := len(cols)
			cols = t.columns(cols, a, doc, true)
			slices.Sort(cols[start:])
			ptr = append(ptr, len(cols))
		}
	}
	for i := range docs {
		c := cols[ptr[i]:ptr[i+1]]
		for p, j := range c {
			if p == 0 || c[p-1] != j {
				t.df[j]++
			}
		}
	}
	t.n += int64(len(docs))
	t.cacheIDF()
	return cols, ptr, nil
}

// columns appends the column of every term of doc to dst, skipping terms
// without one. With grow set, a term missing from the vocabulary gets a new
// column.
func (t *TFIDF) columns(dst []int32, a *analyzer, doc string, grow bool) []int32 {
	if t.Hashing {
		return hashColumns(dst, a, doc, len(t.df), t.Fallback, t.KeepCase)
	}
	a.reset(doc)
	for a.next() {
		j, ok := get(&t.vocab, a.term)
		if !ok {
			if !grow || len(t.terms) >= t.maxDim() {
				continue
			}
			j = int32(len(t.terms))
			put(&t.vocab, a.term, j)
			t.terms = append(t.terms, string(a.term))
			t.df = append(t.df, 0)
		}
		dst = append(dst, j)
	}
	return dst
}

// hashColumns appends the hashed column (of n) of every term of doc that
// a reads to dst, and with fallback set, for a document without one,
// those of fallbackColumns.
func hashColumns(dst []int32, a *analyzer, doc string, n int, fallback, keepCase bool) []int32 {
	a.reset(doc)
	start := len(dst)
	for a.next() {
		dst = append(dst, int32(hashIndex(a.term, n)))
	}
	if len(dst) == start && fallback {
		dst = fallbackColumns(dst, a, doc, n, keepCase)
	}
	return dst
}

// fallbackColumns appends the columns (of n) of Fallback's terms of doc, a
// document without any other term, to dst: its stop words, else its
// characters other than white space (lower-cased unless keepCase).
func fallbackColumns(dst []int32, a *analyzer, doc string, n int, keepCase bool) []int32 {
	start := len(dst)
	if stop := a.stop; stop != nil {
		a.stop = nil
		a.reset(doc)
		for a.next() {
			dst = append(dst, int32(hashIndex(a.term, n)))
		}
		a.stop = stop
	}
	if len(dst) > start {
		return dst
	}
	var buf [utf8.UTFMax]byte
	for _, r := range doc {
		if unicode.IsSpace(r) || r == utf8.RuneError {
			continue
		}
		if !keepCase {
			r = unicode.ToLower(r)
		}
		dst = append(dst, int32(hashIndex(utf8.AppendRune(buf[:0], r), n)))
	}
	return dst
}

// Transform returns the TF-IDF rows of docs as a new len(docs)×Dim matrix;
// see TransformTo.
func (t *TFIDF) Transform(docs []string) (*sparse.CSR, error) {
	var m sparse.CSR
	if err := t.TransformTo(&m, docs); err != nil {
		return nil, err
	}
	return &m, nil
}

// TransformTo stores the TF-IDF rows of docs into dst as a len(docs)×Dim
// matrix. It resets dst (sparse.CSR.Reset) and reuses its memory, so that a
// stream of batches allocates nothing for its results once dst has grown. A
// document with no known term gives an empty row, which callers that
// factorize should treat as unusable. TransformTo does not change t.
func (t *TFIDF) TransformTo(dst *sparse.CSR, docs []string) error {
	if !t.fitted {
		return ErrNotFitted
	}
	dst.Reset()
	dst.Grow(t.Dim())
	// Without Hashing or Stem, stop words are not in the vocabulary, so the
	// vocabulary lookup drops them and the analyzer need not.
	a := t.analyzer(t.Hashing || t.Stem)
	w := newRowWork(t.Dim())
	for _, doc := range docs {
		w.cols = t.columns(w.cols[:0], a, doc, false)
		t.appendRow(dst, &w)
	}
	return nil
}

// FitTransform is Fit followed by Transform on the same documents, reading
// each document once.
func (t *TFIDF) FitTransform(docs []string) (*sparse.CSR, error) {
	toks, ptr, remap, err := t.fit(docs, true)
	if err != nil {
		return nil, err
	}
	if t.Hashing {
		return t.Transform(docs)
	}
	m := sparse.Zeros(0, t.Dim())
	w := newRowWork(t.Dim())
	for i := range docs {
		w.cols = w.cols[:0]
		for _, id := range toks[ptr[i]:ptr[i+1]] {
			if j := remap[id]; j >= 0 {
				w.cols = append(w.cols, j)
			}
		}
		t.appendRow(m, &w)
	}
	return m, nil
}

// rowWork is the workspace of appendRow.
type rowWork struct {
	cols  []int32 // the column of every term of a document, in any order
	count []int32 // column → count in the document, zero between rows; nil to sort cols instead
	ind   []int
	val   []float64
}

// maxDenseCount bounds the number of columns for which rowWork counts terms
// in a dense slice (4 bytes a column, allocated per TransformTo call) rather
// than by sorting every term of a document; above it, as in hashing mode with
// the default 2²⁰ columns, the slice would cost more than it saves.
const maxDenseCount = 1 << 18

// newRowWork returns a workspace for rows of d columns.
func newRowWork(d int) rowWork {
	var w rowWork
	if d <= maxDenseCount {
		w.count = make([]int32, d)
	}
	return w
}

// appendRow appends to m the TF-IDF row of a document whose terms have the
// columns w.cols. It counts them in w.count and sorts the distinct columns
// (about half as many as the terms, in English), or without w.count sorts
// the terms to gather each column's count.
func (t *TFIDF) appendRow(m *sparse.CSR, w *rowWork) {
	ind, val := w.ind[:0], w.val[:0]
	if w.count != nil {
		for _, j := range w.cols {
			if w.count[j] == 0 {
				ind = append(ind, int(j))
			}
			w.count[j]++
		}
		slices.Sort(ind)
		for _, j := range ind {
			val = append(val, float64(w.count[j]))
			w.count[j] = 0
		}
	} else {
		cols := w.cols
		slices.Sort(cols)
		for p := 0; p < len(cols); {
			j, q := cols[p], p+1
			for q < len(cols) && cols[q] == j {
				q++
			}
			ind = append(ind, int(j))
			val = append(val, float64(q-p))
			p = q
		}
	}
	var norm float64
	for p, j := range ind {
		v := val[p]
		if t.SublinearTF {
			v = 1 + math.Log(v)
		}
		if t.idfs != nil {
			v *= t.idfs[j]
		} else {
			v *= t.idf(j)
		}
		val[p] = v
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
	w.ind, w.val = ind, val
}
