package sources

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
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
