package sources

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/nmfstream/nmfstream/record"
)

// TestPrecision checks that every batch of a source says the type its input
// stored the dense features in (record.Batch.Precision, docs/DESIGN.md §5):
// float32 for Arrow and Parquet lists of float32 and IDX bytes and float32,
// float64 for lists of float64, IDX float64, CSV and decoded images, with the
// rows the same float64 values either way.
func TestPrecision(t *testing.T) {
	rows := [][]float64{{0, 0.5, 1}, {2, 0.25, 3}, {4, 5, 0.125}} // exact in float32
	arrowOf := func(elem arrow.DataType) *arrow.Schema {
		return arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.FixedSizeListOf(3, elem), Nullable: true}}, nil)
	}
	record3 := func(t *testing.T, mem memory.Allocator, sc *arrow.Schema) arrow.Record {
		return buildRecord(t, mem, sc, func(b *array.RecordBuilder) {
			lb := b.Field(0).(*array.FixedSizeListBuilder)
			for _, r := range rows {
				lb.Append(true)
				switch vb := lb.ValueBuilder().(type) {
				case *array.Float32Builder:
					for _, v := range r {
						vb.Append(float32(v))
					}
				case *array.Float64Builder:
					vb.AppendValues(r, nil)
				}
			}
		})
	}
	idx := func(typ byte) []byte {
		var buf bytes.Buffer
		buf.Write([]byte{0, 0, typ, 2})
		binary.Write(&buf, binary.BigEndian, [2]uint32{3, 3})
		for _, r := range rows {
			for _, v := range r {
				switch typ {
				case 0x08:
					buf.WriteByte(byte(v * 255 / 5)) // any byte: its type decides
				case 0x0D:
					binary.Write(&buf, binary.BigEndian, math.Float32bits(float32(v)))
				case 0x0E:
					binary.Write(&buf, binary.BigEndian, math.Float64bits(v))
				}
			}
		}
		return buf.Bytes()
	}
	type tc struct {
		name string
		open func(t *testing.T, mem memory.Allocator) Source
		want record.Precision
	}
	var cases []tc
	for _, elem := range []arrow.DataType{arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64} {
		want := record.Float64
		if elem.ID() == arrow.FLOAT32 {
			want = record.Float32
		}
		cases = append(cases,
			tc{"arrow stream " + elem.String(), func(t *testing.T, mem memory.Allocator) Source {
				sc := arrowOf(elem)
				r := record3(t, mem, sc)
				defer r.Release()
				a := NewArrowStream(bytes.NewReader(writeIPC(t, sc, false, r)))
				a.Allocator, a.BatchSize = mem, 2
				return a
			}, want},
			tc{"parquet " + elem.String(), func(t *testing.T, mem memory.Allocator) Source {
				sc := arrowOf(elem)
				r := record3(t, mem, sc)
				defer r.Release()
				a := NewParquet(bytes.NewReader(writeParquet(t, sc, r)))
				a.Allocator, a.BatchSize = mem, 2
				return a
			}, want})
	}
	for _, c := range []struct {
		typ  byte
		want record.Precision
	}{{0x08, record.Float32}, {0x0D, record.Float32}, {0x0E, record.Float64}} {
		cases = append(cases, tc{fmt.Sprintf("idx type 0x%02X", c.typ), func(t *testing.T, _ memory.Allocator) Source {
			x := NewIDX(bytes.NewReader(idx(c.typ)), nil)
			x.BatchSize = 2
			return x
		}, c.want})
	}
	cases = append(cases, tc{"csv", func(t *testing.T, _ memory.Allocator) Source {
		c := NewCSV(strings.NewReader("0,0.5,1\n2,0.25,3\n4,5,0.125\n"))
		c.BatchSize = 2
		return c
	}, record.Float64})
	cases = append(cases, tc{"images", func(t *testing.T, _ memory.Allocator) Source {
		dir := t.TempDir()
		for _, name := range []string{"a.png", "b.png"} {
			writeFile(t, dir, name, pngGray(t, 3, 1, func(x, y int) uint8 { return uint8(40 * x) }))
		}
		return NewImages(dir)
	}, record.Float64})

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			src := c.open(t, mem)
			defer src.Close()
			n, batches := 0, 0
			for src.Next() {
				b := src.Batch()
				batches++
				if b.Precision != c.want {
					t.Errorf("batch %d: Precision %v, want %v", batches, b.Precision, c.want)
				}
				if b.Clone().Precision != b.Precision {
					t.Errorf("batch %d: Clone lost Precision", batches)
				}
				n += b.Len()
			}
			if err := src.Err(); err != nil {
				t.Fatal(err)
			}
			if n == 0 || (c.name != "images" && batches < 2) {
				t.Fatalf("%d samples in %d batches, want several batches", n, batches)
			}
		})
	}
}
