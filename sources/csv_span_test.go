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
