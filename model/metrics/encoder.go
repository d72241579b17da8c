package metrics

import (
	"fmt"
	"slices"
)

// LabelEncoder maps string labels to classes 0..C−1 and back, in sorted
// (byte-wise) order of the labels as scikit-learn's LabelEncoder does, so
// that the same label set always gives the same classes.
//
// The zero value knows no labels. A LabelEncoder is safe for concurrent
// Encode and Decode calls, but not concurrently with Fit.
type LabelEncoder struct {
	classes []string
	index   map[string]int
}

// Fit sets the classes to the sorted distinct values of labels, replacing
// any earlier ones. The labels slice is not retained.
func (e *LabelEncoder) Fit(labels []string) {
	c := slices.Clone(labels)
	slices.Sort(c)
	e.classes = slices.Compact(c)
	e.index = make(map[string]int, len(e.classes))
	for i, s := range e.classes {
		e.index[s] = i
	}
}

// Classes returns the known labels in class order. The slice belongs to e
// and must not be modified; it is valid until the next Fit.
func (e *LabelEncoder) Classes() []string { return e.classes }

// Encode stores the class of each label in dst and returns it. A nil dst is
// allocated; a non-nil one must have length len(labels), or Encode panics.
// It returns an error naming the first label that Fit did not see.
func (e *LabelEncoder) Encode(dst []int, labels []string) ([]int, error) {
	if dst == nil {
		dst = make([]int, len(labels))
	}
	if len(dst) != len(labels) {
		panic(fmt.Sprintf("metrics: dst length %d, want %d", len(dst), len(labels)))
	}
	for i, s := range labels {
		c, ok := e.index[s]
		if !ok {
			return dst, fmt.Errorf("metrics: unknown label %q at %d", s, i)
		}
		dst[i] = c
	}
	return dst, nil
}

// Decode stores the label of each class in dst and returns it. A nil dst
// is allocated; a non-nil one must have length len(y), or Decode panics. It
// returns an error naming the first class outside [0, C), such as −1.
func (e *LabelEncoder) Decode(dst []string, y []int) ([]string, error) {
	if dst == nil {
		dst = make([]string, len(y))
	}
	if len(dst) != len(y) {
		panic(fmt.Sprintf("metrics: dst length %d, want %d", len(dst), len(y)))
	}
	for i, c := range y {
		if c < 0 || c >= len(e.classes) {
			return dst, fmt.Errorf("metrics: class %d at %d outside [0, %d)", c, i, len(e.classes))
		}
		dst[i] = e.classes[c]
	}
	return dst, nil
}
