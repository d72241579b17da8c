package sinks

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// Saved model files (written by WriteModel, read by sources.ReadModel) are
// Arrow IPC files with one record batch in which each row is one named
// array:
//
//	name    utf8                     "U", "V", "train", "labels", "vectorizer", "extra.<name>"
//	kind    utf8                     "dense", "csr", "ints" or "bytes"
//	rows    int64, cols int64        the shape (dense and csr)
//	data    large_list<float64>      dense entries row-major, or csr values
//	ints    large_list<int64>        csr column indices, or the ints
//	indptr  large_list<int64>        csr row pointers (rows+1)
//	bytes   large_binary             the bytes
//
// and the schema metadata holds the scalars: key ModelMetaFormat is
// ModelFormat, key ModelMetaVersion the decimal model.SnapshotVersion, and
// key ModelMetaHeader a JSON object (ModelHeader). Floats are stored as
// float64 bits, so a round trip is exact.
//
// Key ModelMetaChecksum holds the SHA-256 of the whole file, in lowercase
// hex (64 characters), computed with that value itself replaced by 64
// '0' characters wherever it occurs: once in the schema message at the
// start of the file and once in the footer's copy of the schema. So
// every byte of the file is checked, padding included, and the file stays
// an ordinary Arrow IPC file. sources.ReadModel refuses a file whose
// checksum does not match (corrupt) or that has none (corrupt, or
// written before checksums: refit it).
const (
	ModelFormat       = model.SnapshotFormat
	ModelMetaFormat   = model.SnapshotMetaFormat
	ModelMetaVersion  = model.SnapshotMetaVersion
	ModelMetaHeader   = model.SnapshotMetaHeader
	ModelMetaChecksum = "nmfstream.sha256"
)

// checksumPlaceholder stands for the checksum while it is computed.
var checksumPlaceholder = bytes.Repeat([]byte{'0'}, 2*sha256.Size)

// ModelHeader is the JSON object in the schema metadata of a saved model:
// the scalar fields of model.Snapshot.
type ModelHeader = model.SnapshotHeader

// ModelSchema returns the schema of a saved model with the given metadata.
func ModelSchema(md *arrow.Metadata) *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: "name", Type: arrow.BinaryTypes.String},
		{Name: "kind", Type: arrow.BinaryTypes.String},
		{Name: "rows", Type: arrow.PrimitiveTypes.Int64},
		{Name: "cols", Type: arrow.PrimitiveTypes.Int64},
		{Name: "data", Type: arrow.LargeListOf(arrow.PrimitiveTypes.Float64), Nullable: true},
		{Name: "ints", Type: arrow.LargeListOf(arrow.PrimitiveTypes.Int64), Nullable: true},
		{Name: "indptr", Type: arrow.LargeListOf(arrow.PrimitiveTypes.Int64), Nullable: true},
		{Name: "bytes", Type: arrow.BinaryTypes.LargeBinary, Nullable: true},
	}, md)
}

// WriteModel validates s and writes it to w as an Arrow IPC file. mem
// allocates the Arrow buffers; nil means memory.DefaultAllocator.
func WriteModel(w io.Writer, s *model.Snapshot, mem memory.Allocator) error {
	if err := s.Validate(); err != nil {
		return fmt.Errorf("sinks: write model: %w", err)
	}
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	h := s.Header()
	hj, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("sinks: write model: %w", err)
	}
	md := arrow.NewMetadata(
		[]string{ModelMetaFormat, ModelMetaVersion, ModelMetaHeader, ModelMetaChecksum},
		[]string{ModelFormat, strconv.Itoa(s.Version), string(hj), string(checksumPlaceholder)})
	schema := ModelSchema(&md)

	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	mb := modelRows{b: b}
	mb.dense("U", s.U)
	mb.dense("V", s.V)
	if s.TrainDense != nil {
		mb.dense("train", s.TrainDense)
	}
	if s.TrainSparse != nil {
		mb.csr("train", s.TrainSparse)
	}
	mb.ints("labels", s.Labels)
	if s.Vectorizer != nil {
		mb.bytes("vectorizer", s.Vectorizer)
	}
	names := make([]string, 0, len(s.Extra))
	for name := range s.Extra {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		mb.dense("extra."+name, s.Extra[name])
	}
	rec := b.NewRecord()
	defer rec.Release()

	// The file is made in memory: its checksum goes into its beginning.
	var buf bytes.Buffer
	fw, err := ipc.NewFileWriter(&offsetWriter{w: &buf}, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	if err != nil {
		return fmt.Errorf("sinks: write model: %w", err)
	}
	if err := fw.Write(rec); err != nil {
		fw.Close()
		return fmt.Errorf("sinks: write model: %w", err)
	}
	if err := fw.Close(); err != nil {
		return fmt.Errorf("sinks: write model: %w", err)
	}
	file := buf.Bytes()
	at, err := checksumPlaces(file)
	if err != nil {
		return fmt.Errorf("sinks: write model: %w", err)
	}
	sum := sha256.Sum256(file)
	for _, p := range at {
		hex.Encode(file[p:p+len(checksumPlaceholder)], sum[:])
	}
	if _, err := w.Write(file); err != nil {
		return fmt.Errorf("sinks: write model: %w", err)
	}
	return nil
}

// checksumPlaces returns the offsets of the checksum placeholder in the
// Arrow IPC file b: one in the schema message, one in the footer.
func checksumPlaces(b []byte) ([2]int, error) {
	const head, tail = 8, 10 // magic and padding; footer length and magic
	var at [2]int
	if len(b) < head+8+tail {
		return at, fmt.Errorf("an Arrow file of %d bytes", len(b))
	}
	schemaLen := int(binary.LittleEndian.Uint32(b[head+4:]))
	footerLen := int(binary.LittleEndian.Uint32(b[len(b)-tail:]))
	regions := [2][2]int{{head + 8, head + 8 + schemaLen}, {len(b) - tail - footerLen, len(b) - tail}}
	for i, r := range regions {
		n := bytes.Count(b[r[0]:r[1]], checksumPlaceholder)
		if n != 1 {
			return at, fmt.Errorf("the checksum placeholder is %d times in the schema copy %d", n, i)
		}
		at[i] = r[0] + bytes.Index(b[r[0]:r[1]], checksumPlaceholder)
	}
	return at, nil
}

// SaveModel writes s to the file path, replacing it atomically: the model
// goes to a temporary file in the same directory, which is renamed over
// path once complete, so a crash never leaves a half-written model.
func SaveModel(path string, s *model.Snapshot) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("sinks: save model: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := WriteModel(f, s, nil); err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil { // CreateTemp makes it 0600
		return fmt.Errorf("sinks: save model: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sinks: save model: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("sinks: save model: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("sinks: save model: %w", err)
	}
	return nil
}

// modelRows appends the rows of a saved model to a record builder.
type modelRows struct {
	b *array.RecordBuilder
}

func (m modelRows) row(name, kind string, rows, cols int) {
	m.b.Field(0).(*array.StringBuilder).Append(name)
	m.b.Field(1).(*array.StringBuilder).Append(kind)
	m.b.Field(2).(*array.Int64Builder).Append(int64(rows))
	m.b.Field(3).(*array.Int64Builder).Append(int64(cols))
}

func (m modelRows) floats(i int, v []float64) {
	lb := m.b.Field(i).(*array.LargeListBuilder)
	lb.Append(true)
	lb.ValueBuilder().(*array.Float64Builder).AppendValues(v, nil)
}

func (m modelRows) int64s(i int, v []int) {
	lb := m.b.Field(i).(*array.LargeListBuilder)
	lb.Append(true)
	vb := lb.ValueBuilder().(*array.Int64Builder)
	vb.Reserve(len(v))
	for _, x := range v {
		vb.UnsafeAppend(int64(x))
	}
}

func (m modelRows) null(i int) { m.b.Field(i).AppendNull() }

func (m modelRows) dense(name string, a *mat.Dense) {
	r, c := a.Dims()
	m.row(name, "dense", r, c)
	raw := a.RawMatrix()
	if raw.Stride == c {
		m.floats(4, raw.Data[:r*c])
	} else {
		flat := make([]float64, 0, r*c)
		for i := 0; i < r; i++ {
			flat = append(flat, a.RawRowView(i)[:c]...)
		}
		m.floats(4, flat)
	}
	m.null(5)
	m.null(6)
	m.null(7)
}

func (m modelRows) csr(name string, a *sparse.CSR) {
	r, c := a.Dims()
	m.row(name, "csr", r, c)
	m.floats(4, a.Val)
	m.int64s(5, a.Ind)
	m.int64s(6, a.Indptr)
	m.null(7)
}

func (m modelRows) ints(name string, v []int) {
	m.row(name, "ints", len(v), 1)
	m.null(4)
	m.int64s(5, v)
	m.null(6)
	m.null(7)
}

func (m modelRows) bytes(name string, v []byte) {
	m.row(name, "bytes", len(v), 1)
	m.null(4)
	m.null(5)
	m.null(6)
	m.b.Field(7).(*array.BinaryBuilder).Append(v)
}
