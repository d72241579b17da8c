package sources_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/nmfstream/nmfstream/record"

	"github.com/nmfstream/nmfstream/sources"
)

// A Reader hands out copies of a source's batches, in the shape of
// pipeline.Reader; Skip resumes a stream after the records a checkpoint
// covers.
func ExampleReader() {
	src := sources.NewCSV(strings.NewReader("label,a,b\n1,0.5,1\n2,1,0\n1,0.25,2\n2,2,0\n"))
	src.BatchSize = 2
	defer src.Close()
	r := sources.NewReader(src)
	r.Skip = 2 // the first two records were applied before
	for {
		b, err := r.Read(context.Background())
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(b.Offsets, b.Labels, b.Dense.RawMatrix().Data)
	}
	// Output:
	// [2 3] [1 2] [0.25 2 2 0]
}

// TestReaderCopies checks that the batches a Reader returns outlive the
// source's next batch, and that a resume offset inside a batch is an error.
func TestReaderCopies(t *testing.T) {
	csv := "label,a\n1,1\n2,2\n3,3\n4,4\n5,5\n"
	src := sources.NewCSV(strings.NewReader(csv))
	src.BatchSize = 2
	r := sources.NewReader(src)
	var got []*record.Batch
	for {
		b, err := r.Read(context.Background())
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, b)
	}
	if len(got) != 3 {
		t.Fatalf("%d batches, want 3", len(got))
	}
	for i, b := range got {
		for j, o := range b.Offsets {
			if want := float64(o + 1); b.Dense.At(j, 0) != want || b.Labels[j] != fmt.Sprint(o+1) {
				t.Errorf("batch %d row %d: x %v label %s, want %v", i, j, b.Dense.At(j, 0), b.Labels[j], want)
			}
		}
	}

	src = sources.NewCSV(strings.NewReader(csv))
	src.BatchSize = 2
	r = sources.NewReader(src)
	r.Skip = 3
	if _, err := r.Read(context.Background()); err == nil || !strings.Contains(err.Error(), "inside a batch") {
		t.Errorf("resume inside a batch: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := sources.NewReader(sources.NewCSV(strings.NewReader(csv))).Read(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestReaderSkipPastEnd resumes at offset 6 and at 5 on an input of five
// records: past its end is an error naming both counts (an input other
// than the checkpoint's, as stdin may be), at its end is io.EOF.
func TestReaderSkipPastEnd(t *testing.T) {
	for _, c := range []struct {
		skip int64
		eof  bool
	}{{5, true}, {6, false}} {
		src := sources.NewCSV(strings.NewReader("label,a\n1,1\n2,2\n3,3\n4,4\n5,5\n"))
		src.BatchSize = 2
		r := sources.NewReader(src)
		r.Skip = c.skip
		_, err := r.Read(context.Background())
		if c.eof && err != io.EOF || !c.eof && (err == nil || err == io.EOF || !strings.Contains(err.Error(), "after 5 records, before the resume offset 6")) {
			t.Errorf("skip %d: %v", c.skip, err)
		}
	}
}
