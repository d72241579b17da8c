package stages

import (
	"encoding/binary"
	"math/bits"
)

// termTable maps terms to int32 values, for the vocabulary lookups of TFIDF,
// which dominate its run time. A term of up to maxInline bytes (nearly every
// word of a natural language) is stored inline, as two words, in an
// open-addressing table with linear probing: a lookup reads one or two
// adjacent slots and compares two integers, where a Go map also follows the
// pointer of the stored string. Longer terms go to a Go map. The zero
// termTable is empty and ready to use. A termTable may be read concurrently,
// but not while it is written.
type termTable struct {
	slots []termSlot // len is 0 or a power of two, at most half full
	shift uint       // 64 − log₂ len(slots)
	n     int        // terms stored in slots
	long  map[string]int32
}

// termSlot holds one inline term: its bytes 0–7 in k0 and 8–14 in k1,
// little-endian and zero-padded, with its length in the top byte of k1.
// Terms are never empty, so k1 == 0 marks a free slot.
type termSlot struct {
	k0, k1 uint64
	v      int32
}

const maxInline = 15

// pack returns the inline form of a term of 1 to maxInline bytes.
func pack[T string | []byte](term T) (k0, k1 uint64) {
	var b [16]byte
	copy(b[:], term)
	k0 = binary.LittleEndian.Uint64(b[:8])
	k1 = binary.LittleEndian.Uint64(b[8:]) | uint64(len(term))<<56
	return k0, k1
}

// index returns the home slot of a packed term (a multiplicative hash, the
// top bits of a 64×64-bit product mix every input bit).
func (t *termTable) index(k0, k1 uint64) uint64 {
	hi, lo := bits.Mul64(k0^0x9e3779b97f4a7c15, k1^0xc2b2ae3d27d4eb4f)
	return ((hi ^ lo) * 0x9e3779b97f4a7c15) >> t.shift
}

// get returns the value of term and whether it is in t.
func get[T string | []byte](t *termTable, term T) (int32, bool) {
	if len(term) > maxInline || len(term) == 0 {
		v, ok := t.long[string(term)]
		return v, ok
	}
	if t.n == 0 {
		return 0, false
	}
	k0, k1 := pack(term)
	mask := uint64(len(t.slots) - 1)
	for i := t.index(k0, k1); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.k0 == k0 && s.k1 == k1 {
			return s.v, true
		}
		if s.k1 == 0 {
			return 0, false
		}
	}
}

// put sets the value of term.
func put[T string | []byte](t *termTable, term T, v int32) {
	if len(term) > maxInline || len(term) == 0 {
		if t.long == nil {
			t.long = make(map[string]int32)
		}
		t.long[string(term)] = v
		return
	}
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	k0, k1 := pack(term)
	if t.insert(k0, k1, v) {
		t.n++
	}
}

// insert stores a packed term and reports whether it is new.
func (t *termTable) insert(k0, k1 uint64, v int32) bool {
	mask := uint64(len(t.slots) - 1)
	for i := t.index(k0, k1); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.k1 == 0 {
			*s = termSlot{k0, k1, v}
			return true
		}
		if s.k0 == k0 && s.k1 == k1 {
			s.v = v
			return false
		}
	}
}

// grow doubles the slots (starting at 1024) and rehashes.
func (t *termTable) grow() {
	old := t.slots
	size := max(1024, 2*len(old))
	t.slots = make([]termSlot, size)
	t.shift = uint(64 - bits.TrailingZeros(uint(size)))
	for _, s := range old {
		if s.k1 != 0 {
			t.insert(s.k0, s.k1, s.v)
		}
	}
}

// reserve makes room for n terms without growing.
func (t *termTable) reserve(n int) {
	for 2*(t.n+n) > len(t.slots) {
		t.grow()
	}
}

// len returns the number of terms in t.
func (t *termTable) len() int { return t.n + len(t.long) }
