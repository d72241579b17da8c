package model

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
	"sync"

	"gonum.org/v1/gonum/mat"
)

// SearchBases shares the search bases (Online.SearchBasis) that several
// online models of one process fit: a fit whose input, the rows it reads
// and its rank, SearchFit and Split, another model has fitted already is taken from
// it instead of fitted again. The fit is deterministic, so the basis taken
// is the one the model would have fitted, bit for bit. Several owners of
// a distributed stream fit on the same rows (their common start:
// distributed/DESIGN.md, "A common start"). Models fitting the same input
// at once wait for the first one's fit. The zero value keeps nothing; use
// NewSearchBases. It is safe for concurrent use. The models that share one
// must run their fits with the same Split, or none (a fit in parts may
// round differently with other parts).
type SearchBases struct {
	mu       sync.Mutex
	maxBytes int64
	entries  []*searchBasisEntry // oldest first
	hits     int
	fits     int
}

// searchBasisEntry is one shared fit: key identifies its input; done is
// closed once basis and err are set.
type searchBasisEntry struct {
	key   [sha256.Size]byte
	done  chan struct{}
	basis *mat.Dense // D×K orthonormal columns; never written once done
	err   error
}

// NewSearchBases returns a SearchBases that keeps the newest fits up to
// maxBytes (each D×SearchBasis float64s, 8 bytes each), and at least the
// newest one.
func NewSearchBases(maxBytes int64) *SearchBases {
	return &SearchBases{maxBytes: maxBytes}
}

// Hits returns the count of fits taken from the shared ones so far.
func (s *SearchBases) Hits() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits
}

// Fits returns the count of fits done (not taken from a shared one) so far.
func (s *SearchBases) Fits() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fits
}

// searchBasisKey identifies a search basis fit: the rows x (their bits),
// the rank, the fit and whether it runs in parts (Split: a fit in parts may
// round differently from a serial one).
func searchBasisKey(x *mat.Dense, rank int, fit SearchFit, split bool) [sha256.Size]byte {
	h := sha256.New()
	r, c := x.Dims()
	var b [8]byte
	for _, v := range []int{r, c, rank, int(fit)} {
		binary.LittleEndian.PutUint64(b[:], uint64(v))
		h.Write(b[:])
	}
	if split {
		h.Write([]byte{1})
	} else {
		h.Write([]byte{0})
	}
	buf := make([]byte, 0, 8*c)
	for i := range r {
		buf = buf[:0]
		for _, v := range x.RawRowView(i) {
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
		}
		h.Write(buf)
	}
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

// get returns the basis of the fit keyed by key: a shared one, or fit's,
// which it then shares. The caller must not write the returned matrix.
func (s *SearchBases) get(key [sha256.Size]byte, fit func() (*mat.Dense, error)) (*mat.Dense, error) {
	s.mu.Lock()
	for _, e := range s.entries {
		if e.key == key {
			s.hits++
			s.mu.Unlock()
			<-e.done
			return e.basis, e.err
		}
	}
	e := &searchBasisEntry{key: key, done: make(chan struct{})}
	s.entries = append(s.entries, e)
	s.fits++
	s.mu.Unlock()
	e.basis, e.err = fit()
	close(e.done)
	s.mu.Lock()
	s.trim()
	s.mu.Unlock()
	return e.basis, e.err
}

// trim drops the oldest finished fits while those kept hold more than
// maxBytes, keeping at least the newest one. The caller holds s.mu.
func (s *SearchBases) trim() {
	var bytes int64
	for _, e := range s.entries {
		bytes += e.bytes()
	}
	for len(s.entries) > 1 && bytes > s.maxBytes {
		e := s.entries[0]
		select {
		case <-e.done:
		default:
			return // a fit under way stays: others wait for it
		}
		bytes -= e.bytes()
		s.entries = s.entries[1:]
	}
}

// bytes returns the size of e's basis once its fit is done, 0 before.
func (e *searchBasisEntry) bytes() int64 {
	select {
	case <-e.done:
	default:
		return 0
	}
	if e.basis == nil {
		return 0
	}
	r, c := e.basis.Dims()
	return 8 * int64(r) * int64(c)
}
