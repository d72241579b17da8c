package sources

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/png"
	"math"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/ipc"
)

// limitAlloc bounds what refusing a bomb may allocate: a small multiple of
// one dense row at the default limit (8·DefaultMaxDim bytes = 8 MiB), far
// below what any of the bombs asks for (gigabytes).
const limitAlloc = 4 * 8 * DefaultMaxDim

// allocated returns the bytes f allocates (runtime.MemStats.TotalAlloc,
// which counts every allocation, freed or not), and the heap in use after
// it.
func allocated(f func()) (total, heap uint64) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, after.HeapAlloc
}

// refused opens path with o, reads it through, and checks that it fails
// with a *LimitError whose message holds each of want, without allocating
// more than limitAlloc.
func refused(t *testing.T, o *Opener, path string, want ...string) {
	t.Helper()
	var err error
	total, heap := allocated(func() {
		var src Source
		if src, err = o.Open(path); err != nil {
			return
		}
		defer src.Close()
		for src.Next() {
		}
		err = src.Err()
	})
	var le *LimitError
	if !errors.As(err, &le) {
		t.Fatalf("%s: err = %v, want a *LimitError", path, err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: error %q does not say %q", path, err, w)
		}
	}
	if total > limitAlloc {
		t.Errorf("%s: refusing it allocated %d bytes (heap %d after), want at most %d", path, total, heap, limitAlloc)
	}
}

func sparseSchema(dim string) *arrow.Schema {
	md := arrow.NewMetadata([]string{MetaDim}, []string{dim})
	return arrow.NewSchema([]arrow.Field{
		{Name: ColIndices, Type: arrow.ListOf(arrow.PrimitiveTypes.Int32)},
		{Name: ColValues, Type: arrow.ListOf(arrow.PrimitiveTypes.Float64)},
	}, &md)
}

// TestSparseDimBomb: a sparse schema claiming D = 10⁸, 10¹², MaxInt64 (or
// more) is refused by Open, in every container, naming the file and the
// limit and saying how to raise it.
func TestSparseDimBomb(t *testing.T) {
	dir := t.TempDir()
	for _, dim := range []string{"100000000", "1000000000000", strconv.FormatInt(math.MaxInt64, 10), "99999999999999999999"} {
		s := sparseSchema(dim)
		for _, c := range []struct {
			name string
			data []byte
		}{
			{"stream.arrows", writeIPC(t, s, false)},
			{"file.arrow", writeIPC(t, s, true)},
			{"table.parquet", writeParquet(t, s)},
		} {
			p := writeFile(t, dir, dim+c.name, c.data)
			refused(t, &Opener{}, p, p, "sparse dimension", strconv.Itoa(DefaultMaxDim), "--max-dim")
		}
	}
	// Raised, the limit lets D = 10⁸ through: the sparse reader itself
	// allocates nothing per dimension.
	p := writeFile(t, dir, "raised.arrows", writeIPC(t, sparseSchema("100000000"), false))
	src, err := (&Opener{MaxDim: 1e8}).Open(p)
	if err != nil {
		t.Fatalf("MaxDim 1e8: %v", err)
	}
	src.Close()
}

// TestDenseWidthBomb: a fixed_size_list width or an IDX record above MaxDim.
func TestDenseWidthBomb(t *testing.T) {
	dir := t.TempDir()
	s := arrow.NewSchema([]arrow.Field{{Name: ColX, Type: arrow.FixedSizeListOf(1<<30, arrow.PrimitiveTypes.Float32)}}, nil)
	p := writeFile(t, dir, "wide.arrows", writeIPC(t, s, false))
	refused(t, &Opener{}, p, p, "fixed_size_list width", "1073741824")
	p = writeFile(t, dir, "wide.idx", idxBytes([]int{1, 2048, 1024}, nil))
	refused(t, &Opener{}, p, p, "dimension of the records [2048 1024]")
	if _, err := (&Opener{MaxDim: 1 << 21}).Open(p); err != nil {
		t.Errorf("IDX with MaxDim 2²¹: %v", err)
	}
}

// TestImageFolderBomb: a folder of 4096×4096 PNGs (a few KiB each, uniform)
// would fix D = 16.7 M; the first image is refused before it is decoded,
// and the error says to set --width and --height.
func TestImageFolderBomb(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, 4096, 4096))); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		writeFile(t, dir, fmt.Sprintf("c%d/big.png", i), buf.Bytes())
	}
	refused(t, &Opener{}, dir, filepath.Join(dir, "c0", "big.png"), "4096×4096", "16777216", "--width", "--height")
}

// arrowSchemaParquet returns a Parquet file with a small schema whose
// ARROW:schema metadata is meta, base64-encoded.
func arrowSchemaParquet(t *testing.T, meta []byte) []byte {
	md := arrow.NewMetadata([]string{arrowSchemaKey}, []string{base64.StdEncoding.EncodeToString(meta)})
	s := arrow.NewSchema([]arrow.Field{{Name: ColText, Type: arrow.BinaryTypes.String}}, &md)
	return writeParquet(t, s)
}

// serializeSchema returns s as pqarrow stores it in ARROW:schema (before
// base64): an IPC stream of the schema message alone.
func serializeSchema(t *testing.T, s *arrow.Schema) []byte {
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(s))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestParquetSchemaBomb: the ARROW:schema metadata of a Parquet file is
// checked before pqarrow decodes it: a message claiming 2 GiB, a schema of
// 100,000 fields, a struct nested 200 deep, and a Parquet schema nested
// 100 deep are refused.
func TestParquetSchemaBomb(t *testing.T) {
	dir := t.TempDir()

	claim := binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, 0xFFFFFFFF), 0x7FFFFFF8)
	claim = append(claim, make([]byte, 64)...)

	wide := make([]arrow.Field, 100000)
	for i := range wide {
		wide[i] = arrow.Field{Name: "f" + strconv.Itoa(i), Type: arrow.PrimitiveTypes.Int8}
	}
	var deep arrow.DataType = arrow.PrimitiveTypes.Int8
	for range 200 {
		deep = arrow.StructOf(arrow.Field{Name: "s", Type: deep})
	}
	var deepPq arrow.DataType = arrow.PrimitiveTypes.Int8
	for range 100 {
		deepPq = arrow.StructOf(arrow.Field{Name: "s", Type: deepPq, Nullable: true})
	}

	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"claim", arrowSchemaParquet(t, claim), "ARROW:schema"},
		{"wide", arrowSchemaParquet(t, serializeSchema(t, arrow.NewSchema(wide, nil))), "more than 65536 fields"},
		{"deep", arrowSchemaParquet(t, serializeSchema(t, arrow.NewSchema([]arrow.Field{{Name: "d", Type: deep}}, nil))), "nested deeper than 64"},
		{"deep-parquet", writeParquet(t, arrow.NewSchema([]arrow.Field{{Name: ColText, Type: arrow.BinaryTypes.String}, {Name: "d", Type: deepPq, Nullable: true}}, nil)), "nesting depth of the Parquet schema"},
	} {
		p := writeFile(t, dir, c.name+".parquet", c.data)
		var err error
		total, _ := allocated(func() {
			var src Source
			if src, err = Open(p); err == nil {
				src.Close()
			}
		})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one saying %q", c.name, err, c.want)
		}
		// Reading the footer, its thrift strings, the base64 decoding and
		// the guarded reader each take memory proportional to the file,
		// not to what its schema claims.
		if total > limitAlloc+uint64(8*len(c.data)) {
			t.Errorf("%s: refusing it allocated %d bytes for a file of %d", c.name, total, len(c.data))
		}
	}
}

// TestCSVLineLimit: a CSV input without newlines is one record over the
// bound, a reject of record 0 naming its line and length, instead of being
// buffered whole; lines within it read as before.
func TestCSVLineLimit(t *testing.T) {
	long := strings.Repeat("1,", 8<<20) // 16 MiB, one line
	var c *collected
	var err error
	total, _ := allocated(func() {
		src := NewCSV(&lineLimit{r: strings.NewReader(long), max: 1 << 16, path: "long.csv"})
		c = readAll(t, src)
		err = src.Err()
	})
	if err != nil || len(c.dense) != 0 || len(c.rejects) != 1 ||
		!strings.Contains(c.rejects[0].Reason.Error(), "record 0: line 1: 16777216 bytes, over the limit of 65536 bytes") {
		t.Errorf("rejects %v, err %v; want record 0 rejected for the line limit", c.rejects, err)
	}
	// About 5 MiB whatever the line's length (2 MiB or 16 MiB): the
	// readers' buffers, not the line.
	if total > 8<<20 {
		t.Errorf("rejecting it allocated %d bytes", total)
	}
	src := NewCSV(&lineLimit{r: strings.NewReader("1,2\n3,4\n5,6\n"), max: 4})
	c = readAll(t, src)
	if err := src.Err(); err != nil || len(c.dense) != 3 {
		t.Errorf("lines within the limit: %d rows, err %v", len(c.dense), err)
	}
}

// TestCSVFieldLimit counts a record's fields while the bytes pass: a line
// of 4 million empty fields within the line limit is refused with a few
// MiB allocated (encoding/csv made a string of each field before the
// dimension check: 2.8 GB for 30 million); commas inside quotes, and
// quoted newlines, do not count, and records within the limit are read.
func TestCSVFieldLimit(t *testing.T) {
	wide := strings.Repeat(",", 4<<20) + "\n"
	var c *collected
	var err error
	total, _ := allocated(func() {
		src := NewCSV(&lineLimit{r: strings.NewReader(wide), max: 64 << 20, path: "wide.csv", maxFields: 1 << 10})
		c = readAll(t, src)
		err = src.Err()
	})
	if err != nil || len(c.dense) != 0 || len(c.rejects) != 1 ||
		!strings.Contains(c.rejects[0].Reason.Error(), "record 0: line 1: 4194305 fields, over the limit of 1024 fields") {
		t.Errorf("rejects %v, err %v; want record 0 rejected for the field limit", c.rejects, err)
	}
	if total > 8<<20 {
		t.Errorf("rejecting it allocated %d bytes", total)
	}
	in := "text,a,b\n\"one, two, three\n, four, five\",1,2\n\"x\"\"y,\",3,4\n"
	src := NewCSV(&lineLimit{r: strings.NewReader(in), max: 1 << 10, maxFields: 3})
	src.TextColumn = Column{Name: "text"}
	c = readAll(t, src)
	if err := src.Err(); err != nil || len(c.text) != 2 {
		t.Errorf("quoted commas and newlines: %d documents, err %v", len(c.text), err)
	}
}
