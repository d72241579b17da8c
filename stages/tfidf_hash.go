package stages

import (
	"slices"
	"strings"
)

// TermColumns are the hashed columns of a text batch's documents under a
// hashing TFIDF's settings: every term's column, each document's sorted,
// document i's at cols[ptr[i]:ptr[i+1]]. They are the part of
// UpdateTransform that reads no document frequency, so that the parallel
// featurize stage can compute them (Hasher) and LearnFeatures need only
// count and weigh them (docs/DESIGN.md §3, "The stream").
type TermColumns struct {
	cols []int32
	ptr  []int
	key  hashKey
}

// hashKey is what a hashing TFIDF's columns depend on: the number of
// columns, the tokenizer's settings and the stop words.
type hashKey struct {
	n                        int
	keepCase, stem, fallback bool
	stops                    string // StopWords joined by NUL
}

// hashKey returns t's hashKey; t hashes and has started (its n columns
// are those of its counts).
func (t *TFIDF) hashKey() hashKey {
	if t.hkey.n == 0 {
		t.hkey = t.keyFor(len(t.df))
	}
	return t.hkey
}

// keyFor returns the hashKey of t's settings for n columns.
func (t *TFIDF) keyFor(n int) hashKey {
	return hashKey{n: n, keepCase: t.KeepCase, stem: t.Stem, fallback: t.Fallback, stops: strings.Join(t.StopWords, "\x00")}
}

// A Hasher computes TermColumns with a hashing TFIDF's settings, as they
// were when Hasher was called. It holds no reference to the TFIDF, and its
// Columns may run on any number of goroutines at once.
type Hasher struct {
	key  hashKey
	stop map[string]struct{}
}

// Hasher returns t's Hasher, or nil when t does not hash (its vocabulary
// grows with the documents, so their columns depend on the earlier ones).
// The TFIDF's settings must not change afterwards; its counts may.
func (t *TFIDF) Hasher() *Hasher {
	if t == nil || !t.Hashing {
		return nil
	}
	h := &Hasher{key: t.keyFor(t.nFeatures()), stop: make(map[string]struct{}, len(t.StopWords))}
	for _, w := range t.StopWords {
		h.stop[w] = struct{}{}
	}
	return h
}

// Columns returns the TermColumns of docs: what UpdateTransform computes
// for them before it counts them, bit for bit (TestHasherColumns).
func (h *Hasher) Columns(docs []string) *TermColumns {
	a := &analyzer{keepCase: h.key.keepCase, stem: h.key.stem}
	if len(h.stop) > 0 {
		a.stop = h.stop
	}
	tc := &TermColumns{ptr: make([]int, 1, len(docs)+1), key: h.key}
	for _, doc := range docs {
		start := len(tc.cols)
		tc.cols = hashColumns(tc.cols, a, doc, h.key.n, h.key.fallback, h.key.keepCase)
		slices.Sort(tc.cols[start:])
		tc.ptr = append(tc.ptr, len(tc.cols))
	}
	return tc
}
