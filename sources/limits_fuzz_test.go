package sources

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// csvResult is one Read of encoding/csv: its record, or that it failed.
type csvResult struct {
	rec   []string
	err   bool
	start int64 // offset of its first byte in the reader's input
	end   int64 // offset after its last byte
}

// readCSV reads r with CSV's settings (TrimLeadingSpace, any field count)
// until EOF or an error that is not a *csv.ParseError.
func readCSV(r io.Reader) []csvResult {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord, cr.TrimLeadingSpace = -1, true
	var out []csvResult
	for prev := int64(0); ; {
		rec, err := cr.Read()
		var pe *csv.ParseError
		if err != nil && !errors.As(err, &pe) {
			return out
		}
		out = append(out, csvResult{rec: slices.Clone(rec), err: err != nil, start: prev, end: cr.InputOffset()})
		prev = cr.InputOffset()
	}
}

// FuzzLineLimit checks that the line limiter neither joins nor splits
// encoding/csv's records, whatever their quoting: read through a lineLimit
// of small limits, an input gives as many records (or errors) as read
// directly, and each record whose lines and fields are within the limits
// comes out the same. A record the limiter dropped reads as an error.
func FuzzLineLimit(f *testing.F) {
	for _, s := range []string{
		"1,2,3\n4,5,6\n",
		"1,2\"x,3\n" + strings.Repeat("9", 80) + "\n1,2\"x,3\n1,2,3\n",
		"\"a\nb\",1\n1,\"2\n",
		"  \"4\",\"5\"\"\",6\n\"abc\"x,1\n" + strings.Repeat(",", 30) + "\n7,8\n",
		"1,\"" + strings.Repeat("q", 70) + "\n\"\",2\n3,4\r\n5,\"6\"\r\n",
	} {
		f.Add([]byte(s), uint8(16), uint8(4))
	}
	f.Fuzz(func(t *testing.T, in []byte, maxBytes, maxFields uint8) {
		limit, fields := 8+int(maxBytes%64), 1+int(maxFields%8)
		raw := readCSV(bytes.NewReader(in))
		got := readCSV(&lineLimit{r: bytes.NewReader(in), max: limit, maxFields: fields})
		if len(got) != len(raw) {
			t.Fatalf("limits %d bytes, %d fields: %d results through the limiter, %d directly\nraw %+v\ngot %+v", limit, fields, len(got), len(raw), raw, got)
		}
		for i, r := range raw {
			within := !r.err && len(r.rec) <= fields
			for _, line := range bytes.Split(in[r.start:r.end], []byte("\n")) {
				within = within && len(line) <= limit
			}
			if within && (got[i].err || !slices.Equal(got[i].rec, r.rec)) {
				t.Fatalf("limits %d bytes, %d fields: result %d %+v through the limiter, %+v directly", limit, fields, i, got[i], r)
			}
		}
	})
}

// TestLineLimitLeadingSpaces checks the spaces encoding/csv's
// TrimLeadingSpace skips before a field's opening quote, whatever their
// encoding: \r, U+00A0 (two bytes) and U+3000 (three), fed one byte at a
// time so that the limiter sees each rune cut. A quoted field across a
// newline with commas after it is one field, within a limit of two; taken
// for an unquoted field (as the limiter did with \r until a fuzzed input
// showed it), the newline ended the record for the limiter, whose next
// line then had three fields and was dropped. A cut rune that is no space,
// and one cut by a newline, start unquoted fields. Records and errors come
// out as read directly (an error's partial record may differ: the limiter
// may drop it).
func TestLineLimitLeadingSpaces(t *testing.T) {
	for _, in := range []string{
		"1,\r\"a\nb,c,d\"\n2,3\n",
		"1,\u00a0\"a\nb,c,d\"\n2,3\n",
		"1,\u3000\u00a0 \"a,\nb,c\"\n2,3\n",
		"1,\u00e9\"a\nb,c,d\"\n2,3\n",
		"1,\xe3\x80\n\"a\nb,c,d\"\n",
		"1,\xe3\"a\nb,c,d\"\n2,3\n",
	} {
		raw := readCSV(strings.NewReader(in))
		got := readCSV(&lineLimit{r: iotest.OneByteReader(strings.NewReader(in)), max: 64, maxFields: 2})
		if len(got) != len(raw) {
			t.Fatalf("%q: %d results through the limiter, %d directly\nraw %+v\ngot %+v", in, len(got), len(raw), raw, got)
		}
		for i, r := range raw {
			if got[i].err != r.err || (!r.err && !slices.Equal(got[i].rec, r.rec)) {
				t.Errorf("%q: result %d %+v through the limiter, %+v directly", in, i, got[i], r)
			}
		}
	}
}
