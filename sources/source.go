package sources

import (
	"fmt"
	"github.com/nmfstream/nmfstream/record"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Source is a stream of batches, read like array.RecordReader or
// bufio.Scanner:
//
//	for src.Next() {
//		b := src.Batch() // valid until the next call to Next
//		...
//	}
//	if err := src.Err(); err != nil { ... }
//	src.Close()
//
// Next returns false at the end of the input or on an error that makes the
// rest of the input unusable; Err then tells which (nil at the end). Bad
// single records do not stop a source: they are in Batch.Rejects.
type Source interface {
	// Next reads the next batch and reports whether there is one.
	Next() bool
	// Batch returns the batch read by the last successful Next. It is valid
	// until the next call to Next or Close.
	Batch() *record.Batch
	// Err returns the error that stopped Next, or nil.
	Err() error
	// Form returns the feature form of the source's batches. For
	// self-describing inputs it reads the header (schema) first, so it may
	// fail on an unusable file.
	Form() (record.Form, error)
	// Close releases the source's resources and closes the input it opened.
	// It does not close readers passed to a constructor.
	Close() error
}

const defaultBatchSize = 256

func batchSize(n int) int {
	if n <= 0 {
		return defaultBatchSize
	}
	return n
}

// checkValues returns an error naming the first negative, non-finite or
// too large (above record.MaxValue) value.
func checkValues(row []float64) error {
	for j, v := range row {
		switch {
		case math.IsNaN(v):
			return fmt.Errorf("NaN at feature %d", j)
		case math.IsInf(v, 0):
			return fmt.Errorf("infinite value at feature %d", j)
		case v < 0:
			return fmt.Errorf("negative value %g at feature %d", v, j)
		case v > record.MaxValue:
			return fmt.Errorf("value %g at feature %d is above %g (record.MaxValue): scale the features down", v, j, record.MaxValue)
		}
	}
	return nil
}

// denseRows accumulates the dense rows of a batch. The first row fixes the
// dimension unless d is set beforehand; max bounds it (zero:
// DefaultMaxDim).
type denseRows struct {
	d, max int
	buf    []float64
}

// check reports why row cannot be added, or nil.
func (a *denseRows) check(row []float64) error {
	if a.d != 0 && len(row) != a.d {
		return fmt.Errorf("dimension %d, want %d", len(row), a.d)
	}
	if m := maxDim(a.max); len(row) > m {
		return fmt.Errorf("dimension %d exceeds the limit of %d; %s", len(row), m, raiseMaxDim)
	}
	return checkValues(row)
}

func (a *denseRows) add(row []float64) {
	if a.d == 0 {
		a.d = len(row)
	}
	a.buf = append(a.buf, row...)
}

// take returns the rows added since the last take as a matrix sharing the
// accumulator's memory (nil if there are none) and starts a new batch.
func (a *denseRows) take() *mat.Dense {
	if len(a.buf) == 0 {
		return nil
	}
	m := mat.NewDense(len(a.buf)/a.d, a.d, a.buf)
	a.buf = a.buf[:0]
	return m
}

// imageSize holds a source's Width, Height, MaxImagePixels and MaxDim
// settings and the size fixed by the first image.
type imageSize struct {
	w, h, max, dim int
}

func newImageSize(w, h, maxPixels, dim int) (imageSize, error) {
	if w < 0 || h < 0 || (w == 0) != (h == 0) {
		return imageSize{}, fmt.Errorf("sources: Width and Height must both be positive or both zero, got %d×%d", w, h)
	}
	if maxPixels <= 0 {
		maxPixels = defaultMaxImagePixels
	}
	dim = maxDim(dim)
	if w > dim/max(h, 1) { // both zero, or both positive
		return imageSize{}, &LimitError{Record: -1, What: fmt.Sprintf("dimension Width·Height = %d·%d =", w, h),
			Value: int64(w) * int64(h), Limit: int64(dim), Raise: "choose a smaller Width and Height (--width, --height) or " + raiseMaxDim}
	}
	return imageSize{w: w, h: h, max: maxPixels, dim: dim}, nil
}

// decode decodes data and resizes it into dst (reused), fixing the size from
// the first image when unset. If the first image would fix a dimension
// above the limit, it returns a *LimitError before decoding it.
func (s *imageSize) decode(dst []float64, data []byte) ([]float64, error) {
	var first func(w, h int) error
	if s.w == 0 {
		first = func(w, h int) error {
			if w > s.dim/h {
				return &LimitError{What: fmt.Sprintf("the first image is %d×%d: its dimension", w, h),
					Value: int64(w) * int64(h), Limit: int64(s.dim),
					Raise: "set Width and Height (--width, --height) to resize the images, or " + raiseMaxDim}
			}
			return nil
		}
	}
	out, w, h, err := decodeImageTo(dst, s.w, s.h, data, s.max, first)
	if err != nil {
		return dst, err
	}
	s.w, s.h = w, h
	return out, nil
}
