package stages

import (
	"math/bits"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
)

// Tokenize appends the tokens of doc to dst and returns the extended slice.
// A token is a maximal run of two or more word characters, which is what
// scikit-learn's default token_pattern (?u)\b\w\w+\b finds. A word character
// is a Unicode letter (L*), a Unicode number (Nd, Nl, No) or '_', as in
// Python's str.isalnum; combining marks (Mn, Mc) split tokens, as in Python.
// Tokenize does not change case; the tokens are substrings of doc.
func Tokenize(dst []string, doc string) []string {
	start, n := -1, 0 // byte start of the current run, and its length in runes
	for i, r := range doc {
		if isWord(r) {
			if start < 0 {
				start, n = i, 0
			}
			n++
			continue
		}
		if start >= 0 && n >= 2 {
			dst = append(dst, doc[start:i])
		}
		start = -1
	}
	if start >= 0 && n >= 2 {
		dst = append(dst, doc[start:])
	}
	return dst
}

// isWord reports whether r matches Python's Unicode \w.
func isWord(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_'
	}
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsNumber(r))
}

// Byte classes of the scanner (byteClass): an ASCII byte that is not a
// word character, a lower-case ASCII word character (letter, digit or '_'),
// an upper-case ASCII letter, or a byte of a multi-byte UTF-8 sequence,
// which is decoded.
const (
	classOther uint8 = iota
	classLower
	classUpper
	classMulti
)

var byteClass = func() (t [256]uint8) {
	for c := range t {
		switch {
		case c >= utf8.RuneSelf:
			t[c] = classMulti
		case 'A' <= c && c <= 'Z':
			t[c] = classUpper
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '_':
			t[c] = classLower
		}
	}
	return t
}()

// analyzer turns a document into terms: it lower-cases (unless keepCase),
// finds the tokens of Tokenize, drops stop words (when stop is not nil) and
// stems (when stem is set). It reads the document once, without regular
// expressions and without copying it; the current term is in term, valid
// until the next call to next. An analyzer is used by one goroutine.
type analyzer struct {
	keepCase bool
	stop     map[string]struct{}
	stem     bool

	doc   string
	pos   int
	tok   []byte            // the current token, lower-cased
	term  []byte            // the current term: tok, or its stem
	stems map[string]string // token → stem cache, with stem
}

// reset starts reading doc.
func (a *analyzer) reset(doc string) { a.doc, a.pos = doc, 0 }

// next advances to the next term and reports whether there is one.
func (a *analyzer) next() bool {
	for a.nextToken() {
		if a.stop != nil {
			if _, ok := a.stop[string(a.tok)]; ok {
				continue
			}
		}
		if !a.stem {
			a.term = a.tok
			return true
		}
		s, ok := a.stems[string(a.tok)]
		if !ok {
			if a.stems == nil {
				a.stems = make(map[string]string)
			}
			// Stop words were removed above, so the stemmer must not skip its own.
			s = english.Stem(string(a.tok), true)
			a.stems[string(a.tok)] = s
		}
		a.term = append(a.term[:0], s...)
		return true
	}
	return false
}

// nextToken advances to the next token, as Tokenize would find it in
// strings.ToLower(doc) (or doc, with keepCase), and stores it in a.tok.
// The ASCII path classifies bytes by table; other runes are decoded,
// lower-cased with unicode.ToLower (as strings.ToLower does rune by rune)
// and then classified, so a rune whose lower case is (or is not) a word
// character is treated exactly as in the lower-cased document.
func (a *analyzer) nextToken() bool {
	s, i := a.doc, a.pos
	for {
		// Skip to the start of a run of word characters.
		for i < len(s) {
			switch byteClass[s[i]] {
			case classOther:
				i++
				continue
			case classMulti:
				r, size := utf8.DecodeRuneInString(s[i:])
				if !a.keepCase {
					r = unicode.ToLower(r)
				}
				if !isWord(r) {
					i += size
					continue
				}
			}
			break
		}
		if i >= len(s) {
			a.pos = i
			return false
		}
		// Collect the run, lower-casing it.
		tok, n := a.tok[:0], 0
		for i < len(s) {
			j, seen := i, uint8(0)
			for j < len(s) {
				c := byteClass[s[j]]
				if c != classLower && c != classUpper {
					break
				}
				seen |= c
				j++
			}
			if j > i {
				k := len(tok)
				tok = append(tok, s[i:j]...)
				if seen&classUpper != 0 && !a.keepCase {
					for p := k; p < len(tok); p++ {
						if byteClass[tok[p]] == classUpper {
							tok[p] += 'a' - 'A'
						}
					}
				}
				n += j - i
				i = j
			}
			if i >= len(s) || s[i] < utf8.RuneSelf {
				break
			}
			r, size := utf8.DecodeRuneInString(s[i:])
			if !a.keepCase {
				r = unicode.ToLower(r)
			}
			if !isWord(r) {
				break
			}
			tok = utf8.AppendRune(tok, r)
			n++
			i += size
		}
		a.tok = tok
		if n >= 2 {
			a.pos = i
			return true
		}
	}
}

// EnglishStopWords returns a new copy of scikit-learn's English stop word
// list (sklearn.feature_extraction.text.ENGLISH_STOP_WORDS, 318 words, sorted),
// for TFIDF.StopWords.
func EnglishStopWords() []string {
	return append([]string(nil), englishStopWords[:]...)
}

// murmur3 returns MurmurHash3 x86_32 of key with the given seed, as a signed
// 32-bit integer, like sklearn.utils.murmurhash3_32(key, seed, positive=False).
// Austin Appleby's public-domain reference, MurmurHash3_x86_32.
func murmur3[T string | []byte](key T, seed uint32) int32 {
	const c1, c2 = 0xcc9e2d51, 0x1b873593
	h := seed
	n := len(key)
	i := 0
	for ; i+4 <= n; i += 4 {
		k := uint32(key[i]) | uint32(key[i+1])<<8 | uint32(key[i+2])<<16 | uint32(key[i+3])<<24
		k *= c1
		k = bits.RotateLeft32(k, 15)
		k *= c2
		h ^= k
		h = bits.RotateLeft32(h, 13)
		h = h*5 + 0xe6546b64
	}
	var k uint32
	switch n - i {
	case 3:
		k ^= uint32(key[i+2]) << 16
		fallthrough
	case 2:
		k ^= uint32(key[i+1]) << 8
		fallthrough
	case 1:
		k ^= uint32(key[i])
		k *= c1
		k = bits.RotateLeft32(k, 15)
		k *= c2
		h ^= k
	}
	h ^= uint32(n)
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return int32(h)
}

// hashIndex maps a term to a column in [0, n) as scikit-learn's
// HashingVectorizer does (sklearn/feature_extraction/_hashing_fast.pyx):
// abs(murmurhash3_32(term, seed=0)) mod n, with the most negative hash
// folded explicitly because its absolute value overflows int32.
func hashIndex[T string | []byte](term T, n int) int {
	h := murmur3(term, 0)
	if h == -2147483648 {
		return (2147483647 - (n - 1)) % n
	}
	if h < 0 {
		h = -h
	}
	return int(h) % n
}
