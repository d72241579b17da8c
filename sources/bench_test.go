package sources

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/nmfstream/nmfstream/internal/cputime"
)

// BenchmarkArrowDense10000x784 reads an in-memory Arrow IPC stream, and the
// same records as an Arrow IPC file and as Parquet, of 10,000 MNIST-sized rows (x:
// fixed_size_list<float32>[784], label int64) in batches of 256 and reports
// rows per second of wall-clock time and of process CPU time.
func BenchmarkArrowDense10000x784(b *testing.B) {
	const n, d = 10000, 784
	schema := arrow.NewSchema([]arrow.Field{
		// Nullable, as pqarrow needs it (arrow-go v15's pqarrow writes the
		// values of a non-nullable fixed_size_list as nulls).
		{Name: "x", Type: arrow.FixedSizeListOf(d, arrow.PrimitiveTypes.Float32), Nullable: true},
		{Name: "label", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	rng := rand.New(rand.NewPCG(1, 1))
	mem := memory.NewGoAllocator()
	var recs []arrow.Record
	for start := 0; start < n; start += 1000 { // 10 record batches of 1,000 rows
		recs = append(recs, buildRecord(b, mem, schema, func(rb *array.RecordBuilder) {
			xs := rb.Field(0).(*array.FixedSizeListBuilder)
			xv := xs.ValueBuilder().(*array.Float32Builder)
			for i := 0; i < 1000; i++ {
				xs.Append(true)
				for j := 0; j < d; j++ {
					xv.Append(rng.Float32())
				}
				rb.Field(1).(*array.Int64Builder).Append(int64(i % 10))
			}
		}))
	}
	stream := writeIPC(b, schema, false, recs...)
	file := writeIPC(b, schema, true, recs...)
	pq := writeParquet(b, schema, recs...)
	for _, r := range recs {
		r.Release()
	}
	for _, c := range []struct {
		name string
		data []byte
		open func([]byte) *Arrow
	}{
		{"stream", stream, func(d []byte) *Arrow { return NewArrowStream(bytes.NewReader(d)) }},
		{"file", file, func(d []byte) *Arrow { return NewArrowFile(bytes.NewReader(d)) }},
		{"parquet", pq, func(d []byte) *Arrow { return NewParquet(bytes.NewReader(d)) }},
		// The same file read through pqarrow (with -tags pqarrow): the
		// reference for the parquet case's speed.
		{"parquet-pqarrow", pq, pqarrowSource},
	} {
		if c.open == nil {
			continue
		}
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.data)))
			b.ReportAllocs()
			c0, _ := cputime.Used()
			for b.Loop() {
				src := c.open(c.data)
				rows := 0
				for src.Next() {
					rows += src.Batch().Len()
				}
				if src.Err() != nil || rows != n {
					b.Fatalf("read %d rows, err %v", rows, src.Err())
				}
				src.Close()
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "rows/s")
			if c1, ok := cputime.Used(); ok && c1 > c0 {
				b.ReportMetric(float64(n*b.N)/(c1-c0).Seconds(), "cpu-rows/s")
			}
		})
	}
}

// pqarrowSource, set with -tags pqarrow (bench_pqarrow_test.go), reads a
// Parquet file through pqarrow's record reader, the reader NewParquet
// replaced. It is behind a tag because pqarrow links arrow/compute and
// arrow/flight, which were 85 of the 236 s of compile actions of a cold
// go test ./... (BENCHMARKS.md, "Build time").
var pqarrowSource func([]byte) *Arrow

// BenchmarkCSVLineLimit reads 2,000 MNIST-sized CSV rows (784 numeric
// fields and a label) through the line limiter of Open, which counts their
// fields and follows their quoting: its cost over encoding/csv's own pass
// (see BenchmarkCSVDense) is the limiter's.
func BenchmarkCSVLineLimit(b *testing.B) {
	in := csvRows(2000, 784)
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		l := &lineLimit{r: bytes.NewReader(in), max: maxCSVLineBytes, maxFields: 784 + 3}
		if _, err := io.Copy(io.Discard, l); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCSVDense reads the rows of BenchmarkCSVLineLimit as the CSV
// source does, through Open's line limiter.
func BenchmarkCSVDense(b *testing.B) {
	in := csvRows(2000, 784)
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		src := NewCSV(&lineLimit{r: bytes.NewReader(in), max: maxCSVLineBytes, maxFields: 784 + 3})
		for src.Next() {
		}
		if err := src.Err(); err != nil {
			b.Fatal(err)
		}
	}
}

// csvRows returns n rows of d pixel-like values (0 to 255, mostly 0) and a
// label, comma-separated.
func csvRows(n, d int) []byte {
	var buf bytes.Buffer
	for i := range n {
		for j := range d {
			v := 0
			if (i*31+j*17)%5 == 0 {
				v = (i + j) % 256
			}
			fmt.Fprintf(&buf, "%d,", v)
		}
		fmt.Fprintf(&buf, "%d\n", i%10)
	}
	return buf.Bytes()
}
