package sources

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/nmfstream/nmfstream/record"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/file"

	"github.com/nmfstream/nmfstream/model/sparse"
)

// Column names and the schema metadata key of the data contract
// (docs/DESIGN.md §5).
const (
	ColX       = "x"
	ColIndices = "indices"
	ColValues  = "values"
	ColText    = "text"
	ColImage   = "image"
	ColLabel   = "label"
	ColID      = "id"
	MetaDim    = "dim"
)

// Arrow reads records of the nmfstream data contract (docs/DESIGN.md §5) from an
// Arrow IPC stream, an Arrow IPC file or a Parquet file. Each row is one
// record with exactly one feature form:
//
//   - x: fixed_size_list, list or large_list of float32 or float64: dense
//     features (FormDense). With a list type the first accepted record fixes
//     the dimension. Batches of float32 lists have Precision record.Float32
//     (Parquet FLOAT columns read as such).
//   - indices (list of int32 or int64) and values (list of float32 or
//     float64), with the dimension in schema metadata key "dim": sparse
//     features (FormSparse). Indices may come in any order; they are sorted.
//   - text: utf8 or large_utf8 (FormText).
//   - image: binary or large_binary holding PNG, JPEG, GIF, BMP, PGM or PPM
//     bytes, decoded to grayscale in [0, 1] (0 black, 1 white), resized to
//     Width×Height by area averaging, row-major (FormDense, D = Width·Height).
//
// plus optional label and id columns (int8…int64, uint8…uint64, utf8 or
// large_utf8; nullable). A null or empty label means unlabeled. A sample
// without an id (no id column, or a null or empty id) gets its offset in
// decimal as its id when OffsetIDs is set, as CSV does (docs/DESIGN.md §5),
// and "" otherwise; rejects keep the id as read.
//
// A record whose features are null or empty is a late label if it has an id
// and a label, and a reject otherwise. Records with negative or non-finite
// values, null elements, a dimension other than the first record's (or
// dim's), out-of-range or duplicate sparse indices, an undecodable image or a
// blank document are rejected with the reason; reading goes on. A file that
// cannot be used at all (not Arrow or Parquet, truncated, no feature column,
// two feature forms, a column of the wrong type) makes Form fail, or Next
// stop with Err set.
//
// Set the exported fields before the first call to Next or Form.
type Arrow struct {
	// BatchSize is the number of records per batch. If zero, it defaults
	// to 256.
	BatchSize int
	// Width and Height give the size images are resized to. If both are
	// zero (the default), the first decodable image fixes them.
	Width, Height int
	// MaxImagePixels rejects images with more pixels before decoding them.
	// If zero, it defaults to 1<<24.
	MaxImagePixels int
	// MaxDim bounds the feature dimension D: a fixed_size_list width or a
	// sparse dim above it makes Form fail with a *LimitError, a list
	// record longer than it is rejected, and a first image that would fix
	// a larger Width·Height stops Next with a *LimitError. If zero, it
	// defaults to DefaultMaxDim.
	MaxDim int
	// MaxRecords, if positive, bounds the records read: past it Next
	// stops with a *LimitError. A Parquet row group or an IPC batch may
	// claim more rows than its bytes hold (run-length and dictionary
	// encodings expand a few bytes into any number of values), so the
	// records of a small input are not bounded by its size.
	MaxRecords int64
	// Allocator allocates the Arrow buffers. If nil, memory.DefaultAllocator
	// is used.
	Allocator memory.Allocator
	// MaxDecodedBytes bounds the bytes a compressed IPC record (or
	// dictionary) batch decodes to: the sum of its buffers' uncompressed
	// lengths, which each buffer states in its first 8 bytes, checked
	// before anything is decompressed. A batch over it stops Next with a
	// *LimitError giving both sizes. (An uncompressed batch is read in
	// full from the input, whose size bounds it.) NewArrowStream sets it to
	// StreamMaxDecodedBytes, for a stream from a peer such as a request
	// body, whose few kilobytes of compressed zeros could claim gigabytes;
	// NewArrowFile and Opener.Open set DefaultMaxDecodedBytes. Zero or less
	// means DefaultMaxDecodedBytes. It does not apply to Parquet.
	MaxDecodedBytes int64
	// OffsetIDs gives a sample without an id its 0-based offset in the
	// input, in decimal, as its id (docs/DESIGN.md §5). NewArrowFile,
	// NewParquet and Opener.Open set it: their offsets number a whole
	// input. NewArrowStream leaves it false, for a caller that reads
	// pieces of one stream as separate inputs whose offsets each start at
	// 0 (serve's request bodies), where such ids would collide.
	OffsetIDs bool

	open   func(memory.Allocator) (recordReader, *arrow.Schema, error)
	closer io.Closer // the input, when opened by Open
	kind   string    // what the input must be, for messages: "Arrow IPC stream", …

	started bool
	rr      recordReader
	lay     layout
	size    imageSize
	rec     arrow.Record // current record, owned by rr
	row     int64        // next row of rec
	off     int64        // offset of the next record in the input
	done    bool
	err     error

	batch   batch
	dense   denseRows
	scratch []float64
	pairs   []pair
	ind     []int
	val     []float64
}

var _ Source = (*Arrow)(nil)

// recordReader is what Arrow needs of ipc.Reader, ipc.FileReader and
// parquetRecords.
type recordReader interface {
	Next() bool
	Record() arrow.Record
	Err() error
	Release()
}

// Bounds of Arrow.MaxDecodedBytes.
const (
	// DefaultMaxDecodedBytes (2 GiB) is the bound of a whole input's
	// batches: that of an uncompressed IPC message's body
	// (maxIPCMessageBytes), so compression allows no more than raw bytes.
	DefaultMaxDecodedBytes = maxIPCMessageBytes
	// StreamMaxDecodedBytes (64 MiB) is NewArrowStream's, for a stream
	// from a peer: a service sets its own, in proportion to the bodies it
	// accepts.
	StreamMaxDecodedBytes = 64 << 20
)

// NewArrowStream returns a source reading the Arrow IPC stream r, with
// MaxDecodedBytes StreamMaxDecodedBytes and OffsetIDs false: the settings
// for a stream from a peer, one of several pieces of its input (Opener.Open
// sets those of a whole input for a stream it opens).
func NewArrowStream(r io.Reader) *Arrow {
	a := &Arrow{MaxDecodedBytes: StreamMaxDecodedBytes, kind: "Arrow IPC stream"}
	a.open = func(mem memory.Allocator) (recordReader, *arrow.Schema, error) {
		br, ok := r.(*bufio.Reader)
		if !ok {
			br = bufio.NewReader(r)
		}
		if head, _ := br.Peek(len(arrowMagic)); string(head) == arrowMagic {
			return nil, nil, errors.New("it begins with \"ARROW1\", as an Arrow IPC file (.arrow) does: standard input and request bodies must be Arrow IPC streams (.arrows); give the file by its path, or convert it to a stream")
		}
		return newGuardedReader(br, -1, mem, a.maxDecoded())
	}
	return a
}

// maxDecoded is the effective MaxDecodedBytes.
func (a *Arrow) maxDecoded() int64 {
	if a.MaxDecodedBytes <= 0 {
		return DefaultMaxDecodedBytes
	}
	return a.MaxDecodedBytes
}

// NewArrowFile returns a source reading the Arrow IPC file r.
//
// An Arrow IPC file is an IPC stream between a leading magic number and a
// trailing footer that indexes the record batches. NewArrowFile reads the
// batches in stream order through the same guarded reader as NewArrowStream
// and uses the footer only for its length, because arrow-go v15's
// ipc.FileReader trusts the offsets and sizes in the footer and allocates
// them up front (a corrupt file can ask for petabytes and kill the process;
// found by FuzzArrowFile).
func NewArrowFile(r ipc.ReadAtSeeker) *Arrow {
	a := &Arrow{OffsetIDs: true, MaxDecodedBytes: DefaultMaxDecodedBytes, kind: "Arrow IPC file"}
	a.open = func(mem memory.Allocator) (recordReader, *arrow.Schema, error) {
		body, footer, err := fileParts(r)
		if err != nil {
			return nil, nil, err
		}
		stream, size, err := withFooterSchema(body, footer)
		if err != nil {
			return nil, nil, err
		}
		return newGuardedReader(bufio.NewReader(stream), size, mem, a.maxDecoded())
	}
	return a
}

// newGuardedReader returns an ipc.Reader of the stream r, of size bytes
// (−1: unknown), that reads its messages through guardedMessages, with
// compressed batches decoding to at most maxDecoded bytes each.
func newGuardedReader(r io.Reader, size int64, mem memory.Allocator, maxDecoded int64) (recordReader, *arrow.Schema, error) {
	g := &guardedMessages{r: r, left: size, maxDecoded: maxDecoded}
	rd, err := ipc.NewReaderFromMessageReader(g, ipc.WithAllocator(mem))
	if err != nil {
		return nil, nil, err
	}
	g.schema = rd.Schema() // ipc.Reader reads dictionaries and batches lazily, in Next
	return rd, rd.Schema(), nil
}

// Arrow IPC file layout: magic, padding to 8 bytes, the stream, the footer,
// the footer length (int32, little-endian), magic.
const (
	arrowMagic      = "ARROW1"
	arrowFileHead   = 8     // magic and padding
	arrowFileTail   = 4 + 6 // footer length and magic
	arrowFileMinLen = arrowFileHead + arrowFileTail
)

// fileStream returns the IPC stream inside the Arrow IPC file r, the bytes
// between the leading magic number and the footer.
func fileStream(r ipc.ReadAtSeeker) (*io.SectionReader, error) {
	body, _, err := fileParts(r)
	return body, err
}

// fileParts returns the two parts of the Arrow IPC file r: the IPC stream
// between the leading magic number and the footer, and the footer (a
// flatbuffer Footer table).
func fileParts(r ipc.ReadAtSeeker) (body, footer *io.SectionReader, err error) {
	size, err := r.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, nil, err
	}
	if size < arrowFileMinLen {
		return nil, nil, fmt.Errorf("not an Arrow IPC file: %d bytes", size)
	}
	var head [6]byte // arrowMagic
	var tail [arrowFileTail]byte
	if _, err := r.ReadAt(head[:], 0); err != nil {
		return nil, nil, err
	}
	if _, err := r.ReadAt(tail[:], size-arrowFileTail); err != nil {
		return nil, nil, err
	}
	if string(head[:]) != arrowMagic || string(tail[4:]) != arrowMagic {
		return nil, nil, errors.New("not an Arrow IPC file: no ARROW1 magic number at both ends")
	}
	n := int64(int32(binary.LittleEndian.Uint32(tail[:4])))
	if n <= 0 || n > size-arrowFileMinLen {
		return nil, nil, fmt.Errorf("arrow IPC file footer length %d does not fit in %d bytes", n, size)
	}
	body = io.NewSectionReader(r, arrowFileHead, size-arrowFileMinLen-n)
	footer = io.NewSectionReader(r, size-arrowFileTail-n, n)
	return body, footer, nil
}

// NewParquet returns a source reading the Parquet file r with the file's
// column readers (parquetRecords): the contract's columns, as primitives
// or lists of primitives, row group by row group. The schema metadata key
// dim may be in the stored Arrow schema (ARROW:schema) or in the file's
// key-value metadata. A single allocation above 1 GiB (a page claiming that
// size) fails the read instead of exhausting memory.
func NewParquet(r parquet.ReaderAtSeeker) *Arrow {
	a := &Arrow{OffsetIDs: true, kind: "Parquet file"}
	a.open = func(mem memory.Allocator) (recordReader, *arrow.Schema, error) {
		mem = limitedAllocator{mem, maxIPCUncompressed}
		pf, err := file.NewParquetReader(r, file.WithReadProps(parquet.NewReaderProperties(mem)))
		if err != nil {
			return nil, nil, err
		}
		stored, err := checkParquetSchema(pf, mem)
		if err != nil {
			return nil, nil, err
		}
		return newParquetRecords(pf, r, stored, mem, batchSize(a.BatchSize), maxDim(a.MaxDim))
	}
	return a
}

func ptr[T any](v T) *T { return &v }

// limitedAllocator refuses, by panicking (which catch turns into an error),
// any single allocation above max bytes. The Parquet reader sizes page
// buffers from the uncompressed sizes claimed in page headers, up to 2 GiB
// per page of a file that may be a few bytes long; the limit keeps such a
// file from taking the process's memory (FuzzParquet).
type limitedAllocator struct {
	memory.Allocator
	max int
}

func (l limitedAllocator) Allocate(n int) []byte {
	l.check(n)
	return l.Allocator.Allocate(n)
}

func (l limitedAllocator) Reallocate(n int, b []byte) []byte {
	l.check(n)
	return l.Allocator.Reallocate(n, b)
}

func (l limitedAllocator) check(n int) {
	if n > l.max {
		panic(fmt.Sprintf("allocation of %d bytes exceeds the limit of %d", n, l.max))
	}
}

// layout is where the contract's columns are in a schema (-1 if absent).
type layout struct {
	form                              record.Form
	prec                              record.Precision // of column x's elements
	x, ind, val, text, img, label, id int
	dim                               int // sparse dim or fixed_size_list width; 0 if variable
}

func columnIndex(s *arrow.Schema, name string) (int, error) {
	idx := s.FieldIndices(name)
	switch len(idx) {
	case 0:
		return -1, nil
	case 1:
		return idx[0], nil
	}
	return -1, fmt.Errorf("sources: %d columns named %q", len(idx), name)
}

func listElem(dt arrow.DataType) (arrow.DataType, int, bool) {
	switch t := dt.(type) {
	case *arrow.FixedSizeListType:
		return t.Elem(), int(t.Len()), true
	case *arrow.ListType:
		return t.Elem(), 0, true
	case *arrow.LargeListType:
		return t.Elem(), 0, true
	}
	return nil, 0, false
}

func isFloat(dt arrow.DataType) bool {
	return dt.ID() == arrow.FLOAT32 || dt.ID() == arrow.FLOAT64
}

func isKey(dt arrow.DataType) bool {
	if d, ok := dt.(*arrow.DictionaryType); ok {
		dt = d.ValueType // dictionary-encoded, as the JavaScript Arrow library writes strings
	}
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32,
		arrow.UINT64, arrow.STRING, arrow.LARGE_STRING:
		return true
	}
	return false
}

// layoutOf checks a schema against the data contract, and its fixed
// dimension against maxDim.
func layoutOf(s *arrow.Schema, maxDim int) (layout, error) {
	var l layout
	var err error
	for _, c := range []struct {
		name string
		dst  *int
	}{{ColX, &l.x}, {ColIndices, &l.ind}, {ColValues, &l.val}, {ColText, &l.text},
		{ColImage, &l.img}, {ColLabel, &l.label}, {ColID, &l.id}} {
		if *c.dst, err = columnIndex(s, c.name); err != nil {
			return l, err
		}
	}
	var forms []string
	if l.x >= 0 {
		forms = append(forms, ColX)
		elem, n, ok := listElem(s.Field(l.x).Type)
		if !ok || !isFloat(elem) {
			return l, fmt.Errorf("sources: column x has type %s, want a (fixed-size) list of float32 or float64", s.Field(l.x).Type)
		}
		if _, fixed := s.Field(l.x).Type.(*arrow.FixedSizeListType); fixed && n <= 0 {
			return l, fmt.Errorf("sources: column x has fixed size %d", n)
		}
		if err := checkDim("dimension (fixed_size_list width of column x)", int64(n), maxDim, -1); err != nil {
			return l, err
		}
		l.form, l.dim = record.FormDense, n
		if elem.ID() == arrow.FLOAT32 {
			l.prec = record.Float32
		}
	}
	if l.ind >= 0 || l.val >= 0 {
		forms = append(forms, "indices/values")
		if l.ind < 0 || l.val < 0 {
			return l, errors.New("sources: sparse features need both an indices and a values column")
		}
		if elem, _, ok := listElem(s.Field(l.ind).Type); !ok || (elem.ID() != arrow.INT32 && elem.ID() != arrow.INT64) {
			return l, fmt.Errorf("sources: column indices has type %s, want a list of int32 or int64", s.Field(l.ind).Type)
		}
		if elem, _, ok := listElem(s.Field(l.val).Type); !ok || !isFloat(elem) {
			return l, fmt.Errorf("sources: column values has type %s, want a list of float32 or float64", s.Field(l.val).Type)
		}
		v, ok := s.Metadata().GetValue(MetaDim)
		if !ok {
			return l, errors.New("sources: sparse features need the dimension in schema metadata key \"dim\"")
		}
		d, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || d <= 0 {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange && !strings.HasPrefix(strings.TrimSpace(v), "-") {
				return l, &LimitError{Record: -1, What: fmt.Sprintf("sparse dimension (schema metadata dim = %q)", v), Value: -1, Limit: int64(maxDim), Raise: raiseMaxDim}
			}
			return l, fmt.Errorf("sources: schema metadata dim = %q, want a positive integer", v)
		}
		if err := checkDim("sparse dimension (schema metadata dim)", d, maxDim, -1); err != nil {
			return l, err
		}
		l.form, l.dim = record.FormSparse, int(d)
	}
	if l.text >= 0 {
		forms = append(forms, ColText)
		tt := s.Field(l.text).Type
		if d, ok := tt.(*arrow.DictionaryType); ok {
			tt = d.ValueType
		}
		if id := tt.ID(); id != arrow.STRING && id != arrow.LARGE_STRING {
			return l, fmt.Errorf("sources: column text has type %s, want utf8 or large_utf8 (or a dictionary of them)", s.Field(l.text).Type)
		}
		l.form = record.FormText
	}
	if l.img >= 0 {
		forms = append(forms, ColImage)
		if id := s.Field(l.img).Type.ID(); id != arrow.BINARY && id != arrow.LARGE_BINARY {
			return l, fmt.Errorf("sources: column image has type %s, want binary or large_binary", s.Field(l.img).Type)
		}
		l.form = record.FormDense
	}
	switch len(forms) {
	case 0:
		return l, errors.New("sources: no feature column (want x, indices/values, text or image)")
	case 1:
	default:
		return l, fmt.Errorf("sources: several feature forms (%s); a file must have exactly one", strings.Join(forms, ", "))
	}
	for _, c := range []struct {
		name string
		i    int
	}{{ColLabel, l.label}, {ColID, l.id}} {
		if c.i >= 0 && !isKey(s.Field(c.i).Type) {
			return l, fmt.Errorf("sources: column %s has type %s, want an integer or utf8 (or a dictionary of them)", c.name, s.Field(c.i).Type)
		}
	}
	return l, nil
}

// Form opens the input if needed and returns its feature form, or the
// reason the input cannot be used.
func (a *Arrow) Form() (record.Form, error) {
	if !a.start() {
		return 0, a.err
	}
	return a.lay.form, nil
}

func (a *Arrow) start() bool {
	if a.started {
		return a.err == nil
	}
	a.started = true
	if a.size, a.err = newImageSize(a.Width, a.Height, a.MaxImagePixels, a.MaxDim); a.err != nil {
		return false
	}
	mem := a.Allocator
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	mem = populating{mem} // the same bytes, fewer page faults
	var schema *arrow.Schema
	err := catch(func() error {
		rr, sc, err := a.open(mem)
		if err != nil {
			// A failed open's reader may be a typed nil (a nil
			// *parquetRecords): Close must not release it.
			return err
		}
		a.rr, schema = rr, sc
		return nil
	})
	var le *LimitError
	switch {
	case errors.As(err, &le):
		a.err = le // it says what is too large and what to do
		return false
	case err != nil:
		// Not the input it claims to be (or the guard let through a
		// corruption that arrow-go reports as a panic): say so first.
		a.err = fmt.Errorf("sources: not a valid %s (%w)", a.kind, err)
		return false
	}
	if a.lay, a.err = layoutOf(schema, maxDim(a.MaxDim)); a.err != nil {
		return false
	}
	a.dense.max = a.MaxDim
	if a.lay.form == record.FormDense && a.lay.img < 0 {
		a.dense.d = a.lay.dim
	}
	return true
}

// catch runs f and turns a panic into an error: arrow-go and the parquet
// reader may panic on malformed input, and a bad file must not crash us.
func catch(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed input: %v", r)
		}
	}()
	return f()
}

// Next reads the next batch of up to BatchSize records.
func (a *Arrow) Next() bool {
	if !a.start() || a.done {
		return false
	}
	bs := int64(batchSize(a.BatchSize))
	a.batch.reset(a.lay.form)
	a.batch.Precision = a.lay.prec
	var sp *sparse.CSR
	if a.lay.form == record.FormSparse {
		sp = sparse.Zeros(0, a.lay.dim)
	}
	n := int64(0)
	for n < bs {
		if a.rec == nil || a.row >= a.rec.NumRows() {
			if !a.nextRecord() {
				break
			}
			continue
		}
		k := min(bs-n, a.rec.NumRows()-a.row)
		if a.MaxRecords > 0 && a.off+k > a.MaxRecords {
			a.err = &LimitError{Record: a.off, What: "records", Value: a.off + k, Limit: a.MaxRecords, Raise: "split the input"}
			a.done = true
			break
		}
		if err := catch(func() error { return a.rows(k, sp) }); err != nil {
			a.err = fmt.Errorf("sources: record %d: %w", a.off, err)
			if le, ok := err.(*LimitError); ok {
				a.err = le
			}
			a.done = true
			break
		}
		n += k
	}
	if a.batch.Records() == 0 {
		return false
	}
	switch a.lay.form {
	case record.FormDense:
		a.batch.Dense = a.dense.take()
	case record.FormSparse:
		if a.batch.Len() > 0 {
			a.batch.Sparse = sp
		}
	}
	return true
}

func (a *Arrow) nextRecord() bool {
	a.rec = nil
	var ok bool
	err := catch(func() error {
		ok = a.rr.Next()
		if !ok {
			return a.rr.Err()
		}
		a.rec = a.rr.Record()
		return checkRecord(a.rec, a.lay)
	})
	var le *LimitError
	switch {
	case errors.As(err, &le):
		le.Record = a.off // the batch's first record
		a.err, a.rec = le, nil
	case err != nil:
		a.err = fmt.Errorf("sources: cannot read arrow input after record %d: %w", a.off, err)
		a.rec = nil
	}
	if a.rec == nil {
		a.done = true
		return false
	}
	a.row = 0
	return ok
}

// checkRecord verifies that the record's columns are as long as it claims
// and have the schema's types.
func checkRecord(rec arrow.Record, l layout) error {
	if rec.NumRows() < 0 {
		return errors.New("negative row count")
	}
	for _, i := range []int{l.x, l.ind, l.val, l.text, l.img, l.label, l.id} {
		if i < 0 {
			continue
		}
		if i >= int(rec.NumCols()) {
			return fmt.Errorf("record has %d columns, want more than %d", rec.NumCols(), i)
		}
		col := rec.Column(i)
		if int64(col.Len()) < rec.NumRows() {
			return fmt.Errorf("column %q has %d rows, want %d", rec.ColumnName(i), col.Len(), rec.NumRows())
		}
		// A fixed_size_list has no offsets buffer to run out of, so check
		// that its values cover its rows; else a corrupt length would make
		// us reject rows one by one for ever.
		if fl, ok := col.(*array.FixedSizeList); ok && fl.Len() > 0 {
			if _, hi := fl.ValueOffsets(fl.Len() - 1); hi > int64(fl.ListValues().Len()) {
				return fmt.Errorf("column %q: %d list values for %d rows", rec.ColumnName(i), fl.ListValues().Len(), fl.Len())
			}
		}
	}
	return nil
}

// rows turns the next k rows of the current record into batch entries.
func (a *Arrow) rows(k int64, sp *sparse.CSR) error {
	rec, l, b := a.rec, a.lay, &a.batch
	for ; k > 0; k-- {
		i := int(a.row)
		off := a.off
		a.row++
		a.off++
		var id, label string
		var labeled bool
		if l.id >= 0 {
			id, _ = keyAt(rec.Column(l.id), i)
		}
		if l.label >= 0 {
			label, labeled = keyAt(rec.Column(l.label), i)
		}
		var empty bool
		var err error
		switch {
		case l.x >= 0:
			var row []float64
			row, empty, err = a.floats(rec.Column(l.x), i)
			if err == nil && !empty {
				if err = a.dense.check(row); err == nil {
					a.dense.add(row)
				}
			}
		case l.ind >= 0:
			empty, err = a.sparseRow(rec.Column(l.ind), rec.Column(l.val), i, sp)
		case l.text >= 0:
			var doc string
			doc, empty = textAt(rec.Column(l.text), i)
			if !empty && strings.TrimSpace(doc) == "" {
				err = record.NoFeatures("empty document")
			} else if !empty {
				b.Text = append(b.Text, strings.Clone(doc))
			}
		case l.img >= 0:
			var data []byte
			data, empty = bytesAt(rec.Column(l.img), i)
			if !empty {
				if a.scratch, err = a.size.decode(a.scratch[:0], data); err == nil {
					if err = a.dense.check(a.scratch); err == nil {
						a.dense.add(a.scratch)
					}
				} else if le, ok := err.(*LimitError); ok {
					le.Record = off // every image would be refused alike: stop
					return le
				}
			}
		}
		sampleID := id
		if id == "" && a.OffsetIDs {
			sampleID = strconv.FormatInt(off, 10)
		}
		switch {
		case errors.Is(err, record.ErrNoFeatures):
			b.rejectErr(off, sampleID, err)
		case err != nil:
			b.rejectErr(off, id, err)
		case empty && id != "" && labeled:
			b.LateLabels = append(b.LateLabels, record.LateLabel{Offset: off, ID: id, Label: label})
		case empty:
			b.rejectNoFeatures(off, sampleID, "no features (a record without features must carry an id and a label)")
		default:
			b.addMeta(off, sampleID, label, labeled)
		}
	}
	return nil
}

// keyAt formats a label or id cell; ok is false for null or "".
func keyAt(arr arrow.Array, i int) (string, bool) {
	if arr.IsNull(i) {
		return "", false
	}
	var s string
	switch c := arr.(type) {
	case *array.Dictionary:
		j := c.GetValueIndex(i)
		if j < 0 || j >= c.Dictionary().Len() {
			return "", false // a corrupt index: no key
		}
		return keyAt(c.Dictionary(), j)
	case *array.String:
		s = strings.Clone(c.Value(i))
	case *array.LargeString:
		s = strings.Clone(c.Value(i))
	case *array.Int64:
		s = strconv.FormatInt(c.Value(i), 10)
	case *array.Int32:
		s = strconv.FormatInt(int64(c.Value(i)), 10)
	case *array.Int16:
		s = strconv.FormatInt(int64(c.Value(i)), 10)
	case *array.Int8:
		s = strconv.FormatInt(int64(c.Value(i)), 10)
	case *array.Uint64:
		s = strconv.FormatUint(c.Value(i), 10)
	case *array.Uint32:
		s = strconv.FormatUint(uint64(c.Value(i)), 10)
	case *array.Uint16:
		s = strconv.FormatUint(uint64(c.Value(i)), 10)
	case *array.Uint8:
		s = strconv.FormatUint(uint64(c.Value(i)), 10)
	default:
		panic(fmt.Sprintf("unexpected key array %T", arr))
	}
	return s, s != ""
}

// textAt returns the document of row i, which is only valid while the
// record is; empty reports a null or "" cell.
func textAt(arr arrow.Array, i int) (string, bool) {
	if arr.IsNull(i) {
		return "", true
	}
	var s string
	switch c := arr.(type) {
	case *array.Dictionary:
		j := c.GetValueIndex(i)
		if j < 0 || j >= c.Dictionary().Len() {
			return "", true // a corrupt index: no document
		}
		return textAt(c.Dictionary(), j)
	case *array.String:
		s = c.Value(i)
	case *array.LargeString:
		s = c.Value(i)
	}
	return s, s == ""
}

func bytesAt(arr arrow.Array, i int) ([]byte, bool) {
	if arr.IsNull(i) {
		return nil, true
	}
	var s []byte
	switch c := arr.(type) {
	case *array.Binary:
		s = c.Value(i)
	case *array.LargeBinary:
		s = c.Value(i)
	}
	return s, len(s) == 0
}

// floats copies list cell i of arr into a.scratch as float64.
func (a *Arrow) floats(arr arrow.Array, i int) (row []float64, empty bool, err error) {
	if arr.IsNull(i) {
		return nil, true, nil
	}
	list := arr.(array.ListLike)
	lo, hi := list.ValueOffsets(i)
	if lo == hi {
		return nil, true, nil
	}
	if lo < 0 || hi < lo || hi > int64(list.ListValues().Len()) {
		return nil, false, fmt.Errorf("list offsets [%d, %d) out of range", lo, hi)
	}
	row = a.scratch[:0]
	vals := list.ListValues()
	if vals.NullN() > 0 {
		for p := lo; p < hi; p++ {
			if vals.IsNull(int(p)) {
				return nil, false, fmt.Errorf("null value at feature %d", p-lo)
			}
		}
	}
	switch v := vals.(type) {
	case *array.Float64:
		row = append(row, v.Float64Values()[lo:hi]...)
	case *array.Float32:
		for _, x := range v.Float32Values()[lo:hi] {
			row = append(row, float64(x))
		}
	default:
		return nil, false, fmt.Errorf("unexpected list values %T", vals)
	}
	a.scratch = row
	return row, false, nil
}

type pair struct {
	j int
	v float64
}

// sparseRow appends cell i of the indices and values columns to sp.
func (a *Arrow) sparseRow(ind, val arrow.Array, i int, sp *sparse.CSR) (empty bool, err error) {
	ilist := ind.(array.ListLike)
	var ilo, ihi int64
	if !ind.IsNull(i) {
		ilo, ihi = ilist.ValueOffsets(i)
	}
	vals, vempty, err := a.floats(val, i)
	if err != nil {
		return false, err
	}
	if ihi == ilo && vempty {
		return true, nil
	}
	if ilo < 0 || ihi < ilo || ihi > int64(ilist.ListValues().Len()) {
		return false, fmt.Errorf("list offsets [%d, %d) out of range", ilo, ihi)
	}
	if int64(len(vals)) != ihi-ilo {
		return false, fmt.Errorf("%d indices but %d values", ihi-ilo, len(vals))
	}
	if err := checkValues(vals); err != nil {
		return false, err
	}
	iv := ilist.ListValues()
	for p := ilo; p < ihi; p++ {
		if iv.IsNull(int(p)) {
			return false, fmt.Errorf("null index at position %d", p-ilo)
		}
	}
	a.pairs = a.pairs[:0]
	for p := ilo; p < ihi; p++ {
		var j int64
		switch c := iv.(type) {
		case *array.Int32:
			j = int64(c.Value(int(p)))
		case *array.Int64:
			j = c.Value(int(p))
		}
		if j < 0 || j >= int64(a.lay.dim) {
			return false, fmt.Errorf("index %d out of range [0, %d)", j, a.lay.dim)
		}
		a.pairs = append(a.pairs, pair{int(j), vals[p-ilo]})
	}
	slices.SortFunc(a.pairs, func(x, y pair) int { return x.j - y.j })
	a.ind, a.val = a.ind[:0], a.val[:0]
	for q, pr := range a.pairs {
		if q > 0 && a.pairs[q-1].j == pr.j {
			return false, fmt.Errorf("duplicate index %d", pr.j)
		}
		a.ind = append(a.ind, pr.j)
		a.val = append(a.val, pr.v)
	}
	sp.AppendRow(a.ind, a.val)
	return false, nil
}

// Batch returns the batch read by the last successful Next, valid until
// the next call to Next or Close.
func (a *Arrow) Batch() *record.Batch { return &a.batch.Batch }

// Err returns the error that stopped Next, or nil at the end of the input.
func (a *Arrow) Err() error { return a.err }

// Close releases the Arrow buffers and closes the input if Open opened it.
func (a *Arrow) Close() error {
	a.rec = nil
	if a.rr != nil {
		a.rr.Release()
		a.rr = nil
	}
	a.done = true
	a.started = true
	if a.closer != nil {
		c := a.closer
		a.closer = nil
		return c.Close()
	}
	return nil
}
