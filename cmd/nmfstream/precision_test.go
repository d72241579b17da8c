package main

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"

	"github.com/nmfstream/nmfstream/internal/gemm"
	"github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/sources"
)

// asFloat64 writes the records of the Arrow file src, written by
// digitsFiles, to dst with x as fixed_size_list<float64>: the same values
// (the digits are small integers, exact in float32), another type.
func asFloat64(t *testing.T, src, dst string) {
	t.Helper()
	s, err := sources.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var rows [][]any
	for s.Next() {
		b := s.Batch()
		if b.Precision != record.Float32 {
			t.Fatalf("%s: batch of precision %v, want float32", src, b.Precision)
		}
		for i := range b.Len() {
			id, err := strconv.ParseInt(b.IDs[i], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			var lab any
			if b.Labeled[i] {
				l, err := strconv.ParseInt(b.Labels[i], 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				lab = l
			}
			rows = append(rows, []any{append([]float64(nil), b.Dense.RawRowView(i)...), lab, id})
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	schema := arrow.NewSchema([]arrow.Field{field("x", arrow.FixedSizeListOf(64, arrow.PrimitiveTypes.Float64)),
		field("label", arrow.PrimitiveTypes.Int64), field("id", arrow.PrimitiveTypes.Int64)}, nil)
	writeArrow(t, dst, schema, rows)
}

// TestPrecisionFromInput checks that the input's type chooses the
// precision of the batch fit (docs/DESIGN.md §5): fit and eval on the
// digits split written with x in float32 run the products in float32, the
// same split with x in float64 in float64 (the JSON's "precision"); the
// objectives agree to 1e-4 relative and the held-out accuracies to half a
// point; --precision float64 on the float32 file and --float32 on the
// float64 file give the other file's fit to the bit (the same values, the
// same products), and contradicting or unknown choices are usage errors.
func TestPrecisionFromInput(t *testing.T) {
	if !gemm.Serves32(true) {
		t.Skip("no float32 kernels on this machine or build")
	}
	dir := t.TempDir()
	train32, test32, _ := digitsFiles(t, dir, 0)
	train64, test64 := filepath.Join(dir, "train64.arrow"), filepath.Join(dir, "test64.arrow")
	asFloat64(t, train32, train64)
	asFloat64(t, test32, test64)

	fit := func(train string, extra ...string) fitSummary {
		t.Helper()
		args := append([]string{"fit", "--train", train, "--save", filepath.Join(dir, "m.model"), "--method", "gnmf", "--json"}, extra...)
		var s fitSummary
		if err := json.Unmarshal([]byte(mustRun(t, args...)), &s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	f32, f64 := fit(train32), fit(train64)
	if f32.Precision != "float32" || f64.Precision != "float64" {
		t.Fatalf("precision %q for the float32 file and %q for the float64 file, want float32 and float64", f32.Precision, f64.Precision)
	}
	if f32.Objective == f64.Objective {
		t.Error("the same objective to the bit from both files: the float32 products did not run")
	}
	// 1e-4: TestFloat32Fit's bound on the same data and method.
	if r := math.Abs(f32.Objective-f64.Objective) / f64.Objective; r > 1e-4 {
		t.Errorf("objectives %v (float32) and %v (float64) differ by %.3g relative, want ≤ 1e-4", f32.Objective, f64.Objective, r)
	}
	if s := fit(train32, "--precision", "float64"); s.Precision != "float64" || s.Objective != f64.Objective {
		t.Errorf("--precision float64 on the float32 file: %s, objective %v, want float64 and %v", s.Precision, s.Objective, f64.Objective)
	}
	if s := fit(train64, "--float32"); s.Precision != "float32" || s.Objective != f32.Objective {
		t.Errorf("--float32 on the float64 file: %s, objective %v, want float32 and %v", s.Precision, s.Objective, f32.Objective)
	}

	eval := func(train, test string) evalSummary {
		t.Helper()
		var s evalSummary
		if err := json.Unmarshal([]byte(mustRun(t, "eval", "--train", train, "--test", test, "--json")), &s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	e32, e64 := eval(train32, test32), eval(train64, test64)
	t.Logf("objective float32 %.7g, float64 %.7g; eval accuracy float32 %.4f, float64 %.4f", f32.Objective, f64.Objective, e32.Accuracy, e64.Accuracy)
	if e32.Precision != "float32" || e64.Precision != "float64" {
		t.Errorf("eval precision %q and %q, want float32 and float64", e32.Precision, e64.Precision)
	}
	if d := math.Abs(e32.Accuracy - e64.Accuracy); d > 0.005 {
		t.Errorf("held-out accuracy %.4f in float32 against %.4f in float64, want within half a point", e32.Accuracy, e64.Accuracy)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--float32", "--precision", "float64"}, "give one"},
		{[]string{"--precision", "half"}, "want auto, float32 or float64"},
	} {
		args := append([]string{"fit", "--train", train32, "--save", filepath.Join(dir, "bad.model")}, c.args...)
		code, _, errs := runCmd(t, args...)
		if code == 0 || !strings.Contains(errs, c.want) {
			t.Errorf("fit %v: exit %d, stderr %q, want an error saying %q", c.args, code, errs, c.want)
		}
	}
}
