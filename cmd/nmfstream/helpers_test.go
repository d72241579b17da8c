package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/nmfstream/nmfstream/datasets"
	"github.com/nmfstream/nmfstream/model/metrics"
)

// writeArrow writes rows (one []any per record, in field order) to an Arrow
// IPC file at path. Values: nil (null), int64, string, []byte, []float32,
// []float64, []int32, []int64, appended by the field's builder type.
func writeArrow(t testing.TB, path string, schema *arrow.Schema, rows [][]any) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for _, row := range rows {
		for i, v := range row {
			appendValue(t, b.Field(i), v)
		}
	}
	writeRecordFile(t, path, schema, mem, b)
}

// writeRecordFile writes b's record as the only batch of an Arrow IPC file.
func writeRecordFile(t testing.TB, path string, schema *arrow.Schema, mem memory.Allocator, b *array.RecordBuilder) {
	t.Helper()
	rec := b.NewRecord()
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func appendValue(t testing.TB, b array.Builder, v any) {
	t.Helper()
	if v == nil {
		b.AppendNull()
		return
	}
	switch b := b.(type) {
	case *array.Int64Builder:
		b.Append(v.(int64))
	case *array.StringBuilder:
		b.Append(v.(string))
	case *array.BinaryBuilder:
		b.Append(v.([]byte))
	case *array.Float64Builder:
		b.Append(v.(float64))
	case *array.FixedSizeListBuilder:
		b.Append(true)
		appendElems(t, b.ValueBuilder(), v)
	case *array.ListBuilder:
		b.Append(true)
		appendElems(t, b.ValueBuilder(), v)
	default:
		t.Fatalf("appendValue: builder %T", b)
	}
}

func appendElems(t testing.TB, b array.Builder, v any) {
	t.Helper()
	switch vb := b.(type) {
	case *array.Float32Builder:
		vb.AppendValues(v.([]float32), nil)
	case *array.Float64Builder:
		vb.AppendValues(v.([]float64), nil)
	case *array.Int32Builder:
		vb.AppendValues(v.([]int32), nil)
	case *array.Int64Builder:
		vb.AppendValues(v.([]int64), nil)
	default:
		t.Fatalf("appendElems: builder %T", b)
	}
}

// field is a shorthand for a nullable field.
func field(name string, typ arrow.DataType) arrow.Field {
	return arrow.Field{Name: name, Type: typ, Nullable: true}
}

var (
	f32Fixed64 = arrow.FixedSizeListOf(64, arrow.PrimitiveTypes.Float32)
	f64List    = arrow.ListOf(arrow.PrimitiveTypes.Float64)
)

// runCmd runs nmfstream with args and returns the exit status, stdout and
// stderr.
func runCmd(t testing.TB, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// digitsFiles writes the §7 split of the digits (one third held out, 10
// labels per class, seed 1) as train and test Arrow files: x as
// fixed_size_list<float32>[64], label int64 (null for unlabeled training
// rows), id int64 (the row of digits.csv). With sub > 0 only every sub-th
// row of each part is kept, for quick tests.
func digitsFiles(t testing.TB, dir string, sub int) (train, test string, split metrics.SplitIndices) {
	t.Helper()
	x, y := datasets.Digits()
	split, err := metrics.Split(y, 1.0/3, 10, rand.NewPCG(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	labeled := map[int]bool{}
	for _, i := range split.Labeled {
		labeled[i] = true
	}
	row := func(i int, withLabel bool) []any {
		r := x.RawRowView(i)
		f := make([]float32, len(r))
		for j, v := range r {
			f[j] = float32(v)
		}
		var lab any
		if withLabel {
			lab = int64(y[i])
		}
		return []any{f, lab, int64(i)}
	}
	schema := arrow.NewSchema([]arrow.Field{field("x", f32Fixed64), field("label", arrow.PrimitiveTypes.Int64), field("id", arrow.PrimitiveTypes.Int64)}, nil)
	var tr, te [][]any
	for r, i := range split.Train {
		if sub > 0 && r%sub != 0 && !labeled[i] {
			continue
		}
		tr = append(tr, row(i, labeled[i]))
	}
	for r, i := range split.Test {
		if sub > 0 && r%sub != 0 {
			continue
		}
		te = append(te, row(i, true))
	}
	train, test = filepath.Join(dir, "digits-train.arrow"), filepath.Join(dir, "digits-test.arrow")
	writeArrow(t, train, schema, tr)
	writeArrow(t, test, schema, te)
	return train, test, split
}

// mustRun runs nmfstream and fails the test unless it exits with 0.
func mustRun(t testing.TB, args ...string) string {
	t.Helper()
	code, out, errs := runCmd(t, args...)
	if code != 0 {
		t.Fatalf("nmfstream %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

var _ = fmt.Sprintf

// sameFile fails t unless the files got and want hold the same bytes;
// what names want in the message.
func sameFile(t *testing.T, got, want, what string) {
	t.Helper()
	g, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	w, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(g, w) {
		t.Errorf("%s (%d bytes) differs from %s %s (%d bytes)", got, len(g), what, want, len(w))
	}
}

// brownFifths returns the 225 passages of the embedded Brown sample, each
// of its 45 texts cut into five parts of equal word count (the rest of
// the words left out), and the genre of each: text i's parts are docs
// 5i to 5i+4.
func brownFifths(t testing.TB) (docs, genres []string) {
	t.Helper()
	_, texts, textGenres, err := datasets.BrownSample()
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		words := strings.Fields(text)
		n := len(words) / 5
		for k := range 5 {
			docs = append(docs, strings.Join(words[k*n:(k+1)*n], " "))
			genres = append(genres, textGenres[i])
		}
	}
	return docs, genres
}
