package sources

import (
	"bytes"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
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
