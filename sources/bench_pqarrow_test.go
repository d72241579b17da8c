//go:build pqarrow

package sources

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet/file"
	"github.com/apache/arrow/go/v15/parquet/metadata"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"
)

func init() { pqarrowSource = newPqarrowSource }

// newPqarrowSource reads the Parquet file data through pqarrow's record
// reader instead of parquetRecords.
func newPqarrowSource(data []byte) *Arrow {
	a := &Arrow{}
	a.open = func(mem memory.Allocator) (recordReader, *arrow.Schema, error) {
		pf, err := file.NewParquetReader(bytes.NewReader(data))
		if err != nil {
			return nil, nil, err
		}
		fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 256}, mem)
		if err != nil {
			return nil, nil, err
		}
		rr, err := fr.GetRecordReader(context.Background(), nil, nil)
		if err != nil {
			return nil, nil, err
		}
		return pqarrowRecords{rr}, rr.Schema(), nil
	}
	return a
}

type pqarrowRecords struct{ pqarrow.RecordReader }

func (p pqarrowRecords) Err() error {
	if err := p.RecordReader.Err(); err != io.EOF {
		return err
	}
	return nil
}

// TestWriteParquetAsPqarrow: writeParquet lays records out as pqarrow
// does: the same Parquet schema, key-value metadata, row groups, column
// chunks (values and encodings), and NewParquet reads the same samples
// from both files. (pqarrow v15 cannot read back a fixed_size_list with
// a null cell, so the comparison is of the files, not of pqarrow's
// reading.)
func TestWriteParquetAsPqarrow(t *testing.T) {
	schemas, recs := arrowSeeds(t)
	for i, s := range schemas {
		var buf bytes.Buffer
		w, err := pqarrow.NewFileWriter(s, &buf, nil, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs[i] {
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		ours := writeParquet(t, s, recs[i]...)
		var md [2]*metadata.FileMetaData
		for k, data := range [][]byte{buf.Bytes(), ours} {
			pf, err := file.NewParquetReader(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			md[k] = pf.MetaData()
		}
		want, got := md[0], md[1]
		if g, w := got.Schema.String(), want.Schema.String(); g != w {
			t.Errorf("schema %d: Parquet schema\n%s\nwant\n%s", i, g, w)
		}
		if g, w := kvString(got.KeyValueMetadata()), kvString(want.KeyValueMetadata()); g != w {
			t.Errorf("schema %d: key-value metadata %s, want %s", i, g, w)
		}
		if len(got.RowGroups) != len(want.RowGroups) {
			t.Fatalf("schema %d: %d row groups, want %d", i, len(got.RowGroups), len(want.RowGroups))
		}
		for g := range len(got.RowGroups) {
			grg, wrg := got.RowGroup(g), want.RowGroup(g)
			if grg.NumRows() != wrg.NumRows() {
				t.Errorf("schema %d row group %d: %d rows, want %d", i, g, grg.NumRows(), wrg.NumRows())
			}
			for c := range grg.NumColumns() {
				gc, _ := grg.ColumnChunk(c)
				wc, _ := wrg.ColumnChunk(c)
				if gc.NumValues() != wc.NumValues() || fmt.Sprint(gc.Encodings()) != fmt.Sprint(wc.Encodings()) {
					t.Errorf("schema %d row group %d column %d: %d values, encodings %v; want %d, %v", i, g, c, gc.NumValues(), gc.Encodings(), wc.NumValues(), wc.Encodings())
				}
			}
		}
		a, b := readAll(t, NewParquet(bytes.NewReader(ours))), readAll(t, NewParquet(bytes.NewReader(buf.Bytes())))
		if !reflect.DeepEqual(a, b) {
			t.Errorf("schema %d: NewParquet reads\n%+v\nfrom writeParquet's file, and\n%+v\nfrom pqarrow's", i, a, b)
		}
	}
}

// kvString writes the key-value metadata kv as key=value lines.
func kvString(kv metadata.KeyValueMetadata) string {
	var b strings.Builder
	for _, e := range kv {
		fmt.Fprintf(&b, "%s=%s\n", e.Key, *e.Value)
	}
	return b.String()
}
