package distributed

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Sample is one sample of the stream: a non-negative vector of dimension
// Dim, dense (Dense, of length Dim) or sparse (Index and Value, indices in
// [0, Dim) increasing, at least one value positive), with an optional
// class label. A sparse sample travels, and stays in its owner's window,
// as its nonzero entries only.
type Sample struct {
	// ID names the sample. Publisher uses it as the message id, so a
	// sample published twice within the stream's duplicate window is
	// stored once; IDs should be unique.
	ID uint64
	// Label is the class in [0, C), or -1 if unknown.
	Label int
	// Dim is the dimension D.
	Dim int
	// Dense holds the entries of a dense sample (len Dim), or is nil.
	Dense []float64
	// Index and Value hold the nonzero entries of a sparse sample.
	Index []int
	Value []float64
}

// Check returns an error naming the sample if it is not a valid
// non-negative vector: Publisher.Publish refuses such a sample.
func (s *Sample) Check() error { return s.check() }

// check returns an error naming the sample if it is not a valid
// non-negative vector.
func (s *Sample) check() error {
	bad := func(j int, v float64) error {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return fmt.Errorf("distributed: sample %d: entry %d is %g (entries must be finite and ≥ 0)", s.ID, j, v)
		}
		return nil
	}
	if s.Dim <= 0 {
		return fmt.Errorf("distributed: sample %d: dimension %d", s.ID, s.Dim)
	}
	if s.Dense != nil {
		if len(s.Dense) != s.Dim || s.Index != nil {
			return fmt.Errorf("distributed: sample %d: %d dense entries for dimension %d", s.ID, len(s.Dense), s.Dim)
		}
		for j, v := range s.Dense {
			if err := bad(j, v); err != nil {
				return err
			}
		}
		return nil
	}
	if len(s.Index) != len(s.Value) {
		return fmt.Errorf("distributed: sample %d: %d indices and %d values", s.ID, len(s.Index), len(s.Value))
	}
	nonzero := false
	for i, j := range s.Index {
		if j < 0 || j >= s.Dim || (i > 0 && j <= s.Index[i-1]) {
			return fmt.Errorf("distributed: sample %d: index %d out of order or range [0, %d)", s.ID, j, s.Dim)
		}
		if err := bad(j, s.Value[i]); err != nil {
			return err
		}
		nonzero = nonzero || s.Value[i] > 0
	}
	if !nonzero {
		return fmt.Errorf("distributed: sample %d: no nonzero entry (an owner compares sparse samples by cosine, undefined for a zero vector)", s.ID)
	}
	return nil
}

// errShort is returned for a truncated message.
var errShort = errors.New("distributed: message truncated")

type enc struct{ b []byte }

func (e *enc) u8(v uint8)   { e.b = append(e.b, v) }
func (e *enc) u32(v uint32) { e.b = binary.LittleEndian.AppendUint32(e.b, v) }
func (e *enc) u64(v uint64) { e.b = binary.LittleEndian.AppendUint64(e.b, v) }
func (e *enc) f64(v float64) {
	e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(v))
}
func (e *enc) f64s(v []float64) {
	for _, x := range v {
		e.f64(x)
	}
}

type dec struct {
	b   []byte
	err error
}

func (d *dec) take(n int) []byte {
	if d.err != nil || len(d.b) < n {
		d.err = errShort
		return nil
	}
	p := d.b[:n]
	d.b = d.b[n:]
	return p
}
func (d *dec) u8() uint8 {
	if p := d.take(1); p != nil {
		return p[0]
	}
	return 0
}
func (d *dec) u32() uint32 {
	if p := d.take(4); p != nil {
		return binary.LittleEndian.Uint32(p)
	}
	return 0
}
func (d *dec) u64() uint64 {
	if p := d.take(8); p != nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}
func (d *dec) f64() float64 { return math.Float64frombits(d.u64()) }

// count reads a length and checks that at least n·size bytes follow, so
// that a corrupt length cannot make a decoder allocate without bound.
func (d *dec) count(size int) int {
	n := int(d.u32())
	if d.err == nil && n*size > len(d.b) {
		d.err = errShort
		return 0
	}
	return n
}
func (d *dec) f64s(n int) []float64 {
	if d.err != nil || n*8 > len(d.b) {
		d.err = errShort
		return nil
	}
	v := make([]float64, n)
	for i := range v {
		v[i] = d.f64()
	}
	return v
}

const (
	tagSample = 'S'
	tagDelta  = 'D'
	tagBasis  = 'U'
	tagCoord  = 'C'
	tagOwner  = 'O'
	tagLabel  = 'L'
	tagRef    = 'R' // a reference to an object (large.go)
)

// encodeLabel encodes a late label: the class of the sample with this ID,
// which travels on the samples stream of the sample's partition, after it.
func encodeLabel(id uint64, label int) []byte {
	var e enc
	e.u8(tagLabel)
	e.u64(id)
	e.u32(uint32(int32(label)))
	return e.b
}

// decodeRecord decodes a message of the samples stream: a sample, or a
// late label (isLabel, with the sample's ID and class in s.ID, s.Label).
func decodeRecord(b []byte) (s Sample, isLabel bool, err error) {
	if len(b) > 0 && b[0] == tagLabel {
		d := dec{b: b[1:]}
		s.ID, s.Label = d.u64(), int(int32(d.u32()))
		if d.err == nil && s.Label < 0 {
			return s, true, fmt.Errorf("distributed: label %d for sample %d", s.Label, s.ID)
		}
		return s, true, d.err
	}
	s, err = decodeSample(b)
	return s, false, err
}

func encodeSample(s *Sample) []byte {
	var e enc
	e.u8(tagSample)
	e.u64(s.ID)
	e.u32(uint32(int32(s.Label)))
	e.u32(uint32(s.Dim))
	if s.Dense != nil {
		e.u8(0)
		e.u32(uint32(len(s.Dense)))
		e.f64s(s.Dense)
		return e.b
	}
	e.u8(1)
	e.u32(uint32(len(s.Index)))
	for i, j := range s.Index {
		e.u32(uint32(j))
		e.f64(s.Value[i])
	}
	return e.b
}

func decodeSample(b []byte) (Sample, error) {
	d := dec{b: b}
	var s Sample
	if d.u8() != tagSample {
		return s, errors.New("distributed: not a sample message")
	}
	s.ID = d.u64()
	s.Label = int(int32(d.u32()))
	s.Dim = int(d.u32())
	switch d.u8() {
	case 0:
		s.Dense = d.f64s(d.count(8))
	case 1:
		n := d.count(12)
		s.Index, s.Value = make([]int, n), make([]float64, n)
		for i := range n {
			s.Index[i] = int(d.u32())
			s.Value[i] = d.f64()
		}
	default:
		return s, fmt.Errorf("distributed: sample %d: unknown kind", s.ID)
	}
	if d.err != nil {
		return s, d.err
	}
	return s, s.check()
}

// delta is one owner's addition to the sufficient statistics: the change
// of B = XV and A = VᵀV over its partition since its previous delta, the
// new codes of the rows it changed, and the samples it added.
type delta struct {
	Part    int    // partition p
	N       uint64 // delta number within p, from 1
	Round   uint64 // owner's round
	Version uint64 // version of U the codes were computed with
	Covered uint64 // last sample-stream sequence included in p's state
	Added   int    // samples added by this delta
	IDSum   uint64 // sum of the added samples' IDs (mod 2⁶⁴)
	Removed int    // oldest rows that left the window, their part of B and A subtracted
	Cut     uint64 // every message of p's samples subject up to this stream sequence is in
	D, K    int
	A       []float64 // ΔA, K×K row-major
	BRows   []int     // rows of ΔB that are nonzero
	B       []float64 // those rows, len(BRows)×K
	Rows    []int     // partition rows whose codes changed, numbered from the partition's first sample
	Codes   []float64 // their new codes, len(Rows)×K
}

func encodeDelta(x *delta) []byte {
	var e enc
	e.u8(tagDelta)
	e.u32(uint32(x.Part))
	e.u64(x.N)
	e.u64(x.Round)
	e.u64(x.Version)
	e.u64(x.Covered)
	e.u32(uint32(x.Added))
	e.u64(x.IDSum)
	e.u32(uint32(x.Removed))
	e.u64(x.Cut)
	e.u32(uint32(x.D))
	e.u32(uint32(x.K))
	e.f64s(x.A)
	e.u32(uint32(len(x.BRows)))
	for _, r := range x.BRows {
		e.u32(uint32(r))
	}
	e.f64s(x.B)
	e.u32(uint32(len(x.Rows)))
	for _, r := range x.Rows {
		e.u32(uint32(r))
	}
	e.f64s(x.Codes)
	return e.b
}

func decodeDelta(b []byte) (*delta, error) {
	d := dec{b: b}
	if d.u8() != tagDelta {
		return nil, errors.New("distributed: not a delta message")
	}
	x := &delta{Part: int(d.u32()), N: d.u64(), Round: d.u64(), Version: d.u64(), Covered: d.u64(),
		Added: int(d.u32()), IDSum: d.u64(), Removed: int(d.u32()), Cut: d.u64(), D: int(d.u32()), K: int(d.u32())}
	if d.err == nil && (x.K <= 0 || x.K*x.K*8 > len(d.b)) {
		return nil, fmt.Errorf("distributed: delta %d of partition %d: bad rank %d", x.N, x.Part, x.K)
	}
	x.A = d.f64s(x.K * x.K)
	x.BRows = make([]int, d.count(4))
	for i := range x.BRows {
		x.BRows[i] = int(d.u32())
		if x.BRows[i] >= x.D {
			return nil, fmt.Errorf("distributed: delta %d of partition %d: row %d of B out of range", x.N, x.Part, x.BRows[i])
		}
	}
	x.B = d.f64s(len(x.BRows) * x.K)
	x.Rows = make([]int, d.count(4))
	for i := range x.Rows {
		x.Rows[i] = int(d.u32())
	}
	x.Codes = d.f64s(len(x.Rows) * x.K)
	if d.err != nil {
		return nil, d.err
	}
	return x, nil
}

// basis is the value of the basis key: U at a version, with the sample
// sequence that round Version of the owners reads up to, and the
// coordinator's exact counters.
type basis struct {
	Version   uint64
	SampleSeq uint64 // round Version ingests samples with stream sequence ≤ this
	Samples   uint64 // samples applied to B and A
	Deltas    uint64 // deltas applied
	IDSum     uint64 // sum of the applied samples' IDs (mod 2⁶⁴)
	Left      uint64 // samples that left the partitions' windows
	Ingested  uint64 // every owner holds the samples and labels up to this stream sequence
	U         *mat.Dense
}

func encodeBasis(x *basis) []byte {
	var e enc
	e.u8(tagBasis)
	e.u64(x.Version)
	e.u64(x.SampleSeq)
	e.u64(x.Samples)
	e.u64(x.Deltas)
	e.u64(x.IDSum)
	e.u64(x.Left)
	e.u64(x.Ingested)
	encodeDense(&e, x.U)
	return e.b
}

func decodeBasis(b []byte) (*basis, error) {
	d := dec{b: b}
	if d.u8() != tagBasis {
		return nil, errors.New("distributed: not a basis value")
	}
	x := &basis{Version: d.u64(), SampleSeq: d.u64(), Samples: d.u64(), Deltas: d.u64(), IDSum: d.u64(), Left: d.u64(), Ingested: d.u64()}
	x.U = decodeDense(&d)
	if d.err != nil {
		return nil, d.err
	}
	return x, nil
}

func encodeDense(e *enc, m *mat.Dense) {
	if m == nil || m.IsEmpty() {
		e.u32(0)
		e.u32(0)
		return
	}
	r, c := m.Dims()
	e.u32(uint32(r))
	e.u32(uint32(c))
	for i := range r {
		e.f64s(m.RawRowView(i))
	}
}

func decodeDense(d *dec) *mat.Dense {
	r, c := int(d.u32()), int(d.u32())
	if d.err != nil || r == 0 || c == 0 {
		return nil
	}
	if r*c*8 > len(d.b) {
		d.err = errShort
		return nil
	}
	return mat.NewDense(r, c, d.f64s(r*c))
}
