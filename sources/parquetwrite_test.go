package sources

import (
	"bytes"
	"encoding/base64"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/file"
	"github.com/apache/arrow/go/v15/parquet/metadata"
	"github.com/apache/arrow/go/v15/parquet/schema"
)

// writeParquet encodes records as a Parquet file laid out as arrow-go's
// pqarrow writes it (pqarrow.NewFileWriter with WithStoreSchema, default
// properties), with the file writer of package parquet/file: one row
// group per record; lists in the three-level LIST layout (an optional
// group for a nullable list, a repeated group "list", the element
// "element"); strings as UTF-8 byte arrays, Int8 as an 8-bit INT32; the
// schema's metadata as the file's key-value metadata, followed by the
// Arrow schema (ARROW:schema: an IPC stream of the schema, base64), as
// pyarrow stores it too. Dictionary encoding and no compression, the
// defaults. Structs may appear in the schema of a file without records;
// records hold primitives and lists of primitives.
//
// It does not use pqarrow, whose conversions link arrow/compute: that
// package alone was a fifth of the compilation of a cold go test ./...
// (BENCHMARKS.md, "Build time").
func writeParquet(t testing.TB, sc *arrow.Schema, recs ...arrow.Record) []byte {
	t.Helper()
	var nodes schema.FieldList
	for _, f := range sc.Fields() {
		nodes = append(nodes, parquetNode(t, f))
	}
	root, err := schema.NewGroupNode("schema", parquet.Repetitions.Repeated, nodes, -1)
	if err != nil {
		t.Fatal(err)
	}
	meta := metadata.KeyValueMetadata{}
	for i, k := range sc.Metadata().Keys() {
		meta.Append(k, sc.Metadata().Values()[i])
	}
	var ser bytes.Buffer
	iw := ipc.NewWriter(&ser, ipc.WithSchema(sc))
	if err := iw.Close(); err != nil {
		t.Fatal(err)
	}
	meta.Append(arrowSchemaKey, base64.StdEncoding.EncodeToString(ser.Bytes()))

	var buf bytes.Buffer
	w := file.NewParquetWriter(&buf, root, file.WithWriteMetadata(meta))
	for _, rec := range recs {
		rg := w.AppendRowGroup()
		for i, col := range rec.Columns() {
			cw, err := rg.NextColumn()
			if err != nil {
				t.Fatal(err)
			}
			writeParquetColumn(t, cw, sc.Field(i), col)
		}
		if err := rg.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// repetition is a field's Parquet repetition: optional if nullable.
func repetition(nullable bool) parquet.Repetition {
	if nullable {
		return parquet.Repetitions.Optional
	}
	return parquet.Repetitions.Required
}

// parquetNode returns the Parquet schema node of f.
func parquetNode(t testing.TB, f arrow.Field) schema.Node {
	t.Helper()
	rep := repetition(f.Nullable)
	var n schema.Node
	var err error
	switch typ := f.Type.(type) {
	case *arrow.Float32Type:
		n, err = schema.NewPrimitiveNode(f.Name, rep, parquet.Types.Float, -1, -1)
	case *arrow.Float64Type:
		n, err = schema.NewPrimitiveNode(f.Name, rep, parquet.Types.Double, -1, -1)
	case *arrow.Int8Type:
		n, err = schema.NewPrimitiveNodeLogical(f.Name, rep, schema.NewIntLogicalType(8, true), parquet.Types.Int32, -1, -1)
	case *arrow.Int32Type:
		n, err = schema.NewPrimitiveNodeLogical(f.Name, rep, schema.NewIntLogicalType(32, true), parquet.Types.Int32, -1, -1)
	case *arrow.Int64Type:
		n, err = schema.NewPrimitiveNodeLogical(f.Name, rep, schema.NewIntLogicalType(64, true), parquet.Types.Int64, -1, -1)
	case *arrow.StringType:
		n, err = schema.NewPrimitiveNodeLogical(f.Name, rep, schema.StringLogicalType{}, parquet.Types.ByteArray, -1, -1)
	case *arrow.BinaryType:
		n, err = schema.NewPrimitiveNode(f.Name, rep, parquet.Types.ByteArray, -1, -1)
	case arrow.ListLikeType: // list, fixed_size_list
		elem := parquetNode(t, typ.ElemField())
		if elem, err = renamed(t, elem, "element"); err != nil {
			break
		}
		var list *schema.GroupNode
		if list, err = schema.NewGroupNode("list", parquet.Repetitions.Repeated, schema.FieldList{elem}, -1); err != nil {
			break
		}
		n, err = schema.NewGroupNodeLogical(f.Name, rep, schema.FieldList{list}, schema.NewListLogicalType(), -1)
	case *arrow.StructType:
		var fields schema.FieldList
		for _, c := range typ.Fields() {
			fields = append(fields, parquetNode(t, c))
		}
		n, err = schema.NewGroupNode(f.Name, rep, fields, -1)
	default:
		t.Fatalf("writeParquet: field %s: type %s not supported", f.Name, f.Type)
	}
	if err != nil {
		t.Fatalf("writeParquet: field %s: %v", f.Name, err)
	}
	return n
}

// renamed returns the primitive node n under another name.
func renamed(t testing.TB, n schema.Node, name string) (schema.Node, error) {
	p, ok := n.(*schema.PrimitiveNode)
	if !ok {
		t.Fatalf("writeParquet: list of %s: nested lists and structs are not supported", n.Name())
	}
	return schema.NewPrimitiveNodeLogical(name, p.RepetitionType(), p.LogicalType(), p.PhysicalType(), p.TypeLength(), -1)
}

// writeParquetColumn writes col, of field f, to the column chunk writer
// cw: the definition levels (and, for a list, repetition levels) of each
// row and its non-null values.
func writeParquetColumn(t testing.TB, cw file.ColumnChunkWriter, f arrow.Field, col arrow.Array) {
	t.Helper()
	var def, rep []int16
	var idx []int // the values written: positions in the leaf array
	leaf := col
	if l, ok := col.(array.ListLike); ok {
		leaf = l.ListValues()
		elemNullable := f.Type.(arrow.ListLikeType).ElemField().Nullable
		// Levels: 0 a null list (if nullable), listDef an empty one,
		// listDef+1 a null element (if elements are nullable), max a value.
		listDef := int16(0)
		if f.Nullable {
			listDef = 1
		}
		maxDef := listDef + 1
		if elemNullable {
			maxDef++
		}
		for i := 0; i < l.Len(); i++ {
			if l.IsNull(i) {
				def, rep = append(def, 0), append(rep, 0)
				continue
			}
			start, end := l.ValueOffsets(i)
			if start == end {
				def, rep = append(def, listDef), append(rep, 0)
				continue
			}
			for j := start; j < end; j++ {
				r := int16(1)
				if j == start {
					r = 0
				}
				rep = append(rep, r)
				if leaf.IsNull(int(j)) {
					def = append(def, maxDef-1)
					continue
				}
				def = append(def, maxDef)
				idx = append(idx, int(j))
			}
		}
	} else {
		for i := 0; i < col.Len(); i++ {
			if col.IsNull(i) {
				def = append(def, 0)
				continue
			}
			def = append(def, 1)
			idx = append(idx, i)
		}
		if !f.Nullable {
			def = nil
		}
	}
	var err error
	switch cw := cw.(type) {
	case *file.Float32ColumnChunkWriter:
		v := leaf.(*array.Float32)
		vals := make([]float32, len(idx))
		for k, i := range idx {
			vals[k] = v.Value(i)
		}
		_, err = cw.WriteBatch(vals, def, rep)
	case *file.Float64ColumnChunkWriter:
		v := leaf.(*array.Float64)
		vals := make([]float64, len(idx))
		for k, i := range idx {
			vals[k] = v.Value(i)
		}
		_, err = cw.WriteBatch(vals, def, rep)
	case *file.Int32ColumnChunkWriter:
		vals := make([]int32, len(idx))
		for k, i := range idx {
			switch v := leaf.(type) {
			case *array.Int32:
				vals[k] = v.Value(i)
			case *array.Int8:
				vals[k] = int32(v.Value(i))
			default:
				t.Fatalf("writeParquet: column %s: values %T not supported", f.Name, leaf)
			}
		}
		_, err = cw.WriteBatch(vals, def, rep)
	case *file.Int64ColumnChunkWriter:
		v := leaf.(*array.Int64)
		vals := make([]int64, len(idx))
		for k, i := range idx {
			vals[k] = v.Value(i)
		}
		_, err = cw.WriteBatch(vals, def, rep)
	case *file.ByteArrayColumnChunkWriter:
		vals := make([]parquet.ByteArray, len(idx))
		for k, i := range idx {
			switch v := leaf.(type) {
			case *array.String:
				vals[k] = parquet.ByteArray(v.Value(i))
			case *array.Binary:
				vals[k] = v.Value(i)
			default:
				t.Fatalf("writeParquet: column %s: values %T not supported", f.Name, leaf)
			}
		}
		_, err = cw.WriteBatch(vals, def, rep)
	default:
		t.Fatalf("writeParquet: column %s: writer %T not supported", f.Name, cw)
	}
	if err != nil {
		t.Fatalf("writeParquet: column %s: %v", f.Name, err)
	}
}
