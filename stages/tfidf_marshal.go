package stages

import (
	"bytes"
	"encoding"
	"encoding/gob"
	"fmt"
)

var (
	_ encoding.BinaryMarshaler   = (*TFIDF)(nil)
	_ encoding.BinaryUnmarshaler = (*TFIDF)(nil)
)

// tfidfVersion is the version of the MarshalBinary format. Increment it on
// any incompatible change of tfidfState.
const tfidfVersion = 1

// tfidfState is what MarshalBinary stores: the configuration and the fitted
// state. Document frequencies are stored sparsely (columns with df > 0),
// which keeps a hashing vectorizer with 2²⁰ columns small.
type tfidfState struct {
	Version     int
	KeepCase    bool
	StopWords   []string
	Stem        bool
	MinDF       DocFreq
	MaxDF       DocFreq
	SublinearTF bool
	NoSmoothIDF bool
	Norm        Norm
	Hashing     bool
	NFeatures   int
	Fallback    bool

	Fitted bool
	Terms  []string // column → term, without Hashing
	Dim    int      // number of columns
	DFCols []int    // columns with df > 0, increasing
	DFVals []int64  // their df
	NDocs  int64
}

// MarshalBinary encodes the configuration and the fitted state of t, so that
// a model file can store the vectorizer. It implements
// encoding.BinaryMarshaler.
func (t *TFIDF) MarshalBinary() ([]byte, error) {
	s := tfidfState{
		Version: tfidfVersion, KeepCase: t.KeepCase, StopWords: t.StopWords, Stem: t.Stem,
		MinDF: t.MinDF, MaxDF: t.MaxDF, SublinearTF: t.SublinearTF, NoSmoothIDF: t.NoSmoothIDF,
		Norm: t.Norm, Hashing: t.Hashing, NFeatures: t.NFeatures, Fallback: t.Fallback,
		Fitted: t.fitted, Dim: len(t.df), NDocs: t.n,
	}
	if !t.Hashing {
		s.Terms = t.terms
	}
	for j, c := range t.df {
		if c != 0 {
			s.DFCols = append(s.DFCols, j)
			s.DFVals = append(s.DFVals, c)
		}
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(&s); err != nil {
		return nil, fmt.Errorf("stages: tfidf: marshal: %w", err)
	}
	return buf.Bytes(), nil
}

// UnmarshalBinary replaces the configuration and state of t with those
// encoded by MarshalBinary. It implements encoding.BinaryUnmarshaler.
func (t *TFIDF) UnmarshalBinary(data []byte) error {
	var s tfidfState
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&s); err != nil {
		return fmt.Errorf("stages: tfidf: unmarshal: %w", err)
	}
	if s.Version != tfidfVersion {
		return fmt.Errorf("stages: tfidf: unmarshal: format version %d, want %d", s.Version, tfidfVersion)
	}
	if len(s.DFCols) != len(s.DFVals) || s.Dim < 0 || s.NDocs < 0 {
		return fmt.Errorf("stages: tfidf: unmarshal: inconsistent state")
	}
	if !s.Hashing && len(s.Terms) != s.Dim {
		return fmt.Errorf("stages: tfidf: unmarshal: %d terms for %d columns", len(s.Terms), s.Dim)
	}
	u := TFIDF{
		KeepCase: s.KeepCase, StopWords: s.StopWords, Stem: s.Stem, MinDF: s.MinDF, MaxDF: s.MaxDF,
		SublinearTF: s.SublinearTF, NoSmoothIDF: s.NoSmoothIDF, Norm: s.Norm, Hashing: s.Hashing,
		NFeatures: s.NFeatures, Fallback: s.Fallback, MaxDim: t.MaxDim,
	}
	if err := u.check(); err != nil {
		return fmt.Errorf("stages: tfidf: unmarshal: %w", err)
	}
	if s.Fitted {
		if s.Hashing && s.Dim != u.nFeatures() {
			return fmt.Errorf("stages: tfidf: unmarshal: %d columns, want NFeatures %d", s.Dim, u.nFeatures())
		}
		u.start()
		u.n = s.NDocs
		if !s.Hashing {
			u.terms = s.Terms
			u.df = make([]int64, s.Dim)
			for j, w := range s.Terms {
				if _, dup := get(&u.vocab, w); dup {
					return fmt.Errorf("stages: tfidf: unmarshal: duplicate term %q", w)
				}
				put(&u.vocab, w, int32(j))
			}
		}
		for p, j := range s.DFCols {
			if j < 0 || j >= s.Dim || s.DFVals[p] < 0 {
				return fmt.Errorf("stages: tfidf: unmarshal: bad document frequency entry %d", p)
			}
			u.df[j] = s.DFVals[p]
		}
	}
	u.cacheIDF()
	*t = u
	return nil
}
