package sources

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// drain reads src to the end and checks the batch invariants that hold for
// any input: every record appears once, in order, and sample rows are
// non-negative and finite.
func drain(t *testing.T, src Source) {
	t.Helper()
	var next int64
	for src.Next() {
		b := src.Batch()
		if b.Records() == 0 {
			t.Fatal("empty batch")
		}
		seen := make([]int64, 0, b.Records())
		seen = append(seen, b.Offsets...)
		for _, l := range b.LateLabels {
			seen = append(seen, l.Offset)
		}
		for _, r := range b.Rejects {
			if r.Reason == nil || !strings.HasPrefix(r.Reason.Error(), "sources: record ") {
				t.Fatalf("reject without a proper reason: %+v", r)
			}
			seen = append(seen, r.Offset)
		}
		for range seen {
			found := false
			for _, o := range seen {
				if o == next {
					found = true
				}
			}
			if !found {
				t.Fatalf("record %d missing from batch (have %v)", next, seen)
			}
			next++
		}
		if b.Dense != nil {
			r, _ := b.Dense.Dims()
			if r != b.Len() {
				t.Fatalf("Dense has %d rows for %d samples", r, b.Len())
			}
			if err := checkValues(b.Dense.RawMatrix().Data); err != nil {
				t.Fatalf("bad value in a sample: %v", err)
			}
		}
		if b.Sparse != nil {
			if err := b.Sparse.Validate(); err != nil {
				t.Fatal(err)
			}
		}
	}
	src.Close()
}

// arrowSeeds returns one record of each feature form (dense, sparse with
// ids, text with a null label, a PGM image) with its schema, as fuzz seeds.
func arrowSeeds(f testing.TB) (schemas []*arrow.Schema, recs [][]arrow.Record) {
	mem := memory.NewGoAllocator()
	r1 := denseRecord(f, mem, denseRows1)
	r2 := denseRecord(f, mem, denseRows2)
	schemas, recs = append(schemas, denseSchema), append(recs, []arrow.Record{r1, r2})
	md := arrow.NewMetadata([]string{"dim"}, []string{"6"})
	sparseSchema := arrow.NewSchema([]arrow.Field{
		{Name: "indices", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
		{Name: "values", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64), Nullable: true},
		{Name: "id", Type: arrow.BinaryTypes.String, Nullable: true},
	}, &md)
	sp := buildRecord(f, mem, sparseSchema, func(b *array.RecordBuilder) {
		ib, vb := b.Field(0).(*array.ListBuilder), b.Field(1).(*array.ListBuilder)
		ib.Append(true)
		ib.ValueBuilder().(*array.Int32Builder).AppendValues([]int32{3, 1}, nil)
		vb.Append(true)
		vb.ValueBuilder().(*array.Float64Builder).AppendValues([]float64{1, 2}, nil)
		b.Field(2).(*array.StringBuilder).Append("a")
	})
	schemas, recs = append(schemas, sparseSchema), append(recs, []arrow.Record{sp})
	textSchema := arrow.NewSchema([]arrow.Field{{Name: "text", Type: arrow.BinaryTypes.String}, {Name: "label", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	tx := buildRecord(f, mem, textSchema, func(b *array.RecordBuilder) {
		b.Field(0).(*array.StringBuilder).AppendValues([]string{"a doc", ""}, nil)
		b.Field(1).(*array.Int64Builder).AppendValues([]int64{1, 2}, []bool{true, false})
	})
	schemas, recs = append(schemas, textSchema), append(recs, []arrow.Record{tx})
	imgSchema := arrow.NewSchema([]arrow.Field{{Name: "image", Type: arrow.BinaryTypes.Binary}}, nil)
	im := buildRecord(f, mem, imgSchema, func(b *array.RecordBuilder) {
		b.Field(0).(*array.BinaryBuilder).Append(encodePGM(2, 2, func(x, y int) uint8 { return uint8(x + y) }))
	})
	schemas, recs = append(schemas, imgSchema), append(recs, []arrow.Record{im})
	return schemas, recs
}

func FuzzArrowStream(f *testing.F) {
	schemas, recs := arrowSeeds(f)
	for i, s := range schemas {
		f.Add(writeIPC(f, s, false, recs[i]...))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// The fuzzer reports crashes but not hangs: turn a hang into a crash.
		tm := time.AfterFunc(10*time.Second, func() { panic("FuzzArrowStream: input took over 10 s") })
		defer tm.Stop()
		src := NewArrowStream(bytes.NewReader(data))
		src.BatchSize = 3
		src.MaxImagePixels = 1 << 16
		src.MaxDim, src.MaxRecords = 1<<10, 1<<12 // small limits: thousands of inputs a second
		drain(t, src)
	})
}

func FuzzImage(f *testing.F) {
	f.Add(pngGray(f, 3, 2, func(x, y int) uint8 { return uint8(x * y * 40) }))
	f.Add(encodePGM(3, 2, func(x, y int) uint8 { return uint8(x + y) }))
	f.Add([]byte("P2 2 2 15\n0 1\n2 15\n"))
	f.Add([]byte("P3 1 2 255\n1 2 3 4 5 6\n"))
	f.Add([]byte("P6 1 1 65535\n\x01\x02\x03\x04\x05\x06"))
	f.Add([]byte("GIF89a"))
	f.Add([]byte("BM"))
	f.Add([]byte("\xff\xd8\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := decodeImage(data, 1<<16, nil)
		if err != nil {
			return
		}
		if g.w <= 0 || g.h <= 0 || len(g.pix) != g.w*g.h {
			t.Fatalf("decoded %d×%d with %d pixels", g.w, g.h, len(g.pix))
		}
		for _, v := range g.pix {
			if !(v >= 0 && v <= 1) {
				t.Fatalf("pixel %g outside [0, 1]", v)
			}
		}
		dst := make([]float64, 3*5)
		resample(dst, 3, 5, g)
		for _, v := range dst {
			// Area averaging is a convex combination; allow rounding.
			if !(v >= -1e-12 && v <= 1+1e-12) {
				t.Fatalf("resampled pixel %g outside [0, 1]", v)
			}
		}
	})
}

func FuzzIDX(f *testing.F) {
	f.Add(idxBytes([]int{2, 2, 2}, []byte{1, 2, 3, 4, 5, 6, 7, 8}), idxBytes([]int{2}, []byte{1, 2}))
	f.Add([]byte{0, 0, 0x0D, 1, 0, 0, 0, 2, 0xbf, 0x80, 0, 0, 0x3f, 0x80, 0, 0}, []byte{})
	f.Add([]byte{0, 0, 0x0E, 2, 0, 0, 0, 1, 0, 0, 0, 1, 0x7f, 0xf8, 0, 0, 0, 0, 0, 0}, []byte{0, 0, 0x0C, 1, 0, 0, 0, 1, 0, 0, 0, 9})
	f.Fuzz(func(t *testing.T, images, labels []byte) {
		var lr *bytes.Reader
		if len(labels) > 0 {
			lr = bytes.NewReader(labels)
		}
		var src *IDX
		if lr != nil {
			src = NewIDX(bytes.NewReader(images), lr)
		} else {
			src = NewIDX(bytes.NewReader(images), nil)
		}
		src.BatchSize = 4
		drain(t, src)
	})
}

func FuzzCSV(f *testing.F) {
	f.Add("id,a,b,label\nx,1,2,3\ny,,,4\nz,-1,2,\n")
	f.Add("1,2,3\n4,5,6\n")
	f.Add("\"a\nb\",1\n1,\"2\n")
	f.Add("1,2,3\n4,5\n,,\n")
	f.Fuzz(func(t *testing.T, in string) {
		src := NewCSV(strings.NewReader(in))
		src.BatchSize = 2
		drain(t, src)
	})
}
