package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nmfstream/nmfstream/internal/report"
)

// TestReportQuick runs the CI form of the report (the embedded digits, 50
// updates) and checks that it writes report.md, report.json and the three
// figures, with scores consistent with each other and above a floor.
func TestReportQuick(t *testing.T) {
	out := t.TempDir()
	stdout := mustRun(t, "report", "--quick", "--out", out)
	if !strings.Contains(stdout, "report.md") {
		t.Errorf("stdout does not name report.md: %q", stdout)
	}
	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r report.Report
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	// Measured 0.963 (ssknmf, seed 1, 50 updates); the floor leaves room
	// for other BLAS kernels' rounding.
	if r.Accuracy < 0.93 {
		t.Errorf("accuracy %.4f, want at least 0.93", float64(r.Accuracy))
	}
	if len(r.Classes) != 10 || len(r.Confusion) != 10 {
		t.Errorf("%d classes, %d confusion rows, want 10 each", len(r.Classes), len(r.Confusion))
	}
	right, n := 0, 0
	for i, row := range r.Confusion {
		right += row[i]
		for _, v := range row {
			n += v
		}
	}
	if n != r.NTest || float64(right)/float64(n) != float64(r.Accuracy) {
		t.Errorf("confusion matrix: %d of %d right, report: accuracy %g on %d", right, n, float64(r.Accuracy), r.NTest)
	}
	if len(r.Objective) != 50 {
		t.Errorf("%d objective values, want 50 (--quick)", len(r.Objective))
	}
	for _, f := range []string{"report.md", "objective.png", "classes.png", "confusion.png", "basis.png"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s missing or empty: %v", f, err)
		}
	}
	if len(r.Figures) != 4 || len(r.Notes) != 0 {
		t.Errorf("figures %v, notes %v: want 4 figures and no note", r.Figures, r.Notes)
	}
}

func TestReportUsage(t *testing.T) {
	for _, args := range [][]string{
		{"report"}, // no --out
		{"report", "--out", "x", "--train", "a.arrow"}, // --train without --test
	} {
		if code, _, _ := runCmd(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (usage)", args, code)
		}
	}
}
