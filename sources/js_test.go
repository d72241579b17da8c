package sources

import (
	"bytes"
	"encoding/binary"
	"github.com/nmfstream/nmfstream/record"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"
)

// TestJavaScriptArrow reads Arrow IPC streams written by the JavaScript
// Arrow library (testdata/js, made by write.mjs with apache-arrow 17 from
// npm): dense rows as list<float64>, and labels, ids and documents as
// dictionary-encoded strings, its default for strings.
func TestJavaScriptArrow(t *testing.T) {
	for _, c := range []struct {
		file string
		form record.Form
	}{{"js-dense.arrows", record.FormDense}, {"js-dense.arrow", record.FormDense}, {"js-text.arrows", record.FormText}} {
		t.Run(c.file, func(t *testing.T) {
			src, err := Open(filepath.Join("testdata", "js", c.file))
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			var ids, labels []string
			var labeled []bool
			var texts []string
			var rows int
			for src.Next() {
				b := src.Batch()
				if b.Form != c.form {
					t.Fatalf("form %v, want %v", b.Form, c.form)
				}
				ids = append(ids, b.IDs...)
				labels = append(labels, b.Labels...)
				labeled = append(labeled, b.Labeled...)
				texts = append(texts, b.Text...)
				if b.Dense != nil {
					r, _ := b.Dense.Dims()
					rows += r
					if c.form == record.FormDense && b.Dense.At(2, 0) != 4 {
						t.Errorf("x[2][0] = %v, want 4", b.Dense.At(2, 0))
					}
				}
				if len(b.Rejects) > 0 {
					t.Errorf("rejects: %v", b.Rejects[0].Reason)
				}
			}
			if err := src.Err(); err != nil {
				t.Fatal(err)
			}
			if want := []string{"r1", "r2", "r3", "r4"}; !slices.Equal(ids, want) {
				t.Errorf("ids %q, want %q", ids, want)
			}
			if want := []bool{true, false, true, true}; !slices.Equal(labeled, want) {
				t.Errorf("labeled %v, want %v", labeled, want)
			}
			if labels[0] != "a" || labels[2] != "b" || labels[3] != "a" {
				t.Errorf("labels %q, want a, -, b, a", labels)
			}
			if c.form == record.FormText && (len(texts) != 4 || texts[1] != "a dog ran in the park") {
				t.Errorf("texts %q", texts)
			}
			if c.form == record.FormDense && rows != 4 {
				t.Errorf("%d dense rows, want 4", rows)
			}
		})
	}
}

// TestArrowFileSchemaInFooterOnly cuts the schema message out of the body of
// an Arrow IPC file written by arrow-go (as the JavaScript library writes
// them) and reads the same records from the footer's schema; a footer whose
// schema offset points outside it is an error, not a panic.
func TestArrowFileSchemaInFooterOnly(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	r1 := denseRecordOf(t, mem, denseSchema, denseRows1)
	defer r1.Release()
	full := writeIPC(t, denseSchema, true, r1)
	want := readAll(t, NewArrowFile(bytes.NewReader(full)))

	// The first message after the 8-byte magic: continuation, length, metadata.
	n := int(binary.LittleEndian.Uint32(full[12:16]))
	cut := append(slices.Clone(full[:8]), full[8+8+n:]...)
	got := readAll(t, NewArrowFile(bytes.NewReader(cut)))
	if len(want.dense) != 2 || !slices.Equal(got.labeled, want.labeled) || !slices.Equal(got.offsets, want.offsets) ||
		!slices.Equal(got.ids, want.ids) || len(got.dense) != len(want.dense) || len(got.rejects) != len(want.rejects) {
		t.Fatalf("without the schema message: ids %q labeled %v offsets %v, want %q %v %v", got.ids, got.labeled, got.offsets, want.ids, want.labeled, want.offsets)
	}
	for i := range want.dense {
		if !slices.Equal(got.dense[i], want.dense[i]) {
			t.Errorf("row %d = %v, want %v", i, got.dense[i], want.dense[i])
		}
	}

	// Break the footer's schema offset.
	bad := slices.Clone(cut)
	flen := int(binary.LittleEndian.Uint32(bad[len(bad)-10:]))
	footer := bad[len(bad)-10-flen : len(bad)-10]
	root := int(binary.LittleEndian.Uint32(footer))
	vt := root - int(int32(binary.LittleEndian.Uint32(footer[root:])))
	off := int(binary.LittleEndian.Uint16(footer[vt+4+2*fbFooterSchema:]))
	binary.LittleEndian.PutUint32(footer[root+off:], 1<<30)
	src := NewArrowFile(bytes.NewReader(bad))
	if _, err := src.Form(); err == nil || !strings.Contains(err.Error(), "footer") {
		t.Errorf("corrupt footer schema offset: err = %v, want an error about the footer", err)
	}
}

// TestParquetJS reads a Parquet file written by parquetjs (testdata/js,
// made by write-parquet.mjs), a writer that is not Arrow's: no stored Arrow
// schema, x a bare repeated float field, string labels and ids, row groups
// of two rows, and a row with an empty x and a label: a late label.
func TestParquetJS(t *testing.T) {
	src, err := Open(filepath.Join("testdata", "js", "parquetjs-dense.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
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
	if want := [][]float64{{0, 1, 2, 3}, {1, 1, 1, 1}, {4, 3, 2, 1}, {0, 2, 2, 0}}; !slices.EqualFunc(c.dense, want, slices.Equal) {
		t.Errorf("x = %v, want %v", c.dense, want)
	}
	if want := []record.LateLabel{{Offset: 3, ID: "r2", Label: "b"}}; !slices.Equal(c.late, want) {
		t.Errorf("late labels %v, want %v", c.late, want)
	}
	if len(c.rejects) > 0 {
		t.Errorf("rejects: %v", c.rejects[0].Reason)
	}
}
