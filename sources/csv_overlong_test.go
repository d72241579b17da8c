package sources

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/nmfstream/nmfstream/record"
)

// overlongReaders wraps a CSV input in readers that return it in one
// piece, a byte at a time, and with io.EOF along with the last bytes, so
// that the limits are met at every buffer boundary.
var overlongReaders = map[string]func(io.Reader) io.Reader{
	"whole":   func(r io.Reader) io.Reader { return r },
	"onebyte": iotest.OneByteReader,
	"dataerr": iotest.DataErrReader,
}

// goodRows writes data records "i,i+1,i+2" for the offsets in offs, one a
// line.
func goodRows(offs ...int) string {
	var b strings.Builder
	for _, i := range offs {
		fmt.Fprintf(&b, "%d,%d,%d\n", i, i+1, i+2)
	}
	return b.String()
}

// checkOverlong reads in through a lineLimit of 1024 bytes a line and 10
// fields a record, and checks that the records at offsets good are read
// as "i,i+1,i+2" with their offsets as ids, and that the others are one
// reject each, at its offset, whose reason holds want[offset].
func checkOverlong(t *testing.T, in string, good []int, want map[int64]string) {
	t.Helper()
	for name, wrap := range overlongReaders {
		src := NewCSV(&lineLimit{r: wrap(strings.NewReader(in)), max: 1024, maxFields: 10})
		src.BatchSize = 3
		c := readAll(t, src)
		if err := src.Err(); err != nil {
			t.Fatalf("%s: err %v, want none", name, err)
		}
		if len(c.dense) != len(good) {
			t.Fatalf("%s: read %d records %v (offsets %v), want %d", name, len(c.dense), c.dense, c.offsets, len(good))
		}
		for k, i := range good {
			want := []float64{float64(i), float64(i + 1), float64(i + 2)}
			if c.offsets[k] != int64(i) || c.ids[k] != fmt.Sprint(i) || fmt.Sprint(c.dense[k]) != fmt.Sprint(want) {
				t.Errorf("%s: record %d: offset %d, id %q, row %v; want offset %d, row %v", name, k, c.offsets[k], c.ids[k], c.dense[k], i, want)
			}
		}
		if len(c.rejects) != len(want) {
			t.Fatalf("%s: rejects %v, want %d", name, c.rejects, len(want))
		}
		for _, r := range c.rejects {
			w, ok := want[r.Offset]
			var re *record.Error
			if !ok || !errors.As(r.Reason, &re) || re.Offset != r.Offset || !strings.Contains(r.Reason.Error(), w) {
				t.Errorf("%s: reject %d: %v; want one saying %q", name, r.Offset, r.Reason, w)
			}
		}
	}
}

// TestCSVOverlongLine: a record whose line is longer than the limit is a
// reject of its record naming the line, its length and the limit; the
// records after it are read with their offsets, whether the line ends
// with a newline, the input, or is followed by another one.
func TestCSVOverlongLine(t *testing.T) {
	long := "1,2,3" + strings.Repeat("9", 5000) // 3 fields, 5005 bytes
	// Line 1 is the header, record i is on line i+2.
	in := "a,b,c\n" + goodRows(0, 1, 2) + long + "\n" + goodRows(4, 5, 6, 7, 8, 9)
	checkOverlong(t, in, []int{0, 1, 2, 4, 5, 6, 7, 8, 9}, map[int64]string{3: "line 5: 5005 bytes, over the limit of 1024 bytes"})
	// Several in a row, one on the last line without a newline, and one
	// line exactly at the limit (1024 bytes), which is read.
	at := "4,5,6" + strings.Repeat(" ", 1024-5)
	in = "a,b,c\n" + goodRows(0) + long + "\n" + long + "x\r\n" + goodRows(3) + at + "\n" + long
	checkOverlong(t, in, []int{0, 3, 4}, map[int64]string{
		1: "line 3: 5005 bytes, over the limit of 1024 bytes",
		2: "line 4: 5007 bytes, over the limit of 1024 bytes",
		5: "line 7: 5005 bytes",
	})
	// Lines cut where encoding/csv has just closed a quoted field, and
	// where a field starts.
	closed := `"` + strings.Repeat("y", 1022) + `",2,3`
	comma := "1," + strings.Repeat(" ", 1021) + ",3,4"
	in = "a,b,c\n" + closed + "\n" + goodRows(1) + comma + "\n" + goodRows(3)
	checkOverlong(t, in, []int{1, 3}, map[int64]string{
		0: "line 2: 1028 bytes, over the limit of 1024 bytes",
		2: "line 4: 1027 bytes, over the limit of 1024 bytes",
	})
}

// TestCSVOverlongFields: a record with more fields than the limit is a
// reject of its record naming the line, its number of fields and the
// limit, and the records after it are read; commas inside quotes do not
// count.
func TestCSVOverlongFields(t *testing.T) {
	wide := "1,2,3" + strings.Repeat(",0", 20)        // 23 fields
	quoted := `3,4,"` + strings.Repeat(",", 40) + `"` // 3 fields, one of commas
	ten := "1,2,3" + strings.Repeat(",0", 7)
	in := "a,b,c\n" + goodRows(0, 1, 2) + wide + "\n" + goodRows(4, 5, 6, 7, 8, 9) + quoted + "\n" + ten + "\n" + ten + ",0\n" + wide
	checkOverlong(t, in, []int{0, 1, 2, 4, 5, 6, 7, 8, 9}, map[int64]string{
		3:  "line 5: 23 fields, over the limit of 10 fields",
		10: `column 3 ("c", counting from 1) is not a number`, // within the limits
		11: "10 fields, want 3",                               // at the limit
		12: "line 14: 11 fields, over the limit of 10 fields",
		13: "line 15: 23 fields, over the limit of 10 fields",
	})
}

// TestCSVOverlongQuoted: a quoted field spanning lines is part of one
// record: when one of its lines is too long, the whole record is one
// reject, whatever its later lines hold (commas, quotes, newlines), and
// the line numbers of encoding/csv's own errors after it are those of the
// input.
func TestCSVOverlongQuoted(t *testing.T) {
	in := "text,a\n" +
		"\"first\",1\n" +
		"\"second\nspans, two lines\",2\n" +
		"\"third\n" + strings.Repeat("x", 2000) + "\nwith \"\"quotes\"\", and, commas,,,,,,,,,,,,\n\",3\n" +
		"\"fourth\",4\n" +
		"fifth \"bare,5\n" +
		"\"sixth\",6\n"
	for name, wrap := range overlongReaders {
		src := NewCSV(&lineLimit{r: wrap(strings.NewReader(in)), max: 1024, maxFields: 10})
		src.TextColumn = Column{Name: "text"}
		c := readAll(t, src)
		if err := src.Err(); err != nil {
			t.Fatalf("%s: err %v", name, err)
		}
		want := []string{"first", "second\nspans, two lines", "fourth", "sixth"}
		if fmt.Sprint(c.text) != fmt.Sprint(want) || fmt.Sprint(c.offsets) != "[0 1 3 5]" {
			t.Errorf("%s: documents %q at %v, want %q at [0 1 3 5]", name, c.text, c.offsets, want)
		}
		if len(c.rejects) != 2 || c.rejects[0].Offset != 2 || c.rejects[1].Offset != 4 ||
			!strings.Contains(c.rejects[0].Reason.Error(), "line 6: 2000 bytes, over the limit of 1024 bytes") ||
			!strings.Contains(c.rejects[1].Reason.Error(), "parse error on line 10, column 7") {
			t.Errorf("%s: rejects %v; want record 2 (line 6 too long) and record 4 (bare quote on line 10)", name, c.rejects)
		}
	}
}

// TestCSVOverlongMemory: dropping a 16 MiB line, of one field or of 8
// million, holds none of it: a few MiB are allocated, as for a short
// input, and the record after it is read.
func TestCSVOverlongMemory(t *testing.T) {
	for name, line := range map[string]string{
		"bytes":  strings.Repeat("9", 16<<20),
		"fields": strings.Repeat("1,", 8<<20),
	} {
		in := "a,b,c\n" + goodRows(0) + line + "\n" + goodRows(2)
		var c *collected
		var err error
		total, _ := allocated(func() {
			src := NewCSV(&lineLimit{r: strings.NewReader(in), max: 1 << 16, maxFields: 1 << 10})
			c = readAll(t, src)
			err = src.Err()
		})
		if err != nil || len(c.dense) != 2 || len(c.rejects) != 1 || c.rejects[0].Offset != 1 {
			t.Errorf("%s: %d records, rejects %v, err %v; want 2 records and record 1 rejected", name, len(c.dense), c.rejects, err)
		}
		if total > 8<<20 {
			t.Errorf("%s: dropping a line of %d bytes allocated %d bytes", name, len(line), total)
		}
	}
}
