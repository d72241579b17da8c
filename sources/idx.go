package sources

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/nmfstream/nmfstream/record"
	"io"
	"math"
	"strconv"
)

// maxIDXRecordBytes bounds the size of one IDX record (the product of the
// dimensions after the first, times the element size): 256 MiB, far above
// any image, so that a corrupt header fails instead of allocating.
const maxIDXRecordBytes = 1 << 28

// IDX reads the IDX format of the MNIST files
// (http://yann.lecun.com/exdb/mnist/): a big-endian header (two zero bytes,
// a type code, the number of dimensions, then each dimension as uint32) and
// the data. Record i is the i-th slice along the first dimension, flattened
// row-major, so a 60000×28×28 file gives 60000 records of 784 features.
//
// Unsigned byte data (type 0x08, as in MNIST) is scaled by 1/255 to [0, 1],
// the scale images decode to; the other types (int8, int16, int32, float32,
// float64) are read as they are, and records with negative or non-finite
// values are rejected. Batches of unsigned-byte, signed-byte and float32
// data have Precision record.Float32, the others record.Float64. The optional labels file is a one-dimensional IDX file
// of integers with one label per record, formatted in decimal. A record's id
// is its 0-based offset in decimal, as for a CSV file without an id column
// (docs/DESIGN.md §5).
// The batches are FormDense.
//
// Set the exported fields before the first call to Next or Form.
type IDX struct {
	// BatchSize is the number of records per batch. If zero, it defaults
	// to 256.
	BatchSize int
	// MaxDim bounds the features per record (the product of the
	// dimensions after the first): a header asking for more makes Form
	// fail with a *LimitError. If zero, it defaults to DefaultMaxDim.
	MaxDim int

	images, labels *bufio.Reader
	closer         io.Closer // the inputs, when opened by Open

	started bool
	n, d    int // records and features per record
	typ     byte
	size    int // bytes per element
	ltyp    byte
	lsize   int
	off     int64
	err     error
	raw     []byte
	row     []float64
	dense   denseRows
	batch   batch
}

var _ Source = (*IDX)(nil)

// NewIDX returns a source reading the IDX images data and, if labels is not
// nil, the matching IDX labels.
func NewIDX(images, labels io.Reader) *IDX {
	x := &IDX{images: bufio.NewReader(images)}
	if labels != nil {
		x.labels = bufio.NewReader(labels)
	}
	return x
}

var idxSizes = map[byte]int{0x08: 1, 0x09: 1, 0x0B: 2, 0x0C: 4, 0x0D: 4, 0x0E: 8}

// idxHeader reads an IDX header and returns the element type, its size and
// the dimensions.
func idxHeader(r io.Reader) (typ byte, size int, dims []int, err error) {
	var h [4]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, 0, nil, fmt.Errorf("reading header: %w", err)
	}
	if h[0] != 0 || h[1] != 0 {
		return 0, 0, nil, fmt.Errorf("bad magic %x (want 00 00 type ndims)", h)
	}
	size, ok := idxSizes[h[2]]
	if !ok {
		return 0, 0, nil, fmt.Errorf("unknown element type 0x%02x", h[2])
	}
	if h[3] == 0 {
		return 0, 0, nil, errors.New("zero dimensions")
	}
	dims = make([]int, h[3])
	for i := range dims {
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return 0, 0, nil, fmt.Errorf("reading dimensions: %w", err)
		}
		dims[i] = int(binary.BigEndian.Uint32(b[:]))
	}
	return h[2], size, dims, nil
}

// Form reads the headers and returns FormDense, or why the files cannot be
// used.
func (x *IDX) Form() (record.Form, error) {
	if !x.start() {
		return 0, x.err
	}
	return record.FormDense, nil
}

func (x *IDX) start() bool {
	if x.started {
		return x.err == nil
	}
	x.started = true
	typ, size, dims, err := idxHeader(x.images)
	if err != nil {
		x.err = fmt.Errorf("sources: idx images: %w", err)
		return false
	}
	x.typ, x.size, x.n, x.d = typ, size, dims[0], 1
	for _, v := range dims[1:] {
		if v == 0 || x.d > maxIDXRecordBytes/size/v {
			x.err = fmt.Errorf("sources: idx images: record of dimensions %v is empty or larger than %d bytes", dims[1:], maxIDXRecordBytes)
			return false
		}
		x.d *= v
	}
	if err := checkDim(fmt.Sprintf("dimension of the records %v", dims[1:]), int64(x.d), maxDim(x.MaxDim), -1); err != nil {
		x.err = err
		return false
	}
	x.dense.d, x.dense.max = x.d, x.MaxDim
	if x.labels != nil {
		ltyp, lsize, ldims, err := idxHeader(x.labels)
		if err != nil {
			x.err = fmt.Errorf("sources: idx labels: %w", err)
			return false
		}
		if len(ldims) != 1 || ldims[0] != x.n {
			x.err = fmt.Errorf("sources: idx labels: dimensions %v, want [%d] to match the images", ldims, x.n)
			return false
		}
		if ltyp == 0x0D || ltyp == 0x0E {
			x.err = errors.New("sources: idx labels: floating-point labels; want an integer type")
			return false
		}
		x.ltyp, x.lsize = ltyp, lsize
	}
	x.raw = make([]byte, x.d*x.size)
	x.row = make([]float64, x.d)
	return true
}

// Next reads the next batch of up to BatchSize records.
func (x *IDX) Next() bool {
	if !x.start() || x.off >= int64(x.n) {
		return false
	}
	x.batch.reset(record.FormDense)
	if x.typ == 0x08 || x.typ == 0x09 || x.typ == 0x0D {
		// unsigned and signed bytes (the former scaled by 1/255) and
		// float32: no more than float32 holds
		x.batch.Precision = record.Float32
	}
	bs := int64(batchSize(x.BatchSize))
	for k := int64(0); k < bs && x.off < int64(x.n); k++ {
		off := x.off
		if _, err := io.ReadFull(x.images, x.raw); err != nil {
			x.err = fmt.Errorf("sources: idx images: truncated at record %d of %d: %w", off, x.n, err)
			break
		}
		var label string
		if x.labels != nil {
			var lb [4]byte
			if _, err := io.ReadFull(x.labels, lb[:x.lsize]); err != nil {
				x.err = fmt.Errorf("sources: idx labels: truncated at record %d of %d: %w", off, x.n, err)
				break
			}
			label = idxInt(x.ltyp, lb[:x.lsize])
		}
		x.off++
		x.decode()
		if err := x.dense.check(x.row); err != nil {
			x.batch.reject(off, "", "%v", err)
			continue
		}
		x.dense.add(x.row)
		x.batch.addMeta(off, strconv.FormatInt(off, 10), label, x.labels != nil)
	}
	if x.err != nil {
		x.off = int64(x.n) // stop
	}
	x.batch.Dense = x.dense.take()
	return x.batch.Records() > 0
}

func idxInt(typ byte, b []byte) string {
	switch typ {
	case 0x08:
		return strconv.Itoa(int(b[0]))
	case 0x09:
		return strconv.Itoa(int(int8(b[0])))
	case 0x0B:
		return strconv.Itoa(int(int16(binary.BigEndian.Uint16(b))))
	}
	return strconv.Itoa(int(int32(binary.BigEndian.Uint32(b))))
}

// decode converts x.raw into x.row.
func (x *IDX) decode() {
	r := x.raw
	switch x.typ {
	case 0x08:
		for j, v := range r {
			x.row[j] = float64(v) / 0xff
		}
	case 0x09:
		for j, v := range r {
			x.row[j] = float64(int8(v))
		}
	case 0x0B:
		for j := range x.row {
			x.row[j] = float64(int16(binary.BigEndian.Uint16(r[2*j:])))
		}
	case 0x0C:
		for j := range x.row {
			x.row[j] = float64(int32(binary.BigEndian.Uint32(r[4*j:])))
		}
	case 0x0D:
		for j := range x.row {
			x.row[j] = float64(math.Float32frombits(binary.BigEndian.Uint32(r[4*j:])))
		}
	case 0x0E:
		for j := range x.row {
			x.row[j] = math.Float64frombits(binary.BigEndian.Uint64(r[8*j:]))
		}
	}
}

// Batch returns the batch read by the last successful Next, valid until
// the next call to Next or Close.
func (x *IDX) Batch() *record.Batch { return &x.batch.Batch }

// Err returns the error that stopped Next, or nil at the end of the input.
func (x *IDX) Err() error { return x.err }

// Close closes the inputs if Open opened them.
func (x *IDX) Close() error {
	x.started, x.n = true, 0
	if x.closer != nil {
		c := x.closer
		x.closer = nil
		return c.Close()
	}
	return nil
}
