package sources

import (
	"bytes"
	"github.com/nmfstream/nmfstream/record"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// denseSchema is the x/fixed_size_list<float32>[3] + id int64 + label utf8
// layout; denseListSchema has list<float32> x instead.
var (
	denseSchema = arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "x", Type: arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Float32), Nullable: true},
		{Name: "label", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	denseListSchema = arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "x", Type: arrow.ListOf(arrow.PrimitiveTypes.Float32), Nullable: true},
		{Name: "label", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
)

type denseRow struct {
	id    int64 // 0 = null
	x     []float32
	label string // "" = null
}

func denseRecord(t testing.TB, mem memory.Allocator, rows []denseRow) arrow.Record {
	return denseRecordOf(t, mem, denseSchema, rows)
}

func denseRecordOf(t testing.TB, mem memory.Allocator, schema *arrow.Schema, rows []denseRow) arrow.Record {
	return buildRecord(t, mem, schema, func(b *array.RecordBuilder) {
		ids := b.Field(0).(*array.Int64Builder)
		xs := b.Field(1).(array.ListLikeBuilder)
		xv := xs.ValueBuilder().(*array.Float32Builder)
		labels := b.Field(2).(*array.StringBuilder)
		for _, r := range rows {
			if r.id == 0 {
				ids.AppendNull()
			} else {
				ids.Append(r.id)
			}
			if r.x == nil {
				xs.AppendNull()
			} else {
				xs.Append(true)
				xv.AppendValues(r.x, nil)
			}
			if r.label == "" {
				labels.AppendNull()
			} else {
				labels.Append(r.label)
			}
		}
	})
}

var nan32 = float32(math.NaN())

// denseRows1 and denseRows2 are two record batches of one input.
var (
	denseRows1 = []denseRow{
		{id: 10, x: []float32{1, 2, 3}, label: "a"},     // 0 sample
		{id: 11, x: []float32{1, -2, 3}, label: "b"},    // 1 reject: negative
		{id: 12, x: []float32{0, 0, 0}},                 // 2 sample, unlabeled
		{id: 13, x: []float32{nan32, 0, 0}, label: "a"}, // 3 reject: NaN
	}
	denseRows2 = []denseRow{
		{id: 10, label: "c"},                                 // 4 late label
		{x: nil, label: "c"},                                 // 5 reject: no features, no id
		{x: []float32{4, 5, 6}, label: "b"},                  // 6 sample without id
		{id: 14, x: []float32{float32(math.Inf(1)), 1, 1}},   // 7 reject: infinite
		{id: 15, x: []float32{0.5, 0.25, 0.125}, label: "a"}, // 8 sample
	}
)

// checkDense checks what was read of denseRows1 and denseRows2; the
// sample without an id (offset 6) has the id "6" when offsetIDs (a whole
// input: Arrow.OffsetIDs, CSV), "" otherwise.
func checkDense(t *testing.T, c *collected, offsetIDs bool) {
	t.Helper()
	want := [][]float64{{1, 2, 3}, {0, 0, 0}, {4, 5, 6}, {0.5, 0.25, 0.125}}
	if !slices.EqualFunc(c.dense, want, slices.Equal) {
		t.Errorf("dense = %v, want %v", c.dense, want)
	}
	if c.dim != 3 {
		t.Errorf("dim = %d, want 3", c.dim)
	}
	noID := ""
	if offsetIDs {
		noID = "6"
	}
	if w := []string{"10", "12", noID, "15"}; !slices.Equal(c.ids, w) {
		t.Errorf("ids = %q, want %q", c.ids, w)
	}
	if w := []string{"a", "", "b", "a"}; !slices.Equal(c.labels, w) {
		t.Errorf("labels = %q, want %q", c.labels, w)
	}
	if w := []bool{true, false, true, true}; !slices.Equal(c.labeled, w) {
		t.Errorf("labeled = %v, want %v", c.labeled, w)
	}
	if w := []int64{0, 2, 6, 8}; !slices.Equal(c.offsets, w) {
		t.Errorf("offsets = %v, want %v", c.offsets, w)
	}
	if w := []record.LateLabel{{Offset: 4, ID: "10", Label: "c"}}; !slices.Equal(c.late, w) {
		t.Errorf("late labels = %v, want %v", c.late, w)
	}
	// The position is "at feature 1" in Arrow inputs, column 3 in CSV (TestCSV).
	wantRejects(t, c.rejects, map[int64]string{1: "negative value -2", 3: "NaN", 5: "no features", 7: "infinite"})
	if c.rejects[0].ID != "11" || !strings.Contains(c.rejects[0].Reason.Error(), `id "11"`) {
		t.Errorf("reject 1 lost its id: %+v", c.rejects[0])
	}
}

func TestArrowDense(t *testing.T) {
	for _, format := range []string{"stream", "file", "parquet"} {
		for _, bs := range []int{0, 1, 3, 100} {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			schema := denseSchema // a null fixed_size_list cell (late label) included
			r1 := denseRecordOf(t, mem, schema, denseRows1)
			r2 := denseRecordOf(t, mem, schema, denseRows2)
			var data []byte
			var src *Arrow
			switch format {
			case "stream":
				data = writeIPC(t, denseSchema, false, r1, r2)
				src = NewArrowStream(bytes.NewReader(data))
			case "file":
				data = writeIPC(t, denseSchema, true, r1, r2)
				src = NewArrowFile(bytes.NewReader(data))
			case "parquet":
				data = writeParquet(t, schema, r1, r2)
				src = NewParquet(bytes.NewReader(data))
			}
			r1.Release()
			r2.Release()
			src.BatchSize = bs
			src.Allocator = mem
			if f, err := src.Form(); err != nil || f != record.FormDense {
				t.Fatalf("%s: Form() = %v, %v", format, f, err)
			}
			c := readAll(t, src)
			if err := src.Err(); err != nil {
				t.Fatalf("%s: %v", format, err)
			}
			if err := src.Close(); err != nil {
				t.Fatal(err)
			}
			checkDense(t, c, format != "stream")
			if bs == 1 && c.batches != 9 {
				t.Errorf("%s: BatchSize 1 gave %d batches for 9 records", format, c.batches)
			}
			if bs == 3 && c.batches != 3 {
				t.Errorf("%s: BatchSize 3 gave %d batches for 9 records", format, c.batches)
			}
			mem.AssertSize(t, 0)
		}
	}
}

// TestArrowDenseList checks list<float64> x, where the first record fixes
// the dimension, with utf8 ids and int64 labels.
func TestArrowDenseList(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "x", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64), Nullable: true},
		{Name: "label", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "id", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	rec := buildRecord(t, mem, schema, func(b *array.RecordBuilder) {
		xs := b.Field(0).(*array.ListBuilder)
		xv := xs.ValueBuilder().(*array.Float64Builder)
		labels := b.Field(1).(*array.Int64Builder)
		ids := b.Field(2).(*array.StringBuilder)
		for i, x := range [][]float64{{1, 2}, {1, 2, 3}, {}, {7, 8}, {9, 0}} {
			xs.Append(true)
			xv.AppendValues(x, nil)
			labels.Append(int64(i - 1))
			ids.Append([]string{"a", "b", "c", "", "e"}[i])
		}
		// A null element inside a list.
		xs.Append(true)
		xv.AppendValues([]float64{1, 0}, []bool{true, false})
		labels.AppendNull()
		ids.Append("f")
	})
	data := writeIPC(t, schema, false, rec)
	rec.Release()
	src := NewArrowStream(bytes.NewReader(data))
	src.Allocator = mem
	defer src.Close()
	c := readAll(t, src)
	if err := src.Err(); err != nil {
		t.Fatal(err)
	}
	if w := [][]float64{{1, 2}, {7, 8}, {9, 0}}; !slices.EqualFunc(c.dense, w, slices.Equal) {
		t.Errorf("dense = %v, want %v", c.dense, w)
	}
	if w := []string{"-1", "2", "3"}; !slices.Equal(c.labels, w) {
		t.Errorf("labels = %q, want %q", c.labels, w)
	}
	if w := []record.LateLabel{{Offset: 2, ID: "c", Label: "1"}}; !slices.Equal(c.late, w) {
		t.Errorf("late = %v, want %v", c.late, w)
	}
	wantRejects(t, c.rejects, map[int64]string{1: "dimension 3, want 2", 5: "null value at feature 1"})
}

func TestArrowSparse(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	md := arrow.NewMetadata([]string{"dim"}, []string{"6"})
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "indices", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
		{Name: "values", Type: arrow.ListOf(arrow.PrimitiveTypes.Float32), Nullable: true},
		{Name: "id", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "label", Type: arrow.BinaryTypes.String, Nullable: true},
	}, &md)
	type row struct {
		ind       []int32
		val       []float32
		id, label string
	}
	rows := []row{
		{[]int32{4, 0, 2}, []float32{4, 1, 2}, "a", "x"}, // 0 sample, unsorted
		{[]int32{6}, []float32{1}, "b", "x"},             // 1 out of range
		{[]int32{1, 1}, []float32{1, 2}, "c", ""},        // 2 duplicate
		{[]int32{1, 2}, []float32{1}, "d", ""},           // 3 length mismatch
		{nil, nil, "a", "y"},                             // 4 late label
		{[]int32{5}, []float32{-1}, "e", ""},             // 5 negative
		{[]int32{5}, []float32{0.5}, "", ""},             // 6 sample, no id no label
	}
	rec := buildRecord(t, mem, schema, func(b *array.RecordBuilder) {
		ib := b.Field(0).(*array.ListBuilder)
		vb := b.Field(1).(*array.ListBuilder)
		for _, r := range rows {
			if r.ind == nil {
				ib.AppendNull()
				vb.AppendNull()
			} else {
				ib.Append(true)
				ib.ValueBuilder().(*array.Int32Builder).AppendValues(r.ind, nil)
				vb.Append(true)
				vb.ValueBuilder().(*array.Float32Builder).AppendValues(r.val, nil)
			}
			b.Field(2).(*array.StringBuilder).Append(r.id)
			b.Field(3).(*array.StringBuilder).Append(r.label)
		}
	})
	defer rec.Release()
	for _, format := range []string{"stream", "parquet"} {
		var src *Arrow
		if format == "stream" {
			src = NewArrowStream(bytes.NewReader(writeIPC(t, schema, false, rec)))
		} else {
			src = NewParquet(bytes.NewReader(writeParquet(t, schema, rec)))
		}
		src.Allocator = mem
		if f, err := src.Form(); err != nil || f != record.FormSparse {
			t.Fatalf("%s: Form() = %v, %v", format, f, err)
		}
		c := readAll(t, src)
		if err := src.Err(); err != nil {
			t.Fatal(err)
		}
		src.Close()
		if c.dim != 6 {
			t.Errorf("%s: dim = %d, want 6", format, c.dim)
		}
		if w := [][]int{{0, 2, 4}, {5}}; !slices.EqualFunc(c.sparseInd, w, slices.Equal) {
			t.Errorf("%s: indices = %v, want %v", format, c.sparseInd, w)
		}
		if w := [][]float64{{1, 2, 4}, {0.5}}; !slices.EqualFunc(c.sparseVal, w, slices.Equal) {
			t.Errorf("%s: values = %v, want %v", format, c.sparseVal, w)
		}
		w := []string{"a", "6"} // a Parquet file is a whole input (Arrow.OffsetIDs)
		if format == "stream" {
			w[1] = ""
		}
		if !slices.Equal(c.ids, w) {
			t.Errorf("%s: ids = %q", format, c.ids)
		}
		if w := []record.LateLabel{{Offset: 4, ID: "a", Label: "y"}}; !slices.Equal(c.late, w) {
			t.Errorf("%s: late = %v", format, c.late)
		}
		wantRejects(t, c.rejects, map[int64]string{1: "index 6 out of range [0, 6)", 2: "duplicate index 1",
			3: "2 indices but 1 values", 5: "negative"})
	}
}

func TestArrowText(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "text", Type: arrow.BinaryTypes.LargeString, Nullable: true},
		{Name: "id", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "label", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	rec := buildRecord(t, mem, schema, func(b *array.RecordBuilder) {
		tb := b.Field(0).(*array.LargeStringBuilder)
		tb.AppendValues([]string{"first doc", " \t\n", "", "third"}, nil)
		tb.AppendNull()
		b.Field(1).(*array.Int32Builder).AppendValues([]int32{1, 2, 3, 4, 5}, nil)
		b.Field(2).(*array.StringBuilder).AppendValues([]string{"", "x", "y", "", ""}, []bool{false, true, true, true, false})
	})
	data := writeIPC(t, schema, false, rec)
	rec.Release()
	src := NewArrowStream(bytes.NewReader(data))
	src.Allocator = mem
	defer src.Close()
	c := readAll(t, src)
	if w := []string{"first doc", "third"}; !slices.Equal(c.text, w) {
		t.Errorf("text = %q, want %q", c.text, w)
	}
	// Row 3 has an empty (not null) label: unlabeled.
	if w := []bool{false, false}; !slices.Equal(c.labeled, w) {
		t.Errorf("labeled = %v", c.labeled)
	}
	if w := []record.LateLabel{{Offset: 2, ID: "3", Label: "y"}}; !slices.Equal(c.late, w) {
		t.Errorf("late = %v", c.late)
	}
	wantRejects(t, c.rejects, map[int64]string{1: "empty document", 4: "no features"})
}

func TestArrowImage(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "image", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "label", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
	}, nil)
	grad := func(x, y int) uint8 { return uint8(60*y + 10*x) } // 4×4 gradient
	img4 := pngGray(t, 4, 4, grad)
	img8 := pngGray(t, 8, 8, func(x, y int) uint8 { return grad(x/2, y/2) }) // the same, doubled
	rec := buildRecord(t, mem, schema, func(b *array.RecordBuilder) {
		b.Field(0).(*array.BinaryBuilder).AppendValues([][]byte{img4, []byte("not an image"), img8, encodePGM(4, 4, grad)}, nil)
		b.Field(1).(*array.Uint8Builder).AppendValues([]uint8{1, 2, 3, 4}, nil)
	})
	data := writeIPC(t, schema, true, rec)
	rec.Release()
	src := NewArrowFile(bytes.NewReader(data))
	src.Allocator = mem
	defer src.Close()
	c := readAll(t, src)
	if err := src.Err(); err != nil {
		t.Fatal(err)
	}
	if len(c.dense) != 3 || c.dim != 16 {
		t.Fatalf("got %d images of %d pixels, want 3 of 16", len(c.dense), c.dim)
	}
	// The 8×8 image halves back to the 4×4 one exactly (2×2 block means of
	// equal pixels), and the PGM decodes like the PNG.
	for i := 1; i < 3; i++ {
		if !slices.Equal(c.dense[i], c.dense[0]) {
			t.Errorf("image %d = %v, want %v", i, c.dense[i], c.dense[0])
		}
	}
	if got, want := c.dense[0][5], float64(grad(1, 1))/255; got != want {
		t.Errorf("pixel (1,1) = %g, want %g", got, want)
	}
	wantRejects(t, c.rejects, map[int64]string{1: "unknown image format"})
}

func TestArrowBadInputs(t *testing.T) {
	mem := memory.NewGoAllocator()
	f32 := arrow.PrimitiveTypes.Float32
	md := arrow.NewMetadata([]string{"dim"}, []string{"4"})
	bad := []struct {
		name   string
		fields []arrow.Field
		md     *arrow.Metadata
		want   string
	}{
		{"no feature", []arrow.Field{{Name: "label", Type: arrow.PrimitiveTypes.Int64}}, nil, "no feature column"},
		{"two forms", []arrow.Field{{Name: "x", Type: arrow.ListOf(f32)}, {Name: "text", Type: arrow.BinaryTypes.String}}, nil, "several feature forms"},
		{"float label", []arrow.Field{{Name: "text", Type: arrow.BinaryTypes.String}, {Name: "label", Type: arrow.PrimitiveTypes.Float64}}, nil, "column label has type float64"},
		{"x of ints", []arrow.Field{{Name: "x", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32)}}, nil, "column x has type"},
		{"x scalar", []arrow.Field{{Name: "x", Type: f32}}, nil, "column x has type"},
		{"indices alone", []arrow.Field{{Name: "indices", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32)}}, &md, "both an indices and a values"},
		{"no dim", []arrow.Field{{Name: "indices", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32)}, {Name: "values", Type: arrow.ListOf(f32)}}, nil, "metadata key \"dim\""},
		{"image utf8", []arrow.Field{{Name: "image", Type: arrow.BinaryTypes.String}}, nil, "column image has type"},
		{"dup column", []arrow.Field{{Name: "text", Type: arrow.BinaryTypes.String}, {Name: "text", Type: arrow.BinaryTypes.String}}, nil, "2 columns named"},
	}
	for _, c := range bad {
		schema := arrow.NewSchema(c.fields, c.md)
		rec := buildRecord(t, mem, schema, func(b *array.RecordBuilder) {})
		data := writeIPC(t, schema, false, rec)
		rec.Release()
		src := NewArrowStream(bytes.NewReader(data))
		_, err := src.Form()
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "sources: ") {
			t.Errorf("%s: Form() error = %v, want one containing %q", c.name, err, c.want)
		}
		if src.Next() {
			t.Errorf("%s: Next() = true", c.name)
		}
		src.Close()
	}

	// Truncated stream: the records before the cut are read, then Err is set.
	r1 := denseRecord(t, mem, denseRows1)
	r2 := denseRecord(t, mem, denseRows2)
	data := writeIPC(t, denseSchema, false, r1, r2)
	file := writeIPC(t, denseSchema, true, r1, r2)
	r1.Release()
	r2.Release()
	src := NewArrowStream(bytes.NewReader(data[:len(data)-60]))
	c := readAll(t, src)
	if src.Err() == nil {
		t.Errorf("truncated stream: no error after %d samples", len(c.dense))
	}
	if len(c.dense) != 2 {
		t.Errorf("truncated stream: %d samples before the cut, want 2", len(c.dense))
	}
	src.Close()
	for name, in := range map[string]*Arrow{
		"truncated file": NewArrowFile(bytes.NewReader(file[:len(file)-30])),
		"not arrow":      NewArrowStream(strings.NewReader("id,x\n1,2\n")),
		"empty":          NewArrowStream(strings.NewReader("")),
		"not parquet":    NewParquet(bytes.NewReader(data)),
	} {
		if _, err := in.Form(); err == nil {
			t.Errorf("%s: no error", name)
		}
		in.Close()
	}
}
