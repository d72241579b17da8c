package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"gonum.org/v1/gonum/mat"
)

// The output file of project and classify (DESIGN.md §5): one row per
// usable input record, in input order, with columns
//
//	id      int64 or utf8 (as the input's ids; null when the record has none)
//	offset  int64, the record's 0-based position in the input
//	code    fixed_size_list<float32>[K], the record's code
//	pred    int64 or utf8 (as the training labels), classify only
//	score   float64, the prediction's confidence, classify only
//
// It is written here rather than through a sinks type because sinks has
// no Arrow output writer yet; move it there when it does.
type output struct {
	ids     []string
	offsets []int64
	codes   *mat.Dense
	preds   []string // nil for project
	intPred bool
	scores  []float64
}

func (o *output) write(path string) (err error) {
	mem := memory.DefaultAllocator
	n, k := o.codes.Dims()
	intIDs := true
	for _, id := range o.ids {
		if id == "" {
			continue
		}
		if _, err := strconv.ParseInt(id, 10, 64); err != nil {
			intIDs = false
			break
		}
	}
	idType := arrow.DataType(arrow.BinaryTypes.String)
	if intIDs {
		idType = arrow.PrimitiveTypes.Int64
	}
	fields := []arrow.Field{
		{Name: "id", Type: idType, Nullable: true},
		{Name: "offset", Type: arrow.PrimitiveTypes.Int64},
		{Name: "code", Type: arrow.FixedSizeListOf(int32(k), arrow.PrimitiveTypes.Float32)},
	}
	if o.preds != nil {
		pt := arrow.DataType(arrow.BinaryTypes.String)
		if o.intPred {
			pt = arrow.PrimitiveTypes.Int64
		}
		fields = append(fields,
			arrow.Field{Name: "pred", Type: pt, Nullable: true},
			arrow.Field{Name: "score", Type: arrow.PrimitiveTypes.Float64})
	}
	schema := arrow.NewSchema(fields, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for i := 0; i < n; i++ {
		switch ib := b.Field(0).(type) {
		case *array.Int64Builder:
			if o.ids[i] == "" {
				ib.AppendNull()
			} else {
				v, _ := strconv.ParseInt(o.ids[i], 10, 64)
				ib.Append(v)
			}
		case *array.StringBuilder:
			if o.ids[i] == "" {
				ib.AppendNull()
			} else {
				ib.Append(o.ids[i])
			}
		}
		b.Field(1).(*array.Int64Builder).Append(o.offsets[i])
		lb := b.Field(2).(*array.FixedSizeListBuilder)
		lb.Append(true)
		vb := lb.ValueBuilder().(*array.Float32Builder)
		for _, v := range o.codes.RawRowView(i) {
			vb.Append(float32(v))
		}
		if o.preds != nil {
			switch pb := b.Field(3).(type) {
			case *array.Int64Builder:
				v, err := strconv.ParseInt(o.preds[i], 10, 64)
				if err != nil {
					pb.AppendNull()
				} else {
					pb.Append(v)
				}
			case *array.StringBuilder:
				pb.Append(o.preds[i])
			}
			b.Field(4).(*array.Float64Builder).Append(o.scores[i])
		}
	}
	rec := b.NewRecord()
	defer rec.Release()

	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := w.Write(rec); err != nil {
		w.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return w.Close()
}
