package report

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new") // Write creates it
	r := &Report{
		Command: "nmfstream report --out x", Method: "gnmf", Rank: 4,
		Accuracy: 0.75, BalancedAccuracy: 0.7, MacroF1: Num(math.NaN()),
		Objective: []Num{10, 5, 4},
		Sparsity:  Num(math.NaN()),
		Classes:   []Class{{Name: "a", Support: 2, Recall: 1, Precision: 0.5, F1: 2.0 / 3}, {Name: "b", Support: 2, Recall: 0.5, Precision: 1, F1: 2.0 / 3}},
		Confusion: [][]int{{2, 0}, {1, 1}},
		Topics:    []Topic{{Factor: 1, Terms: []string{"jury", "election"}, Weights: []Num{0.5, 0.25}}},
	}
	u := mat.NewDense(16, 2, nil) // 4×4 images
	u.Set(0, 0, 1)
	u.Set(5, 1, 1)
	if err := Write(dir, r, u); err != nil {
		t.Fatal(err)
	}
	want := []string{"objective.png", "classes.png", "confusion.png", "basis.png"}
	if len(r.Figures) != len(want) {
		t.Fatalf("figures %v, want %v (notes %v)", r.Figures, want, r.Notes)
	}
	for i, f := range r.Figures {
		if f.File != want[i] || f.Title == "" {
			t.Errorf("figure %d: %+v, want file %s with a title", i, f, want[i])
		}
		if st, err := os.Stat(filepath.Join(dir, f.File)); err != nil || st.Size() == 0 {
			t.Errorf("%s missing or empty: %v", f.File, err)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"macro_f1": null`) {
		t.Errorf("NaN macro-F1 not written as null:\n%s", b)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Accuracy != 0.75 || !math.IsNaN(float64(back.MacroF1)) || len(back.Confusion) != 2 {
		t.Errorf("report.json round trip: %+v", back)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"# nmfstream report: gnmf", "nmfstream report --out x", "| 0.750 | 0.700 | – |", "| **b** | 1 | 1 |", "![", "(basis.png)", "(confusion.png)", "| 1 | jury, election |"} {
		if !strings.Contains(string(md), s) {
			t.Errorf("report.md lacks %q:\n%s", s, md)
		}
	}
}

func TestWriteNothingToDraw(t *testing.T) {
	// No objective, no classes, a basis that is not square images: no
	// figure, and no error.
	dir := t.TempDir()
	r := &Report{Method: "dpca", Sparsity: Num(math.NaN())}
	if err := Write(dir, r, mat.NewDense(6, 2, nil)); err != nil {
		t.Fatal(err)
	}
	if len(r.Figures) != 0 {
		t.Errorf("figures %v, want none", r.Figures)
	}
	// A class whose recall is NaN draws no bar, and one with no finite
	// recall at all becomes a note.
	r = &Report{Method: "x", Classes: []Class{{Name: "a", Recall: Num(math.NaN())}}}
	if err := Write(dir, r, nil); err != nil {
		t.Fatal(err)
	}
	if len(r.Figures) != 0 || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "classes.png") {
		t.Errorf("figures %v, notes %q: want one note on classes.png", r.Figures, r.Notes)
	}
}
