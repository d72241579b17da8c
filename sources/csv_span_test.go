package sources

import (
	"strings"
	"testing"
)

// TestCSVOverlongSpansReads: a record cut outside quotes whose dropped rest
// holds a quoted newline is one reject whichever bytes each read returns:
// its first fields are never read as a record of their own.
func TestCSVOverlongSpansReads(t *testing.T) {
	in := "a,b,c\n" + goodRows(0) + "1,2,3" + strings.Repeat(",0", 20) + ",\"x\ny\"\n" + goodRows(2)
	checkOverlong(t, in, []int{0, 2}, map[int64]string{1: "line 3: 24 fields"})
	// Cut at the field limit of a file whose records have that many fields.
	ten := "1,2,3" + strings.Repeat(",0", 7)
	in = "a,b,c,d,e,f,g,h,i,j\n" + ten + "\n" + ten + ",0,\"x\ny\"\n" + ten + "\n"
	for name, wrap := range overlongReaders {
		src := NewCSV(&lineLimit{r: wrap(strings.NewReader(in)), max: 1024, maxFields: 10})
		c := readAll(t, src)
		if src.Err() != nil || len(c.offsets) != 2 || c.offsets[1] != 2 || len(c.rejects) != 1 || c.rejects[0].Offset != 1 {
			t.Errorf("%s: records at %v, rejects %v, err %v; want records 0 and 2, record 1 rejected", name, c.offsets, c.rejects, src.Err())
		}
	}
}

// TestCSVBareQuoteThenOverlong: a quote inside an unquoted field is an
// error that encoding/csv ends with its line, so the line limiter must not
// read it as opening a quoted field: an overlong record after such a line
// is a reject of its own, and so is the line after it (once, the limiter
// joined the three into one dropped record, and two records vanished).
func TestCSVBareQuoteThenOverlong(t *testing.T) {
	bare := `1,2"x,3`
	in := "a,b,c\n" + goodRows(0) + bare + "\n" + firstLong + "\n" + bare + "\n" + goodRows(4)
	checkOverlong(t, in, []int{0, 4}, map[int64]string{
		1: "line 3, column 4: bare",
		2: "line 4: 5005 bytes",
		3: "line 5, column 4: bare",
	})
	// After a bare quote, a field that begins with a quote opens nothing
	// either; a quoted field after leading spaces, and doubled quotes in
	// one, are read as encoding/csv reads them.
	in = "a,b,c\n" + `1,2"x,"3` + "\n" + firstLong + "\n" + `  "4","5""",6` + "\n" + goodRows(3)
	checkOverlong(t, in, []int{3}, map[int64]string{
		0: "line 2, column 4: bare",
		1: "line 3: 5005 bytes",
		2: `column 2 ("b", counting from 1) is not a number: "5\""`,
	})
}
