package stages

import (
	"math/bits"
	"unicode"
	"unicode/utf8"
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

// EnglishStopWords returns a new copy of scikit-learn's English stop word
// list (sklearn.feature_extraction.text.ENGLISH_STOP_WORDS, 318 words, sorted),
// for TFIDF.StopWords.
func EnglishStopWords() []string {
	return append([]string(nil), englishStopWords[:]...)
}

// murmur3 returns MurmurHash3 x86_32 of key with the given seed, as a signed
// 32-bit integer, like sklearn.utils.murmurhash3_32(key, seed, positive=False).
// Austin Appleby's public-domain reference, MurmurHash3_x86_32.
func murmur3(key string, seed uint32) int32 {
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
func hashIndex(term string, n int) int {
	h := murmur3(term, 0)
	if h == -2147483648 {
		return (2147483647 - (n - 1)) % n
	}
	if h < 0 {
		h = -h
	}
	return int(h) % n
}
