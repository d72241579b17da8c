package sources

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/nmfstream/nmfstream/record"
	"io"

	"gonum.org/v1/gonum/mat"
)

// Default bounds of a JSON-lines record (JSONLimits' zero values).
const (
	// DefaultMaxIDBytes bounds a record's id, and DefaultMaxLabelBytes its
	// label: what a service keeps per id (pending labels, recent records)
	// is then bounded in bytes by its count of ids.
	DefaultMaxIDBytes    = 256
	DefaultMaxLabelBytes = 256
	// DefaultMaxTextBytes bounds a record's text.
	DefaultMaxTextBytes = 1 << 20
)

// JSONLimits bounds what ReadJSONLines and ReadJSONLabels accept per
// record; a record over a bound is rejected, naming it. Zero values mean
// the defaults.
type JSONLimits struct {
	MaxDim        int // entries of "x" (DefaultMaxDim), counted before they are decoded
	MaxIDBytes    int // bytes of "id" (DefaultMaxIDBytes)
	MaxLabelBytes int // bytes of "label" (DefaultMaxLabelBytes)
	MaxTextBytes  int // bytes of "text" (DefaultMaxTextBytes)
	MaxLineBytes  int // bytes of a line (64 MiB); a longer line is an error for the whole body
}

func (l JSONLimits) or() JSONLimits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.MaxDim, DefaultMaxDim)
	def(&l.MaxIDBytes, DefaultMaxIDBytes)
	def(&l.MaxLabelBytes, DefaultMaxLabelBytes)
	def(&l.MaxTextBytes, DefaultMaxTextBytes)
	def(&l.MaxLineBytes, maxCSVLineBytes)
	return l
}

// ErrNotJSON reports a body none of whose lines is JSON.
var ErrNotJSON = errors.New("not JSON lines")

// jsonLine is one line of a JSON-lines records body; x stays raw until its
// entries are counted.
type jsonLine struct {
	ID    json.RawMessage `json:"id"`
	X     json.RawMessage `json:"x"`
	Text  *string         `json:"text"`
	Label json.RawMessage `json:"label"`
}

// lineScanner returns a scanner of r's lines up to max bytes each.
func lineScanner(r io.Reader, max int) *bufio.Scanner {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, min(max, 64<<10)), max)
	return sc
}

// ReadJSONLines reads a JSON-lines records body into batches of at most
// size records: each line is an object with "x" (dense features, an array
// of numbers) or "text", an optional "id" and "label" (strings or
// numbers); a line with an id, a label and neither x nor text is a late
// label. A bad line becomes a reject naming its offset (0-based among the
// body's non-blank lines) and the problem; the dense records of one batch
// share their dimension. The request's feature form (one per request) is
// that of its first line with features ("x", or "text", even a text then
// rejected for its length): late labels and lines rejected before their
// features are known do not set it (docs/DESIGN.md §5, "Data contract
// (Arrow)": one feature form per input); every batch carries it, dense
// when no line has features. It returns an error, wrapping ErrNotJSON,
// when no line is JSON at all (a body that is not JSON lines), and the
// scanner's error for a line over MaxLineBytes.
func ReadJSONLines(r io.Reader, size int, lim JSONLimits) ([]*record.Batch, error) {
	lim = lim.or()
	sc := lineScanner(r, lim.MaxLineBytes)
	jb := jsonBatches{size: size}
	var off int64
	var firstErr error
	parsed := false
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		rec, x, err := decodeRecord(line, lim)
		if err == nil || !errors.Is(err, errSyntax) {
			parsed = true
		} else if firstErr == nil {
			firstErr = fmt.Errorf("line %d: %w", off+1, err)
		}
		jb.add(off, rec, x, err)
		off++
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("line %d is longer than %d bytes", off+1, lim.MaxLineBytes)
		}
		return nil, err
	}
	if !parsed && firstErr != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotJSON, firstErr)
	}
	jb.flush()
	return jb.out, nil
}

// jsonBatches groups the decoded lines of a records body into batches of
// at most size records, for ReadJSONLines.
type jsonBatches struct {
	size int
	out  []*record.Batch
	cur  *record.Batch // the batch being filled, nil before a line
	rows [][]float64   // cur's dense rows
	form record.Form   // the request's form: 0 until a line with features sets it
}

// add puts the line at offset off, decoded as rec and x with error err
// (decodeRecord), in the current batch, as a sample, a late label or a
// reject.
func (jb *jsonBatches) add(off int64, rec jsonRecord, x []float64, err error) {
	if jb.cur != nil && jb.cur.Records() >= jb.size {
		jb.flush()
	}
	form := rec.claims
	if jb.form == 0 && form != 0 {
		jb.form = form
		for _, b := range jb.out { // batches of late labels and rejects only
			b.Form = form
		}
	}
	if jb.cur == nil {
		jb.cur = &record.Batch{Form: record.FormDense}
	}
	cur := jb.cur
	if jb.form != 0 {
		cur.Form = jb.form
	}
	reject := func(err error) {
		cur.Rejects = append(cur.Rejects, record.Reject{Offset: off, ID: rec.id, Reason: &record.Error{Offset: off, ID: rec.id, Err: err}})
	}
	switch {
	case err != nil:
		reject(err)
	case x == nil && rec.text == nil:
		if rec.id != "" && rec.label != "" {
			cur.LateLabels = append(cur.LateLabels, record.LateLabel{Offset: off, ID: rec.id, Label: rec.label})
		} else {
			reject(record.NoFeatures("no features (x or text), and not a late label (id and label)"))
		}
	case form != cur.Form:
		reject(fmt.Errorf("%v record in a request of %v records (set by its first record with features): one feature form per request", form, cur.Form))
	case form == record.FormDense && len(jb.rows) > 0 && len(x) != len(jb.rows[0]):
		reject(fmt.Errorf("%d features, the request's first record has %d", len(x), len(jb.rows[0])))
	default:
		if form == record.FormDense {
			jb.rows = append(jb.rows, x)
		} else {
			cur.Text = append(cur.Text, *rec.text)
		}
		cur.IDs = append(cur.IDs, rec.id)
		cur.Labels = append(cur.Labels, rec.label)
		cur.Labeled = append(cur.Labeled, rec.label != "")
		cur.Offsets = append(cur.Offsets, off)
	}
}

// flush ends the current batch, if any: its dense rows become its Dense.
func (jb *jsonBatches) flush() {
	if jb.cur == nil {
		return
	}
	if len(jb.rows) > 0 {
		jb.cur.Dense = mat.NewDense(len(jb.rows), len(jb.rows[0]), nil)
		for i, row := range jb.rows {
			copy(jb.cur.Dense.RawRowView(i), row)
		}
	}
	jb.out = append(jb.out, jb.cur)
	jb.cur, jb.rows = nil, nil
}

// errSyntax marks a line that is not JSON.
var errSyntax = errors.New("not JSON")

// jsonRecord is a decoded line: its id, label and text, and the feature
// form its fields claim (0 for none).
type jsonRecord struct {
	id, label string
	text      *string
	claims    record.Form
}

// claimedForm is the feature form a parsed line claims by its fields,
// whether or not their values are then accepted: FormText for a "text"
// string (even one over the length limit), FormDense for a non-null "x",
// and 0 for neither or both (a late label, a line without features, or an
// ambiguous one, rejected).
func claimedForm(l jsonLine) record.Form {
	hasX := len(bytes.TrimSpace(l.X)) > 0 && string(bytes.TrimSpace(l.X)) != "null"
	switch {
	case l.Text != nil && !hasX:
		return record.FormText
	case hasX && l.Text == nil:
		return record.FormDense
	}
	return 0
}

// decodeRecord decodes one line and checks it against lim; x is nil when
// the line has no "x". Its errors name JSON fields, never Go types.
func decodeRecord(line []byte, lim JSONLimits) (jsonRecord, []float64, error) {
	var rec jsonRecord
	if line[0] != '{' {
		if !json.Valid(line) {
			return rec, nil, fmt.Errorf("%w: %v", errSyntax, syntaxError(line))
		}
		return rec, nil, fmt.Errorf("a record is a JSON object, got %s", jsonKind(line[0]))
	}
	var l jsonLine
	if err := json.Unmarshal(line, &l); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return rec, nil, fmt.Errorf("%w: %v", errSyntax, err)
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return rec, nil, fmt.Errorf("field %q must be %s, not %s", te.Field, fieldKind(te.Field), te.Value)
		}
		return rec, nil, fmt.Errorf("bad record: %v", err)
	}
	rec.claims = claimedForm(l)
	var err error
	if rec.id, err = rawString("id", l.ID, lim.MaxIDBytes); err != nil {
		return rec, nil, err
	}
	if rec.label, err = rawString("label", l.Label, lim.MaxLabelBytes); err != nil {
		return rec, nil, err
	}
	if l.Text != nil && len(*l.Text) > lim.MaxTextBytes {
		return rec, nil, fmt.Errorf("text of %d bytes, over the limit of %d", len(*l.Text), lim.MaxTextBytes)
	}
	rec.text = l.Text
	x, err := denseX(l.X, lim.MaxDim)
	if err == nil && x != nil && rec.text != nil {
		err = errors.New("both x and text: one feature form per record")
	}
	return rec, x, err
}

// denseX decodes "x", an array of finite non-negative numbers of at most
// maxDim entries, counted before anything is allocated.
func denseX(raw json.RawMessage, maxDim int) ([]float64, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] != '[' {
		return nil, fmt.Errorf("\"x\" must be an array of numbers, not %s", jsonKind(raw[0]))
	}
	if n := bytes.Count(raw, []byte{','}) + 1; n > maxDim {
		return nil, fmt.Errorf("%d features, over the limit of %d (--max-dim)", n, maxDim)
	}
	var x []float64
	if err := json.Unmarshal(raw, &x); err != nil {
		return nil, errors.New("\"x\" must be an array of numbers (finite, at most ±1.8e308)")
	}
	if len(x) == 0 {
		return nil, errors.New("empty x")
	}
	for j, v := range x {
		if !(v >= 0 && v <= record.MaxValue) { // false for NaN
			return nil, fmt.Errorf("value %g at feature %d: features must be non-negative and at most %g (record.MaxValue)", v, j, record.MaxValue)
		}
	}
	return x, nil
}

// rawString turns a JSON string or number into a string ("" for null) of
// at most max bytes, counted decoded (escapes resolved, quotes excluded),
// and reports the decoded size of one over max. The raw value is at most a
// line (JSONLimits.MaxLineBytes), already in memory, so decoding it first
// costs no more than that.
func rawString(field string, r json.RawMessage, max int) (string, error) {
	r = bytes.TrimSpace(r)
	if len(r) == 0 || string(r) == "null" {
		return "", nil
	}
	var s string
	switch {
	case r[0] == '"':
		if err := json.Unmarshal(r, &s); err != nil {
			return "", fmt.Errorf("%q: %v", field, err)
		}
	case r[0] == '-' || r[0] >= '0' && r[0] <= '9':
		var n json.Number
		if err := json.Unmarshal(r, &n); err != nil {
			return "", fmt.Errorf("%q must be a string or a number, not %s", field, r)
		}
		s = n.String()
	default:
		return "", fmt.Errorf("%q must be a string or a number, not %s", field, jsonKind(r[0]))
	}
	if len(s) > max {
		return "", fmt.Errorf("%q of %d bytes, over the limit of %d", field, len(s), max)
	}
	return s, nil
}

// jsonKind names the kind of JSON value that begins with c.
func jsonKind(c byte) string {
	switch {
	case c == '[':
		return "an array"
	case c == '{':
		return "an object"
	case c == '"':
		return "a string"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	}
	return "a number"
}

// fieldKind names what a field of a record holds.
func fieldKind(field string) string {
	switch field {
	case "x":
		return "an array of numbers"
	case "text":
		return "a string"
	}
	return "a string or a number"
}

// syntaxError is json's error for a line that is not JSON.
func syntaxError(line []byte) error {
	var v any
	err := json.Unmarshal(line, &v)
	if err == nil {
		err = errors.New("invalid JSON")
	}
	return err
}

// LabelLine is a label posted for a record id.
type LabelLine struct {
	Offset int64 // 0-based among the body's non-blank lines
	ID     string
	Label  string
}

// ReadJSONLabels reads a labels body, one JSON object {"id": …, "label": …}
// per line, each with a non-empty id and label (strings or numbers) within
// lim's bounds. Bad lines become rejects and the good ones are kept, as
// ReadJSONLines does; a body with no JSON line is an error wrapping
// ErrNotJSON.
func ReadJSONLabels(r io.Reader, lim JSONLimits) ([]LabelLine, []record.Reject, error) {
	lim = lim.or()
	sc := lineScanner(r, lim.MaxLineBytes)
	var labels []LabelLine
	var rejects []record.Reject
	var firstErr error
	parsed := false
	var off int64
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		rec, x, err := decodeRecord(line, lim)
		if err == nil || !errors.Is(err, errSyntax) {
			parsed = true
		} else if firstErr == nil {
			firstErr = fmt.Errorf("line %d: %w", off+1, err)
		}
		switch {
		case err != nil:
		case x != nil || rec.text != nil:
			err = errors.New("a label line has no features (post records to /v1/records)")
		case rec.id == "" || rec.label == "":
			err = errors.New("a label line needs an id and a label")
		}
		if err != nil {
			rejects = append(rejects, record.Reject{Offset: off, ID: rec.id, Reason: &record.Error{Offset: off, ID: rec.id, Err: err}})
		} else {
			labels = append(labels, LabelLine{off, rec.id, rec.label})
		}
		off++
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, nil, fmt.Errorf("line %d is longer than %d bytes", off+1, lim.MaxLineBytes)
		}
		return nil, nil, err
	}
	if !parsed && firstErr != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrNotJSON, firstErr)
	}
	return labels, rejects, nil
}
