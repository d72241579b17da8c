package sources

import (
	"bytes"
	"fmt"
	"io"
	"strings"

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

// lineLimit reads r and fails with a *LimitError once a line (the bytes
// between two newlines) is longer than max bytes or, if maxFields is
// positive, once a CSV record has more than maxFields fields: fields are
// counted as the bytes pass (commas outside double quotes), before
// encoding/csv allocates a string per field (a line of 30 million empty
// fields took 2.8 GB before the dimension was checked).
type lineLimit struct {
	r         io.Reader
	max       int
	path      string
	maxFields int
	line      int   // bytes since the last newline
	n         int64 // newlines so far
	fields    int   // fields of the current record so far
	quoted    bool  // inside a quoted field
}

func (l *lineLimit) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	for q := p[:n]; len(q) > 0; {
		i := bytes.IndexByte(q, '\n')
		chunk := q
		if i >= 0 {
			chunk = q[:i]
		}
		if l.maxFields > 0 {
			l.countFields(chunk)
			if l.fields > l.maxFields {
				return n, &LimitError{Input: l.path, Record: -1, What: fmt.Sprintf("the number of fields of the record on line %d", l.n+1),
					Value: -1, Limit: int64(l.maxFields), Raise: raiseMaxDim}
			}
		}
		if i < 0 {
			l.line += len(q)
			break
		}
		if l.line += i; l.line > l.max {
			break
		}
		if !l.quoted {
			l.fields = 0 // a newline inside quotes continues the record
		}
		l.line, l.n, q = 0, l.n+1, q[i+1:]
	}
	if l.line > l.max {
		return n, &LimitError{Input: l.path, Record: -1, What: fmt.Sprintf("the length in bytes of line %d", l.n+1),
			Value: -1, Limit: int64(l.max), Raise: "a CSV record must fit in a line of that size"}
	}
	return n, err
}

// countFields counts the field separators of b outside quotes.
func (l *lineLimit) countFields(b []byte) {
	if l.fields == 0 && len(b) > 0 {
		l.fields = 1
	}
	for len(b) > 0 {
		if l.quoted {
			i := bytes.IndexByte(b, '"')
			if i < 0 {
				return
			}
			l.quoted, b = false, b[i+1:]
			continue
		}
		i := bytes.IndexAny(b, ",\"")
		if i < 0 {
			return
		}
		if b[i] == '"' {
			l.quoted = true
		} else {
			l.fields++
		}
		b = b[i+1:]
	}
}
