package sinks

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"gonum.org/v1/gonum/mat"
)

// testResults returns two batches of results with K = 3 and some nulls.
func testResults() []Results {
	return []Results{
		{
			IDs:    []string{"a", "b", "c"},
			Codes:  mat.NewDense(3, 3, []float64{0.1, 0, 2, 1e-8, 3.5, 0, 1.0 / 3, 7, 0}),
			Preds:  []string{"x", "", "y"},
			Scores: []float64{0.9, math.NaN(), 0.25},
		},
		{IDs: []string{"d", "e \"quoted\""}, Preds: []string{"z", "x"}}, // no codes, no scores
	}
}

// row is one decoded output row; nil pointers are nulls.
type row struct {
	id    string
	code  []float32
	pred  *string
	score *float64
}

func wantRows() []row {
	s := func(v string) *string { return &v }
	f := func(v float64) *float64 { return &v }
	return []row{
		{"a", []float32{0.1, 0, 2}, s("x"), f(0.9)},
		{"b", []float32{1e-8, 3.5, 0}, nil, nil},
		{"c", []float32{1.0 / 3, 7, 0}, s("y"), f(0.25)},
		{"d", nil, s("z"), nil},
		{"e \"quoted\"", nil, s("x"), nil},
	}
}

func equalRows(t *testing.T, got, want []row) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d rows, want %d", len(got), len(want))
	}
	eqS := func(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	eqF := func(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	for i := range want {
		g, w := got[i], want[i]
		if g.id != w.id || !slices.Equal(g.code, w.code) || !eqS(g.pred, w.pred) || !eqF(g.score, w.score) {
			t.Errorf("row %d: got %+v, want %+v", i, g, w)
		}
	}
}

// readArrowRows reads result rows back with arrow-go's own readers.
func readArrowRows(t *testing.T, data []byte, file bool, mem memory.Allocator) []row {
	t.Helper()
	var recs []arrow.Record
	var schema *arrow.Schema
	if file {
		fr, err := ipc.NewFileReader(bytes.NewReader(data), ipc.WithAllocator(mem))
		if err != nil {
			t.Fatal(err)
		}
		defer fr.Close()
		schema = fr.Schema()
		for i := 0; i < fr.NumRecords(); i++ {
			rec, err := fr.RecordAt(i)
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, rec)
		}
	} else {
		r, err := ipc.NewReader(bytes.NewReader(data), ipc.WithAllocator(mem))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Release()
		schema = r.Schema()
		for r.Next() {
			rec := r.Record()
			rec.Retain()
			recs = append(recs, rec)
		}
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
	}
	if !schema.Equal(ResultSchema(3)) {
		t.Fatalf("schema %v, want %v", schema, ResultSchema(3))
	}
	var out []row
	for _, rec := range recs {
		ids := rec.Column(0).(*array.String)
		codes := rec.Column(1).(*array.FixedSizeList)
		vals := codes.ListValues().(*array.Float32)
		preds := rec.Column(2).(*array.String)
		scores := rec.Column(3).(*array.Float64)
		for i := 0; i < int(rec.NumRows()); i++ {
			r := row{id: ids.Value(i)}
			if codes.IsValid(i) {
				lo, hi := codes.ValueOffsets(i)
				r.code = slices.Clone(vals.Float32Values()[lo:hi])
			}
			if preds.IsValid(i) {
				p := preds.Value(i)
				r.pred = &p
			}
			if scores.IsValid(i) {
				s := scores.Value(i)
				r.score = &s
			}
			out = append(out, r)
		}
		rec.Release()
	}
	return out
}

func TestArrowRoundTrip(t *testing.T) {
	for _, file := range []bool{false, true} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		var buf bytes.Buffer
		s := NewArrow(&buf, 3)
		s.File, s.Allocator = file, mem
		for _, r := range testResults() {
			if err := s.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := s.Write(testResults()[0]); err == nil {
			t.Error("Write after Close succeeded")
		}
		equalRows(t, readArrowRows(t, buf.Bytes(), file, mem), wantRows())
		mem.AssertSize(t, 0)
	}
}

func TestArrowNoCodes(t *testing.T) {
	var buf bytes.Buffer
	s := NewArrow(&buf, 0)
	if err := s.Write(Results{IDs: []string{"a"}, Scores: []float64{1}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(Results{IDs: []string{"b"}, Codes: mat.NewDense(1, 2, nil)}); err == nil {
		t.Error("codes with k = 0: no error")
	}
	s.Close()
	r, err := ipc.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	if got := r.Schema().Field(1).Name; got != "pred" || len(r.Schema().Fields()) != 3 {
		t.Errorf("schema without code = %v", r.Schema())
	}
}

func TestResultsCheck(t *testing.T) {
	for name, r := range map[string]Results{
		"preds":  {IDs: []string{"a", "b"}, Preds: []string{"x"}},
		"scores": {IDs: []string{"a"}, Scores: []float64{1, 2}},
		"codes":  {IDs: []string{"a"}, Codes: mat.NewDense(1, 2, nil)},
	} {
		var buf bytes.Buffer
		for _, s := range []Sink{NewArrow(&buf, 3), NewJSONL(&buf, 3)} {
			if err := s.Write(r); err == nil || !strings.HasPrefix(err.Error(), "sinks: ") {
				t.Errorf("%s: err = %v", name, err)
			}
		}
	}
}

func TestJSONLRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	s := NewJSONL(&buf, 3)
	for _, r := range testResults() {
		if err := s.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var got []row
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		var obj struct {
			ID    string     `json:"id"`
			Code  []*float64 `json:"code"`
			Pred  *string    `json:"pred"`
			Score *float64   `json:"score"`
		}
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&obj); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		r := row{id: obj.ID, pred: obj.Pred, score: obj.Score}
		for _, v := range obj.Code {
			r.code = append(r.code, float32(*v)) // exact: printed as shortest float32
		}
		got = append(got, r)
	}
	equalRows(t, got, wantRows())
}

func TestRejects(t *testing.T) {
	var buf bytes.Buffer
	r := NewRejects(&buf)
	r.Write(3, "a7", errors.New("sources: record 3 (id \"a7\"): negative value -1 at feature 2"))
	r.Write(9, "", errors.New("sources: record 9: empty document"))
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if r.Count() != 2 {
		t.Errorf("Count = %d, want 2", r.Count())
	}
	want := `{"offset":3,"id":"a7","reason":"sources: record 3 (id \"a7\"): negative value -1 at feature 2"}` + "\n" +
		`{"offset":9,"id":null,"reason":"sources: record 9: empty document"}` + "\n"
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
	n := NewRejects(nil)
	n.Write(1, "", nil)
	if n.Count() != 1 {
		t.Error("counting-only sink did not count")
	}
}

func TestCreate(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"out.arrow", "out.arrows", "out.jsonl"} {
		p := filepath.Join(dir, name)
		s, err := Create(p, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range testResults() {
			if err := s.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		switch name {
		case "out.arrow":
			equalRows(t, readArrowRows(t, data, true, memory.NewGoAllocator()), wantRows())
		case "out.arrows":
			equalRows(t, readArrowRows(t, data, false, memory.NewGoAllocator()), wantRows())
		default:
			if n := bytes.Count(data, []byte("\n")); n != 5 {
				t.Errorf("%d JSON lines, want 5", n)
			}
		}
	}
	if _, err := Create(filepath.Join(dir, "out.txt"), 3); err == nil {
		t.Error("Create(.txt): no error")
	}
	for path, arrow := range map[string]bool{"out.arrow": true, "OUT.ARROWS": true, "-": true, "out.jsonl": false, "out.ndjson": false, "out.json": false} {
		if got := IsArrow(path); got != arrow {
			t.Errorf("IsArrow(%q) = %v, want %v", path, got, arrow)
		}
	}
}

// TestArrowMetadata checks that Arrow.Metadata reaches the schema of both
// IPC formats, beside the rows.
func TestArrowMetadata(t *testing.T) {
	for _, file := range []bool{false, true} {
		var buf bytes.Buffer
		s := NewArrow(&buf, 3)
		s.File = file
		s.Metadata = map[string]string{"rejected": `[{"offset":3}]`, "duplicates": "2"}
		if err := s.Write(testResults()[0]); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		var schema *arrow.Schema
		rows := 0
		if file {
			fr, err := ipc.NewFileReader(bytes.NewReader(buf.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			schema = fr.Schema()
			for i := range fr.NumRecords() {
				rec, err := fr.RecordAt(i)
				if err != nil {
					t.Fatal(err)
				}
				rows += int(rec.NumRows())
				rec.Release()
			}
			fr.Close()
		} else {
			r, err := ipc.NewReader(bytes.NewReader(buf.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			schema = r.Schema()
			for r.Next() {
				rows += int(r.Record().NumRows())
			}
			r.Release()
		}
		md := schema.Metadata()
		if i, j := md.FindKey("rejected"), md.FindKey("duplicates"); i < 0 || j < 0 ||
			md.Values()[i] != `[{"offset":3}]` || md.Values()[j] != "2" {
			t.Errorf("file %v: metadata %v", file, md)
		}
		if want := testResults()[0].Len(); rows != want || !slices.EqualFunc(schema.Fields(), ResultSchema(3).Fields(), func(a, b arrow.Field) bool { return a.Equal(b) }) {
			t.Errorf("file %v: %d rows, fields %v; want %d rows of ResultSchema's fields", file, rows, schema.Fields(), want)
		}
	}
}

// TestNoCode writes three samples, the second marked NoCode with a NaN row
// (which Write would otherwise refuse): Arrow gives it a null code, JSON
// lines leave its "code" out, and the other two keep theirs.
func TestNoCode(t *testing.T) {
	r := Results{IDs: []string{"a", "b", "c"}, Codes: mat.NewDense(3, 3, []float64{1, 2, 3, math.NaN(), 0, 0, 5, 6, 7}), NoCode: []bool{false, true, false}}
	var ab, jb bytes.Buffer
	as, js := NewArrow(&ab, 3), NewJSONL(&jb, 3)
	for _, s := range []Sink{as, js} {
		if err := s.Write(r); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	mem := memory.NewGoAllocator()
	got := readArrowRows(t, ab.Bytes(), false, mem)
	if len(got) != 3 || !slices.Equal(got[0].code, []float32{1, 2, 3}) || got[1].code != nil || !slices.Equal(got[2].code, []float32{5, 6, 7}) {
		t.Errorf("arrow rows %+v, want codes [1 2 3], null, [5 6 7]", got)
	}
	lines := strings.Split(strings.TrimSpace(jb.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], `"code":[1,2,3]`) || strings.Contains(lines[1], "code") || !strings.Contains(lines[2], `"code":[5,6,7]`) {
		t.Errorf("json lines %q, want b without a code", lines)
	}
	if err := NewJSONL(io.Discard, 3).Write(Results{IDs: r.IDs, Codes: r.Codes, NoCode: []bool{true}}); err == nil {
		t.Error("NoCode of the wrong length: no error")
	}
}
