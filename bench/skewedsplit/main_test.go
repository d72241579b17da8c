package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nmfstream/nmfstream/model/sparse"
)

// TestWriteSVM: the rows kept are those keep accepts and that have a
// term; each line is the class index then 1-based col:val pairs, as
// scikit-learn's load_svmlight_file reads them.
func TestWriteSVM(t *testing.T) {
	// Row 0: two terms; row 1: no term; row 2: one term; row 3: not kept.
	x := sparse.NewCSR(4, 5, []int{0, 2, 2, 3, 4}, []int{0, 4, 2, 1}, []float64{0.5, 0.25, 1, 0.75})
	labels := []string{"ham", "spam", "spam", "ham"}
	class := map[string]int{"ham": 0, "spam": 1}
	path := filepath.Join(t.TempDir(), "x.svm")
	if err := writeSVM(path, x, labels, class, func(i int) bool { return i != 3 }); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "0 1:0.5 5:0.25\n1 3:1\n"; string(got) != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
}
