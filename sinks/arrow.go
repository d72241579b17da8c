package sinks

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// ResultSchema returns the schema of result files: id (utf8), code
// (fixed_size_list<float32>[k], nullable; omitted when k is 0), pred (utf8,
// nullable) and score (float64, nullable).
func ResultSchema(k int) *arrow.Schema {
	fields := []arrow.Field{{Name: "id", Type: arrow.BinaryTypes.String}}
	if k > 0 {
		fields = append(fields, arrow.Field{Name: "code", Type: arrow.FixedSizeListOf(int32(k), arrow.PrimitiveTypes.Float32), Nullable: true})
	}
	fields = append(fields,
		arrow.Field{Name: "pred", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true})
	return arrow.NewSchema(fields, nil)
}

// Arrow writes results as Arrow IPC, one record batch per Write, with the
// schema of ResultSchema. Rows whose Results have no Codes, or whose NoCode
// is set, get a null code;
// see Results for the other nulls.
//
// Set the exported fields before the first Write.
type Arrow struct {
	// File selects the Arrow IPC file format (with a footer, for random
	// access) instead of the default IPC stream format.
	File bool
	// Allocator allocates the Arrow buffers. If nil, memory.DefaultAllocator.
	Allocator memory.Allocator
	// Metadata, if not empty, is written as the schema's key-value
	// metadata (serve's answer carries its rejected records there).
	Metadata map[string]string

	w      io.Writer
	k      int
	schema *arrow.Schema
	iw     interface {
		Write(arrow.Record) error
		Close() error
	}
	b      *array.RecordBuilder
	closed bool
}

// NewArrow returns a sink writing to w, with k code columns (0 for none).
// It does not close w. It panics if k is negative.
func NewArrow(w io.Writer, k int) *Arrow {
	if k < 0 {
		panic("sinks: negative k")
	}
	return &Arrow{w: w, k: k, schema: ResultSchema(k)}
}

func (a *Arrow) start() error {
	if a.iw != nil {
		return nil
	}
	mem := a.Allocator
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	if len(a.Metadata) > 0 {
		md := arrow.MetadataFrom(a.Metadata)
		a.schema = arrow.NewSchema(a.schema.Fields(), &md)
	}
	if a.File {
		fw, err := ipc.NewFileWriter(&offsetWriter{w: a.w}, ipc.WithSchema(a.schema), ipc.WithAllocator(mem))
		if err != nil {
			return fmt.Errorf("sinks: arrow: %w", err)
		}
		a.iw = fw
	} else {
		a.iw = ipc.NewWriter(a.w, ipc.WithSchema(a.schema), ipc.WithAllocator(mem))
	}
	a.b = array.NewRecordBuilder(mem, a.schema)
	return nil
}

// Write appends r as one record batch.
func (a *Arrow) Write(r Results) error {
	if a.closed {
		return errors.New("sinks: arrow: write after Close")
	}
	if err := r.check(a.k); err != nil {
		return err
	}
	if err := a.start(); err != nil {
		return err
	}
	n := r.Len()
	f := 0
	a.b.Field(f).(*array.StringBuilder).AppendValues(r.IDs, nil)
	f++
	if a.k > 0 {
		cb := a.b.Field(f).(*array.FixedSizeListBuilder)
		vb := cb.ValueBuilder().(*array.Float32Builder)
		if r.Codes == nil || r.Codes.IsEmpty() {
			cb.AppendNulls(n)
		} else {
			vb.Reserve(n * a.k)
			for i := 0; i < n; i++ {
				if !r.hasCode(i) {
					cb.AppendNull()
					continue
				}
				cb.Append(true)
				for _, v := range r.Codes.RawRowView(i) {
					vb.UnsafeAppend(float32(v))
				}
			}
		}
		f++
	}
	pb := a.b.Field(f).(*array.StringBuilder)
	for i := 0; i < n; i++ {
		if r.Preds == nil || r.Preds[i] == "" {
			pb.AppendNull()
		} else {
			pb.Append(r.Preds[i])
		}
	}
	f++
	sb := a.b.Field(f).(*array.Float64Builder)
	for i := 0; i < n; i++ {
		if r.Scores == nil || math.IsNaN(r.Scores[i]) {
			sb.AppendNull()
		} else {
			sb.Append(r.Scores[i])
		}
	}
	rec := a.b.NewRecord()
	defer rec.Release()
	if err := a.iw.Write(rec); err != nil {
		return fmt.Errorf("sinks: arrow: %w", err)
	}
	return nil
}

// Close ends the output (stream end marker or file footer); a sink that got
// no Write still writes the schema. It does not close the writer given to
// NewArrow.
func (a *Arrow) Close() error {
	if a.closed {
		return nil
	}
	err := a.start()
	a.closed = true
	if err != nil {
		return err
	}
	a.b.Release()
	if err := a.iw.Close(); err != nil {
		return fmt.Errorf("sinks: arrow: %w", err)
	}
	return nil
}
