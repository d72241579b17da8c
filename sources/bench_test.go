package sources

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet/file"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"

	"github.com/nmfstream/nmfstream/internal/cputime"
)

// BenchmarkArrowDense10000x784 reads an in-memory Arrow IPC stream, and the
// same records as an Arrow IPC file and as Parquet, of 10,000 MNIST-sized rows (x:
// fixed_size_list<float32>[784], label int64) in batches of 256 and reports
// rows per second of wall-clock time and of process CPU time.
func BenchmarkArrowDense10000x784(b *testing.B) {
	const n, d = 10000, 784
	schema := arrow.NewSchema([]arrow.Field{
		// Nullable: arrow-go v15's Parquet writer writes the values of a
		// non-nullable fixed_size_list as nulls.
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
		// The same file read through pqarrow, the reader NewParquet
		// replaced (it links arrow/compute and arrow/flight, a minute of
		// cold compilation): the reference for the parquet case's speed.
		{"parquet-pqarrow", pq, newPqarrowSource},
	} {
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
