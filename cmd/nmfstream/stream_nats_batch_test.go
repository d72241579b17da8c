package main

import (
	"context"
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/nmfstream/nmfstream/sources"
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
