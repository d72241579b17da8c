package sources

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// LoadModel reads the saved model at path (written by sinks.SaveModel).
// Errors name the file.
func LoadModel(path string) (*model.Snapshot, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("sources: model: %w", err)
	}
	defer f.Close()
	s, err := ReadModel(f, nil)
	if err != nil {
		return nil, fmt.Errorf("%w (file %s)", err, path)
	}
	return s, nil
}

// ReadModel reads a saved model from the Arrow IPC file r, checks its format
// version and shapes (model.Snapshot.Validate), and returns it. The
// matrices are copied out of the Arrow buffers, which mem allocates (nil
// means memory.DefaultAllocator) and which are all released on return.
// A file that is not a model, is truncated or has another version gives an
// error that says so; a version mismatch wraps model.ErrSnapshotVersion.
// The file's SHA-256 (sinks.WriteModel) is checked before its arrays are
// decoded: a changed byte anywhere is reported as a corrupt file, and a
// file without a checksum (written before checksums) is refused with the
// advice to refit it.
func ReadModel(r ipc.ReadAtSeeker, mem memory.Allocator) (s *model.Snapshot, err error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	// Arrow's readers can panic on corrupt buffers; a bad file must give an
	// error, not a crash.
	defer func() {
		if p := recover(); p != nil {
			s, err = nil, fmt.Errorf("sources: model: corrupt file: %v", p)
		}
	}()
	// Read the batches in stream order through the guarded reader, as
	// NewArrowFile does: ipc.FileReader trusts the footer's offsets and
	// sizes and allocates them up front.
	var fr recordReader
	var schema *arrow.Schema
	body, err := fileStream(r)
	if err == nil {
		fr, schema, err = newGuardedReader(bufio.NewReader(body), body.Size(), mem, DefaultMaxDecodedBytes)
	}
	if err != nil {
		return nil, fmt.Errorf("sources: model: not an Arrow IPC file (truncated, or not written by \"nmfstream fit\"): %w", err)
	}
	defer fr.Release()
	md := schema.Metadata()
	if v, _ := metaValue(md, model.SnapshotMetaFormat); v != model.SnapshotFormat {
		return nil, errors.New("sources: model: an Arrow file but not an nmfstream model (no nmfstream.format metadata): give the file written by \"nmfstream fit --save\"")
	}
	vs, _ := metaValue(md, model.SnapshotMetaVersion)
	version, err := strconv.Atoi(vs)
	if err != nil {
		return nil, fmt.Errorf("sources: model: bad version %q", vs)
	}
	if version != model.SnapshotVersion {
		return nil, fmt.Errorf("sources: model: %w %d (this build reads version %d): refit the model with this build",
			model.ErrSnapshotVersion, version, model.SnapshotVersion)
	}
	sum, ok := metaValue(md, modelMetaChecksum)
	if !ok {
		return nil, errors.New("sources: model: no checksum (" + modelMetaChecksum + " metadata): the file is corrupt, or was written by an nmfstream older than checksummed models: refit it with this build (fit --save)")
	}
	if err := checkModelSum(r, sum); err != nil {
		return nil, fmt.Errorf("sources: model: corrupt file: %w", err)
	}
	hs, _ := metaValue(md, model.SnapshotMetaHeader)
	var h model.SnapshotHeader
	if err := json.Unmarshal([]byte(hs), &h); err != nil {
		return nil, fmt.Errorf("sources: model: bad header: %w", err)
	}
	s = &model.Snapshot{Version: version}
	if err := s.SetHeader(h); err != nil {
		return nil, fmt.Errorf("sources: model: %w", err)
	}
	if err := checkModelSchema(schema); err != nil {
		return nil, err
	}
	for fr.Next() {
		if err := readModelRecord(s, fr.Record()); err != nil {
			return nil, err
		}
	}
	if err := fr.Err(); err != nil {
		return nil, fmt.Errorf("sources: model: reading record batches: %w", err)
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("sources: model: %w", err)
	}
	return s, nil
}

// modelMetaChecksum is sinks.ModelMetaChecksum: the key of the file's
// SHA-256 (see sinks.WriteModel).
const modelMetaChecksum = "nmfstream.sha256"

// checkModelSum checks the SHA-256 of the model file r against sum, the
// value of its checksum metadata: the hash of the whole file with sum's
// two copies (in the schema message and in the footer) read as 64 '0'
// characters. It reads the file once more, in pieces.
func checkModelSum(r ipc.ReadAtSeeker, sum string) error {
	want, err := hex.DecodeString(sum)
	if err != nil || len(want) != sha256.Size || strings.ToLower(sum) != sum {
		return errors.New("bad checksum value")
	}
	size, err := r.Seek(0, io.SeekEnd)
	if err != nil {
		return err
	}
	var b [4]byte
	if _, err := r.ReadAt(b[:], arrowFileHead+4); err != nil {
		return err
	}
	schemaLen := int64(binary.LittleEndian.Uint32(b[:]))
	if _, err := r.ReadAt(b[:], size-arrowFileTail); err != nil {
		return err
	}
	footerLen := int64(binary.LittleEndian.Uint32(b[:]))
	var at [2]int64
	for i, reg := range [2][2]int64{
		{arrowFileHead + 8, arrowFileHead + 8 + schemaLen},
		{size - arrowFileTail - footerLen, size - arrowFileTail},
	} {
		const maxSchema = 64 << 20
		if reg[0] < 0 || reg[1] > size || reg[1]-reg[0] > maxSchema || reg[1] < reg[0] {
			return errors.New("schema out of the file")
		}
		buf := make([]byte, reg[1]-reg[0])
		if _, err := r.ReadAt(buf, reg[0]); err != nil {
			return err
		}
		if n := bytes.Count(buf, []byte(sum)); n != 1 {
			return fmt.Errorf("the checksum is %d times in copy %d of the schema, want once", n, i+1)
		}
		at[i] = reg[0] + int64(bytes.Index(buf, []byte(sum)))
	}
	if at[0] >= at[1] || at[0]+int64(len(sum)) > at[1] {
		return errors.New("checksum copies out of order")
	}
	h := sha256.New()
	zeros := bytes.Repeat([]byte{'0'}, len(sum))
	pos := int64(0)
	for _, p := range at {
		if _, err := io.Copy(h, io.NewSectionReader(r, pos, p-pos)); err != nil {
			return err
		}
		h.Write(zeros)
		pos = p + int64(len(sum))
	}
	if _, err := io.Copy(h, io.NewSectionReader(r, pos, size-pos)); err != nil {
		return err
	}
	if !bytes.Equal(h.Sum(nil), want) {
		return errors.New("checksum mismatch (a byte of the file changed since it was written)")
	}
	return nil
}

func metaValue(md arrow.Metadata, key string) (string, bool) {
	i := md.FindKey(key)
	if i < 0 {
		return "", false
	}
	return md.Values()[i], true
}

func checkModelSchema(sc *arrow.Schema) error {
	want := []struct {
		name string
		typ  arrow.DataType
	}{
		{"name", arrow.BinaryTypes.String},
		{"kind", arrow.BinaryTypes.String},
		{"rows", arrow.PrimitiveTypes.Int64},
		{"cols", arrow.PrimitiveTypes.Int64},
		{"data", arrow.LargeListOf(arrow.PrimitiveTypes.Float64)},
		{"ints", arrow.LargeListOf(arrow.PrimitiveTypes.Int64)},
		{"indptr", arrow.LargeListOf(arrow.PrimitiveTypes.Int64)},
		{"bytes", arrow.BinaryTypes.LargeBinary},
	}
	if sc.NumFields() != len(want) {
		return fmt.Errorf("sources: model: %d columns, want %d", sc.NumFields(), len(want))
	}
	for i, w := range want {
		f := sc.Field(i)
		if f.Name != w.name || !arrow.TypeEqual(f.Type, w.typ) {
			return fmt.Errorf("sources: model: column %d is %s %s, want %s %s", i, f.Name, f.Type, w.name, w.typ)
		}
	}
	return nil
}

func readModelRecord(s *model.Snapshot, rec arrow.Record) error {
	names := rec.Column(0).(*array.String)
	kinds := rec.Column(1).(*array.String)
	rows := rec.Column(2).(*array.Int64)
	cols := rec.Column(3).(*array.Int64)
	data := rec.Column(4).(*array.LargeList)
	ints := rec.Column(5).(*array.LargeList)
	indptr := rec.Column(6).(*array.LargeList)
	bytes := rec.Column(7).(*array.LargeBinary)
	for i := 0; i < int(rec.NumRows()); i++ {
		name, kind := names.Value(i), kinds.Value(i)
		r, c := rows.Value(i), cols.Value(i)
		fail := func(format string, args ...any) error {
			return fmt.Errorf("sources: model: array %q: %s", name, fmt.Sprintf(format, args...))
		}
		if r < 0 || c < 0 {
			return fail("negative shape %d×%d", r, c)
		}
		switch kind {
		case "dense":
			v := float64s(data, i)
			if r*c != int64(len(v)) || (r == 0) != (c == 0) || r == 0 {
				return fail("shape %d×%d but %d values", r, c, len(v))
			}
			m := mat.NewDense(int(r), int(c), v)
			switch {
			case name == "U":
				s.U = m
			case name == "V":
				s.V = m
			case name == "train":
				s.TrainDense = m
			case strings.HasPrefix(name, "extra."):
				if s.Extra == nil {
					s.Extra = map[string]*mat.Dense{}
				}
				s.Extra[strings.TrimPrefix(name, "extra.")] = m
			default:
				return fail("unknown dense array")
			}
		case "csr":
			if name != "train" {
				return fail("unknown sparse array")
			}
			val := float64s(data, i)
			ind := int64s(ints, i)
			ptr := int64s(indptr, i)
			if int64(len(ptr)) != r+1 || len(ind) != len(val) {
				return fail("sparse %d×%d with %d row pointers, %d indices, %d values", r, c, len(ptr), len(ind), len(val))
			}
			m := sparse.Zeros(int(r), int(c))
			m.Indptr, m.Ind, m.Val = ptr, ind, val
			if err := m.Validate(); err != nil {
				return fail("%v", err)
			}
			s.TrainSparse = m
		case "ints":
			if name != "labels" {
				return fail("unknown int array")
			}
			v := int64s(ints, i)
			if int64(len(v)) != r {
				return fail("%d values, header says %d", len(v), r)
			}
			s.Labels = v
		case "bytes":
			if name != "vectorizer" {
				return fail("unknown bytes")
			}
			if bytes.IsNull(i) {
				return fail("null")
			}
			s.Vectorizer = append([]byte(nil), bytes.Value(i)...)
		default:
			return fail("unknown kind %q", kind)
		}
	}
	return nil
}

// float64s copies list element i of a large_list<float64>.
func float64s(l *array.LargeList, i int) []float64 {
	if l.IsNull(i) {
		return nil
	}
	lo, hi := l.ValueOffsets(i)
	vals := l.ListValues().(*array.Float64).Float64Values()
	return append([]float64(nil), vals[lo:hi]...)
}

// int64s copies list element i of a large_list<int64> into ints.
func int64s(l *array.LargeList, i int) []int {
	if l.IsNull(i) {
		return nil
	}
	lo, hi := l.ValueOffsets(i)
	// Slice before allocating: corrupt offsets then panic (ReadModel
	// recovers) instead of sizing the copy (a 160 TB make; FuzzModel).
	vals := l.ListValues().(*array.Int64).Int64Values()[lo:hi]
	out := make([]int, len(vals))
	for j, v := range vals {
		out[j] = int(v)
	}
	return out
}
