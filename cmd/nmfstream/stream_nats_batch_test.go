package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/sources"
	"github.com/nmfstream/nmfstream/stages"
)

// TestGrowingBatches checks the driver's growing batches at P > 1: batches
// of the opening size until one reaches the offset given, of the larger
// size after, every record read once in order; and a reader resuming at a
// later batch's first offset (sources.Reader.Skip) reads the same batches
// from there, as a resumed driver must.
func TestGrowingBatches(t *testing.T) {
	train, _, _ := digitsFiles(t, t.TempDir(), 0)
	read := func(skip int64) (sizes []int, firsts []int64) {
		src, err := csvFlags{}.openStream(train, 100)
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		rd := sources.NewReader(newGrowingBatches(src, 250, 300))
		rd.Skip = skip
		next := skip
		for {
			b, err := rd.Read(context.Background())
			if errors.Is(err, io.EOF) {
				return sizes, firsts
			}
			if err != nil {
				t.Fatal(err)
			}
			first, last := b.Span()
			if first != next || int(last-first+1) != b.Records() {
				t.Fatalf("batch of records %d..%d after %d", first, last, next)
			}
			next = last + 1
			sizes, firsts = append(sizes, b.Records()), append(firsts, first)
		}
	}
	sizes, firsts := read(0)
	if len(sizes) < 6 || !slices.Equal(sizes[:5], []int{100, 100, 100, 300, 300}) {
		t.Fatalf("batch sizes %v, want 100 three times, then 300", sizes)
	}
	resumed, rfirsts := read(firsts[4])
	if !slices.Equal(resumed, sizes[4:]) || !slices.Equal(rfirsts, firsts[4:]) {
		t.Fatalf("a resumed reader read batches %v from %v, the first read %v from %v", resumed, rfirsts, sizes[4:], firsts[4:])
	}
}

// TestMergeBatches: the digits' batches of 100 records merged into batches
// of at most 300 (mergeBatches, the batches read ahead after a common
// start learned once) are the batches of 300 that the source reads, sample
// for sample, row bits included; late labels and rejects keep their order.
func TestMergeBatches(t *testing.T) {
	train, _, _ := digitsFiles(t, t.TempDir(), 0)
	read := func(size int) []*stages.Features {
		src, err := csvFlags{}.openStream(train, size)
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		rd := sources.NewReader(src)
		var out []*stages.Features
		for {
			b, err := rd.Read(context.Background())
			if errors.Is(err, io.EOF) {
				return out
			}
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, stages.NewFeatures(b))
		}
	}
	small, large := read(100), read(300)
	merged := mergeBatches(small, 300)
	if len(merged) != len(large) {
		t.Fatalf("%d merged batches, the source reads %d of 300", len(merged), len(large))
	}
	for k, m := range merged {
		l := large[k]
		if !slices.Equal(m.IDs, l.IDs) || !slices.Equal(m.Labels, l.Labels) || !slices.Equal(m.Labeled, l.Labeled) || !slices.Equal(m.Offsets, l.Offsets) {
			t.Fatalf("batch %d: samples differ from the source's batch of 300", k)
		}
		mx, lx := model.Rows(m.X).(*mat.Dense).RawMatrix(), model.Rows(l.X).(*mat.Dense).RawMatrix()
		if mx.Rows != lx.Rows || mx.Cols != lx.Cols || !slices.EqualFunc(mx.Data, lx.Data, func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }) {
			t.Fatalf("batch %d: rows differ from the source's batch of 300", k)
		}
	}
	// With a late label and a reject each, batches of 102 records merge by
	// three into 306.
	for k, f := range small {
		f.LateLabels = []record.LateLabel{{Offset: int64(k), ID: fmt.Sprint(k), Label: "1"}}
		f.Rejects = []record.Reject{{Offset: int64(k), ID: fmt.Sprint(k)}}
	}
	for k, m := range mergeBatches(small, 306) {
		if len(m.LateLabels) != min(3, len(small)-3*k) || len(m.Rejects) != len(m.LateLabels) {
			t.Fatalf("batch %d: %d late labels, %d rejects", k, len(m.LateLabels), len(m.Rejects))
		}
		for i, ll := range m.LateLabels {
			if want := int64(3*k + i); ll.Offset != want || m.Rejects[i].Offset != want {
				t.Fatalf("batch %d: late label %d and reject at %d, %d; want %d", k, i, ll.Offset, m.Rejects[i].Offset, want)
			}
		}
	}
}
