// Package datasets forwards to the public package
// github.com/nmfstream/nmfstream/datasets, for the callers inside the
// module that import it by its former path.
package datasets

import (
	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/datasets"
)

// DigitsCSVGz returns the embedded digits file; see datasets.DigitsCSVGz.
func DigitsCSVGz() []byte { return datasets.DigitsCSVGz() }

// Digits returns the digits and their labels; see datasets.Digits.
func Digits() (x *mat.Dense, labels []int) { return datasets.Digits() }
