package sources

import (
	"encoding/csv"
	"errors"
	"fmt"
	"github.com/nmfstream/nmfstream/record"
	"io"
	"math"
	"strconv"
	"strings"
)

// NoLabel as the Index of CSV.LabelColumn means the file has no label
// column, even if its header has one named "label".
const NoLabel = -1

// Column selects a CSV column: by its name in the header, or by its
// position. The zero Column selects none, so the CSV field's default
// applies.
type Column struct {
	// Name is the column's name in the header. Naming a column makes the
	// first record a header.
	Name string
	// Index is the column's position counting from 1, used when Name is
	// empty.
	Index int
}

// ParseColumn reads a column the way the command line writes it: a
// positive decimal number is a position counting from 1, anything else a
// header name.
func ParseColumn(s string) (Column, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Column{}, errors.New("sources: csv: empty column name")
	}
	if n, err := strconv.Atoi(s); err == nil {
		if n <= 0 {
			return Column{}, fmt.Errorf("sources: csv: column %d: positions count from 1", n)
		}
		return Column{Index: n}, nil
	}
	return Column{Name: s}, nil
}

// String returns the column as ParseColumn reads it.
func (c Column) String() string {
	if c.Name != "" {
		return c.Name
	}
	return strconv.Itoa(c.Index)
}

func (c Column) isZero() bool { return c.Name == "" && c.Index == 0 }

// Header says whether the first CSV record is a header.
type Header int

const (
	// HeaderAuto (the default) takes the first record as a header when one
	// of its feature fields is neither empty nor a number, or when a column
	// is chosen by name.
	HeaderAuto Header = iota
	// HeaderPresent means the first record is a header.
	HeaderPresent
	// HeaderAbsent means the first record is data.
	HeaderAbsent
)

// CSV reads comma-separated values, one record per line: numeric features
// as FormDense batches, or documents as FormText batches when there is a
// text column.
//
// Which column is what:
//   - the label is LabelColumn; by default the header column named
//     "label", and without one the file has no labels (so that the last
//     feature is never taken for a label). An empty field, or one equal to
//     Unlabeled, means unlabeled; a label that is an integral number is
//     formatted in decimal ("3.0" becomes "3").
//   - the id is IDColumn; by default the header column named "id", and
//     without one, or where its field is empty, a sample's id is its
//     offset in decimal ("0", "1", …), as for the other inputs
//     (docs/DESIGN.md §5).
//   - the document is TextColumn; by default the header column named
//     "text", and without one the records are numeric features. With a
//     text column, the columns other than label and id are ignored.
//   - every other column is a feature.
//
// A record with a field count other than the first record's, a field that is
// not a number, or a negative or non-finite value is rejected; a record whose
// feature fields (or document) are all empty is a late label if it has an
// id (from an id column) and a label. A quoted document of white space
// only is a document without a term, rejected (record.ErrNoFeatures) as
// Arrow's are, not a late label (unquoted, leading space is trimmed, and
// the field is empty). Offsets count data records from 0, not
// lines.
//
// A record encoding/csv cannot parse (a bare quote, a quote left open) is
// rejected, naming its line. When r is the line limiter of Open, a record
// with a line over its byte limit or with more fields than its field limit
// is rejected too, naming its line, without being held in memory, and the
// records after it are read. So are the first records: the first readable
// record fixes the header and the number of fields, and each record before
// it (overlong, or not parsed) is a reject at offset 0, 1, … (it cannot be
// told from a data record), in the first batch Next returns, before its
// records (in the first batches if there are more than BatchSize). A
// header after them, detected or required by a column chosen by name,
// takes no offset: with k of them, data records count from k. An input of
// such records alone ends without an error, all of them rejected. With
// HeaderPresent an unreadable first line is the header, whose columns
// cannot be known: Next and Form stop with an error (a *LimitError for an
// overlong one).
//
// Set the exported fields before the first call to Next or Form.
type CSV struct {
	// BatchSize is the number of records per batch. If zero, it defaults
	// to 256.
	BatchSize int
	// LabelColumn selects the label column. The zero Column means the
	// header column named "label" if there is one, else none; an Index of
	// NoLabel means none.
	LabelColumn Column
	// IDColumn selects the id column. The zero Column means the header
	// column named "id" if there is one, else ids are record offsets.
	IDColumn Column
	// TextColumn selects a column of documents. The zero Column means the
	// header column named "text" if there is one, else none.
	TextColumn Column
	// Unlabeled is a label value that means unlabeled, besides the empty
	// field (for example "-1"). It is compared after integral numbers are
	// formatted in decimal, so "-1" also matches "-1.0".
	Unlabeled string
	// Header says whether the first record is a header. The default is
	// HeaderAuto.
	Header Header
	// Comma is the field delimiter. If zero, it defaults to ','.
	Comma rune

	r      *csv.Reader
	limit  *lineLimit // the reader r reads, if it is one
	closer io.Closer  // the input, when opened by Open

	started   bool
	first     []string // the first data record, read while detecting the header
	names     []string // the header's fields, trimmed, or nil without a header
	nfields   int
	label     int // column index of the label, or -1
	id        int // column index of the id, or -1
	text      int // column index of the documents, or -1
	unlabeled string
	off       int64
	done      bool
	err       error
	row       []float64
	dense     denseRows
	batch     batch

	// skipped holds the records before the first readable one (overlong,
	// or that encoding/csv could not parse), from offset 0, that Next has
	// not yet put in batches: skipOff is the offset of the next one, the
	// record skipIn of the run skipped[0]. They are all held until that
	// first record is read, in runs (see skippedRun): a file whose every
	// line has the same number of fields over the limit (a MaxDim set too
	// small) takes one run.
	skipped []skippedRun
	skipOff int64
	skipIn  int64
}

// skippedRun is n overlong records, from first on, on consecutive lines,
// whose reasons differ only in their line; or, with first nil, one record
// encoding/csv could not parse, text its reason.
type skippedRun struct {
	first *overlong
	n     int64
	text  string
}

// extends reports whether o is the record after the run r, with the same
// reason but for its line.
func (r *skippedRun) extends(o *overlong) bool {
	f := r.first
	return f != nil && o.line == f.line+r.n && o.fields == f.fields && o.limit == f.limit &&
		(o.fields && o.nf == f.nf || !o.fields && o.bytes == f.bytes)
}

// reason is the reason of the run's record i, counting from 0.
func (r *skippedRun) reason(i int64) string {
	if r.first == nil {
		return r.text
	}
	o := *r.first
	o.line += i
	return o.reason()
}

var _ Source = (*CSV)(nil)

// NewCSV returns a source reading CSV records from r.
func NewCSV(r io.Reader) *CSV {
	c := &CSV{r: csv.NewReader(r)}
	c.limit, _ = r.(*lineLimit)
	return c
}

// overlong returns the record that the line limiter dropped if it is the
// one the last call to c.r.Read read, or nil.
func (c *CSV) overlong() *overlong {
	if c.limit == nil {
		return nil
	}
	return c.limit.takeSkipped(c.r.InputOffset())
}

// Form reads the first record within the limits of the line limiter (and
// header), past overlong ones (see CSV), and returns FormDense, or
// FormText with a text column, or why the input cannot be used.
func (c *CSV) Form() (record.Form, error) {
	if !c.start() {
		return 0, c.err
	}
	return c.form(), nil
}

func (c *CSV) form() record.Form {
	if c.text >= 0 {
		return record.FormText
	}
	return record.FormDense
}

// position returns the 0-based index of a column chosen by position, -1
// for none, or an error when the first record is too short.
func (c *CSV) position(what string, col Column) (int, error) {
	if col.Name != "" || col.Index <= 0 {
		return -1, nil
	}
	if col.Index > c.nfields {
		return -1, fmt.Errorf("sources: csv: %s column %d, but the first record has %d fields", what, col.Index, c.nfields)
	}
	return col.Index - 1, nil
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
	cols := []struct {
		what string
		col  Column
		idx  *int
		def  string
	}{{"label", c.LabelColumn, &c.label, "label"}, {"id", c.IDColumn, &c.id, "id"}, {"text", c.TextColumn, &c.text, "text"}}
	for _, k := range cols {
		if k.col.Name == "" && k.col.Index < 0 && !(k.what == "label" && k.col.Index == NoLabel) {
			c.err = fmt.Errorf("sources: csv: bad %s column %d", k.what, k.col.Index)
			return false
		}
	}
	if c.Header < HeaderAuto || c.Header > HeaderAbsent {
		c.err = fmt.Errorf("sources: csv: bad Header %d", c.Header)
		return false
	}
	c.unlabeled = normalizeLabel(strings.TrimSpace(c.Unlabeled))
	rec, err := c.r.Read()
	for {
		o := c.overlong()
		var pe *csv.ParseError
		if o == nil && !errors.As(err, &pe) {
			break
		}
		if c.Header == HeaderPresent { // the header, which cannot be read
			c.err = fmt.Errorf("sources: csv: the header: %w", err)
			if o != nil {
				c.err = o.limitError()
			}
			return false
		}
		switch k := len(c.skipped) - 1; {
		case o == nil:
			c.skipped = append(c.skipped, skippedRun{text: err.Error(), n: 1})
		case k >= 0 && c.skipped[k].extends(o):
			c.skipped[k].n++
		default:
			c.skipped = append(c.skipped, skippedRun{first: o, n: 1})
		}
		c.off++ // the header, if rec is one, takes no offset
		rec, err = c.r.Read()
	}
	if err == io.EOF {
		c.done = true
		c.label, c.id, c.text = -1, -1, -1
		if !c.TextColumn.isZero() {
			c.text = 0
		}
		return true
	}
	if err != nil {
		c.err = fmt.Errorf("sources: csv: %w", err)
		return false
	}
	c.nfields = len(rec)
	byName := false
	for _, k := range cols {
		if *k.idx, err = c.position(k.what, k.col); err != nil {
			c.err = err
			return false
		}
		byName = byName || k.col.Name != ""
	}
	header := c.Header == HeaderPresent || (c.Header == HeaderAuto && byName)
	if c.Header == HeaderAuto && !header {
		for j, f := range rec {
			if j == c.label || j == c.id || j == c.text {
				continue
			}
			if f = strings.TrimSpace(f); f != "" {
				if _, err := strconv.ParseFloat(f, 64); err != nil {
					header = true
				}
			}
		}
	}
	if byName && !header {
		c.err = errors.New("sources: csv: a column is chosen by name, but the file has no header (Header is HeaderAbsent)")
		return false
	}
	if header {
		names := map[string]int{}
		for _, f := range rec {
			c.names = append(c.names, strings.TrimSpace(f))
		}
		for j, f := range rec {
			if f = strings.TrimSpace(f); f != "" {
				if _, dup := names[f]; !dup {
					names[f] = j
				}
			}
		}
		for _, k := range cols {
			switch {
			case k.col.Name != "":
				j, ok := names[k.col.Name]
				if !ok {
					c.err = fmt.Errorf("sources: csv: no %s column named %q in the header %q", k.what, k.col.Name, rec)
					if len(c.skipped) > 0 {
						c.err = fmt.Errorf("%w, the first record within the limits, after %d over them (the first: %s)", c.err, c.off, c.skipped[0].reason(0))
					}
					return false
				}
				*k.idx = j
			case k.col.isZero():
				if j, ok := names[k.def]; ok {
					*k.idx = j
				}
			}
		}
	} else {
		c.first = append([]string(nil), rec...)
	}
	switch {
	case c.label >= 0 && (c.label == c.id || c.label == c.text), c.id >= 0 && c.id == c.text:
		c.err = errors.New("sources: csv: the label, id and text columns must differ")
		return false
	case c.text < 0 && c.nfields-b2i(c.label >= 0)-b2i(c.id >= 0) <= 0:
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
	if !c.start() || (c.done && len(c.skipped) == 0) {
		return false
	}
	c.batch.reset(c.form())
	bs := batchSize(c.BatchSize)
	for k := 0; k < bs; k++ {
		if len(c.skipped) > 0 {
			c.batch.reject(c.skipOff, "", "%s", c.skipped[0].reason(c.skipIn))
			c.skipOff, c.skipIn = c.skipOff+1, c.skipIn+1
			if c.skipIn == c.skipped[0].n {
				c.skipped[0] = skippedRun{}
				c.skipped, c.skipIn = c.skipped[1:], 0
			}
			continue
		}
		if c.done {
			break
		}
		rec := c.first
		c.first = nil
		if rec == nil {
			var err error
			rec, err = c.r.Read()
			if err == io.EOF {
				c.done = true
				break
			}
			if o := c.overlong(); o != nil {
				c.batch.reject(c.off, "", "%s", o.reason())
				c.off++
				continue
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
		if label == c.unlabeled {
			label = ""
		}
	}
	sampleID := id
	if sampleID == "" {
		sampleID = strconv.FormatInt(off, 10)
	}
	if c.text >= 0 {
		doc := rec[c.text]
		switch {
		case strings.TrimSpace(doc) != "":
			c.batch.Text = append(c.batch.Text, strings.Clone(doc))
			c.batch.addMeta(off, sampleID, label, label != "")
		case doc == "" && id != "" && label != "":
			c.batch.LateLabels = append(c.batch.LateLabels, record.LateLabel{Offset: off, ID: id, Label: label})
		case doc == "":
			c.batch.rejectNoFeatures(off, sampleID, "empty document (a record without a document must carry an id and a label)")
		default:
			c.batch.rejectNoFeatures(off, sampleID, "empty document (white space only)")
		}
		return
	}
	row, blank, err := c.features(rec)
	switch {
	case err != nil:
		c.batch.reject(off, id, "%v", err)
	case len(blank) == len(row) && id != "" && label != "":
		c.batch.LateLabels = append(c.batch.LateLabels, record.LateLabel{Offset: off, ID: id, Label: label})
	case len(blank) == len(row):
		c.batch.rejectNoFeatures(off, sampleID, "no features (a record without features must carry an id and a label)")
	case len(blank) == 1:
		c.batch.reject(off, id, "empty feature field in %s", c.column(blank[0]))
	case len(blank) > 1:
		c.batch.reject(off, id, "%d empty feature fields, the first in %s", len(blank), c.column(blank[0]))
	default:
		if err := c.dense.check(row); err != nil {
			c.batch.reject(off, id, "%v", err)
			return
		}
		c.dense.add(row)
		c.batch.addMeta(off, sampleID, label, label != "")
	}
}

// column names column j (0-based) of a record in a message: counting from
// 1, as --label-column does, with its header name when there is one.
func (c *CSV) column(j int) string {
	if j < len(c.names) && c.names[j] != "" {
		return fmt.Sprintf("column %d (%q, counting from 1)", j+1, c.names[j])
	}
	return fmt.Sprintf("column %d (counting from 1)", j+1)
}

// features parses the feature fields of rec (all but the label and id
// columns) into c.row, which it returns: an empty field reads as 0 and its
// column is listed in blank. A field that is not a number, or whose value
// cannot be a feature (docs/DESIGN.md §5: ≥ 0, finite, at most
// record.MaxValue), is an error naming its column.
func (c *CSV) features(rec []string) (row []float64, blank []int, err error) {
	row = c.row[:0]
	for j, f := range rec {
		if j == c.label || j == c.id {
			continue
		}
		f = strings.TrimSpace(f)
		if f == "" {
			blank = append(blank, j)
			row = append(row, 0)
			continue
		}
		v, perr := strconv.ParseFloat(f, 64)
		switch {
		case errors.Is(perr, strconv.ErrRange):
			err = fmt.Errorf("%s: %q is out of range (features are finite, at most %g, record.MaxValue)", c.column(j), f, record.MaxValue)
		case perr != nil:
			err = fmt.Errorf("%s is not a number: %q", c.column(j), f)
		case math.IsNaN(v):
			err = fmt.Errorf("%s: NaN", c.column(j))
		case math.IsInf(v, 0):
			err = fmt.Errorf("%s: infinite value %q", c.column(j), f)
		case v < 0:
			err = fmt.Errorf("%s: negative value %g (features are ≥ 0)", c.column(j), v)
		case v > record.MaxValue:
			err = fmt.Errorf("%s: value %g is above %g (record.MaxValue): scale the features down", c.column(j), v, record.MaxValue)
		}
		if err != nil {
			return nil, nil, err
		}
		row = append(row, v)
	}
	c.row = row
	return row, blank, nil
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
func (c *CSV) Batch() *record.Batch { return &c.batch.Batch }

// Err returns the error that stopped Next, or nil at the end of the input.
func (c *CSV) Err() error { return c.err }

// Close closes the input if Open opened it.
func (c *CSV) Close() error {
	c.started, c.done = true, true
	c.skipped = nil
	if c.closer != nil {
		cl := c.closer
		c.closer = nil
		return cl.Close()
	}
	return nil
}
