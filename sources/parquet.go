package sources

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/file"
	"github.com/apache/arrow/go/v15/parquet/metadata"
	"github.com/apache/arrow/go/v15/parquet/schema"
)

// parquetRecords reads the data contract's columns of a Parquet file into
// Arrow records of up to batch rows, row group by row group, with the
// file's column readers: each column is a primitive (label, id, text,
// image) or a list of primitives (x, indices, values), in the three-level
// LIST layout that Arrow writers use, the legacy two-level one, or a bare
// repeated field. Other columns are not read.
//
// The Arrow type of each column follows its Parquet type; where the file
// stores an Arrow schema (ARROW:schema, checked by checkParquetSchema) and
// it says x is a fixed_size_list, x is read as one (a null cell is a late
// label's).
//
// A list row longer than maxDim elements stops the read with a
// *LimitError before it is stored; the sizes of the buffers the column
// readers allocate are bounded by the allocator (limitedAllocator); a data
// page that holds fewer levels or values than its header claims stops the
// read with an error naming the row group, column and page (checkedPages:
// arrow-go v15 would loop on it forever).
type parquetRecords struct {
	pf     *file.Reader
	r      io.ReaderAt // pf's file, of size bytes
	size   int64
	schema *arrow.Schema
	cols   []parquetColumn
	mem    memory.Allocator
	batch  int64
	maxDim int

	rg   int   // next row group
	left int64 // rows of the current row group not yet read
	off  int64 // rows read before the current batch
	rec  arrow.Record
	err  error
}

// parquetColumn reads one top-level column of a row group into an Arrow
// builder.
type parquetColumn interface {
	// base returns what the column's levels mean.
	base() *pqBase
	field() arrow.Field
	// start begins the row group's column chunk.
	start(rd file.ColumnChunkReader) error
	// appendRows appends the next n rows to b, a builder of field().Type.
	appendRows(b array.Builder, n int64, off int64) error
}

// newParquetRecords returns a reader of the contract's columns of pf, and
// their Arrow schema (metadata from the stored Arrow schema, or the file's
// key-value metadata for dim).
func newParquetRecords(pf *file.Reader, r parquet.ReaderAtSeeker, stored *arrow.Schema, mem memory.Allocator, batch, maxDim int) (*parquetRecords, *arrow.Schema, error) {
	md := pf.MetaData()
	root := md.Schema.Root()
	size, err := r.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, nil, err
	}
	p := &parquetRecords{pf: pf, r: r, size: size, mem: mem, batch: int64(batch), maxDim: maxDim}
	var fields []arrow.Field
	for i := 0; i < root.NumFields(); i++ {
		n := root.Field(i)
		if !isContractColumn(n.Name()) {
			continue
		}
		var hint arrow.DataType
		if stored != nil {
			if idx := stored.FieldIndices(n.Name()); len(idx) == 1 {
				hint = stored.Field(idx[0]).Type
			}
		}
		c, err := newParquetColumn(md.Schema, n, hint, maxDim)
		if err != nil {
			return nil, nil, err
		}
		p.cols = append(p.cols, c)
		fields = append(fields, c.field())
	}
	var keys, vals []string
	if stored != nil {
		keys, vals = slices.Clone(stored.Metadata().Keys()), slices.Clone(stored.Metadata().Values())
	}
	if !slices.Contains(keys, MetaDim) {
		if v := md.KeyValueMetadata().FindValue(MetaDim); v != nil {
			keys, vals = append(keys, MetaDim), append(vals, *v)
		}
	}
	var meta *arrow.Metadata
	if len(keys) > 0 {
		meta = ptr(arrow.NewMetadata(keys, vals))
	}
	p.schema = arrow.NewSchema(fields, meta)
	return p, p.schema, nil
}

func isContractColumn(name string) bool {
	switch name {
	case ColX, ColIndices, ColValues, ColText, ColImage, ColLabel, ColID:
		return true
	}
	return false
}

func (p *parquetRecords) Next() bool {
	p.release()
	if p.err != nil {
		return false
	}
	for p.left == 0 {
		if p.rg >= p.pf.NumRowGroups() {
			return false
		}
		rg := p.pf.RowGroup(p.rg)
		p.rg++
		p.left = rg.NumRows()
		if p.left < 0 {
			p.err = fmt.Errorf("parquet row group %d has %d rows", p.rg-1, p.left)
			return false
		}
		if p.left == 0 {
			continue
		}
		schema := p.pf.MetaData().Schema
		for _, c := range p.cols {
			rd, err := p.columnReader(rg, schema, c.base().path)
			if err == nil {
				err = c.start(rd)
			}
			if err != nil {
				p.err = fmt.Errorf("parquet row group %d, column %s: %w", p.rg-1, c.field().Name, err)
				return false
			}
		}
	}
	n := min(p.batch, p.left)
	arrs := make([]arrow.Array, len(p.cols))
	defer func() {
		for _, a := range arrs {
			if a != nil {
				a.Release()
			}
		}
	}()
	for i, c := range p.cols {
		b := array.NewBuilder(p.mem, c.field().Type)
		err := c.appendRows(b, n, p.off)
		if err == nil {
			arrs[i] = b.NewArray()
		}
		b.Release()
		if err != nil {
			if _, ok := err.(*LimitError); !ok {
				err = fmt.Errorf("parquet column %s: %w", c.field().Name, err)
			}
			p.err = err
			return false
		}
	}
	p.rec = array.NewRecord(p.schema, arrs, n)
	p.left -= n
	p.off += n
	return true
}

// columnReader returns a reader of the column chunk at path in the row
// group rg (p.rg-1), whose data pages are checked (checkedPages) before
// they are decoded. It reads the chunk's bytes itself, as
// RowGroupReader.GetColumnPageReader does, but checks their claimed range
// against the file before allocating, and hands the page reader a stream
// (pageStream) that ends where the chunk ends: arrow-go v15's buffered
// reader's Peek returns stale bytes past the end, and its page reader,
// ignoring that Discard made no progress, parsed the same unknown page
// header forever (FuzzParquet). Encrypted column chunks are refused.
func (p *parquetRecords) columnReader(rg *file.RowGroupReader, s *schema.Schema, path string) (file.ColumnChunkReader, error) {
	i := s.ColumnIndexByName(path)
	if i < 0 || i >= rg.NumColumns() {
		return nil, fmt.Errorf("no column chunk for %s among %d", path, rg.NumColumns())
	}
	col, err := rg.MetaData().ColumnChunk(i)
	if err != nil {
		return nil, err
	}
	if col.CryptoMetadata() != nil {
		return nil, errors.New("encrypted column chunks are not read")
	}
	start := col.DataPageOffset()
	if col.HasDictionaryPage() && col.DictionaryPageOffset() > 0 && start > col.DictionaryPageOffset() {
		start = col.DictionaryPageOffset()
	}
	n := col.TotalCompressedSize()
	if start < 0 || n < 0 || start > p.size || n > p.size-start {
		return nil, fmt.Errorf("column chunk of %d bytes at offset %d outside the file of %d bytes", n, start, p.size)
	}
	if v := p.pf.MetaData().WriterVersion(); v != nil && v.LessThan(metadata.Parquet816FixedVersion) {
		// PARQUET-816: parquet-mr up to 1.2.8 left the dictionary page
		// header out of the chunk's size; arrow-go pads by up to 100 bytes.
		n += min(100, p.size-(start+n))
	}
	data := make([]byte, n)
	if got, err := p.r.ReadAt(data, start); got < len(data) {
		return nil, fmt.Errorf("reading the column chunk: %d of %d bytes: %w", got, n, err)
	}
	stream := &pageStream{data: data}
	pages, err := file.NewPageReader(stream, col.NumValues(), col.Compression(), p.mem, nil)
	if err != nil {
		return nil, err
	}
	checked := &checkedPages{PageReader: pages, descr: s.Column(i), stream: stream, rg: p.rg - 1, col: path}
	return file.NewColumnReader(s.Column(i), checked, p.mem, p.pf.BufferPool()), nil
}

// pageStream is a parquet.BufferedReader over the bytes of one column
// chunk: Peek returns at most the bytes left (io.EOF when fewer than asked),
// Discard and Read consume them.
type pageStream struct{ data []byte }

func (b *pageStream) Peek(n int) ([]byte, error) {
	if n < 0 {
		return nil, errors.New("negative peek")
	}
	if n > len(b.data) {
		return b.data, io.EOF
	}
	return b.data[:n], nil
}

func (b *pageStream) Discard(n int) (int, error) {
	if n < 0 {
		return 0, errors.New("negative discard")
	}
	if n > len(b.data) {
		n = len(b.data)
		b.data = b.data[n:]
		return n, io.EOF
	}
	b.data = b.data[n:]
	return n, nil
}

func (b *pageStream) Read(q []byte) (int, error) {
	if len(b.data) == 0 {
		return 0, io.EOF
	}
	n := copy(q, b.data)
	b.data = b.data[n:]
	return n, nil
}

func (p *parquetRecords) Record() arrow.Record { return p.rec }
func (p *parquetRecords) Err() error           { return p.err }
func (p *parquetRecords) Release()             { p.release() }

func (p *parquetRecords) release() {
	if p != nil && p.rec != nil {
		p.rec.Release()
		p.rec = nil
	}
}

// newParquetColumn describes the top-level node n of s as a column of the
// contract, hint being the column's type in the stored Arrow schema (nil if
// none).
func newParquetColumn(s *schema.Schema, n schema.Node, hint arrow.DataType, maxDim int) (parquetColumn, error) {
	name := n.Name()
	// Walk down to the leaf: through groups of one field (a LIST's
	// repeated group), counting the definition levels above the repeated
	// node (a null list below them, an empty one at them).
	var optional, repeated int
	listDef := int16(-1)
	node := n
	for {
		switch node.RepetitionType() {
		case parquet.Repetitions.Optional:
			optional++
		case parquet.Repetitions.Repeated:
			if repeated++; repeated > 1 {
				return nil, fmt.Errorf("sources: parquet column %s: nested lists are not part of the data contract", name)
			}
			listDef = int16(optional)
		}
		g, ok := node.(*schema.GroupNode)
		if !ok {
			break
		}
		if g.NumFields() != 1 {
			return nil, fmt.Errorf("sources: parquet column %s: a group of %d fields; want a primitive or a list of primitives", name, g.NumFields())
		}
		node = g.Field(0)
	}
	leaf := node.(*schema.PrimitiveNode)
	idx := s.ColumnIndexByNode(leaf)
	if idx < 0 {
		return nil, fmt.Errorf("sources: parquet column %s: leaf not found", name)
	}
	desc := s.Column(idx)
	base := pqBase{
		path:   desc.Path(),
		list:   repeated == 1,
		maxDef: desc.MaxDefinitionLevel(),
		maxRep: desc.MaxRepetitionLevel(),
		nulls:  listDef,
		maxLen: maxDim,
	}
	if !base.list {
		base.nulls = desc.MaxDefinitionLevel()
	}
	var elem arrow.DataType
	var c parquetColumn
	switch leaf.PhysicalType() {
	case parquet.Types.Float:
		elem = arrow.PrimitiveTypes.Float32
		c = &pqColumn[float32]{pqBase: base, appendTo: func(b array.Builder, v float32) { b.(*array.Float32Builder).Append(v) }}
	case parquet.Types.Double:
		elem = arrow.PrimitiveTypes.Float64
		c = &pqColumn[float64]{pqBase: base, appendTo: func(b array.Builder, v float64) { b.(*array.Float64Builder).Append(v) }}
	case parquet.Types.Int32:
		if it, ok := leaf.LogicalType().(*schema.IntLogicalType); ok && !it.IsSigned() {
			elem = arrow.PrimitiveTypes.Uint32
			c = &pqColumn[int32]{pqBase: base, appendTo: func(b array.Builder, v int32) { b.(*array.Uint32Builder).Append(uint32(v)) }}
		} else {
			elem = arrow.PrimitiveTypes.Int32
			c = &pqColumn[int32]{pqBase: base, appendTo: func(b array.Builder, v int32) { b.(*array.Int32Builder).Append(v) }}
		}
	case parquet.Types.Int64:
		if it, ok := leaf.LogicalType().(*schema.IntLogicalType); ok && !it.IsSigned() {
			elem = arrow.PrimitiveTypes.Uint64
			c = &pqColumn[int64]{pqBase: base, appendTo: func(b array.Builder, v int64) { b.(*array.Uint64Builder).Append(uint64(v)) }}
		} else {
			elem = arrow.PrimitiveTypes.Int64
			c = &pqColumn[int64]{pqBase: base, appendTo: func(b array.Builder, v int64) { b.(*array.Int64Builder).Append(v) }}
		}
	case parquet.Types.ByteArray:
		if name == ColImage {
			elem = arrow.BinaryTypes.Binary
			c = &pqColumn[parquet.ByteArray]{pqBase: base, clone: true, appendTo: func(b array.Builder, v parquet.ByteArray) { b.(*array.BinaryBuilder).Append(v) }}
		} else {
			elem = arrow.BinaryTypes.String
			c = &pqColumn[parquet.ByteArray]{pqBase: base, clone: true, appendTo: func(b array.Builder, v parquet.ByteArray) { b.(*array.StringBuilder).Append(string(v)) }}
		}
	default:
		return nil, fmt.Errorf("sources: parquet column %s has physical type %s, not part of the data contract", name, leaf.PhysicalType())
	}
	typ := elem
	if base.list {
		typ = arrow.ListOf(elem)
		if fsl, ok := hint.(*arrow.FixedSizeListType); ok && arrow.TypeEqual(fsl.Elem(), elem) && fsl.Len() > 0 {
			typ = arrow.FixedSizeListOf(fsl.Len(), elem)
		}
	}
	c.base().f = arrow.Field{Name: name, Type: typ, Nullable: true}
	return c, nil
}

// pqBase is what a column's levels mean.
type pqBase struct {
	f      arrow.Field
	path   string
	list   bool
	maxDef int16 // a value is present at this definition level
	maxRep int16
	// nulls: below this definition level the row is null; for a list, at
	// it the list is empty and above it an element exists (a null element
	// below maxDef).
	nulls  int16
	maxLen int // longest list row
}

// parquetChunk is the number of levels read from a column at a time.
const parquetChunk = 4096

// pqColumn is a parquetColumn of physical values T.
type pqColumn[T any] struct {
	pqBase
	appendTo func(b array.Builder, v T) // to the primitive (value) builder
	clone    bool                       // copy byte arrays out of the page buffers

	rd interface {
		HasNext() bool
		Err() error
	}
	read     func(n int64, vals []T, def, rep []int16) (int64, int, error)
	def, rep []int16
	vals     []T
	lpos     int // next level
	lend     int // levels buffered
	vpos     int // next value
	vend     int // values buffered
	eof      bool
}

func (c *pqColumn[T]) field() arrow.Field { return c.f }

func (b *pqBase) base() *pqBase { return b }

func (c *pqColumn[T]) start(rd file.ColumnChunkReader) error {
	c.lpos, c.lend, c.vpos, c.vend, c.eof = 0, 0, 0, 0, false
	c.rd = rd
	switch r := any(rd).(type) {
	case *file.Float32ColumnChunkReader:
		if f, ok := any(r.ReadBatch).(func(int64, []T, []int16, []int16) (int64, int, error)); ok {
			c.read = f
			return nil
		}
	case *file.Float64ColumnChunkReader:
		if f, ok := any(r.ReadBatch).(func(int64, []T, []int16, []int16) (int64, int, error)); ok {
			c.read = f
			return nil
		}
	case *file.Int32ColumnChunkReader:
		if f, ok := any(r.ReadBatch).(func(int64, []T, []int16, []int16) (int64, int, error)); ok {
			c.read = f
			return nil
		}
	case *file.Int64ColumnChunkReader:
		if f, ok := any(r.ReadBatch).(func(int64, []T, []int16, []int16) (int64, int, error)); ok {
			c.read = f
			return nil
		}
	case *file.ByteArrayColumnChunkReader:
		if f, ok := any(r.ReadBatch).(func(int64, []T, []int16, []int16) (int64, int, error)); ok {
			c.read = f
			return nil
		}
	}
	return fmt.Errorf("column reader %T does not match the schema", rd)
}

// fill reads the next chunk of levels, after moving the unread ones to the
// front of the buffers. It sets eof when the column chunk has no more.
func (c *pqColumn[T]) fill() error {
	if c.lpos > 0 {
		n := copy(c.def, c.def[c.lpos:c.lend])
		copy(c.rep, c.rep[c.lpos:c.lend])
		c.lpos, c.lend = 0, n
		n = copy(c.vals, c.vals[c.vpos:c.vend])
		c.vpos, c.vend = 0, n
	}
	if !c.rd.HasNext() {
		c.eof = true
		return c.rd.Err() // a page checkedPages refused, or a read error
	}
	need := c.lend + parquetChunk
	if len(c.def) < need {
		c.def = slices.Grow(c.def[:c.lend], need-c.lend)[:need]
		c.rep = slices.Grow(c.rep[:c.lend], need-c.lend)[:need]
	}
	if need := c.vend + parquetChunk; len(c.vals) < need {
		c.vals = slices.Grow(c.vals[:c.vend], need-c.vend)[:need]
	}
	levels, values, err := c.read(parquetChunk, c.vals[c.vend:], c.def[c.lend:], c.rep[c.lend:])
	if err == nil {
		err = c.rd.Err()
	}
	if err != nil {
		return err
	}
	if levels == 0 && values == 0 {
		c.eof = true
		return nil
	}
	if c.maxDef == 0 {
		levels = max(levels, int64(values))
		for i := range int(levels) {
			c.def[c.lend+i] = 0
		}
	}
	if c.maxRep == 0 {
		for i := range int(levels) {
			c.rep[c.lend+i] = 0
		}
	}
	if c.clone {
		for i := c.vend; i < c.vend+values; i++ {
			v := any(c.vals[i]).(parquet.ByteArray)
			c.vals[i] = any(parquet.ByteArray(slices.Clone(v))).(T)
		}
	}
	c.lend += int(levels)
	c.vend += values
	if c.vend-c.vpos > c.lend-c.lpos {
		// Each value belongs to a level: more would pile up unread, and
		// moving them to the front on every fill would take quadratic time
		// (a page of nulls over a dictionary page of values: FuzzParquet).
		return fmt.Errorf("%d values for %d definition levels", c.vend-c.vpos, c.lend-c.lpos)
	}
	return nil
}

// level returns the next level, reading more if needed; ok is false at
// the end of the column chunk.
func (c *pqColumn[T]) level() (def, rep int16, ok bool, err error) {
	if c.lpos == c.lend {
		if c.eof {
			return 0, 0, false, nil
		}
		if err := c.fill(); err != nil {
			return 0, 0, false, err
		}
		if c.lpos == c.lend {
			return 0, 0, false, nil
		}
	}
	return c.def[c.lpos], c.rep[c.lpos], true, nil
}

// value consumes the next value.
func (c *pqColumn[T]) value() (T, error) {
	if c.vpos == c.vend {
		var zero T
		return zero, errors.New("fewer values than definition levels")
	}
	c.vpos++
	return c.vals[c.vpos-1], nil
}

func (c *pqColumn[T]) appendRows(b array.Builder, n int64, off int64) error {
	var lb array.ListLikeBuilder
	var vb array.Builder
	width := -1
	if c.list {
		lb = b.(array.ListLikeBuilder)
		vb = lb.ValueBuilder()
		if fsl, ok := c.f.Type.(*arrow.FixedSizeListType); ok {
			width = int(fsl.Len())
		}
	}
	for row := range n {
		def, rep, ok, err := c.level()
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("the column chunk ends after %d rows of a row group", row)
		}
		if rep != 0 {
			return fmt.Errorf("row starts with repetition level %d", rep)
		}
		c.lpos++
		if !c.list {
			if def < c.nulls {
				b.AppendNull()
				continue
			}
			v, err := c.value()
			if err != nil {
				return err
			}
			c.appendTo(b, v)
			continue
		}
		if def < c.nulls {
			lb.AppendNull()
			if err := c.skipNullSlots(); err != nil {
				return err
			}
			continue
		}
		lb.Append(true)
		elems := 0
		for first := true; ; first = false {
			if !first {
				def, rep, ok, err = c.level()
				if err != nil {
					return err
				}
				if !ok || rep == 0 {
					break
				}
				c.lpos++
			}
			if def == c.nulls {
				break // an empty list: one level, no element
			}
			if elems++; elems > c.maxLen {
				return &LimitError{Record: off + row, What: "length of the list in column " + c.f.Name, Value: int64(elems), Limit: int64(c.maxLen), Raise: raiseMaxDim}
			}
			if def < c.maxDef {
				vb.AppendNull()
				continue
			}
			v, err := c.value()
			if err != nil {
				return err
			}
			c.appendTo(vb, v)
		}
		if width >= 0 && elems != width {
			return fmt.Errorf("record %d: %d values in a fixed_size_list of width %d", off+row, elems, width)
		}
	}
	return nil
}

// skipNullSlots consumes the levels that continue a null list row. DuckDB
// writes a NULL fixed-size ARRAY as one level per slot, the first with
// repetition level 0 and the others 1, all below the list's null level:
// they hold no value and belong to the null row. A continuation that
// defines a value is an error.
func (c *pqColumn[T]) skipNullSlots() error {
	for n := 0; ; n++ {
		def, rep, ok, err := c.level()
		if err != nil || !ok || rep == 0 {
			return err
		}
		if def >= c.nulls {
			return fmt.Errorf("a null list row continues with definition level %d", def)
		}
		if n >= c.maxLen {
			// Run-length encoded levels make any number of slots from a
			// few bytes: bound them as a list's elements are.
			return fmt.Errorf("a null list row continues for more than %d levels", c.maxLen)
		}
		c.lpos++
	}
}
