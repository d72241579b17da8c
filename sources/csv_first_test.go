package sources

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/nmfstream/nmfstream/record"
)

// Overlong lines for a lineLimit of 1024 bytes a line and 10 fields a
// record (checkOverlong's).
var (
	firstLong = "1,2,3" + strings.Repeat("9", 5000) // 3 fields, 5005 bytes
	firstWide = "1,2,3" + strings.Repeat(",0", 20)  // 23 fields
)

// TestCSVOverlongFirst: overlong records before the first record within
// the limits are rejects at offsets 0, 1, …, each naming its line, and the
// records after them are read, counting on from there, whether the first
// record within the limits is data or a header (which takes no offset).
func TestCSVOverlongFirst(t *testing.T) {
	bytes1 := "line 1: 5005 bytes, over the limit of 1024 bytes"
	// By bytes, by field count, and two of them (the second ending with a
	// CRLF).
	checkOverlong(t, firstLong+"\n"+goodRows(1, 2, 3), []int{1, 2, 3}, map[int64]string{0: bytes1})
	checkOverlong(t, firstWide+"\n"+goodRows(1, 2), []int{1, 2}, map[int64]string{0: "line 1: 23 fields, over the limit of 10 fields"})
	checkOverlong(t, firstLong+"\n"+firstWide+"\r\n"+goodRows(2, 3, 4, 5), []int{2, 3, 4, 5}, map[int64]string{
		0: bytes1,
		1: "line 2: 23 fields, over the limit of 10 fields",
	})
	// A header after them: data records count on from the rejects, and
	// the header names the columns (record 3's reject says "c"); the
	// limits still apply after it (record 4).
	in := firstLong + "\n" + firstWide + "\n" + "a,b,c\n" + goodRows(2) + "3,4,x\n" + firstLong + "\n" + goodRows(5, 6)
	checkOverlong(t, in, []int{2, 5, 6}, map[int64]string{
		0: bytes1,
		1: "line 2: 23 fields",
		3: `column 3 ("c", counting from 1) is not a number`,
		4: "line 6: 5005 bytes",
	})
	// A data record after them fixes the number of fields, not the
	// overlong one (23 fields).
	checkOverlong(t, firstWide+"\n"+goodRows(1)+"1,2,3,4\n"+goodRows(3), []int{1, 3}, map[int64]string{
		0: "line 1: 23 fields",
		2: "4 fields, want 3",
	})
}

// TestCSVOverlongFirstLines: each overlong first record names its own
// line and size, when its neighbours have other sizes or when one of them
// spans two lines (a quoted newline), so that the next starts two lines
// on.
func TestCSVOverlongFirstLines(t *testing.T) {
	twelve := "1,2,3" + strings.Repeat(",0", 9)               // 12 fields
	spanning := `"` + strings.Repeat("x", 5004) + "\ny\",2,3" // 5005 bytes on line 6, then line 7
	long := "1,2,3" + strings.Repeat("8", 2000)               // 2005 bytes
	in := firstWide + "\n" + firstWide + "\n" + twelve + "\n" + firstWide + "\n" +
		firstLong + "\n" + spanning + "\n" + firstLong + "\n" + long + "\n" + goodRows(8, 9)
	checkOverlong(t, in, []int{8, 9}, map[int64]string{
		0: "line 1: 23 fields",
		1: "line 2: 23 fields",
		2: "line 3: 12 fields",
		3: "line 4: 23 fields",
		4: "line 5: 5005 bytes",
		5: "line 6: 5005 bytes",
		6: "line 8: 5005 bytes",
		7: "line 9: 2005 bytes",
	})
}

// TestCSVOverlongFirstMemory: 100,000 overlong first lines of the same
// number of fields (a MaxDim set too small for the file) leave under 1 MiB
// of live heap behind Form (the readers' buffers; one reason or record
// held each would be 10 MB or more), and then come out as 100,000
// rejects naming their lines.
func TestCSVOverlongFirstMemory(t *testing.T) {
	const n = 100000
	in := strings.Repeat(firstWide+"\n", n) + goodRows(n)
	src := NewCSV(&lineLimit{r: strings.NewReader(in), max: 1024, maxFields: 10})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if f, err := src.Form(); f != record.FormDense || err != nil {
		t.Fatalf("Form %v, %v", f, err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if live := int64(after.HeapAlloc) - int64(before.HeapAlloc); live > 1<<20 {
		t.Errorf("Form after %d overlong lines left %d bytes of live heap", n, live)
	}
	c := readAll(t, src)
	if src.Err() != nil || len(c.rejects) != n || len(c.offsets) != 1 || c.offsets[0] != n {
		t.Fatalf("%d rejects, records at %v, err %v; want %d rejects and record %d", len(c.rejects), c.offsets, src.Err(), n, n)
	}
	for i, r := range c.rejects {
		if want := fmt.Sprintf("record %d: line %d: 23 fields", i, i+1); r.Offset != int64(i) || !strings.Contains(r.Reason.Error(), want) {
			t.Fatalf("reject %d: offset %d, %v; want %q", i, r.Offset, r.Reason, want)
		}
	}
}

// TestCSVOverlongOnly: an input of overlong records alone (the last
// without a newline) ends without an error, each of them a reject, and
// its form is that of an empty input.
func TestCSVOverlongOnly(t *testing.T) {
	checkOverlong(t, firstLong, nil, map[int64]string{0: "line 1: 5005 bytes"})
	checkOverlong(t, firstLong+"\n"+firstWide+"\n"+firstLong+"\n"+firstWide, nil, map[int64]string{
		0: "line 1: 5005 bytes",
		1: "line 2: 23 fields",
		2: "line 3: 5005 bytes",
		3: "line 4: 23 fields",
	})
	for name, wrap := range overlongReaders {
		src := NewCSV(&lineLimit{r: wrap(strings.NewReader(firstWide + "\n" + firstLong + "\n")), max: 1024, maxFields: 10})
		src.TextColumn = Column{Name: "text"}
		if f, err := src.Form(); f != record.FormText || err != nil {
			t.Fatalf("%s: Form %v, %v; want FormText, as for an empty input with a text column", name, f, err)
		}
		c := readAll(t, src)
		if src.Err() != nil || len(c.rejects) != 2 || c.batches != 1 {
			t.Errorf("%s: %d batches, rejects %v, err %v; want one batch of 2 rejects", name, c.batches, c.rejects, src.Err())
		}
		// Closed before Next, it has no batch left.
		src = NewCSV(&lineLimit{r: wrap(strings.NewReader(firstWide + "\n")), max: 1024, maxFields: 10})
		if _, err := src.Form(); err != nil {
			t.Fatal(err)
		}
		src.Close()
		if src.Next() {
			t.Errorf("%s: Next after Close read %d records", name, src.Batch().Records())
		}
	}
}

// TestCSVOverlongFirstBatches: the rejects of the overlong first records
// come out in the first batch, before its records, in offset order; they
// count towards BatchSize as the records do, so with more of them than
// BatchSize they fill the first batches. Form reads past them to the
// first record within the limits, here a header naming a text column.
func TestCSVOverlongFirstBatches(t *testing.T) {
	for _, c := range []struct {
		overlong int
		want     []string // per batch: its reject offsets, then its records' offsets
	}{
		{1, []string{"[0] [1 2]", "[] [3 4 5]", "[] [6]"}},
		{2, []string{"[0 1] [2]", "[] [3 4 5]", "[] [6]"}},
		{4, []string{"[0 1 2] []", "[3] [4 5]", "[] [6]"}},
	} {
		in := strings.Repeat(firstWide+"\n", c.overlong) + "id,text\n"
		for i := c.overlong; i <= 6; i++ {
			in += fmt.Sprintf(",doc %d\n", i)
		}
		for name, wrap := range overlongReaders {
			src := NewCSV(&lineLimit{r: wrap(strings.NewReader(in)), max: 1024, maxFields: 10})
			src.BatchSize = 3
			if f, err := src.Form(); f != record.FormText || err != nil {
				t.Fatalf("%d overlong, %s: Form %v, %v; want FormText", c.overlong, name, f, err)
			}
			var got []string
			for src.Next() {
				b := src.Batch()
				var rej []int64
				for _, r := range b.Rejects {
					rej = append(rej, r.Offset)
					if !strings.Contains(r.Reason.Error(), fmt.Sprintf("record %d: line %d: 23 fields", r.Offset, r.Offset+1)) {
						t.Errorf("%d overlong, %s: reject %v", c.overlong, name, r.Reason)
					}
				}
				for k, off := range b.Offsets {
					if b.Text[k] != fmt.Sprintf("doc %d", off) || b.IDs[k] != fmt.Sprint(off) {
						t.Errorf("%d overlong, %s: record %d is %q, id %q", c.overlong, name, off, b.Text[k], b.IDs[k])
					}
				}
				got = append(got, fmt.Sprintf("%v %v", fmtOffsets(rej), fmtOffsets(b.Offsets)))
				if len(got) > 10 {
					t.Fatalf("%d overlong, %s: batches %q and more", c.overlong, name, got)
				}
			}
			if src.Err() != nil || fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("%d overlong, %s: batches %q, err %v; want %q", c.overlong, name, got, src.Err(), c.want)
			}
		}
	}
}

func fmtOffsets(o []int64) string {
	if len(o) == 0 {
		return "[]"
	}
	return fmt.Sprint(o)
}

// TestCSVOverlongFirstByName: with a column chosen by name the first
// record within the limits is the header, after the overlong ones; when
// it has no such column (the overlong line was the header), the error
// says that lines were skipped before it.
func TestCSVOverlongFirstByName(t *testing.T) {
	for name, wrap := range overlongReaders {
		in := firstWide + "\n" + "a,b,y\n1,2,p\n3,4,\n"
		src := NewCSV(&lineLimit{r: wrap(strings.NewReader(in)), max: 1024, maxFields: 10})
		src.LabelColumn = Column{Name: "y"}
		c := readAll(t, src)
		if src.Err() != nil || fmt.Sprint(c.offsets, c.dense, c.labels, c.labeled) != "[1 2] [[1 2] [3 4]] [p ] [true false]" ||
			len(c.rejects) != 1 || c.rejects[0].Offset != 0 {
			t.Errorf("%s: records %v %v labels %q %v, rejects %v, err %v", name, c.offsets, c.dense, c.labels, c.labeled, c.rejects, src.Err())
		}
		src = NewCSV(&lineLimit{r: wrap(strings.NewReader(firstWide + "\n" + goodRows(1, 2))), max: 1024, maxFields: 10})
		src.LabelColumn = Column{Name: "y"}
		_, err := src.Form()
		if want := `no label column named "y" in the header ["1" "2" "3"], the first record within the limits, after 1 over them (the first: line 1: 23 fields`; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want one saying %q", name, err, want)
		}
	}
}

// TestCSVOverlongHeaderPresent: with HeaderPresent an overlong first line
// is the header, whose columns cannot be read: Form and Next stop with a
// *LimitError for the header (Record -1) naming the line and the limit,
// and return no record.
func TestCSVOverlongHeaderPresent(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{firstLong, "long.csv: the length in bytes of line 1 exceeds the limit of 1024"},
		{firstWide, "long.csv: the number of fields of the record on line 1 exceeds the limit of 10"},
	} {
		for name, wrap := range overlongReaders {
			for _, form := range []bool{true, false} {
				src := NewCSV(&lineLimit{r: wrap(strings.NewReader(c.line + "\n" + goodRows(1, 2))), max: 1024, maxFields: 10, path: "long.csv"})
				src.Header = HeaderPresent
				var err error
				if form {
					_, err = src.Form()
				} else {
					if src.Next() {
						t.Fatalf("%s: Next read a batch of %d records", name, src.Batch().Records())
					}
					err = src.Err()
				}
				var le *LimitError
				if !errors.As(err, &le) || le.Record != -1 || !strings.Contains(err.Error(), c.want) {
					t.Errorf("%s (Form %v): err %v; want a *LimitError of the header saying %q", name, form, err, c.want)
				}
			}
		}
	}
}

// TestCSVUnparsedFirst: first records that encoding/csv cannot parse (a
// bare quote, outside the line limiter's limits) are rejects at offsets 0,
// 1, …, as overlong ones are, mixed with them too, and the records after
// them are read; with HeaderPresent such a first line is the header, and
// the source stops, naming it.
func TestCSVUnparsedFirst(t *testing.T) {
	bare := `1,2"x,3`
	checkOverlong(t, bare+"\n"+goodRows(1, 2), []int{1, 2}, map[int64]string{0: "line 1, column 4: bare \" in non-quoted-field"})
	checkOverlong(t, bare+"\n"+firstLong+"\n"+bare+"\na,b,c\n"+goodRows(3, 4), []int{3, 4}, map[int64]string{
		0: "line 1, column 4: bare",
		1: "line 2: 5005 bytes",
		2: "line 3, column 4: bare",
	})
	src := NewCSV(strings.NewReader(bare + "\n" + goodRows(0)))
	src.Header = HeaderPresent
	if src.Next() || src.Err() == nil || !strings.Contains(src.Err().Error(), "the header") || !strings.Contains(src.Err().Error(), "bare") {
		t.Errorf("HeaderPresent, an unparsed first line: err %v, want one naming the header", src.Err())
	}
}
