package sources

import (
	"bufio"
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// ReadPredictions reads a JSON lines file of predictions, one object
// {"id": …, "pred": …} per line as `nmfstream stream --out P.jsonl` writes
// them (other fields are ignored), into a map from id to the predicted
// label, "" for a null prediction. A line that is not such an object is
// an error naming the file and the line, and so is one whose id is empty
// or missing (it cannot be matched to a record), saying so. It holds the
// whole map in memory: one entry per line.
func ReadPredictions(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	got := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		var p struct {
			ID   string  `json:"id"`
			Pred *string `json:"pred"`
		}
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			return nil, fmt.Errorf("%s: line %d: not a prediction (want {\"id\":…,\"pred\":…}, as stream --out P.jsonl writes)", path, n)
		}
		if p.ID == "" {
			return nil, fmt.Errorf("%s: line %d: a prediction without an id (\"id\" empty or missing), which no record can be matched to: the input had no id there (no id column, or a null id) when it was predicted: run stream on it again, which now gives such records their offset as id, or give the input an id column", path, n)
		}
		got[p.ID] = ""
		if p.Pred != nil {
			got[p.ID] = *p.Pred
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return got, nil
}

// CSVHead reads the first record of a CSV file (gzip-compressed if its
// name ends in .gz) and up to n records after it, for tools that look at a
// file before reading it (the command line's column suggestions). header
// is the first record when none of its fields is a number (a header line),
// nil otherwise, in which case the first record is among rows. Records
// may have any number of fields; quotes are read leniently.
func CSVHead(path string, n int) (header []string, rows [][]string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(strings.ToLower(path), ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		defer zr.Close()
		r = zr
	}
	cr := csv.NewReader(r)
	cr.FieldsPerRecord, cr.LazyQuotes, cr.ReuseRecord = -1, true, false
	first, err := cr.Read()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	header = first
	for _, v := range first {
		if _, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
			header, rows = nil, [][]string{first}
			break
		}
	}
	for len(rows) < n {
		rec, err := cr.Read()
		if err != nil {
			break
		}
		rows = append(rows, rec)
	}
	return header, rows, nil
}
