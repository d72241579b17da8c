package main

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"

	"github.com/nmfstream/nmfstream/datasets"
	"github.com/nmfstream/nmfstream/model/metrics"
)

// labeledDigitsFiles writes every other sample of the digits training pool
// (docs/DESIGN.md §7 split, seed 1), every one labeled, and every other
// held-out sample, as train and test Arrow files.
func labeledDigitsFiles(t *testing.T, dir string) (train, test string) {
	t.Helper()
	x, y := datasets.Digits()
	split, err := metrics.Split(y, 1.0/3, 10, rand.NewPCG(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	schema := arrow.NewSchema([]arrow.Field{field("x", f32Fixed64), field("label", arrow.PrimitiveTypes.Int64), field("id", arrow.PrimitiveTypes.Int64)}, nil)
	rows := func(idx []int) [][]any {
		var out [][]any
		for r, i := range idx {
			if r%2 != 0 {
				continue
			}
			f := make([]float32, 64)
			for j, v := range x.RawRowView(i) {
				f[j] = float32(v)
			}
			out = append(out, []any{f, int64(y[i]), int64(i)})
		}
		return out
	}
	train, test = filepath.Join(dir, "train.arrow"), filepath.Join(dir, "test.arrow")
	writeArrow(t, train, schema, rows(split.Train))
	writeArrow(t, test, schema, rows(split.Test))
	return train, test
}

// TestFitAllLabeled fits the default method on training data whose every
// record is labeled (it used to diverge to −3e92, exit 0, and project then
// wrote codes of 3e37 and nulls), then projects and classifies the
// held-out records: every command exits 0, and every code is finite.
func TestFitAllLabeled(t *testing.T) {
	dir := t.TempDir()
	train, test := labeledDigitsFiles(t, dir)
	m := filepath.Join(dir, "m.model")
	mustRun(t, "fit", "--train", train, "--save", m, "--rank", "20", "--iters", "100")
	codes := filepath.Join(dir, "codes.arrow")
	mustRun(t, "project", "--model", m, "--in", test, "--out", codes)
	ids, v, _, _ := readResults(t, codes)
	if len(v) != len(ids) || len(v) == 0 {
		t.Fatalf("%d codes for %d records", len(v), len(ids))
	}
	for i, row := range v {
		for j, c := range row {
			// Digits codes stay below a few hundred; the diverged fit's
			// reached 3e37.
			if math.IsNaN(float64(c)) || math.IsInf(float64(c), 0) || c < 0 || c > 1e6 {
				t.Fatalf("code (%d, %d) = %g", i, j, c)
			}
		}
	}
	pred := filepath.Join(dir, "pred.arrow")
	mustRun(t, "classify", "--model", m, "--in", test, "--out", pred)
	ids, _, preds, _ := readResults(t, pred)
	_, y := datasets.Digits()
	right := 0
	for i, id := range ids {
		row, err := strconv.Atoi(id)
		if err != nil {
			t.Fatal(err)
		}
		if preds[i] == strconv.Itoa(y[row]) {
			right++
		}
	}
	// With every training label known the classifier scores 0.99 on the
	// digits (model.Auto); 0.95 leaves room for the half-size pool.
	acc := float64(right) / float64(len(ids))
	t.Logf("held-out accuracy %.3f (%d records)", acc, len(ids))
	if acc < 0.95 {
		t.Errorf("held-out accuracy %.3f < 0.95", acc)
	}
}

// TestFitDiverged forces a divergence (DGNMF's repulsion weighted far
// beyond its bound): fit must exit non-zero, say what diverged and what to
// lower, and write no model.
func TestFitDiverged(t *testing.T) {
	dir := t.TempDir()
	train, _ := labeledDigitsFiles(t, dir)
	m := filepath.Join(dir, "m.model")
	code, _, errs := runCmd(t, "fit", "--train", train, "--save", m, "--method", "dgnmf", "--alpha", "1000", "--rank", "20", "--iters", "100")
	if code == 0 {
		t.Fatalf("fit exited 0 on a diverging fit; stderr:\n%s", errs)
	}
	t.Logf("exit %d: %s", code, strings.TrimSpace(errs))
	for _, want := range []string{"DGNMF", "diverging", "lower Alpha"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if _, err := os.Stat(m); !os.IsNotExist(err) {
		t.Errorf("a model was written (stat: %v)", err)
	}
}
