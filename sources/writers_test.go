package sources

import (
	"bytes"
	"github.com/nmfstream/nmfstream/record"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/file"
	"github.com/apache/arrow/go/v15/parquet/schema"
)

// TestRustAndDuckDB reads the Arrow IPC streams and Parquet files written by
// arrow-rs and the Rust parquet crate (testdata/rust, made by write.mjs
// with parquet-wasm, their WebAssembly build on npm), and the Parquet files
// of DuckDB's own writer (testdata/duckdb, made by write.mjs with
// @duckdb/node-api): dense rows as fixed_size_list<float32>[4] (FLOAT[4]
// in DuckDB) with int64 labels, one row unlabeled and one a late label (an
// id seen before, a label, a null x); documents with string labels and
// int64 ids.
func TestRustAndDuckDB(t *testing.T) {
	for _, file := range []string{"rust/rust-dense.arrows", "rust/rust-dense.parquet", "duckdb/duckdb-dense.parquet"} {
		t.Run(file, func(t *testing.T) {
			src, err := Open(filepath.Join("testdata", file))
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			if f, err := src.Form(); err != nil || f != record.FormDense {
				t.Fatalf("form %v (%v), want dense", f, err)
			}
			c := readAll(t, src)
			if err := src.Err(); err != nil {
				t.Fatal(err)
			}
			if want := []string{"r1", "r2", "r3", "r4"}; !slices.Equal(c.ids, want) {
				t.Errorf("ids %q, want %q", c.ids, want)
			}
			if want := []bool{true, false, true, true}; !slices.Equal(c.labeled, want) {
				t.Errorf("labeled %v, want %v", c.labeled, want)
			}
			if c.labels[0] != "1" || c.labels[2] != "2" || c.labels[3] != "1" {
				t.Errorf("labels %q, want 1, -, 2, 1", c.labels)
			}
			if want := [][]float64{{0, 1, 2, 3}, {1, 1, 1, 1}, {4, 3, 2, 1}, {0, 2, 2, 0}}; !slices.EqualFunc(c.dense, want, slices.Equal) {
				t.Errorf("x = %v, want %v", c.dense, want)
			}
			if want := []record.LateLabel{{Offset: 3, ID: "r2", Label: "2"}}; !slices.Equal(c.late, want) {
				t.Errorf("late labels %v, want %v", c.late, want)
			}
			if len(c.rejects) > 0 {
				t.Errorf("rejects: %v", c.rejects[0].Reason)
			}
		})
	}
	for _, file := range []string{"rust/rust-text.arrows", "rust/rust-text.parquet", "duckdb/duckdb-text.parquet"} {
		t.Run(file, func(t *testing.T) {
			src, err := Open(filepath.Join("testdata", file))
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			if f, err := src.Form(); err != nil || f != record.FormText {
				t.Fatalf("form %v (%v), want text", f, err)
			}
			c := readAll(t, src)
			if err := src.Err(); err != nil {
				t.Fatal(err)
			}
			if want := []string{"the cat sat on the mat", "a dog ran in the park", "cats and dogs play", "the park is green"}; !slices.Equal(c.text, want) {
				t.Errorf("texts %q, want %q", c.text, want)
			}
			if want := []string{"1", "2", "3", "4"}; !slices.Equal(c.ids, want) {
				t.Errorf("ids %q, want %q", c.ids, want)
			}
			if want := []bool{true, false, true, true}; !slices.Equal(c.labeled, want) {
				t.Errorf("labeled %v, want %v", c.labeled, want)
			}
			if c.labels[0] != "pets" || c.labels[2] != "pets" || c.labels[3] != "parks" {
				t.Errorf("labels %q, want pets, -, pets, parks", c.labels)
			}
			if len(c.rejects) > 0 {
				t.Errorf("rejects: %v", c.rejects[0].Reason)
			}
		})
	}
}

// TestParquetNullListSlots: the levels DuckDB writes for a NULL FLOAT[4]
// (one per slot, all below the null level) make one null row; a slot of a
// null row that defines a value is an error, not a value of the next row.
func TestParquetNullListSlots(t *testing.T) {
	elem, _ := schema.NewPrimitiveNode("element", parquet.Repetitions.Optional, parquet.Types.Float, -1, -1)
	list, _ := schema.NewGroupNode("list", parquet.Repetitions.Repeated, schema.FieldList{elem}, -1)
	x, _ := schema.NewGroupNodeLogical(ColX, parquet.Repetitions.Optional, schema.FieldList{list}, schema.NewListLogicalType(), -1)
	root, _ := schema.NewGroupNode("schema", parquet.Repetitions.Repeated, schema.FieldList{x}, -1)
	write := func(vals []float32, def, rep []int16) []byte {
		var buf bytes.Buffer
		w := file.NewParquetWriter(&buf, root)
		rg := w.AppendRowGroup()
		cw, err := rg.NextColumn()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cw.(*file.Float32ColumnChunkWriter).WriteBatch(vals, def, rep); err != nil {
			t.Fatal(err)
		}
		if err := rg.Close(); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	// Rows [1 2], NULL as two slots, [3 4].
	src := NewParquet(bytes.NewReader(write([]float32{1, 2, 3, 4}, []int16{3, 3, 0, 0, 3, 3}, []int16{0, 1, 0, 1, 0, 1})))
	c := readAll(t, src)
	if err := src.Err(); err != nil {
		t.Fatal(err)
	}
	if want := [][]float64{{1, 2}, {3, 4}}; !slices.EqualFunc(c.dense, want, slices.Equal) {
		t.Errorf("rows %v, want %v", c.dense, want)
	}
	// A null row whose second slot holds a value.
	src = NewParquet(bytes.NewReader(write([]float32{1, 2, 9}, []int16{3, 3, 0, 3}, []int16{0, 1, 0, 1})))
	for src.Next() {
	}
	if err := src.Err(); err == nil || !strings.Contains(err.Error(), "null list row") {
		t.Errorf("a value in a null row: err %v, want one about the null list row", err)
	}
}
