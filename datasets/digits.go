package datasets

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	"gonum.org/v1/gonum/mat"
)

//go:embed digits.csv.gz
var digitsGz []byte

// DigitsCSVGz returns the embedded digits file: gzip-compressed CSV
// without a header, 64 pixel values in [0, 16] then the class label, one
// sample per line (read it with sources.CSV and LabelColumn 65). The
// caller must not modify the returned slice.
func DigitsCSVGz() []byte { return digitsGz }

// Digits returns the 1,797 digits as a new 1797×64 matrix (one sample per
// row, pixel values in [0, 16]) and their labels in [0, 10), in the order
// of scikit-learn's load_digits. Each call returns fresh memory.
func Digits() (x *mat.Dense, labels []int) {
	x, labels, err := parseDigits(bytes.NewReader(digitsGz))
	if err != nil {
		panic("datasets: embedded digits are corrupt: " + err.Error())
	}
	return x, labels
}

func parseDigits(r io.Reader) (*mat.Dense, []int, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, nil, err
	}
	rows, err := csv.NewReader(zr).ReadAll()
	if err != nil {
		return nil, nil, err
	}
	const d = 64
	x := mat.NewDense(len(rows), d, nil)
	labels := make([]int, len(rows))
	for i, row := range rows {
		if len(row) != d+1 {
			return nil, nil, fmt.Errorf("line %d: %d fields, want %d", i+1, len(row), d+1)
		}
		for j := 0; j < d; j++ {
			v, err := strconv.ParseFloat(row[j], 64)
			if err != nil {
				return nil, nil, fmt.Errorf("line %d: %w", i+1, err)
			}
			x.Set(i, j, v)
		}
		y, err := strconv.Atoi(row[d])
		if err != nil {
			return nil, nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		labels[i] = y
	}
	return x, labels, nil
}
