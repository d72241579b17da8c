package report

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/figure"
)

// Num is a float64 that encodes NaN and ±Inf as JSON null (a measurement
// that does not apply).
type Num float64

// MarshalJSON encodes n, or null if n is not finite.
func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(f)
}

// UnmarshalJSON decodes a number, or null as NaN.
func (n *Num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = Num(math.NaN())
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*n = Num(f)
	return nil
}

// Report is what the report says: the fit, the scores on the test records
// and the figures. The command fills every field but Figures, which Write
// fills.
type Report struct {
	// Command is the command line that regenerates the report.
	Command string `json:"command"`
	// Train and Test name the training and test inputs.
	Train string `json:"train"`
	Test  string `json:"test"`

	// Method, Rank, Projection, Classifier and Seed say what was fitted
	// and how the test records were coded and classified.
	Method     string `json:"method"`
	Rank       int    `json:"rank"`
	Projection string `json:"projection"`
	Classifier string `json:"classifier"`
	Seed       uint64 `json:"seed"`

	// NTrain, NLabeled, NTest, Features and Rejected count the training
	// records, the labeled ones among them, the scored test records, the
	// feature dimension D and the rejected records of both inputs.
	NTrain   int `json:"n_train"`
	NLabeled int `json:"n_labeled"`
	NTest    int `json:"n_test"`
	Features int `json:"features"`
	Rejected int `json:"rejected"`

	// Accuracy, BalancedAccuracy and MacroF1 score the test predictions.
	Accuracy         Num `json:"accuracy"`
	BalancedAccuracy Num `json:"balanced_accuracy"`
	MacroF1          Num `json:"macro_f1"`
	// FitSeconds and ProjectSeconds are wall-clock times of the fit and of
	// coding and classifying the test records.
	FitSeconds     Num `json:"fit_seconds"`
	ProjectSeconds Num `json:"project_seconds"`

	// Objective is the objective after each update of the fit, empty for
	// methods that do not report one (DPCA, the kernel methods).
	Objective []Num `json:"objective"`
	// Sparsity is the mean Hoyer sparsity of U's columns (metrics.Hoyer),
	// NaN when U is not in the input space (the kernel methods).
	Sparsity Num `json:"sparsity"`
	// Classes scores each class on the test records, in class order.
	Classes []Class `json:"classes"`
	// Confusion counts the test records of class t (row) predicted p
	// (column), in class order; a record left without a prediction is in
	// no column.
	Confusion [][]int `json:"confusion"`
	// Topics lists, for a model of documents, the terms of largest weight
	// in each column of U (a factor, or topic), largest first; empty for
	// other features.
	Topics []Topic `json:"topics,omitempty"`

	// Figures lists the PNG files Write drew, and Notes what it could not.
	Figures []Figure `json:"figures"`
	Notes   []string `json:"notes,omitempty"`
}

// Class is one class's scores on the test records.
type Class struct {
	Name      string `json:"name"`
	Support   int    `json:"support"` // test records of the class
	Recall    Num    `json:"recall"`
	Precision Num    `json:"precision"`
	F1        Num    `json:"f1"`
}

// Topic is one factor of a model of documents: its column of U (from 1)
// and its top terms with their weights in U, largest first.
type Topic struct {
	Factor  int      `json:"factor"`
	Terms   []string `json:"terms"`
	Weights []Num    `json:"weights"`
}

// Figure is one PNG file of the report.
type Figure struct {
	File  string `json:"file"`
	Title string `json:"title"`
}

// Write draws the figures of r into dir (created if missing), records them
// in r.Figures, and writes dir/report.json and dir/report.md. basis, if
// non-nil, is U (D×K); it is drawn as images when D is a square number, as
// √D×√D images. A figure that cannot be drawn (nothing to plot) becomes a
// note; an error writing a file is returned.
func Write(dir string, r *Report, basis *mat.Dense) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	r.Figures = r.Figures[:0]
	draw := func(file, title string, f func(path string) error) {
		if err := f(filepath.Join(dir, file)); err != nil {
			r.Notes = append(r.Notes, fmt.Sprintf("%s not drawn: %v", file, err))
			return
		}
		r.Figures = append(r.Figures, Figure{File: file, Title: title})
	}
	if len(r.Objective) > 1 {
		s := figure.Series{}
		f0 := float64(r.Objective[0])
		for i, v := range r.Objective {
			s.X = append(s.X, float64(i+1))
			s.Y = append(s.Y, float64(v)/f0)
		}
		title := fmt.Sprintf("%s: objective per update, relative to the first", r.Method)
		draw("objective.png", title, func(path string) error {
			return figure.Line(path, title, "update", "relative objective", []figure.Series{s}, false, true)
		})
	}
	if len(r.Classes) > 0 {
		names := make([]string, len(r.Classes))
		recall := make([]float64, len(r.Classes))
		for i, c := range r.Classes {
			names[i], recall[i] = c.Name, float64(c.Recall)
		}
		title := fmt.Sprintf("%s: held-out recall per class (accuracy %.3f)", r.Method, float64(r.Accuracy))
		draw("classes.png", title, func(path string) error {
			return figure.Bars(path, title, "class", "recall", names, recall, 1)
		})
	}
	if c := len(r.Confusion); c > 0 && c <= 30 && len(r.Classes) == c {
		names := make([]string, c)
		for i, cl := range r.Classes {
			names[i] = cl.Name
		}
		title := fmt.Sprintf("%s: held-out confusion matrix (shade: share of the true class)", r.Method)
		draw("confusion.png", title, func(path string) error { return figure.Confusion(path, title, names, r.Confusion) })
	}
	if basis != nil {
		d, k := basis.Dims()
		side := int(math.Round(math.Sqrt(float64(d))))
		if side > 1 && side*side == d {
			title := fmt.Sprintf("%s: the K = %d columns of U as %dx%d images (dark = large weight)", r.Method, k, side, side)
			draw("basis.png", title, func(path string) error { return figure.Basis(path, title, basis, side, side) })
		}
	}
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "report.json"), append(js, '\n'), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	var b strings.Builder
	writeMarkdown(&b, r)
	if err := os.WriteFile(filepath.Join(dir, "report.md"), []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}
