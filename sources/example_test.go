package sources_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/nmfstream/nmfstream/sources"
)

func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "digits.csv")
	// No header: the label column is given (an empty label is unlabeled).
	os.WriteFile(path, []byte("0,1,2,7\n3,4,-5,1\n6,7,8,\n"), 0o644)

	o := sources.Opener{LabelColumn: sources.Column{Index: 4}}
	src, err := o.Open(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer src.Close()
	for src.Next() {
		b := src.Batch() // valid until the next call to Next
		fmt.Println(b.Len(), "samples, labels", b.Labels, b.Labeled)
		for _, r := range b.Rejects {
			fmt.Println(r.Reason)
		}
	}
	if err := src.Err(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// 2 samples, labels [7 ] [true false]
	// sources: record 1: column 3 (counting from 1): negative value -5 (features are ≥ 0)
}

func ExampleNewArrowStream() {
	// Write a stream of documents with labels, one of them a late label.
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.BinaryTypes.String},
		{Name: "text", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "label", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).AppendValues([]string{"d1", "d2", "d1"}, nil)
	b.Field(1).(*array.StringBuilder).AppendValues([]string{"graph NMF", "streams", ""}, []bool{true, true, false})
	b.Field(2).(*array.Int64Builder).AppendValues([]int64{0, 0, 4}, []bool{false, false, true})
	rec := b.NewRecord()
	defer rec.Release()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
	w.Write(rec)
	w.Close()

	src := sources.NewArrowStream(&buf)
	defer src.Close()
	for src.Next() {
		b := src.Batch()
		fmt.Println(b.Form, b.Text, b.IDs, b.Labeled)
		fmt.Printf("%+v\n", b.LateLabels)
	}
	// Output:
	// text [graph NMF streams] [d1 d2] [false false]
	// [{Offset:2 ID:d1 Label:4}]
}

func ExampleCSV_textColumn() {
	// Documents with their class in the first column and -1 for
	// unlabeled; no id column, so the ids are the record offsets.
	src := sources.NewCSV(strings.NewReader("-1,graph regularized NMF\nspam,buy cheap pills now\n"))
	src.LabelColumn, src.TextColumn, src.Unlabeled = sources.Column{Index: 1}, sources.Column{Index: 2}, "-1"
	for src.Next() {
		b := src.Batch()
		fmt.Println(b.Form, b.IDs, b.Labels, b.Labeled, b.Text)
	}
	// Output:
	// text [0 1] [ spam] [false true] [graph regularized NMF buy cheap pills now]
}

func ExampleNewCSV() {
	src := sources.NewCSV(strings.NewReader("id,label,a,b\nx,cat,1,2\ny,,3,4\n"))
	src.BatchSize = 1
	for src.Next() {
		b := src.Batch()
		fmt.Println(b.IDs, b.Labels, b.Dense.RawRowView(0))
	}
	// Output:
	// [x] [cat] [1 2]
	// [y] [] [3 4]
}

func ExampleNewIDX() {
	// A 2×2 image and its label, in MNIST's IDX layout.
	images := []byte{0, 0, 0x08, 3}
	images = binary.BigEndian.AppendUint32(images, 1)
	images = binary.BigEndian.AppendUint32(images, 2)
	images = binary.BigEndian.AppendUint32(images, 2)
	images = append(images, 0, 51, 255, 102)
	labels := binary.BigEndian.AppendUint32([]byte{0, 0, 0x08, 1}, 1)
	labels = append(labels, 7)

	src := sources.NewIDX(bytes.NewReader(images), bytes.NewReader(labels))
	for src.Next() {
		b := src.Batch()
		fmt.Println(b.Dense.RawRowView(0), b.Labels)
	}
	// Output:
	// [0 0.2 1 0.4] [7]
}

func ExampleNewImages() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	for _, p := range []string{"cat/1.png", "dog/2.png"} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755)
		f, _ := os.Create(filepath.Join(dir, p))
		png.Encode(f, image.NewGray(image.Rect(0, 0, 8, 8)))
		f.Close()
	}
	src := sources.NewImages(dir)
	src.Width, src.Height = 4, 4
	for src.Next() {
		b := src.Batch()
		r, c := b.Dense.Dims()
		fmt.Println(r, c, b.IDs, b.Labels)
	}
	// Output:
	// 2 16 [cat/1.png dog/2.png] [cat dog]
}
