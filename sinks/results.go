package sinks

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// Results are the codes and predictions for n samples, one row each, as
// written by the result sinks (DESIGN.md §5 output: id, code, pred, score).
type Results struct {
	// IDs holds each sample's id; its length is n.
	IDs []string
	// Codes holds the samples' codes, one row each (n×K, rows of V), or is
	// nil when codes are not written. Codes are written as float32; Write
	// returns an error, writing nothing, if one is NaN or beyond float32's
	// range.
	Codes *mat.Dense
	// Preds holds each sample's predicted label, or is nil for none. An
	// empty string is written as null.
	Preds []string
	// Scores holds each prediction's score, or is nil for none. NaN (and,
	// in JSON lines, ±Inf) is written as null.
	Scores []float64
}

// Len returns n, the number of samples.
func (r *Results) Len() int { return len(r.IDs) }

// check reports an inconsistency between r's parts and with k codes per row.
func (r *Results) check(k int) error {
	n := len(r.IDs)
	if r.Preds != nil && len(r.Preds) != n {
		return fmt.Errorf("sinks: %d predictions for %d ids", len(r.Preds), n)
	}
	if r.Scores != nil && len(r.Scores) != n {
		return fmt.Errorf("sinks: %d scores for %d ids", len(r.Scores), n)
	}
	if r.Codes != nil && !r.Codes.IsEmpty() {
		rows, cols := r.Codes.Dims()
		if rows != n || cols != k {
			return fmt.Errorf("sinks: codes are %d×%d, want %d×%d", rows, cols, n, k)
		}
		// Codes are written as float32: a code beyond its range would be
		// written as ±Inf (Arrow) or null (JSON lines), not as a number.
		for i := 0; i < rows; i++ {
			for j, v := range r.Codes.RawRowView(i) {
				if math.IsNaN(v) || math.Abs(v) > math.MaxFloat32 {
					return fmt.Errorf("sinks: code %d of sample %q is %g, not a finite float32", j, r.IDs[i], v)
				}
			}
		}
	}
	return nil
}

// Sink receives results. Write may be called any number of times; Close
// flushes and ends the output (writing the Arrow file footer or stream end
// marker) and closes the file if the sink opened it. A Sink is not safe for
// concurrent use.
type Sink interface {
	Write(r Results) error
	Close() error
}

var (
	_ Sink = (*Arrow)(nil)
	_ Sink = (*JSONL)(nil)
)

// Create returns a sink writing to path, chosen by its extension: .arrow
// (Arrow IPC file), .arrows (Arrow IPC stream), .jsonl, .ndjson or .json
// (JSON lines), or "-" for an Arrow IPC stream on standard output. k is the
// number of code columns, or 0 to write no codes. Close closes the file.
func Create(path string, k int) (Sink, error) {
	if path == "-" {
		return NewArrow(os.Stdout, k), nil
	}
	ext := strings.ToLower(filepath.Ext(path))
	switch ext {
	case ".arrow", ".arrows", ".jsonl", ".ndjson", ".json":
	default:
		return nil, fmt.Errorf("sinks: %s: unknown output format (want .arrow, .arrows or .jsonl)", path)
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	bw := bufio.NewWriter(f)
	var s Sink
	switch ext {
	case ".arrow":
		a := NewArrow(bw, k)
		a.File = true
		s = a
	case ".arrows":
		s = NewArrow(bw, k)
	default:
		s = NewJSONL(bw, k)
	}
	return &fileSink{Sink: s, bw: bw, f: f}, nil
}

// fileSink closes the file that Create opened.
type fileSink struct {
	Sink
	bw *bufio.Writer
	f  *os.File
}

func (s *fileSink) Close() error {
	err := s.Sink.Close()
	if ferr := s.bw.Flush(); err == nil {
		err = ferr
	}
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	return err
}
