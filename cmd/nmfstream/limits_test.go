package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
)

// TestMaxDim: a sparse input claiming D = 10⁸ is refused at start by every
// command that reads data, naming the file, the limit and --max-dim; a
// --max-dim below an input's dimension refuses it too.
func TestMaxDim(t *testing.T) {
	dir := t.TempDir()
	md := arrow.NewMetadata([]string{"dim"}, []string{"100000000"})
	schema := arrow.NewSchema([]arrow.Field{
		field("indices", arrow.ListOf(arrow.PrimitiveTypes.Int32)),
		field("values", f64List),
	}, &md)
	bomb := filepath.Join(dir, "bomb.arrow")
	writeArrow(t, bomb, schema, [][]any{{[]int32{1}, []float64{1}}})
	for _, args := range [][]string{
		{"fit", "--train", bomb, "--save", filepath.Join(dir, "m.model")},
		{"stream", "--in", bomb},
	} {
		code, _, stderr := runCmd(t, args...)
		if code == 0 || !strings.Contains(stderr, bomb) || !strings.Contains(stderr, "1048576") || !strings.Contains(stderr, "--max-dim") {
			t.Errorf("%s: exit %d, stderr %q; want a refusal naming the file, the limit and --max-dim", args[0], code, stderr)
		}
	}
	small := filepath.Join(dir, "small.arrow")
	writeArrow(t, small, arrow.NewSchema([]arrow.Field{field("x", f64List)}, nil), [][]any{{[]float64{1, 2, 3}}, {[]float64{1, 0, 1}}})
	// List rows are already in memory: one above the limit is a reject.
	rejects := filepath.Join(dir, "rejects.jsonl")
	code, _, stderr := runCmd(t, "stream", "--in", small, "--max-dim", "2", "--rejects", rejects)
	if b, _ := os.ReadFile(rejects); code == 0 || !strings.Contains(string(b), "exceeds the limit of 2") {
		t.Errorf("stream --max-dim 2 on D = 3: exit %d, stderr %q, rejects %q", code, stderr, b)
	}
	for _, name := range []string{"fit", "eval", "project", "classify", "stream"} {
		if _, out, _ := runCmd(t, name, "-help"); !strings.Contains(out, "-max-dim") {
			t.Errorf("%s -help does not list --max-dim", name)
		}
	}
}
