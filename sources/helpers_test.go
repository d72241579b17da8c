package sources

import (
	"bytes"
	"errors"
	"github.com/nmfstream/nmfstream/record"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// buildRecord builds a one-record table from a schema and a function that
// fills the builders. It uses mem so that leak checks cover it.
func buildRecord(t testing.TB, mem memory.Allocator, schema *arrow.Schema, fill func(b *array.RecordBuilder)) arrow.Record {
	t.Helper()
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	fill(b)
	return b.NewRecord()
}

// writeIPC encodes records as an Arrow IPC stream (file = false) or file.
func writeIPC(t testing.TB, schema *arrow.Schema, file bool, recs ...arrow.Record) []byte {
	t.Helper()
	var buf bytes.Buffer
	type writer interface {
		Write(arrow.Record) error
		Close() error
	}
	var w writer
	if file {
		fw, err := ipc.NewFileWriter(&posWriter{w: &buf}, ipc.WithSchema(schema))
		if err != nil {
			t.Fatal(err)
		}
		w = fw
	} else {
		w = ipc.NewWriter(&buf, ipc.WithSchema(schema))
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readAll drains src, returning copies of all batches merged.
func readAll(t testing.TB, src Source) *collected {
	t.Helper()
	c := &collected{}
	for src.Next() {
		b := src.Batch()
		if b.Records() == 0 {
			t.Fatal("Next returned an empty batch")
		}
		c.batches++
		if b.Len() != len(b.IDs) || b.Len() != len(b.Labels) || b.Len() != len(b.Labeled) {
			t.Fatalf("inconsistent metadata lengths in batch %d", c.batches)
		}
		switch b.Form {
		case record.FormDense:
			if b.Len() > 0 {
				r, d := b.Dense.Dims()
				if r != b.Len() {
					t.Fatalf("Dense has %d rows for %d samples", r, b.Len())
				}
				for i := 0; i < r; i++ {
					c.dense = append(c.dense, append([]float64(nil), b.Dense.RawRowView(i)...))
				}
				c.dim = d
			} else if b.Dense != nil {
				t.Fatal("Dense set without samples")
			}
		case record.FormSparse:
			if b.Len() > 0 {
				r, d := b.Sparse.Dims()
				if r != b.Len() {
					t.Fatalf("Sparse has %d rows for %d samples", r, b.Len())
				}
				if err := b.Sparse.Validate(); err != nil {
					t.Fatal(err)
				}
				for i := 0; i < r; i++ {
					ind, val := b.Sparse.Row(i)
					c.sparseInd = append(c.sparseInd, append([]int(nil), ind...))
					c.sparseVal = append(c.sparseVal, append([]float64(nil), val...))
				}
				c.dim = d
			}
		case record.FormText:
			if len(b.Text) != b.Len() {
				t.Fatalf("%d documents for %d samples", len(b.Text), b.Len())
			}
			c.text = append(c.text, b.Text...)
		default:
			t.Fatalf("batch form %v", b.Form)
		}
		c.ids = append(c.ids, b.IDs...)
		c.labels = append(c.labels, b.Labels...)
		c.labeled = append(c.labeled, b.Labeled...)
		c.offsets = append(c.offsets, b.Offsets...)
		c.late = append(c.late, b.LateLabels...)
		c.rejects = append(c.rejects, b.Rejects...)
	}
	return c
}

type collected struct {
	batches   int
	dim       int
	dense     [][]float64
	sparseInd [][]int
	sparseVal [][]float64
	text      []string
	ids       []string
	labels    []string
	labeled   []bool
	offsets   []int64
	late      []record.LateLabel
	rejects   []record.Reject
}

// wantRejects checks the rejects' offsets and that each reason mentions
// the offset and the given problem.
func wantRejects(t *testing.T, got []record.Reject, want map[int64]string) {
	t.Helper()
	if len(got) != len(want) {
		for _, r := range got {
			t.Logf("reject: %v", r.Reason)
		}
		t.Fatalf("got %d rejects, want %d", len(got), len(want))
	}
	for _, r := range got {
		sub, ok := want[r.Offset]
		if !ok {
			t.Errorf("unexpected reject at %d: %v", r.Offset, r.Reason)
			continue
		}
		msg := r.Reason.Error()
		if !strings.Contains(msg, "record "+strconv.FormatInt(r.Offset, 10)) || !strings.Contains(msg, sub) {
			t.Errorf("reject %d: reason %q, want it to name the record and %q", r.Offset, msg, sub)
		}
		// A record without features is marked so (stages.Step.Featureless
		// predicts it); no other reject is.
		featureless := strings.HasPrefix(sub, "empty document") || strings.HasPrefix(sub, "no features")
		if errors.Is(r.Reason, record.ErrNoFeatures) != featureless {
			t.Errorf("reject %d (%q): errors.Is(ErrNoFeatures) %v, want %v", r.Offset, msg, !featureless, featureless)
		}
	}
}

// pngGray encodes a w×h 8-bit gray image whose pixel (x, y) is f(x, y).
func pngGray(t testing.TB, w, h int, f func(x, y int) uint8) []byte {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.SetGray(x, y, color.Gray{Y: f(x, y)})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func writeFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// posWriter gives an io.Writer the one Seek that ipc.FileWriter uses:
// Seek(0, io.SeekCurrent), the current position.
type posWriter struct {
	w io.Writer
	n int64
}

func (p *posWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.n += int64(n)
	return n, err
}

func (p *posWriter) Seek(off int64, whence int) (int64, error) {
	if off != 0 || whence != io.SeekCurrent {
		return 0, errors.New("posWriter: only Seek(0, io.SeekCurrent)")
	}
	return p.n, nil
}
