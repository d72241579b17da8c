package sinks

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// Results are the codes and predictions for n samples, one row each, as
// written by the result sinks (docs/DESIGN.md §5 output: id, code, pred, score).
type Results struct {
	// IDs holds each sample's id; its length is n.
	IDs []string
	// Codes holds the samples' codes, one row each (n×K, rows of V), or is
	// nil when codes are not written. Codes are written as float32; Write
	// returns an error, writing nothing, if one is NaN or beyond float32's
	// range.
	Codes *mat.Dense
	// NoCode, if not nil, marks the samples that have no code (one entry
	// per sample): their row of Codes is not read, and they are written
	// with a null code (Arrow) or without "code" (JSON lines), as when
	// Codes is nil.
	NoCode []bool
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
	if r.NoCode != nil && len(r.NoCode) != n {
		return fmt.Errorf("sinks: %d code marks for %d ids", len(r.NoCode), n)
	}
	if r.Codes != nil && !r.Codes.IsEmpty() {
		rows, cols := r.Codes.Dims()
		if rows != n || cols != k {
			return fmt.Errorf("sinks: codes are %d×%d, want %d×%d", rows, cols, n, k)
		}
		// Codes are written as float32: a code beyond its range would be
		// written as ±Inf (Arrow) or null (JSON lines), not as a number.
		for i := 0; i < rows; i++ {
			if !r.hasCode(i) {
				continue
			}
			for j, v := range r.Codes.RawRowView(i) {
				if math.IsNaN(v) || math.Abs(v) > math.MaxFloat32 {
					return fmt.Errorf("sinks: code %d of sample %q is %g, not a finite float32", j, r.IDs[i], v)
				}
			}
		}
	}
	return nil
}

// hasCode reports whether sample i is written with its row of Codes.
func (r *Results) hasCode(i int) bool {
	return r.Codes != nil && !r.Codes.IsEmpty() && (r.NoCode == nil || !r.NoCode[i])
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

// IsArrow reports whether Create writes path as Arrow (.arrow, .arrows, or
// "-" for standard output) rather than JSON lines.
func IsArrow(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	return path == "-" || ext == ".arrow" || ext == ".arrows"
}

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
		return &fileSink{Sink: s, bw: bw, f: f, cw: true}, nil
	}
	return &fileSink{Sink: s, bw: bw, f: f}, nil
}

// Continue returns a JSON-lines sink that continues the output at path
// from its first size bytes, dropping whatever follows them (the lines a
// crashed run wrote after its last checkpoint). The file must exist and
// hold at least size bytes. Arrow outputs cannot be continued (their
// footer or end marker closes them): Continue returns an error for them.
func Continue(path string, k int, size int64) (Sink, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".jsonl", ".ndjson", ".json":
	default:
		return nil, fmt.Errorf("sinks: %s: an Arrow output cannot be continued after a restart; write JSON lines (.jsonl) to resume a stream", path)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && fi.Size() < size {
		err = fmt.Errorf("sinks: %s holds %d bytes, fewer than the %d already written: it is not the output of this stream", path, fi.Size(), size)
	}
	if err == nil {
		err = f.Truncate(size)
	}
	if err == nil {
		_, err = f.Seek(size, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	bw := bufio.NewWriter(f)
	return &fileSink{Sink: NewJSONL(bw, k), bw: bw, f: f, cw: true}, nil
}

// Syncer is a sink whose output can be made durable at a point between
// writes, as a checkpoint needs: Sync flushes what was written, forces it
// to stable storage, and returns the output's length in bytes. The sinks
// of Create and Continue for JSON lines implement it.
type Syncer interface {
	Sync() (int64, error)
}

// fileSink closes the file that Create opened.
type fileSink struct {
	Sink
	bw *bufio.Writer
	f  *os.File
	cw bool // JSON lines: Sync applies
}

// Sync implements Syncer for JSON-lines files.
func (s *fileSink) Sync() (int64, error) {
	if !s.cw {
		return 0, fmt.Errorf("sinks: %s: only JSON-lines outputs can be synced between writes", s.f.Name())
	}
	if err := s.bw.Flush(); err != nil {
		return 0, err
	}
	if err := s.f.Sync(); err != nil {
		return 0, err
	}
	return s.f.Seek(0, io.SeekCurrent)
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
