package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// maxTableLine bounds one line of a csv: or tsv: file, in bytes.
const maxTableLine = 64 << 20

// loadCSVSet reads an image set from a CSV file, one sample a line:
// its class, then its pixels (or any non-negative features), comma
// separated, every line of the same width; blank lines are skipped. The
// values are taken as they are (scale them to [0, 1] beforehand, as
// ReadMNIST and loadFashion scale theirs). It returns one sample per row,
// in file order, and the classes as 0, 1, … in order of first appearance.
// A line of another width, a value that is not a finite number ≥ 0 or an
// empty class is an error naming the line.
func loadCSVSet(path string) (*mat.Dense, []int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("csv: %w", err)
	}
	defer f.Close()
	var vals []float64
	var y []int
	ids := map[string]int{}
	d := -1
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, maxTableLine)
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" {
			continue
		}
		fields := strings.Split(s, ",")
		if d < 0 {
			d = len(fields) - 1
		}
		if len(fields)-1 != d || d == 0 {
			return nil, nil, fmt.Errorf("csv: %s:%d: %d values, want %d after the class", path, line, len(fields)-1, d)
		}
		c, err := classID(ids, fields[0])
		if err != nil {
			return nil, nil, fmt.Errorf("csv: %s:%d: %w", path, line, err)
		}
		for j, fld := range fields[1:] {
			v, err := strconv.ParseFloat(strings.TrimSpace(fld), 64)
			if err != nil || !(v >= 0) || math.IsInf(v, 1) {
				return nil, nil, fmt.Errorf("csv: %s:%d: value %d is %q, want a finite number ≥ 0", path, line, j+1, fld)
			}
			vals = append(vals, v)
		}
		y = append(y, c)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("csv: %s: %w", path, err)
	}
	if len(y) == 0 {
		return nil, nil, fmt.Errorf("csv: %s: no samples", path)
	}
	return mat.NewDense(len(y), d, vals), y, nil
}

// classID returns the number of class name in ids, adding it if new.
func classID(ids map[string]int, name string) (int, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return 0, fmt.Errorf("empty class")
	}
	c, ok := ids[name]
	if !ok {
		c = len(ids)
		ids[name] = c
	}
	return c, nil
}

// loadTSV reads a text corpus from a tab-separated file, one document a
// line: its class, a tab, its text (a tab-free line; escape none). The
// documents keep the file's order (make keeps it unless --shuffle is
// given). A line without a tab, an empty class or an empty text is an
// error naming the line; blank lines are skipped.
func loadTSV(path string) ([]doc, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tsv: %w", err)
	}
	defer f.Close()
	var docs []doc
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, maxTableLine)
	for line := 1; sc.Scan(); line++ {
		s := sc.Text()
		if strings.TrimSpace(s) == "" {
			continue
		}
		class, text, ok := strings.Cut(s, "\t")
		class, text = strings.TrimSpace(class), strings.TrimSpace(text)
		if !ok || class == "" || text == "" {
			return nil, fmt.Errorf("tsv: %s:%d: want CLASS<tab>TEXT, both non-empty", path, line)
		}
		docs = append(docs, doc{text: text, class: class})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("tsv: %s: %w", path, err)
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("tsv: %s: no documents", path)
	}
	return docs, nil
}
