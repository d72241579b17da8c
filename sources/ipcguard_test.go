package sources

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// TestGuardAllColumnTypes reads streams and files whose extra columns have
// every kind of Arrow layout, so that the guard's count of field nodes and
// buffers (ipcCounts) matches arrow-go's loader: a count too high would
// reject these valid inputs.
func TestGuardAllColumnTypes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	extra := []arrow.DataType{
		arrow.Null,
		arrow.FixedWidthTypes.Boolean,
		arrow.FixedWidthTypes.Timestamp_us,
		&arrow.Decimal128Type{Precision: 10, Scale: 2},
		&arrow.FixedSizeBinaryType{ByteWidth: 3},
		arrow.BinaryTypes.LargeString,
		arrow.BinaryTypes.StringView,
		&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String},
		arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32}, arrow.Field{Name: "b", Type: arrow.BinaryTypes.Binary}),
		arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Float64),
		arrow.LargeListOf(arrow.StructOf(arrow.Field{Name: "c", Type: arrow.PrimitiveTypes.Uint8})),
		arrow.ListViewOf(arrow.PrimitiveTypes.Int64),
		arrow.SparseUnionOf([]arrow.Field{{Name: "i", Type: arrow.PrimitiveTypes.Int8}, {Name: "s", Type: arrow.BinaryTypes.String}}, []arrow.UnionTypeCode{0, 1}),
		arrow.DenseUnionOf([]arrow.Field{{Name: "i", Type: arrow.PrimitiveTypes.Int8}, {Name: "s", Type: arrow.BinaryTypes.String}}, []arrow.UnionTypeCode{0, 1}),
		arrow.RunEndEncodedOf(arrow.PrimitiveTypes.Int32, arrow.BinaryTypes.String),
	}
	fields := []arrow.Field{{Name: "x", Type: arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Float64)}}
	for i, dt := range extra {
		fields = append(fields, arrow.Field{Name: "extra" + string(rune('a'+i)), Type: dt, Nullable: true})
	}
	schema := arrow.NewSchema(fields, nil)
	// The records are built outside mem: arrow-go v15's IPC writer leaks 64
	// bytes of a dictionary (array.GetDictArrayData); reading must not leak.
	rec := buildRecord(t, memory.NewGoAllocator(), schema, func(b *array.RecordBuilder) {
		xb := b.Field(0).(*array.FixedSizeListBuilder)
		for i := 0; i < 3; i++ {
			xb.Append(true)
			xb.ValueBuilder().(*array.Float64Builder).AppendValues([]float64{1, 2, float64(i)}, nil)
			for j := 1; j < len(fields); j++ {
				if i == 1 {
					b.Field(j).AppendNull() // a null in every extra column
				} else {
					b.Field(j).AppendEmptyValue()
				}
			}
		}
	})
	defer rec.Release()
	for _, file := range []bool{false, true} {
		data := writeIPC(t, schema, file, rec, rec)
		var src *Arrow
		if file {
			src = NewArrowFile(bytes.NewReader(data))
		} else {
			src = NewArrowStream(bytes.NewReader(data))
		}
		src.Allocator = mem
		c := readAll(t, src)
		if err := src.Err(); err != nil {
			t.Fatalf("file=%v: %v", file, err)
		}
		src.Close()
		if len(c.dense) != 6 {
			t.Errorf("file=%v: read %d rows, want 6", file, len(c.dense))
		}
	}
}

// TestGuardMessageOrder reads streams whose messages come out of order: a
// second schema, and a record batch where a dictionary is due. arrow-go
// v15's reader decodes either as a dictionary batch (a schema so taken
// asked for 8 TiB, FuzzArrowStream's crasher); the guard must refuse them
// with an error that says which message is wrong, and read the stream in
// order as before.
func TestGuardMessageOrder(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "x", Type: arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float64)},
		{Name: "tag", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}},
	}, nil)
	rec := buildRecord(t, memory.NewGoAllocator(), schema, func(b *array.RecordBuilder) {
		xb := b.Field(0).(*array.FixedSizeListBuilder)
		xb.Append(true)
		xb.ValueBuilder().(*array.Float64Builder).AppendValues([]float64{1, 2}, nil)
		if err := b.Field(1).(*array.BinaryDictionaryBuilder).AppendString("a"); err != nil {
			t.Fatal(err)
		}
	})
	defer rec.Release()
	msgs := splitMessages(t, writeIPC(t, schema, false, rec))
	if len(msgs) != 3 { // schema, dictionary, batch (the end marker dropped)
		t.Fatalf("%d messages, want 3", len(msgs))
	}
	read := func(parts ...[]byte) error {
		src := NewArrowStream(bytes.NewReader(bytes.Join(parts, nil)))
		defer src.Close()
		readAll(t, src)
		return src.Err()
	}
	if err := read(msgs...); err != nil {
		t.Fatalf("in order: %v", err)
	}
	for _, c := range []struct {
		name  string
		parts [][]byte
		want  string
	}{
		{"a second schema", [][]byte{msgs[0], msgs[0], msgs[1], msgs[2]}, "message 2 is a second schema"},
		{"a batch before the dictionary", [][]byte{msgs[0], msgs[2], msgs[1]}, "message 2 has type 3 where the schema's 1 dictionaries come first"},
	} {
		if err := read(c.parts...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one that says %q", c.name, err, c.want)
		}
	}
}

// splitMessages cuts an IPC stream into its messages (continuation marker,
// metadata and body), leaving out the end-of-stream marker.
func splitMessages(t *testing.T, data []byte) [][]byte {
	t.Helper()
	var out [][]byte
	for p := 0; p+8 <= len(data); {
		n := int(binary.LittleEndian.Uint32(data[p+4:]))
		if n == 0 {
			break
		}
		_, body, _, _, err := messageHeader(data[p+8 : p+8+n])
		if err != nil {
			t.Fatal(err)
		}
		end := p + 8 + n + int(body)
		out = append(out, data[p:end])
		p = end
	}
	return out
}

// peakAllocator records the largest single allocation made through it.
type peakAllocator struct {
	memory.Allocator
	peak int
}

func (p *peakAllocator) Allocate(n int) []byte {
	p.peak = max(p.peak, n)
	return p.Allocator.Allocate(n)
}

func (p *peakAllocator) Reallocate(n int, b []byte) []byte {
	p.peak = max(p.peak, n)
	return p.Allocator.Reallocate(n, b)
}

// zeroStream is a ZSTD-compressed Arrow IPC stream of one batch of rows
// records of dim float64 zeros (column x): a few kilobytes that decode to
// 8·rows·dim bytes.
func zeroStream(t *testing.T, rows, dim int) []byte {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.FixedSizeListOf(int32(dim), arrow.PrimitiveTypes.Float64)}}, nil)
	rec := buildRecord(t, memory.NewGoAllocator(), schema, func(b *array.RecordBuilder) {
		xb := b.Field(0).(*array.FixedSizeListBuilder)
		vb := xb.ValueBuilder().(*array.Float64Builder)
		zeros := make([]float64, dim)
		for range rows {
			xb.Append(true)
			vb.AppendValues(zeros, nil)
		}
	})
	defer rec.Release()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema), ipc.WithZstd())
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestArrowDecodedBound checks MaxDecodedBytes: a compressed batch that
// would decode to more is refused before it is decompressed (no
// allocation near its decoded size), with a *LimitError giving the decoded
// size and the limit; one within it reads; and the constructors' settings.
func TestArrowDecodedBound(t *testing.T) {
	const rows, dim = 2000, 64 // 1,024,000 bytes decoded
	data := zeroStream(t, rows, dim)
	if len(data) > 64<<10 {
		t.Fatalf("the compressed stream takes %d bytes", len(data))
	}
	mem := &peakAllocator{Allocator: memory.NewGoAllocator()}
	src := NewArrowStream(bytes.NewReader(data))
	src.MaxDecodedBytes, src.Allocator = 256<<10, mem
	c := readAll(t, src)
	var le *LimitError
	if !errors.As(src.Err(), &le) || le.Value != 8*rows*dim || le.Limit != 256<<10 || le.Record != 0 {
		t.Fatalf("read %d rows, err %v; want a *LimitError of %d decoded bytes over %d", len(c.dense), src.Err(), 8*rows*dim, 256<<10)
	}
	if msg := le.Error(); !strings.Contains(msg, "decoded size") || !strings.Contains(msg, "1024000 exceeds the limit of 262144") {
		t.Errorf("error %q does not give the sizes", msg)
	}
	if mem.peak >= 256<<10 {
		t.Errorf("an allocation of %d bytes before the refusal", mem.peak)
	}
	src = NewArrowStream(bytes.NewReader(data))
	src.MaxDecodedBytes = 8 * rows * dim
	if c := readAll(t, src); src.Err() != nil || len(c.dense) != rows {
		t.Errorf("within the bound: %d rows, %v", len(c.dense), src.Err())
	}
	if a, f := NewArrowStream(nil), NewArrowFile(nil); a.MaxDecodedBytes != StreamMaxDecodedBytes || f.MaxDecodedBytes != DefaultMaxDecodedBytes {
		t.Errorf("MaxDecodedBytes: stream %d, file %d", a.MaxDecodedBytes, f.MaxDecodedBytes)
	}
}
