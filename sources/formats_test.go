package sources

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"github.com/nmfstream/nmfstream/record"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/nmfstream/nmfstream/internal/testenv"
)

// idxBytes encodes an IDX file of unsigned bytes with the given dimensions.
func idxBytes(dims []int, data []byte) []byte {
	var buf bytes.Buffer
	buf.Write([]byte{0, 0, 0x08, byte(len(dims))})
	for _, d := range dims {
		binary.Write(&buf, binary.BigEndian, uint32(d))
	}
	buf.Write(data)
	return buf.Bytes()
}

func TestIDX(t *testing.T) {
	// 5 images of 2×3 pixels; image i has pixels 10i..10i+5.
	var pix []byte
	for i := 0; i < 5; i++ {
		for j := 0; j < 6; j++ {
			pix = append(pix, byte(10*i+j))
		}
	}
	images := idxBytes([]int{5, 2, 3}, pix)
	labels := idxBytes([]int{5}, []byte{7, 2, 1, 0, 4})
	src := NewIDX(bytes.NewReader(images), bytes.NewReader(labels))
	src.BatchSize = 2
	c := readAll(t, src)
	if err := src.Err(); err != nil {
		t.Fatal(err)
	}
	if c.batches != 3 || len(c.dense) != 5 || c.dim != 6 {
		t.Fatalf("got %d batches, %d rows of %d, want 3, 5, 6", c.batches, len(c.dense), c.dim)
	}
	if got, want := c.dense[3][2], 32.0/255; got != want {
		t.Errorf("pixel = %g, want %g", got, want)
	}
	if w := []string{"7", "2", "1", "0", "4"}; !slices.Equal(c.labels, w) {
		t.Errorf("labels = %q, want %q", c.labels, w)
	}

	// Errors: label count, truncation (after the records before it).
	bad := NewIDX(bytes.NewReader(images), bytes.NewReader(idxBytes([]int{4}, []byte{1, 2, 3, 4})))
	if _, err := bad.Form(); err == nil || !strings.Contains(err.Error(), "match the images") {
		t.Errorf("label count mismatch: err = %v", err)
	}
	trunc := NewIDX(bytes.NewReader(images[:len(images)-3]), nil)
	c = readAll(t, trunc)
	if len(c.dense) != 4 || trunc.Err() == nil || !strings.Contains(trunc.Err().Error(), "truncated at record 4") {
		t.Errorf("truncated: %d rows, err %v", len(c.dense), trunc.Err())
	}
	for name, data := range map[string][]byte{
		"magic":     {1, 2, 3, 4},
		"type":      {0, 0, 0x42, 1, 0, 0, 0, 1},
		"huge":      idxBytes([]int{1, 1 << 20, 1 << 20}, nil),
		"zero dims": {0, 0, 8, 0},
		"short":     {0, 0},
	} {
		if _, err := NewIDX(bytes.NewReader(data), nil).Form(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestIDXMatchesPNG checks the documented scale: an IDX image and a PNG of
// the same pixels give the same row.
func TestIDXMatchesPNG(t *testing.T) {
	f := func(x, y int) uint8 { return uint8(x*37 + y*11) }
	var pix []byte
	for y := 0; y < 4; y++ {
		for x := 0; x < 5; x++ {
			pix = append(pix, f(x, y))
		}
	}
	src := NewIDX(bytes.NewReader(idxBytes([]int{1, 4, 5}, pix)), nil)
	a := readAll(t, src)
	g, err := decodeImage(pngGray(t, 5, 4, f), 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.dense[0], g.pix) {
		t.Errorf("IDX row %v != PNG row %v", a.dense[0], g.pix)
	}
}

// TestMNIST reads the real MNIST test set from testenv.Data's mnist, where
// scripts/fetch-data.sh puts it; it skips without it.
func TestMNIST(t *testing.T) {
	src, err := Open(testenv.Data(t, "mnist", "t10k-images-idx3-ubyte"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	n, counts := 0, map[string]int{}
	for src.Next() {
		b := src.Batch()
		if len(b.Rejects) != 0 {
			t.Fatalf("rejects: %v", b.Rejects[0].Reason)
		}
		if _, d := b.Dense.Dims(); d != 784 {
			t.Fatalf("dim %d, want 784", d)
		}
		for _, l := range b.Labels {
			counts[l]++
		}
		n += b.Len()
	}
	if err := src.Err(); err != nil {
		t.Fatal(err)
	}
	// The MNIST test set has 10,000 images, 980 of them zeros and 1,135 ones.
	if n != 10000 || counts["0"] != 980 || counts["1"] != 1135 {
		t.Errorf("n = %d, zeros %d, ones %d; want 10000, 980, 1135", n, counts["0"], counts["1"])
	}
}

func TestCSVDigits(t *testing.T) {
	// 64 pixels, then the digit: the label column is given, as the file
	// has no header to name it.
	o := Opener{LabelColumn: Column{Index: 65}}
	src, err := o.Open("../datasets/digits.csv.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	c := readAll(t, src)
	if err := src.Err(); err != nil {
		t.Fatal(err)
	}
	if len(c.dense) != 1797 || c.dim != 64 || len(c.rejects) != 0 {
		t.Fatalf("got %d rows of %d, %d rejects; want 1797 of 64, 0", len(c.dense), c.dim, len(c.rejects))
	}
	counts := map[string]int{}
	for _, l := range c.labels {
		counts[l]++
	}
	// sklearn's digits: 178 zeros, 182 ones, ..., 180 nines.
	if len(counts) != 10 || counts["0"] != 178 || counts["9"] != 180 {
		t.Errorf("label counts %v", counts)
	}
	for _, row := range c.dense {
		for _, v := range row {
			if v < 0 || v > 16 || v != float64(int(v)) {
				t.Fatalf("pixel %g outside 0..16", v)
			}
		}
	}
}

func TestCSV(t *testing.T) {
	in := "id, f1, f2, label\n" +
		"a, 1, 2, 3.0\n" + // 0
		"b, 1, -2, 1\n" + // 1 negative
		"c, x, 2, 1\n" + // 2 not a number
		"d, 1, 2\n" + // 3 field count
		"a, , , 5\n" + // 4 late label
		"e, 4, 5, \n" + // 5 unlabeled
		"f, NaN, 5, 1\n" + // 6 NaN
		"g, 1, , 1\n" + // 7 partly empty
		"h, 1e200, 1, 1\n" + // 8 above record.MaxValue: its square overflows
		"i, 1e60, 0, 2\n" // 9 record.MaxValue itself: accepted
	src := NewCSV(strings.NewReader(in))
	c := readAll(t, src)
	if err := src.Err(); err != nil {
		t.Fatal(err)
	}
	if w := [][]float64{{1, 2}, {4, 5}, {1e60, 0}}; !slices.EqualFunc(c.dense, w, slices.Equal) {
		t.Errorf("dense = %v, want %v", c.dense, w)
	}
	if w := []string{"a", "e", "i"}; !slices.Equal(c.ids, w) {
		t.Errorf("ids = %q", c.ids)
	}
	if w := []string{"3", "", "2"}; !slices.Equal(c.labels, w) {
		t.Errorf("labels = %q", c.labels)
	}
	if w := []record.LateLabel{{Offset: 4, ID: "a", Label: "5"}}; !slices.Equal(c.late, w) {
		t.Errorf("late = %v", c.late)
	}
	wantRejects(t, c.rejects, map[int64]string{1: `column 3 ("f2", counting from 1): negative value -2`,
		2: `column 2 ("f1", counting from 1) is not a number: "x"`, 3: "3 fields, want 4",
		6: `column 2 ("f1", counting from 1): NaN`, 7: `empty feature field in column 3 ("f2", counting from 1)`,
		8: `column 2 ("f1", counting from 1): value 1e+200 is above 1e+60`})

	// No header, label in the first column, semicolons.
	src = NewCSV(strings.NewReader("1;0.5;0.25\n2;1;1\n"))
	src.LabelColumn, src.Comma = Column{Index: 1}, ';'
	c = readAll(t, src)
	if w := [][]float64{{0.5, 0.25}, {1, 1}}; !slices.EqualFunc(c.dense, w, slices.Equal) || !slices.Equal(c.labels, []string{"1", "2"}) {
		t.Errorf("label column 1: dense %v labels %q", c.dense, c.labels)
	}
	src = NewCSV(strings.NewReader("a,label\n1,2\n3,4\n"))
	src.LabelColumn = Column{Index: NoLabel}
	c = readAll(t, src)
	if len(c.dense) != 2 || c.dim != 2 || c.labeled[0] {
		t.Errorf("NoLabel: %v %v", c.dense, c.labeled)
	}
	if _, err := (&CSV{r: NewCSV(strings.NewReader("label\n1\n")).r}).Form(); err == nil {
		t.Error("CSV with only a label column: no error")
	}
}

// TestCSVColumns checks the choice of the label, id and text columns
// (by position, by name, by the header's default names, or none), the
// unlabeled value and the ids given by record offsets.
func TestCSVColumns(t *testing.T) {
	col := func(s string) Column {
		c, err := ParseColumn(s)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, c := range []struct {
		name           string
		in             string
		label, id, txt string
		unlabeled      string
		form           record.Form
		dense          [][]float64
		text           []string
		ids, labels    []string
		labeled        []bool
	}{
		{name: "no label column: the last column is a feature", in: "1,2,3\n4,5,6\n", form: record.FormDense,
			dense: [][]float64{{1, 2, 3}, {4, 5, 6}}, ids: []string{"0", "1"}, labels: []string{"", ""}, labeled: []bool{false, false}},
		{name: "label in the first column", in: "7,1,2\n,3,4\n8,5,6\n", label: "1", form: record.FormDense,
			dense: [][]float64{{1, 2}, {3, 4}, {5, 6}}, ids: []string{"0", "1", "2"}, labels: []string{"7", "", "8"}, labeled: []bool{true, false, true}},
		{name: "unlabeled value", in: "7,1,2\n-1,3,4\n-1.0,5,6\n", label: "1", unlabeled: "-1", form: record.FormDense,
			dense: [][]float64{{1, 2}, {3, 4}, {5, 6}}, ids: []string{"0", "1", "2"}, labels: []string{"7", "", ""}, labeled: []bool{true, false, false}},
		{name: "header label by default", in: "a,label,b\n1,x,2\n3,,4\n", form: record.FormDense,
			dense: [][]float64{{1, 2}, {3, 4}}, ids: []string{"0", "1"}, labels: []string{"x", ""}, labeled: []bool{true, false}},
		{name: "columns by name", in: "key,a,class\nk1,1,x\nk2,3,y\n", label: "class", id: "key", form: record.FormDense,
			dense: [][]float64{{1}, {3}}, ids: []string{"k1", "k2"}, labels: []string{"x", "y"}, labeled: []bool{true, true}},
		{name: "text column by position", in: "1,hello world,9\n2,graph NMF,9\n", label: "1", txt: "2", form: record.FormText,
			text: []string{"hello world", "graph NMF"}, ids: []string{"0", "1"}, labels: []string{"1", "2"}, labeled: []bool{true, true}},
		{name: "header text by default", in: "id,text,label\nd1,some words,a\nd2,more words,\n", form: record.FormText,
			text: []string{"some words", "more words"}, ids: []string{"d1", "d2"}, labels: []string{"a", ""}, labeled: []bool{true, false}},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := NewCSV(strings.NewReader(c.in))
			if c.label != "" {
				src.LabelColumn = col(c.label)
			}
			if c.id != "" {
				src.IDColumn = col(c.id)
			}
			if c.txt != "" {
				src.TextColumn = col(c.txt)
			}
			src.Unlabeled = c.unlabeled
			f, err := src.Form()
			if err != nil || f != c.form {
				t.Fatalf("Form() = %v, %v; want %v", f, err, c.form)
			}
			got := readAll(t, src)
			if err := src.Err(); err != nil {
				t.Fatal(err)
			}
			if len(got.rejects) > 0 {
				t.Errorf("rejects: %v", got.rejects[0].Reason)
			}
			if !slices.EqualFunc(got.dense, c.dense, slices.Equal) || !slices.Equal(got.text, c.text) {
				t.Errorf("dense %v text %q, want %v %q", got.dense, got.text, c.dense, c.text)
			}
			if !slices.Equal(got.ids, c.ids) || !slices.Equal(got.labels, c.labels) || !slices.Equal(got.labeled, c.labeled) {
				t.Errorf("ids %q labels %q labeled %v, want %q %q %v", got.ids, got.labels, got.labeled, c.ids, c.labels, c.labeled)
			}
		})
	}

	// A document-less record with an id and a label is a late label; one
	// without is rejected, and so is a (quoted) document of white space
	// only, with an id and a label or not (a document without a term, as
	// in Arrow; unquoted, the reader trims it to an empty field).
	src := NewCSV(strings.NewReader("id,text,label\nd1,words,\nd1,,a\n,,\nd2,\"   \",b\n"))
	got := readAll(t, src)
	if w := []record.LateLabel{{Offset: 1, ID: "d1", Label: "a"}}; !slices.Equal(got.late, w) {
		t.Errorf("late = %v, want %v", got.late, w)
	}
	wantRejects(t, got.rejects, map[int64]string{2: "empty document", 3: "empty document (white space only)"})

	for _, c := range []struct {
		name      string
		in        string
		set       func(*CSV)
		wantError string
	}{
		{"position past the end", "1,2\n", func(s *CSV) { s.LabelColumn = Column{Index: 3} }, "label column 3"},
		{"name not in the header", "a,b\n1,2\n", func(s *CSV) { s.LabelColumn = Column{Name: "class"} }, `no label column named "class"`},
		{"name without a header", "1,2\n", func(s *CSV) { s.IDColumn, s.Header = Column{Name: "id"}, HeaderAbsent }, "no header"},
		{"same column twice", "1,2,3\n", func(s *CSV) { s.LabelColumn, s.IDColumn = Column{Index: 1}, Column{Index: 1} }, "must differ"},
		{"negative id column", "1,2\n", func(s *CSV) { s.IDColumn = Column{Index: -1} }, "bad id column"},
	} {
		src := NewCSV(strings.NewReader(c.in))
		c.set(src)
		if _, err := src.Form(); err == nil || !strings.Contains(err.Error(), c.wantError) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.wantError)
		}
	}
	for _, s := range []string{"", "0", "-2"} {
		if _, err := ParseColumn(s); err == nil {
			t.Errorf("ParseColumn(%q): no error", s)
		}
	}
	if c, err := ParseColumn("3"); err != nil || c != (Column{Index: 3}) || c.String() != "3" {
		t.Errorf(`ParseColumn("3") = %+v, %v`, c, err)
	}
	if c, err := ParseColumn("label"); err != nil || c != (Column{Name: "label"}) || c.String() != "label" {
		t.Errorf(`ParseColumn("label") = %+v, %v`, c, err)
	}
}

func TestImagesFolder(t *testing.T) {
	dir := t.TempDir()
	f := func(v uint8) func(x, y int) uint8 { return func(x, y int) uint8 { return v } }
	writeFile(t, dir, "cat/a.png", pngGray(t, 4, 4, f(255)))
	writeFile(t, dir, "cat/b.pgm", encodePGM(8, 8, f(51)))
	writeFile(t, dir, "dog/c.PNG", pngGray(t, 2, 2, f(0)))
	writeFile(t, dir, "dog/broken.png", []byte("\x89PNG\r\n\x1a\nnope"))
	writeFile(t, dir, "dog/notes.txt", []byte("not an image"))
	writeFile(t, dir, ".hidden/x.png", pngGray(t, 4, 4, f(1)))
	writeFile(t, dir, "loose.png", pngGray(t, 4, 4, f(102)))
	src, err := (&Opener{BatchSize: 2}).Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	c := readAll(t, src)
	// dog/broken.png (offset 2) sorts before dog/c.PNG.
	if w := []string{"cat/a.png", "cat/b.pgm", "dog/c.PNG", "loose.png"}; !slices.Equal(c.ids, w) {
		t.Errorf("ids = %q, want %q", c.ids, w)
	}
	if w := []string{"cat", "cat", "dog", ""}; !slices.Equal(c.labels, w) || c.labeled[3] {
		t.Errorf("labels = %q %v", c.labels, c.labeled)
	}
	if c.dim != 16 {
		t.Fatalf("dim = %d, want 16 (the first image's 4×4)", c.dim)
	}
	for i, v := range []float64{1, 0.2, 0, 0.4} {
		for _, p := range c.dense[i] {
			if p != v {
				t.Errorf("image %d has pixel %g, want %g", i, p, v)
				break
			}
		}
	}
	wantRejects(t, c.rejects, map[int64]string{2: "undecodable"})
	if c.rejects[0].ID != "dog/broken.png" {
		t.Errorf("reject id %q", c.rejects[0].ID)
	}
	if _, err := Open(t.TempDir()); err == nil {
		t.Error("empty folder: no error")
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	mem := memory.NewGoAllocator()
	r1 := denseRecord(t, mem, denseRows1)
	r2 := denseRecord(t, mem, denseRows2)
	stream := writeIPC(t, denseSchema, false, r1, r2)
	paths := map[string][]byte{
		"a.arrow":             writeIPC(t, denseSchema, true, r1, r2),
		"stream.arrow":        stream,
		"b.arrows":            stream,
		"c.parquet":           writeParquet(t, denseListSchema, denseRecordOf(t, mem, denseListSchema, denseRows1), denseRecordOf(t, mem, denseListSchema, denseRows2)),
		"d.csv":               []byte("id,x1,x2,x3,label\n10,1,2,3,a\n11,1,-2,3,b\n12,0,0,0,\n13,NaN,0,0,a\n10,,,,c\n,,,,c\n,4,5,6,b\n14,Inf,1,1,\n15,0.5,0.25,0.125,a\n"),
		"e-images-idx3-ubyte": idxBytes([]int{2, 1, 2}, []byte{0, 255, 255, 0}),
		"e-labels-idx1-ubyte": idxBytes([]int{2}, []byte{3, 4}),
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(paths["d.csv"])
	zw.Close()
	paths["f.csv.gz"] = gz.Bytes()
	for name, data := range paths {
		writeFile(t, dir, name, data)
	}
	for _, name := range []string{"a.arrow", "stream.arrow", "b.arrows", "c.parquet", "d.csv", "f.csv.gz"} {
		src, err := Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		c := readAll(t, src)
		if err := src.Err(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := src.Close(); err != nil {
			t.Errorf("%s: Close: %v", name, err)
		}
		checkDense(t, c, true)
	}
	src, err := Open(filepath.Join(dir, "e-images-idx3-ubyte"))
	if err != nil {
		t.Fatal(err)
	}
	c := readAll(t, src)
	src.Close()
	if !slices.Equal(c.labels, []string{"3", "4"}) || !slices.Equal(c.dense[0], []float64{0, 1}) {
		t.Errorf("idx via Open: labels %q, rows %v", c.labels, c.dense)
	}
	src, err = (&Opener{Stdin: bytes.NewReader(stream)}).Open("-")
	if err != nil {
		t.Fatal(err)
	}
	checkDense(t, readAll(t, src), true)
	src.Close()
	for _, p := range []string{"nope.arrow", filepath.Join(dir, "x.unknown"), filepath.Join(dir, "d.csv.arrow")} {
		if _, err := Open(p); err == nil {
			t.Errorf("Open(%q): no error", p)
		}
	}
}

// TestOffsetIDs checks that a sample without an id gets its offset, in
// decimal, as its id in every whole input, as a CSV file without an id
// column does: an Arrow file, stream (opened) and Parquet file without an
// id column or with null ids, a CSV file's empty id field and an IDX file;
// and that NewArrowStream alone (serve's request bodies) leaves "".
func TestOffsetIDs(t *testing.T) {
	mem := memory.NewGoAllocator()
	noID := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32)}}, nil)
	rec := buildRecord(t, mem, noID, func(b *array.RecordBuilder) {
		xs := b.Field(0).(*array.FixedSizeListBuilder)
		for i := range 3 {
			xs.Append(true)
			xs.ValueBuilder().(*array.Float32Builder).AppendValues([]float32{float32(i), 1}, nil)
		}
	})
	defer rec.Release()
	dir := t.TempDir()
	for name, data := range map[string][]byte{
		"n.arrow":   writeIPC(t, noID, true, rec),
		"n.arrows":  writeIPC(t, noID, false, rec),
		"n.parquet": writeParquet(t, noID, rec),
		"n.csv":     []byte("id,a,b\n,0,1\nz,1,1\n ,2,1\n"),
		"n.idx":     idxBytes([]int{3, 2}, []byte{0, 1, 1, 1, 2, 1}),
	} {
		src, err := Open(writeFile(t, dir, name, data))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		c := readAll(t, src)
		src.Close()
		want := []string{"0", "1", "2"}
		if name == "n.csv" {
			want[1] = "z"
		}
		if !slices.Equal(c.ids, want) {
			t.Errorf("%s: ids %q, want %q", name, c.ids, want)
		}
	}
	bare := NewArrowStream(bytes.NewReader(writeIPC(t, noID, false, rec)))
	if c := readAll(t, bare); !slices.Equal(c.ids, []string{"", "", ""}) {
		t.Errorf("NewArrowStream: ids %q, want none", c.ids)
	}
}
