package sources

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/nmfstream/nmfstream/record"
)

// DefaultMaxDim is record.DefaultMaxDim, the largest feature dimension D a
// source accepts unless its MaxDim says otherwise.
const DefaultMaxDim = record.DefaultMaxDim

// Bounds on what a reader buffers or decodes before it can check it.
const (
	// maxArrowSchemaBytes bounds the base64 ARROW:schema metadata of a
	// Parquet file, decoded before the file's own schema is used.
	maxArrowSchemaBytes = 16 << 20
	// maxIPCMessageBytes bounds one Arrow IPC message (metadata and
	// body), which the stream reader holds in memory whole.
	maxIPCMessageBytes = 1 << 31
	// maxImageFileBytes bounds one image file of a folder, read whole
	// before decoding.
	maxImageFileBytes = 1 << 28
	// maxCSVLineBytes bounds one line of a CSV file opened by Open:
	// encoding/csv buffers a whole record, and a file without newlines is
	// one record. 64 MiB holds a row of DefaultMaxDim numbers in text; it
	// is serve's bound on a JSON line too.
	maxCSVLineBytes = 64 << 20
)

// LimitError reports an input that exceeds a size limit, refused before
// anything of that size is allocated.
type LimitError struct {
	// Input names the file (or "" if the source was given a reader) and
	// Record the 0-based record, or -1 for a header or schema.
	Input  string
	Record int64
	// What names the quantity, Value its size (-1 if it overflows an
	// int64), Limit the limit.
	What         string
	Value, Limit int64
	// Raise says how to raise the limit or avoid it.
	Raise string
}

func (e *LimitError) Error() string {
	var b strings.Builder
	b.WriteString("sources: ")
	if e.Input != "" {
		fmt.Fprintf(&b, "%s: ", e.Input)
	}
	if e.Record >= 0 {
		fmt.Fprintf(&b, "record %d: ", e.Record)
	}
	if e.Value >= 0 {
		fmt.Fprintf(&b, "%s %d exceeds the limit of %d", e.What, e.Value, e.Limit)
	} else {
		fmt.Fprintf(&b, "%s exceeds the limit of %d", e.What, e.Limit)
	}
	if e.Raise != "" {
		fmt.Fprintf(&b, "; %s", e.Raise)
	}
	return b.String()
}

// raiseMaxDim is the advice of a dimension LimitError.
const raiseMaxDim = "raise the limit with MaxDim (--max-dim) if the machine has the memory for a D×K basis"

// maxDim returns the effective limit of a MaxDim field.
func maxDim(n int) int {
	if n <= 0 {
		return DefaultMaxDim
	}
	return n
}

// checkDim returns a *LimitError if the dimension d (what) exceeds max.
func checkDim(what string, d int64, max int, record int64) error {
	if d > int64(max) {
		return &LimitError{Record: record, What: what, Value: d, Limit: int64(max), Raise: raiseMaxDim}
	}
	return nil
}

// lineLimit reads r and passes its bytes on, except for the CSV records
// it finds too large: one with a line (the bytes between two newlines)
// longer than max bytes or, if maxFields is positive, one with more than
// maxFields fields. Fields are counted as the bytes pass (commas outside
// double quotes), before encoding/csv allocates a string per field (a line
// of 30 million empty fields took 2.8 GB before the dimension was
// checked).
//
// A record too large is passed up to the byte where it passes the limit;
// the rest of it, up to its newline outside quotes or the end of the input,
// is read and dropped without being held, and replaced with placeholder
// which ends the record for encoding/csv with a *csv.ParseError whatever
// its quoting, followed by the dropped newlines, so that encoding/csv
// counts lines as in the input. The record is then listed in skipped, with
// the offset in the output where encoding/csv ends it (csv.Reader's
// InputOffset after reading it): see CSV.overlong.
//
// lineLimit holds one buffer of input (32 KiB), whatever the
// lines' lengths; skipped grows by one entry per record too large until
// the CSV source takes it.
type lineLimit struct {
	r         io.Reader
	max       int
	path      string
	maxFields int
	line      int   // bytes since the last newline
	n         int64 // newlines so far
	fields    int   // fields of the current record so far
	state     quote // where the current record's parse is (countFields)
	// lead holds the first bytes of a rune at a field's start that the
	// last bytes counted cut (countFields), to tell a space from a field.
	lead []byte

	buf      []byte
	i, j     int   // buf[i:j] is read from r and not yet scanned
	err      error // r's error, returned once buf is drained
	out      int64 // bytes returned so far
	skip     *overlong
	pending  []byte // the rest of a placeholder not yet returned
	newlines int64  // dropped newlines to return after pending
	skipped  []*overlong
}

// placeholder ends a record for encoding/csv with a *csv.ParseError in
// every state its parser can be in: in an unquoted field, the first quote
// is a bare quote (or opens a quoted field, in which the second is
// followed by a letter); in a quoted field, the first quote is followed by
// a letter, or doubles a quote just read, and then the second is.
const placeholder = "\"x\"x\n"

// overlong is a CSV record that lineLimit dropped.
type overlong struct {
	line   int64 // 1-based line on which the record passed the limit
	fields bool  // it passed maxFields, not max bytes
	limit  int
	bytes  int64 // the length of that line, to its newline or the end of the input
	nf     int64 // the number of fields of the record
	inLine bool  // still reading that line
	path   string
	end    int64 // offset in lineLimit's output of the end of its placeholder's line
}

// reason says what is wrong with the record, for a reject.
func (o *overlong) reason() string {
	if o.fields {
		return fmt.Sprintf("line %d: %d fields, over the limit of %d fields for a CSV record (the features, a label, an id and a text); %s",
			o.line, o.nf, o.limit, raiseMaxDim)
	}
	return fmt.Sprintf("line %d: %d bytes, over the limit of %d bytes for a line of a CSV record; split the line (a newline inside a quoted field is allowed)",
		o.line, o.bytes, o.limit)
}

// limitError is the *LimitError of the record when it is the header that
// HeaderPresent requires, whose columns cannot be read (see CSV).
func (o *overlong) limitError() error {
	if o.fields {
		return &LimitError{Input: o.path, Record: -1, What: fmt.Sprintf("the number of fields of the record on line %d", o.line),
			Value: -1, Limit: int64(o.limit), Raise: raiseMaxDim}
	}
	return &LimitError{Input: o.path, Record: -1, What: fmt.Sprintf("the length in bytes of line %d", o.line),
		Value: -1, Limit: int64(o.limit), Raise: "a CSV record must fit in lines of that size"}
}

// takeSkipped returns the first dropped record if encoding/csv, having
// read up to offset end of the output, has read its placeholder, and
// removes it from skipped; otherwise it returns nil.
func (l *lineLimit) takeSkipped(end int64) *overlong {
	if len(l.skipped) == 0 || end < l.skipped[0].end {
		return nil
	}
	o := l.skipped[0]
	l.skipped[0] = nil
	l.skipped = l.skipped[1:]
	return o
}

func (l *lineLimit) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		switch {
		case len(l.pending) > 0:
			n := copy(p, l.pending)
			l.pending = l.pending[n:]
			l.out += int64(n)
			return n, nil
		case l.newlines > 0 && l.skip == nil:
			n := int(min(int64(len(p)), l.newlines))
			for k := range p[:n] {
				p[k] = '\n'
			}
			l.newlines -= int64(n)
			l.out += int64(n)
			return n, nil
		case l.i == l.j && l.err != nil:
			if l.skip != nil {
				l.endSkip(false)
				continue
			}
			return 0, l.err
		case l.i == l.j:
			if l.buf == nil {
				l.buf = make([]byte, 32<<10)
			}
			n, err := l.r.Read(l.buf)
			l.i, l.j, l.err = 0, n, err
			if n == 0 && err == nil {
				return 0, nil
			}
		case l.skip != nil:
			k, end := l.drop(l.buf[l.i:l.j])
			l.i += k
			if end {
				l.endSkip(true)
			}
		default:
			in := l.buf[l.i:l.j]
			if len(in) > len(p) {
				in = in[:len(p)]
			}
			k := l.pass(in)
			copy(p, in[:k])
			l.i += k
			l.out += int64(k)
			if k > 0 {
				return k, nil
			}
		}
	}
}

// pass returns how many bytes of b pass on: all of them, or those before
// the byte where a record passes a limit, in which case it starts l.skip.
func (l *lineLimit) pass(b []byte) int {
	k := 0
	for k < len(b) {
		seg, nl := segment(b[k:])
		long := len(seg) > l.max-l.line
		if long {
			seg = seg[:max(l.max-l.line, 0)]
		}
		if l.maxFields > 0 {
			if m := l.countFields(seg, l.maxFields); m < len(seg) {
				l.line += m
				l.startSkip(true, l.maxFields)
				return k + m
			}
		} else {
			l.countFields(seg, 0)
		}
		l.line += len(seg)
		k += len(seg)
		if long {
			l.startSkip(false, l.max)
			return k
		}
		if !nl {
			break
		}
		l.newline()
		k++
	}
	return k
}

// segment returns b up to its first newline, which it leaves out, and
// whether b has one.
func segment(b []byte) (seg []byte, nl bool) {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i], true
	}
	return b, false
}

// newline counts a newline read outside a dropped record.
func (l *lineLimit) newline() {
	if l.state != inQuotes {
		l.fields, l.state = 0, fieldStart // a newline inside quotes continues the record
	}
	l.line, l.n, l.lead = 0, l.n+1, l.lead[:0] // a rune cut by a newline is no space
}

func (l *lineLimit) startSkip(fields bool, limit int) {
	l.skip = &overlong{line: l.n + 1, fields: fields, limit: limit, bytes: int64(l.line), inLine: true, path: l.path}
}

// drop reads b as part of the dropped record l.skip, and returns how many
// bytes of it belong to the record and whether the record ended there.
func (l *lineLimit) drop(b []byte) (int, bool) {
	k := 0
	for k < len(b) {
		seg, nl := segment(b[k:])
		l.countFields(seg, 0)
		if l.skip.inLine {
			l.skip.bytes += int64(len(seg))
		}
		k += len(seg)
		if !nl {
			break
		}
		k++
		l.skip.inLine = false
		l.n++
		l.newlines++
		if l.state != inQuotes {
			return k, true
		}
	}
	return k, false
}

// endSkip ends the dropped record l.skip, at its newline if atNewline,
// else at the end of the input: it queues its placeholder and lists it in
// skipped.
func (l *lineLimit) endSkip(atNewline bool) {
	o := l.skip
	o.nf = int64(l.fields)
	if atNewline {
		l.newlines-- // the placeholder's own
	}
	l.pending = []byte(placeholder)
	o.end = l.out + int64(len(placeholder))
	l.skipped = append(l.skipped, o)
	l.skip, l.line, l.fields, l.state, l.lead = nil, 0, 0, fieldStart, l.lead[:0]
}

// quote is where countFields is in a record, as encoding/csv parses it
// (Comma ',', TrimLeadingSpace and no LazyQuotes, as CSV reads): a quote
// opens a quoted field only as the field's first byte after its leading
// spaces; inside one, a quote ends it or, doubled, stands for itself; any
// other quote is an error of the record, which encoding/csv then ends at
// the end of the line, quotes or not.
type quote byte

const (
	fieldStart   quote = iota // before a field's first byte other than a space
	unquoted                  // in an unquoted field
	inQuotes                  // in a quoted field
	afterQuote                // a quote read in a quoted field: its end, or the first of two
	badUntilLine              // a quote where none may be: the record ends with its line
)

// countFields counts the fields of b, part of the current record (no
// newline in it), outside quotes, and tracks the quotes (l.state). If
// limit is positive, it stops at the separator that would make the
// record's fields more than limit, and returns its index in b; otherwise
// it returns len(b). Before a field's first byte it skips what
// encoding/csv's TrimLeadingSpace does, every rune unicode.IsSpace
// reports (\r and U+00A0 as well as spaces and tabs), so that a quote
// after them opens a quoted field for both.
func (l *lineLimit) countFields(b []byte, limit int) int {
	if l.fields == 0 && len(b) > 0 {
		l.fields = 1
	}
	k0 := 0
	if len(l.lead) > 0 && len(b) > 0 {
		if k0 = l.leadingRune(b); k0 < 0 {
			return len(b) // still cut
		}
	}
	for k := k0; k < len(b); k++ {
		switch l.state {
		case inQuotes:
			i := bytes.IndexByte(b[k:], '"')
			if i < 0 {
				return len(b)
			}
			k += i
			l.state = afterQuote
			continue
		case badUntilLine:
			return len(b)
		case unquoted:
			i := bytes.IndexAny(b[k:], ",\"")
			if i < 0 {
				return len(b)
			}
			k += i
		}
		switch c := b[k]; {
		case c == ',':
			if limit > 0 && l.fields >= limit {
				return k
			}
			l.fields++
			l.state = fieldStart
		case c == '"' && (l.state == fieldStart || l.state == afterQuote):
			l.state = inQuotes
		case c == '"' || l.state == afterQuote:
			l.state = badUntilLine
		case l.state == fieldStart && c < utf8.RuneSelf && unicode.IsSpace(rune(c)):
		case l.state == fieldStart && c >= utf8.RuneSelf:
			if !utf8.FullRune(b[k:]) {
				l.lead = append(l.lead[:0], b[k:]...)
				return len(b)
			}
			if r, size := utf8.DecodeRune(b[k:]); unicode.IsSpace(r) {
				k += size - 1
			} else {
				l.state = unquoted
			}
		default:
			l.state = unquoted
		}
	}
	return len(b)
}

// leadingRune completes the rune l.lead began with the first bytes of b
// (at a field's start): a space keeps the field at its start, anything
// else starts an unquoted field. It returns the index in b after the
// rune, or −1 if b too ends before the rune does (l.lead then holds it).
func (l *lineLimit) leadingRune(b []byte) int {
	n := len(l.lead)
	l.lead = append(l.lead, b[:min(len(b), utf8.UTFMax-n)]...)
	if !utf8.FullRune(l.lead) {
		return -1
	}
	r, size := utf8.DecodeRune(l.lead)
	l.lead = l.lead[:0]
	if !unicode.IsSpace(r) {
		l.state = unquoted // an invalid byte too: its field's bytes go on unquoted
		return 0
	}
	return size - n
}
