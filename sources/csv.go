package sources

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// NoLabel as CSV.LabelColumn means the file has no label column.
const NoLabel = -1

// Header says whether the first CSV record is a header.
type Header int

const (
	// HeaderAuto (the default) takes the first record as a header when one
	// of its feature fields is neither empty nor a number.
	HeaderAuto Header = iota
	// HeaderPresent means the first record is a header.
	HeaderPresent
	// HeaderAbsent means the first record is data.
	HeaderAbsent
)

// CSV reads numeric features from comma-separated values, one record per
// line, as FormDense batches. By default the last column is the label, which
// is the layout of digits.csv.gz (64 pixel values, then the digit).
//
// With a header, a column named "id" holds ids and, when LabelColumn is 0, a
// column named "label" is the label column (else the last one is). Every
// other column is a feature. An empty label field means unlabeled; a label
// that is an integral number is formatted in decimal ("3.0" becomes "3").
//
// A record with a field count other than the first record's, a field that is
// not a number, or a negative or non-finite value is rejected; a record whose
// feature fields are all empty is a late label if it has an id and a label.
// Offsets count data records from 0, not lines.
//
// Set the exported fields before the first call to Next or Form.
type CSV struct {
	// BatchSize is the number of records per batch. If zero, it defaults
	// to 256.
	BatchSize int
	// LabelColumn selects the label column: 0 (the default) means the
	// column named "label" if the header has one, else the last column;
	// n > 0 means the n-th column, counting from 1; NoLabel means none.
	LabelColumn int
	// Header says whether the first record is a header. The default is
	// HeaderAuto.
	Header Header
	// Comma is the field delimiter. If zero, it defaults to ','.
	Comma rune

	r      *csv.Reader
	closer io.Closer // the input, when opened by Open

	started bool
	first   []string // the first data record, read while detecting the header
	nfields int
	label   int // column index of the label, or -1
	id      int // column index of the id, or -1
	off     int64
	done    bool
	err     error
	row     []float64
	dense   denseRows
	batch   Batch
}

var _ Source = (*CSV)(nil)

// NewCSV returns a source reading CSV records from r.
func NewCSV(r io.Reader) *CSV {
	return &CSV{r: csv.NewReader(r)}
}

// Form reads the first record (and header) and returns FormDense, or why
// the input cannot be used.
func (c *CSV) Form() (Form, error) {
	if !c.start() {
		return 0, c.err
	}
	return FormDense, nil
}

func (c *CSV) start() bool {
	if c.started {
		return c.err == nil
	}
	c.started = true
	if c.Comma != 0 {
		c.r.Comma = c.Comma
	}
	c.r.FieldsPerRecord = -1
	c.r.TrimLeadingSpace = true
	if c.LabelColumn < NoLabel || c.Header < HeaderAuto || c.Header > HeaderAbsent {
		c.err = fmt.Errorf("sources: csv: bad LabelColumn %d or Header %d", c.LabelColumn, c.Header)
		return false
	}
	rec, err := c.r.Read()
	if err == io.EOF {
		c.done = true
		return true
	}
	if err != nil {
		c.err = fmt.Errorf("sources: csv: %w", err)
		return false
	}
	c.nfields = len(rec)
	c.label, c.id = -1, -1
	switch {
	case c.LabelColumn > 0:
		if c.LabelColumn > c.nfields {
			c.err = fmt.Errorf("sources: csv: LabelColumn %d but the first record has %d fields", c.LabelColumn, c.nfields)
			return false
		}
		c.label = c.LabelColumn - 1
	case c.LabelColumn == 0:
		c.label = c.nfields - 1
	}
	header := c.Header == HeaderPresent
	if c.Header == HeaderAuto {
		for j, f := range rec {
			if j == c.label {
				continue
			}
			if f = strings.TrimSpace(f); f != "" {
				if _, err := strconv.ParseFloat(f, 64); err != nil {
					header = true
				}
			}
		}
	}
	if header {
		for j, f := range rec {
			switch strings.TrimSpace(f) {
			case "id":
				c.id = j
			case "label":
				if c.LabelColumn == 0 {
					c.label = j
				}
			}
		}
		if c.id == c.label {
			c.id = -1
		}
	} else {
		c.first = append([]string(nil), rec...)
	}
	if c.nfields-b2i(c.label >= 0)-b2i(c.id >= 0) <= 0 {
		c.err = errors.New("sources: csv: no feature columns")
		return false
	}
	c.r.ReuseRecord = true
	return true
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Next reads the next batch of up to BatchSize records.
func (c *CSV) Next() bool {
	if !c.start() || c.done {
		return false
	}
	c.batch.reset(FormDense)
	bs := batchSize(c.BatchSize)
	for k := 0; k < bs; k++ {
		rec := c.first
		c.first = nil
		if rec == nil {
			var err error
			rec, err = c.r.Read()
			if err == io.EOF {
				c.done = true
				break
			}
			if err != nil {
				var pe *csv.ParseError
				if !errors.As(err, &pe) {
					c.err = fmt.Errorf("sources: csv: %w", err)
					c.done = true
					break
				}
				c.batch.reject(c.off, "", "%v", err)
				c.off++
				continue
			}
		}
		c.record(rec)
	}
	c.batch.Dense = c.dense.take()
	return c.batch.Records() > 0
}

func (c *CSV) record(rec []string) {
	off := c.off
	c.off++
	var id, label string
	if c.id >= 0 && c.id < len(rec) {
		id = strings.TrimSpace(rec[c.id])
	}
	if len(rec) != c.nfields {
		c.batch.reject(off, id, "%d fields, want %d", len(rec), c.nfields)
		return
	}
	if c.label >= 0 {
		label = normalizeLabel(strings.TrimSpace(rec[c.label]))
	}
	row := c.row[:0]
	blank := 0
	for j, f := range rec {
		if j == c.label || j == c.id {
			continue
		}
		f = strings.TrimSpace(f)
		if f == "" {
			blank++
			row = append(row, 0)
			continue
		}
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			c.batch.reject(off, id, "field %d is not a number: %q", j+1, f)
			return
		}
		row = append(row, v)
	}
	c.row = row
	switch {
	case blank == len(row) && id != "" && label != "":
		c.batch.LateLabels = append(c.batch.LateLabels, LateLabel{Offset: off, ID: id, Label: label})
	case blank == len(row):
		c.batch.reject(off, id, "no features (a record without features must carry an id and a label)")
	case blank > 0:
		c.batch.reject(off, id, "%d empty feature fields", blank)
	default:
		if err := c.dense.check(row); err != nil {
			c.batch.reject(off, id, "%v", err)
			return
		}
		c.dense.add(row)
		c.batch.addMeta(off, id, label, label != "")
	}
}

// normalizeLabel formats an integral numeric label in decimal.
func normalizeLabel(s string) string {
	if s == "" {
		return s
	}
	if v, err := strconv.ParseFloat(s, 64); err == nil && v == math.Trunc(v) && math.Abs(v) < 1<<53 {
		return strconv.FormatInt(int64(v), 10)
	}
	return s
}

// Batch returns the batch read by the last successful Next, valid until
// the next call to Next or Close.
func (c *CSV) Batch() *Batch { return &c.batch }

// Err returns the error that stopped Next, or nil at the end of the input.
func (c *CSV) Err() error { return c.err }

// Close closes the input if Open opened it.
func (c *CSV) Close() error {
	c.started, c.done = true, true
	if c.closer != nil {
		cl := c.closer
		c.closer = nil
		return cl.Close()
	}
	return nil
}
