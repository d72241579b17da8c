package sources

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
	flatbuffers "github.com/google/flatbuffers/go"
)

// Limits of guardedMessages. arrow-go v15 trusts the sizes and counts in IPC
// metadata and allocates them up front (a corrupt stream can ask for
// hundreds of gigabytes, which kills the process), so the stream reader
// checks them first. Found by FuzzArrowStream.
const (
	maxIPCFields       = 1 << 16 // fields (with nested children) in a schema
	maxIPCDepth        = 64      // nesting depth of a schema
	maxIPCUncompressed = 1 << 30 // claimed size of one decompressed buffer
)

// guardedMessages is an ipc.MessageReader like ipc.NewMessageReader's, that
// reads metadata and bodies only as far as the data goes (so a bogus length
// fails at the end of the input instead of allocating it) and rejects
// metadata whose counts and sizes do not fit in it.
type guardedMessages struct {
	r io.Reader
	// left is the number of bytes of r not yet read, when known (an IPC
	// file's stream), or −1: a length within it is allocated at once, and
	// one beyond it is an error before anything is read.
	left int64
	msg  *ipc.Message
	// schema is the stream's schema, set by the caller once ipc.Reader has
	// read it, so that batches can be checked against it. dictIDs lists the
	// dictionary ids of the schema's dictionary-encoded fields in
	// depth-first order, from the schema message.
	schema  *arrow.Schema
	dictIDs []int64
	// msgs counts the messages read so far: the schema comes first, then
	// one dictionary batch for each of dictIDs.
	msgs int
	// maxDecoded, if positive, bounds the decoded bytes of a compressed
	// message (Arrow.MaxDecodedBytes), checked from the uncompressed
	// lengths its buffers claim before anything is decompressed.
	maxDecoded int64
}

var _ ipc.MessageReader = (*guardedMessages)(nil)

func (g *guardedMessages) Retain() {}

func (g *guardedMessages) Release() {
	if g.msg != nil {
		g.msg.Release()
		g.msg = nil
	}
}

// readN reads exactly n bytes. It trusts a claimed length up to 1 MiB for
// the first allocation and doubles the buffer as data arrives, so that a
// bogus length fails at the end of the input having allocated at most
// about twice the input (a 2 GiB claim in a Parquet file's ARROW:schema
// allocated 64 MiB with a first allocation of 64 MiB).
func readN(r io.Reader, n int64) ([]byte, error) {
	buf := make([]byte, 0, min(n, 1<<20))
	for int64(len(buf)) < n {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, int(min(n-int64(len(buf)), int64(cap(buf)))))
		}
		m := int(min(n-int64(len(buf)), int64(cap(buf)-len(buf))))
		got, err := io.ReadFull(r, buf[len(buf):len(buf)+m])
		buf = buf[:len(buf)+got]
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
	return buf, nil
}

// read reads exactly n bytes of the stream: at once when the stream's
// length is known to hold them, else through readN.
func (g *guardedMessages) read(n int64) ([]byte, error) {
	if g.left < 0 {
		return readN(g.r, n)
	}
	if n > g.left {
		return nil, fmt.Errorf("%d bytes claimed, %d left in the input: %w", n, g.left, io.ErrUnexpectedEOF)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(g.r, buf); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	g.left -= n
	return buf, nil
}

// Message implements ipc.MessageReader.
func (g *guardedMessages) Message() (*ipc.Message, error) {
	var b [4]byte
	if _, err := io.ReadFull(g.r, b[:]); err != nil {
		if err == io.EOF {
			return nil, io.EOF
		}
		return nil, fmt.Errorf("reading continuation marker: %w", err)
	}
	if g.left >= 0 {
		g.left -= 4
	}
	n := int32(binary.LittleEndian.Uint32(b[:]))
	switch uint32(n) {
	case 0:
		return nil, io.EOF
	case 0xFFFFFFFF:
		if _, err := io.ReadFull(g.r, b[:]); err != nil {
			return nil, fmt.Errorf("reading message length: %w", err)
		}
		if g.left >= 0 {
			g.left -= 4
		}
		n = int32(binary.LittleEndian.Uint32(b[:]))
		if n == 0 {
			return nil, io.EOF
		}
	}
	if n < 8 {
		return nil, fmt.Errorf("bad message metadata length %d", n)
	}
	meta, err := g.read(int64(n))
	if err != nil {
		return nil, fmt.Errorf("reading message metadata: %w", err)
	}
	var typ byte
	var bodyLen int64
	var header flatbuffers.Table
	var version int16
	if err := catch(func() error {
		var err error
		typ, bodyLen, header, version, err = messageHeader(meta)
		return err
	}); err != nil {
		return nil, fmt.Errorf("bad message metadata: %w", err)
	}
	if err := g.checkOrder(typ); err != nil {
		return nil, err
	}
	if bodyLen > maxIPCMessageBytes {
		return nil, &LimitError{Record: -1, What: "body size of an Arrow IPC message", Value: bodyLen, Limit: maxIPCMessageBytes,
			Raise: "split the input into smaller record batches"}
	}
	body, err := g.read(bodyLen)
	if err != nil {
		return nil, fmt.Errorf("reading message body: %w", err)
	}
	var dec decodedSize
	if err := catch(func() (err error) {
		dec, err = g.checkHeader(typ, header, version, body)
		return err
	}); err != nil {
		return nil, fmt.Errorf("bad message metadata: %w", err)
	}
	if err := g.checkDecoded(typ, dec, bodyLen); err != nil {
		return nil, err
	}
	g.msgs++
	g.Release()
	mb, bb := memory.NewBufferBytes(meta), memory.NewBufferBytes(body)
	g.msg = ipc.NewMessage(mb, bb)
	mb.Release()
	bb.Release()
	return g.msg, nil
}

// checkOrder checks that a message of type typ may come next: one schema,
// first, then the schema's dictionaries before any record batch. arrow-go
// v15's ipc.Reader reads the messages after the schema as dictionary
// batches whatever their type (reader.go, getInitialDicts: it notes the
// wrong type, then decodes the header as a dictionary batch anyway), and
// sizes read from a schema's table taken for one can ask for terabytes
// (found by FuzzArrowStream).
func (g *guardedMessages) checkOrder(typ byte) error {
	switch {
	case typ == headerSchema && g.msgs > 0:
		return fmt.Errorf("message %d is a second schema", g.msgs+1)
	case g.msgs > 0 && g.msgs <= len(g.dictIDs) && typ != headerDictionaryBatch:
		return fmt.Errorf("message %d has type %d where the schema's %d dictionaries come first", g.msgs+1, typ, len(g.dictIDs))
	}
	return nil
}

// Message header types and table slots of Arrow's Message.fbs and Schema.fbs.
const (
	headerSchema          = 1
	headerDictionaryBatch = 2
	headerRecordBatch     = 3
)

// slot returns the vtable offset of field i of a table.
func slot(i int) flatbuffers.VOffsetT { return flatbuffers.VOffsetT(4 + 2*i) }

func messageHeader(buf []byte) (typ byte, bodyLen int64, header flatbuffers.Table, version int16, err error) {
	root := flatbuffers.Table{Bytes: buf, Pos: flatbuffers.GetUOffsetT(buf)}
	checkTable(&root)
	if o := root.Offset(slot(0)); o != 0 {
		version = root.GetInt16(flatbuffers.UOffsetT(o) + root.Pos)
	}
	if o := root.Offset(slot(1)); o != 0 {
		typ = root.GetByte(flatbuffers.UOffsetT(o) + root.Pos)
	}
	if o := root.Offset(slot(3)); o != 0 {
		bodyLen = root.GetInt64(flatbuffers.UOffsetT(o) + root.Pos)
	}
	if bodyLen < 0 {
		return 0, 0, header, 0, fmt.Errorf("negative body length %d", bodyLen)
	}
	o := root.Offset(slot(2))
	if o == 0 {
		return 0, 0, header, 0, errors.New("message without header")
	}
	root.Union(&header, flatbuffers.UOffsetT(o))
	checkTable(&header)
	return typ, bodyLen, header, version, nil
}

// checkDecoded refuses a compressed record or dictionary batch of bodyLen
// bytes whose buffers would decode to more than g.maxDecoded bytes: a few
// kilobytes of compressed zeros can claim gigabytes, which arrow-go would
// allocate as it decompresses.
func (g *guardedMessages) checkDecoded(typ byte, dec decodedSize, bodyLen int64) error {
	if g.maxDecoded <= 0 || !dec.compressed || dec.bytes <= g.maxDecoded {
		return nil
	}
	kind := "record batch"
	if typ == headerDictionaryBatch {
		kind = "dictionary batch"
	}
	return &LimitError{Record: -1,
		What:  fmt.Sprintf("decoded size in bytes of a compressed Arrow IPC %s (%d bytes in the input)", kind, bodyLen),
		Value: dec.bytes, Limit: g.maxDecoded,
		Raise: "write smaller record batches (or no compression), or raise Arrow.MaxDecodedBytes"}
}

// decodedSize is what a batch message's buffers take once decompressed.
type decodedSize struct {
	bytes      int64 // the buffers' lengths, decompressed
	compressed bool  // the batch's buffers are compressed
}

func (g *guardedMessages) checkHeader(typ byte, header flatbuffers.Table, version int16, body []byte) (decodedSize, error) {
	switch typ {
	case headerSchema:
		n := 0
		g.dictIDs = g.dictIDs[:0]
		return decodedSize{}, checkFields(&header, slot(1), 0, &n, &g.dictIDs)
	case headerDictionaryBatch:
		o := header.Offset(slot(1))
		if o == 0 {
			return decodedSize{}, errors.New("dictionary batch without data")
		}
		var id int64
		if o := header.Offset(slot(0)); o != 0 {
			id = header.GetInt64(flatbuffers.UOffsetT(o) + header.Pos)
		}
		dt, err := g.dictionaryType(id)
		if err != nil {
			return decodedSize{}, err
		}
		var data flatbuffers.Table
		data.Bytes, data.Pos = header.Bytes, header.Indirect(flatbuffers.UOffsetT(o)+header.Pos)
		checkTable(&data)
		return checkBatch(&data, body, []arrow.DataType{dt}, version)
	case headerRecordBatch:
		if g.schema == nil {
			return decodedSize{}, errors.New("record batch before the schema")
		}
		types := make([]arrow.DataType, g.schema.NumFields())
		for i, f := range g.schema.Fields() {
			types[i] = f.Type
		}
		return checkBatch(&header, body, types, version)
	}
	return decodedSize{}, fmt.Errorf("unsupported message type %d", typ)
}

// dictionaryType returns the value type of dictionary id: the dictionary
// types of the schema, in depth-first order, pair with g.dictIDs.
func (g *guardedMessages) dictionaryType(id int64) (arrow.DataType, error) {
	if g.schema == nil {
		return nil, errors.New("dictionary batch before the schema")
	}
	var dicts []*arrow.DictionaryType
	var walk func(dt arrow.DataType)
	walk = func(dt arrow.DataType) {
		if d, ok := dt.(*arrow.DictionaryType); ok {
			dicts = append(dicts, d)
			dt = d.ValueType
		}
		if n, ok := dt.(arrow.NestedType); ok {
			for _, f := range n.Fields() {
				walk(f.Type)
			}
		}
	}
	for _, f := range g.schema.Fields() {
		walk(f.Type)
	}
	if len(dicts) != len(g.dictIDs) {
		return nil, fmt.Errorf("schema has %d dictionaries, its metadata %d", len(dicts), len(g.dictIDs))
	}
	for i, d := range g.dictIDs {
		if d == id {
			return dicts[i].ValueType, nil
		}
	}
	return nil, fmt.Errorf("dictionary batch for unknown id %d", id)
}

// checkTable panics (caught by the caller) if t's position is outside its
// buffer.
func checkTable(t *flatbuffers.Table) {
	if int(t.Pos)+4 > len(t.Bytes) {
		panic("table out of range")
	}
}

// vector returns the start and length of the vector in field s of t, after
// checking that n elements of the given size fit in the buffer.
func vector(t *flatbuffers.Table, s flatbuffers.VOffsetT, size int) (start flatbuffers.UOffsetT, n int, err error) {
	o := t.Offset(s)
	if o == 0 {
		return 0, 0, nil
	}
	start = t.Vector(flatbuffers.UOffsetT(o))
	n = t.VectorLen(flatbuffers.UOffsetT(o))
	if n < 0 || int64(start)+int64(n)*int64(size) > int64(len(t.Bytes)) {
		return 0, 0, fmt.Errorf("vector of %d elements does not fit in %d bytes", n, len(t.Bytes))
	}
	return start, n, nil
}

// checkFields checks the Field vector in slot s of t (Schema.fields or
// Field.children), recursively, and the custom metadata of each field.
func checkFields(t *flatbuffers.Table, s flatbuffers.VOffsetT, depth int, count *int, dictIDs *[]int64) error {
	if depth > maxIPCDepth {
		return fmt.Errorf("schema nested deeper than %d", maxIPCDepth)
	}
	if depth == 0 {
		if _, _, err := vector(t, slot(2), 4); err != nil { // Schema.custom_metadata
			return err
		}
	}
	start, n, err := vector(t, s, 4)
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		if *count++; *count > maxIPCFields {
			return fmt.Errorf("schema has more than %d fields", maxIPCFields)
		}
		p := start + flatbuffers.UOffsetT(4*i)
		f := flatbuffers.Table{Bytes: t.Bytes, Pos: p + flatbuffers.GetUOffsetT(t.Bytes[p:])}
		checkTable(&f)
		if _, _, err := vector(&f, slot(6), 4); err != nil { // Field.custom_metadata
			return err
		}
		if o := f.Offset(slot(4)); o != 0 { // Field.dictionary: DictionaryEncoding
			d := flatbuffers.Table{Bytes: f.Bytes, Pos: f.Indirect(flatbuffers.UOffsetT(o) + f.Pos)}
			checkTable(&d)
			var id int64
			if o := d.Offset(slot(0)); o != 0 {
				id = d.GetInt64(flatbuffers.UOffsetT(o) + d.Pos)
			}
			*dictIDs = append(*dictIDs, id)
		}
		if err := checkFields(&f, slot(5), depth+1, count, dictIDs); err != nil { // Field.children
			return err
		}
	}
	return nil
}

// checkBatch checks a RecordBatch table whose columns have the given types:
// it has a field node and a buffer entry for each that arrow-go will read
// (its generated accessors do not check vector bounds, so a short vector
// would make it read sizes from unrelated bytes; found by FuzzArrowFile),
// its buffers lie inside the body, and compressed buffers claim a bounded
// decompressed size. It returns the size the buffers decode to.
func checkBatch(t *flatbuffers.Table, body []byte, types []arrow.DataType, version int16) (decodedSize, error) {
	_, nodes, err := vector(t, slot(1), 16) // nodes: FieldNode structs
	if err != nil {
		return decodedSize{}, err
	}
	vstart, nvar, err := vector(t, slot(4), 8) // variadicBufferCounts
	if err != nil {
		return decodedSize{}, err
	}
	start, n, err := vector(t, slot(2), 16) // buffers: Buffer{offset, length int64}
	if err != nil {
		return decodedSize{}, err
	}
	c := ipcCounts{v5: version >= v5, variadic: func(k int) (int64, error) {
		if k >= nvar {
			return 0, fmt.Errorf("%d variadic buffer counts, want more", nvar)
		}
		v := flatbuffers.GetInt64(t.Bytes[vstart+flatbuffers.UOffsetT(8*k):])
		if v < 0 || v > int64(n) {
			return 0, fmt.Errorf("variadic buffer count %d", v)
		}
		return v, nil
	}}
	for _, dt := range types {
		if err := c.add(dt, 0); err != nil {
			return decodedSize{}, err
		}
	}
	if c.nodes > nodes || c.buffers > n {
		return decodedSize{}, fmt.Errorf("%d field nodes and %d buffers, the schema needs %d and %d", nodes, n, c.nodes, c.buffers)
	}
	dec := decodedSize{compressed: t.Offset(slot(3)) != 0}
	for i := 0; i < n; i++ {
		p := start + flatbuffers.UOffsetT(16*i)
		off := flatbuffers.GetInt64(t.Bytes[p:])
		length := flatbuffers.GetInt64(t.Bytes[p+8:])
		if off < 0 || length < 0 || off > int64(len(body)) || length > int64(len(body))-off {
			return decodedSize{}, fmt.Errorf("buffer %d [%d, +%d) outside the body of %d bytes", i, off, length, len(body))
		}
		u := length
		if dec.compressed && length >= 8 {
			// A compressed buffer starts with its uncompressed length,
			// −1 for one stored uncompressed after those 8 bytes.
			if u = int64(binary.LittleEndian.Uint64(body[off:])); u > maxIPCUncompressed || u < -1 {
				return decodedSize{}, fmt.Errorf("buffer %d claims %d decompressed bytes", i, u)
			} else if u == -1 {
				u = length - 8
			}
		}
		dec.bytes += u // at most n·2^30 < 2^62: n·16 bytes of metadata fit in an int32 length
	}
	return dec, nil
}

// v5 is flatbuf.MetadataVersionV5, from which on union and run-end encoded
// arrays have no validity buffer.
const v5 = 4

// ipcCounts counts the field nodes and buffers that arrow-go v15's IPC
// loader (arrow/ipc/file_reader.go, loadArray) reads for a column type.
type ipcCounts struct {
	v5                     bool
	nodes, buffers, nviews int
	variadic               func(k int) (int64, error)
}

func (c *ipcCounts) add(dt arrow.DataType, depth int) error {
	if depth > maxIPCDepth {
		return fmt.Errorf("type nested deeper than %d", maxIPCDepth)
	}
	validity := 1
	switch dt.ID() {
	case arrow.NULL:
		c.nodes++
		return nil
	case arrow.SPARSE_UNION, arrow.DENSE_UNION, arrow.RUN_END_ENCODED:
		if c.v5 {
			validity = 0
		}
	}
	switch dt := dt.(type) {
	case *arrow.DictionaryType:
		c.nodes, c.buffers = c.nodes+1, c.buffers+2 // the indices
	case arrow.ExtensionType:
		return c.add(dt.StorageType(), depth+1)
	case *arrow.BinaryType, *arrow.StringType, *arrow.LargeStringType, *arrow.LargeBinaryType:
		c.nodes, c.buffers = c.nodes+1, c.buffers+3
	case arrow.BinaryViewDataType:
		v, err := c.variadic(c.nviews)
		if err != nil {
			return err
		}
		c.nviews++
		c.nodes, c.buffers = c.nodes+1, c.buffers+2+int(v)
	case *arrow.FixedSizeBinaryType:
		c.nodes, c.buffers = c.nodes+1, c.buffers+2
	case *arrow.ListType, *arrow.LargeListType, *arrow.MapType:
		c.nodes, c.buffers = c.nodes+1, c.buffers+2
		return c.add(dt.(arrow.ListLikeType).Elem(), depth+1)
	case *arrow.ListViewType, *arrow.LargeListViewType:
		c.nodes, c.buffers = c.nodes+1, c.buffers+3
		return c.add(dt.(arrow.ListLikeType).Elem(), depth+1)
	case *arrow.FixedSizeListType:
		c.nodes, c.buffers = c.nodes+1, c.buffers+1
		return c.add(dt.Elem(), depth+1)
	case *arrow.StructType:
		c.nodes, c.buffers = c.nodes+1, c.buffers+1
		for _, f := range dt.Fields() {
			if err := c.add(f.Type, depth+1); err != nil {
				return err
			}
		}
	case *arrow.RunEndEncodedType:
		c.nodes, c.buffers = c.nodes+1, c.buffers+validity
		if err := c.add(dt.RunEnds(), depth+1); err != nil {
			return err
		}
		return c.add(dt.Encoded(), depth+1)
	case arrow.UnionType:
		c.nodes, c.buffers = c.nodes+1, c.buffers+validity+1
		if dt.Mode() == arrow.DenseMode {
			c.buffers++
		}
		for _, f := range dt.Fields() {
			if err := c.add(f.Type, depth+1); err != nil {
				return err
			}
		}
	case arrow.FixedWidthDataType: // booleans, numbers, temporal types, decimals
		c.nodes, c.buffers = c.nodes+1, c.buffers+2
	default:
		return fmt.Errorf("unsupported column type %v", dt)
	}
	return nil
}
