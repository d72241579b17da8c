package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/model/kernel"
	"github.com/nmfstream/nmfstream/sinks"
	"github.com/nmfstream/nmfstream/sources"
)

func TestHelp(t *testing.T) {
	for _, name := range []string{"demo", "fit", "project", "classify", "eval", "stream", "serve", "report"} {
		code, errs, stderr := runCmd(t, name, "-help") // help asked for goes to stdout
		if code != 0 || stderr != "" {
			t.Errorf("%s -help: exit %d, stderr %q", name, code, stderr)
		}
		for _, want := range []string{"Usage: nmfstream " + name, "Examples:", "nmfstream " + name + " --"} {
			if !strings.Contains(errs, want) {
				t.Errorf("%s -help lacks %q:\n%s", name, want, errs)
			}
		}
	}
	// Every method of the table is listed in the help of fit.
	_, errs, _ := runCmd(t, "fit", "-help")
	for _, m := range methodNames() {
		if !strings.Contains(errs, m) {
			t.Errorf("fit -help does not list method %s", m)
		}
	}
}

func TestEvalJSONKeys(t *testing.T) {
	dir := t.TempDir()
	train, test, _ := digitsFiles(t, dir, 4)
	out := mustRun(t, "eval", "--train", train, "--test", test, "--rank", "20", "--iters", "50", "--json")
	if strings.Count(strings.TrimSpace(out), "\n") != 0 {
		t.Errorf("eval --json printed more than one line: %q", out)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("eval --json output %q: %v", out, err)
	}
	want := map[string]string{
		"method": "string", "accuracy": "number", "n_train": "int", "n_labeled": "int", "n_test": "int",
		"fit_seconds": "number", "rejected": "int", "seed": "int", "projection": "string", "rank": "int",
	}
	for k, typ := range want {
		v, ok := got[k]
		if !ok {
			t.Errorf("key %q missing from %s", k, out)
			continue
		}
		switch typ {
		case "string":
			if _, ok := v.(string); !ok {
				t.Errorf("%s = %v (%T), want a string", k, v, v)
			}
		case "number", "int":
			f, ok := v.(float64)
			if !ok || (typ == "int" && f != math.Trunc(f)) {
				t.Errorf("%s = %v (%T), want %s", k, v, v, typ)
			}
		}
	}
	if got["method"] != autoMethod || got["projection"] != "graph" || got["rank"] != 20.0 || got["seed"] != 1.0 {
		t.Errorf("method/projection/rank/seed = %v/%v/%v/%v", got["method"], got["projection"], got["rank"], got["seed"])
	}
	if acc := got["accuracy"].(float64); acc < 0.5 || acc > 1 {
		t.Errorf("accuracy %v: want a held-out accuracy well above chance (0.1)", acc)
	}
	if got["n_labeled"] != 100.0 {
		t.Errorf("n_labeled = %v, want 100 (10 per class)", got["n_labeled"])
	}
}

// readResults reads an output file of project or classify.
func readResults(t *testing.T, path string) (ids []string, codes [][]float32, preds []string, scores []float64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r, err := ipc.NewFileReader(f, ipc.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sc := r.Schema()
	for i := 0; i < r.NumRecords(); i++ {
		rec, err := r.Record(i)
		if err != nil {
			t.Fatal(err)
		}
		for c := 0; c < int(rec.NumCols()); c++ {
			col := rec.Column(c)
			switch sc.Field(c).Name {
			case "id":
				for j := 0; j < col.Len(); j++ {
					ids = append(ids, col.ValueStr(j))
				}
			case "code":
				l := col.(*array.FixedSizeList)
				vals := l.ListValues().(*array.Float32).Float32Values()
				k := int(l.DataType().(*arrow.FixedSizeListType).Len())
				for j := 0; j < l.Len(); j++ {
					codes = append(codes, append([]float32(nil), vals[j*k:(j+1)*k]...))
				}
			case "pred":
				for j := 0; j < col.Len(); j++ {
					preds = append(preds, col.ValueStr(j))
				}
			case "score":
				scores = append(scores, col.(*array.Float64).Float64Values()...)
			}
		}
	}
	return
}

// fitInProcess fits the training file train in process with p, and
// returns the fit, the records of the file test and those records in its
// feature space.
func fitInProcess(t *testing.T, train, test string, p fitParams) (*fitted, *input, model.Data) {
	t.Helper()
	f, err := fitFile(context.Background(), train, p, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	tin, err := readInput(context.Background(), test, sources.Opener{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sp, _ := spaceOf(f.snap)
	x, err := modelData(sp, tin)
	if err != nil {
		t.Fatal(err)
	}
	return f, tin, x
}

// TestFitProjectClassify checks that a saved and loaded model codes and
// classifies exactly as the model right after fitting does.
func TestFitProjectClassify(t *testing.T) {
	dir := t.TempDir()
	train, test, split := digitsFiles(t, dir, 4)
	modelPath := filepath.Join(dir, "digits.model")
	out := mustRun(t, "fit", "--train", train, "--save", modelPath, "--method", "gnmf", "--rank", "20", "--iters", "60", "--json")
	var sum map[string]any
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("fit --json: %q: %v", out, err)
	}
	if sum["method"] != "gnmf" || sum["features"] != 64.0 {
		t.Errorf("fit summary %v", sum)
	}

	// The same fit in process.
	f, tin, x := fitInProcess(t, train, test, fitParams{method: "gnmf", rank: 20, iters: 60, seed: 1, projector: "graph"})
	want, err := codeData(context.Background(), f.snap, model.ProjectGraph, x, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// And through the model's own projector: the snapshot must not change
	// what graph projection computes.
	direct := &mat.Dense{}
	if err := f.m.(*model.GNMF).Projector(model.ProjectGraph).ProjectTo(direct, x); err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(direct, want) {
		t.Error("snapshot projector and GNMF.Projector differ")
	}

	codesPath := filepath.Join(dir, "codes.arrow")
	mustRun(t, "project", "--model", modelPath, "--in", test, "--out", codesPath)
	ids, codes, _, _ := readResults(t, codesPath)
	n, k := want.Dims()
	if len(codes) != n || len(ids) != n {
		t.Fatalf("project wrote %d codes and %d ids, want %d", len(codes), len(ids), n)
	}
	for i := 0; i < n; i++ {
		if len(codes[i]) != k {
			t.Fatalf("code %d has %d entries, want %d", i, len(codes[i]), k)
		}
		for j := 0; j < k; j++ {
			if codes[i][j] != float32(want.At(i, j)) {
				t.Fatalf("code (%d, %d) = %v, want %v (bit-exact after float32)", i, j, codes[i][j], float32(want.At(i, j)))
			}
		}
	}
	if ids[0] != fmt.Sprint(split.Test[0]) {
		t.Errorf("first id %q, want %d", ids[0], split.Test[0])
	}

	predPath := filepath.Join(dir, "pred.arrow")
	out = mustRun(t, "classify", "--model", modelPath, "--in", test, "--out", predPath)
	if !strings.Contains(out, "accuracy on the") {
		t.Errorf("classify on a labeled file prints no accuracy: %q", out)
	}
	_, _, preds, scores := readResults(t, predPath)
	cl, err := newDataClassifier(f.x, f.m.Codes(), f.y, f.classes, "")
	if err != nil {
		t.Fatal(err)
	}
	wp, ws, err := cl.predictData(x, want)
	if err != nil {
		t.Fatal(err)
	}
	names, _ := cl.enc.Decode(nil, wp)
	right := 0
	for i := range names {
		if preds[i] != names[i] || scores[i] != ws[i] {
			t.Fatalf("record %d: pred %q score %v, want %q %v", i, preds[i], scores[i], names[i], ws[i])
		}
		if scores[i] < 0 || scores[i] > 1 {
			t.Errorf("score %v outside [0, 1]", scores[i])
		}
		if preds[i] == tin.labels[i] {
			right++
		}
	}
	if acc := float64(right) / float64(len(preds)); acc < 0.8 {
		t.Errorf("classify accuracy %.3f on a quarter of the digits, want ≥ 0.8", acc)
	}
	// Other projections run from the saved model too.
	for _, pj := range []string{"nnls", "clamped", "pinv"} {
		mustRun(t, "project", "--model", modelPath, "--in", test, "--out", codesPath, "--projector", pj)
	}
}

// synthetic returns n records of 3 well-separated classes with d features:
// class c is bright on features [c·d/3, (c+1)·d/3).
func synthetic(n, d int, rnd *rand.Rand) ([][]float64, []int) {
	x := make([][]float64, n)
	y := make([]int, n)
	for i := range x {
		c := i % 3
		y[i] = c
		x[i] = make([]float64, d)
		for j := range x[i] {
			x[i][j] = rnd.Float64() * 0.2
			if j*3/d == c {
				x[i][j] += 1 + rnd.Float64()
			}
		}
	}
	return x, y
}

func pngOf(t *testing.T, row []float64, w, h int) []byte {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, w, h))
	for i, v := range row {
		img.SetGray(i%w, i/w, color.Gray{Y: uint8(min(255, v*120))})
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

var classWords = [][]string{
	{"cat", "kitten", "purr", "whisker", "meow"},
	{"dog", "puppy", "bark", "leash", "fetch"},
	{"car", "engine", "wheel", "road", "drive"},
}

// TestInputForms fits, evaluates and classifies on each feature form and
// label/id type of the data contract.
func TestInputForms(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 1))
	const n, d = 90, 36 // d = 6×6 for the images
	x, y := synthetic(n, d, rnd)
	labelOf := func(i int, asString bool) any {
		if i%3 != 0 && i >= 30 { // a third of the pool labeled, the rest null
			return nil
		}
		if asString {
			return []string{"red", "green", "blue"}[y[i]]
		}
		return int64(y[i])
	}
	type form struct {
		name   string
		schema *arrow.Schema
		row    func(i int, test bool) []any
	}
	f32 := func(v []float64) []float32 {
		o := make([]float32, len(v))
		for i, a := range v {
			o[i] = float32(a)
		}
		return o
	}
	str := arrow.BinaryTypes.String
	i64 := arrow.PrimitiveTypes.Int64
	forms := []form{
		{"fixed float32, int labels, int ids",
			arrow.NewSchema([]arrow.Field{field("x", arrow.FixedSizeListOf(d, arrow.PrimitiveTypes.Float32)), field("label", i64), field("id", i64)}, nil),
			func(i int, test bool) []any {
				l := labelOf(i, false)
				if test {
					l = int64(y[i])
				}
				return []any{f32(x[i]), l, int64(i)}
			}},
		{"list float64, utf8 labels, utf8 ids",
			arrow.NewSchema([]arrow.Field{field("x", f64List), field("label", str), field("id", str)}, nil),
			func(i int, test bool) []any {
				l := labelOf(i, true)
				if test {
					l = []string{"red", "green", "blue"}[y[i]]
				}
				return []any{x[i], l, fmt.Sprintf("r%d", i)}
			}},
		{"sparse with dim",
			func() *arrow.Schema {
				md := arrow.NewMetadata([]string{"dim"}, []string{fmt.Sprint(d)})
				return arrow.NewSchema([]arrow.Field{field("indices", arrow.ListOf(arrow.PrimitiveTypes.Int32)),
					field("values", f64List), field("label", i64)}, &md)
			}(),
			func(i int, test bool) []any {
				var ind []int32
				var val []float64
				for j, v := range x[i] {
					if v > 0.5 {
						ind = append(ind, int32(j))
						val = append(val, v)
					}
				}
				l := labelOf(i, false)
				if test {
					l = int64(y[i])
				}
				return []any{ind, val, l}
			}},
		{"text",
			arrow.NewSchema([]arrow.Field{field("text", str), field("label", str)}, nil),
			func(i int, test bool) []any {
				w := classWords[y[i]]
				doc := strings.Join([]string{w[rnd.IntN(5)], w[rnd.IntN(5)], w[rnd.IntN(5)], "the", "and"}, " ")
				l := labelOf(i, true)
				if test {
					l = []string{"red", "green", "blue"}[y[i]]
				}
				return []any{doc, l}
			}},
		{"png images",
			arrow.NewSchema([]arrow.Field{field("image", arrow.BinaryTypes.Binary), field("label", i64)}, nil),
			func(i int, test bool) []any {
				l := labelOf(i, false)
				if test {
					l = int64(y[i])
				}
				return []any{pngOf(t, x[i], 6, 6), l}
			}},
	}
	for fi, fm := range forms {
		t.Run(fm.name, func(t *testing.T) {
			dir := t.TempDir()
			var tr, te [][]any
			for i := 0; i < n; i++ {
				if i%4 == 3 {
					te = append(te, fm.row(i, true))
				} else {
					tr = append(tr, fm.row(i, false))
				}
			}
			train, test := filepath.Join(dir, "train.arrow"), filepath.Join(dir, "test.arrow")
			writeArrow(t, train, fm.schema, tr)
			writeArrow(t, test, fm.schema, te)
			args := []string{"--rank", "3", "--iters", "50", "--neighbors", "4"}
			if fi == 3 {
				args = append(args, "--alpha", "1") // TF-IDF rows have unit norm: α scales with ‖X‖²
			}
			out := mustRun(t, append([]string{"eval", "--train", train, "--test", test, "--json"}, args...)...)
			var got map[string]any
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatal(err)
			}
			if got["n_train"] != float64(len(tr)) || got["n_test"] != float64(len(te)) || got["rejected"] != 0.0 {
				t.Errorf("eval: %s", out)
			}
			// Three well-separated classes: anything below 0.9 is a bug in the plumbing.
			if acc := got["accuracy"].(float64); acc < 0.9 {
				t.Errorf("accuracy %.3f, want ≥ 0.9: %s", acc, out)
			}
			m := filepath.Join(dir, "m.model")
			mustRun(t, append([]string{"fit", "--train", train, "--save", m}, args...)...)
			pred := filepath.Join(dir, "pred.arrow")
			out = mustRun(t, "classify", "--model", m, "--in", test, "--out", pred)
			_, codes, preds, _ := readResults(t, pred)
			if len(codes) != len(te) || len(preds) != len(te) {
				t.Errorf("classify wrote %d codes, %d preds for %d records", len(codes), len(preds), len(te))
			}
			if !strings.Contains(out, "accuracy") {
				t.Errorf("classify: %q", out)
			}
		})
	}
}

// TestBadInputs checks that unusable files give a clear error and a
// non-zero exit status, and that bad records are rejected and reported
// while the rest is used.
func TestBadInputs(t *testing.T) {
	dir := t.TempDir()
	rnd := rand.New(rand.NewPCG(1, 1))
	x, y := synthetic(30, 8, rnd)
	schema := arrow.NewSchema([]arrow.Field{field("x", f64List), field("label", arrow.PrimitiveTypes.Int64), field("id", arrow.PrimitiveTypes.Int64)}, nil)
	rows := func(bad map[int][]float64) [][]any {
		var r [][]any
		for i := range x {
			v := x[i]
			if b, ok := bad[i]; ok {
				v = b
			}
			r = append(r, []any{v, int64(y[i]), int64(i)})
		}
		return r
	}
	good := filepath.Join(dir, "good.arrow")
	writeArrow(t, good, schema, rows(nil))

	// Some bad records: rejected, counted, listed; exit 0.
	some := filepath.Join(dir, "some.arrow")
	writeArrow(t, some, schema, rows(map[int][]float64{
		3: {1, -1, 0, 0, 0, 0, 0, 0},
		7: {1, math.NaN(), 0, 0, 0, 0, 0, 0},
		9: {1, 2, 3}, // wrong dimension
	}))
	rej := filepath.Join(dir, "rejects.jsonl")
	code, out, errs := runCmd(t, "fit", "--train", some, "--save", filepath.Join(dir, "m"), "--rank", "2", "--rejects", rej, "--json")
	if code != 0 {
		t.Fatalf("fit with 3 bad records: exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "3 records rejected") {
		t.Errorf("stderr does not report the rejects: %q", errs)
	}
	if !strings.Contains(out, `"rejected":3`) || !strings.Contains(out, `"n_train":27`) {
		t.Errorf("fit summary: %s", out)
	}
	b, err := os.ReadFile(rej)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 3 {
		t.Fatalf("rejects file has %d lines, want 3:\n%s", len(lines), b)
	}
	for i, want := range []string{"negative", "NaN", "dimension"} {
		var r struct {
			Offset int64  `json:"offset"`
			Reason string `json:"reason"`
		}
		if err := json.Unmarshal([]byte(lines[i]), &r); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(r.Reason, want) || !strings.Contains(r.Reason, some) || r.Offset != []int64{3, 7, 9}[i] {
			t.Errorf("reject %d: %+v, want offset %d and a reason naming the file and %q", i, r, []int64{3, 7, 9}[i], want)
		}
	}

	// All records bad: the file is unusable.
	allBad := map[int][]float64{}
	for i := range x {
		allBad[i] = []float64{-1, 0, 0, 0, 0, 0, 0, 0}
	}
	all := filepath.Join(dir, "allbad.arrow")
	writeArrow(t, all, schema, rows(allBad))

	// A truncated file.
	whole, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	trunc := filepath.Join(dir, "trunc.arrow")
	if err := os.WriteFile(trunc, whole[:len(whole)*2/3], 0o644); err != nil {
		t.Fatal(err)
	}
	// No feature column.
	nofeat := filepath.Join(dir, "nofeat.arrow")
	writeArrow(t, nofeat, arrow.NewSchema([]arrow.Field{field("label", arrow.PrimitiveTypes.Int64)}, nil), [][]any{{int64(1)}})
	// Two feature forms.
	mixed := filepath.Join(dir, "mixed.arrow")
	writeArrow(t, mixed, arrow.NewSchema([]arrow.Field{field("x", f64List), field("text", arrow.BinaryTypes.String)}, nil),
		[][]any{{x[0], "a doc"}})
	// A float label column.
	flabel := filepath.Join(dir, "flabel.arrow")
	writeArrow(t, flabel, arrow.NewSchema([]arrow.Field{field("x", f64List), field("label", arrow.PrimitiveTypes.Float64)}, nil),
		[][]any{{x[0], 1.5}, {x[1], 2.5}})
	// Not Arrow at all.
	junk := filepath.Join(dir, "junk.arrow")
	if err := os.WriteFile(junk, []byte("id,x\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A model fitted on 8 features, and a file with 5.
	m8 := filepath.Join(dir, "m8.model")
	mustRun(t, "fit", "--train", good, "--save", m8, "--rank", "2")
	five := filepath.Join(dir, "five.arrow")
	writeArrow(t, five, schema, [][]any{{[]float64{1, 2, 3, 4, 5}, nil, int64(1)}})

	cases := []struct {
		name string
		args []string
		exit int
		want []string // substrings of stderr
	}{
		{"all rejected", []string{"fit", "--train", all, "--save", filepath.Join(dir, "x")}, 1, []string{all, "all 30 records rejected", "negative"}},
		{"truncated", []string{"fit", "--train", trunc, "--save", filepath.Join(dir, "x")}, 1, []string{trunc}},
		{"no feature column", []string{"eval", "--train", nofeat, "--test", good}, 1, []string{nofeat, "feature"}},
		{"mixed forms", []string{"fit", "--train", mixed, "--save", filepath.Join(dir, "x")}, 1, []string{mixed}},
		{"float labels", []string{"fit", "--train", flabel, "--save", filepath.Join(dir, "x")}, 1, []string{flabel, "label"}},
		{"not arrow", []string{"fit", "--train", junk, "--save", filepath.Join(dir, "x")}, 1, []string{junk}},
		{"missing file", []string{"fit", "--train", filepath.Join(dir, "nope.arrow"), "--save", filepath.Join(dir, "x")}, 1, []string{"nope.arrow"}},
		{"model is data", []string{"project", "--model", good, "--in", good, "--out", filepath.Join(dir, "o.arrow")}, 1, []string{good, "not an nmfstream model"}},
		{"model truncated", []string{"classify", "--model", trunc, "--in", good, "--out", filepath.Join(dir, "o.arrow")}, 1, []string{trunc}},
		{"dimension", []string{"project", "--model", m8, "--in", five, "--out", filepath.Join(dir, "o.arrow")}, 1, []string{five, "5 features", "8"}},
		{"unknown method", []string{"eval", "--train", good, "--test", good, "--method", "magic"}, 2, []string{"magic", "gnmf"}},
		{"rank too large", []string{"eval", "--train", good, "--test", good, "--rank", "9"}, 2, []string{"--rank 9", "8"}},
		{"missing flags", []string{"project", "--model", m8}, 2, []string{"--in"}},
		{"bad projector", []string{"project", "--model", m8, "--in", good, "--out", filepath.Join(dir, "o.arrow"), "--projector", "best"}, 2, []string{"best"}},
		{"rank within classes", []string{"eval", "--train", good, "--test", good, "--method", "nge", "--rank", "3"}, 2, []string{"--rank 4"}},
		{"supervised without labels", []string{"fit", "--train", five, "--save", filepath.Join(dir, "x"), "--method", "dgnmf", "--rank", "1"}, 1, []string{"labeled"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, errs := runCmd(t, c.args...)
			if code != c.exit {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, c.exit, errs)
			}
			for _, w := range c.want {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errs)
				}
			}
		})
	}
}

// TestMethods runs every method of the table through eval on a small
// three-class file, and through fit where the method can be saved. Nothing
// is printed on stderr when it is not a terminal.
func TestMethods(t *testing.T) {
	dir := t.TempDir()
	rnd := rand.New(rand.NewPCG(1, 1))
	x, y := synthetic(90, 12, rnd)
	schema := arrow.NewSchema([]arrow.Field{field("x", f64List), field("label", arrow.PrimitiveTypes.Int64)}, nil)
	var tr, te [][]any
	for i := range x {
		switch {
		case i%4 == 3:
			te = append(te, []any{x[i], int64(y[i])})
		case i < 30:
			tr = append(tr, []any{x[i], int64(y[i])})
		default:
			tr = append(tr, []any{x[i], nil})
		}
	}
	train, test := filepath.Join(dir, "train.arrow"), filepath.Join(dir, "test.arrow")
	writeArrow(t, train, schema, tr)
	writeArrow(t, test, schema, te)
	for _, name := range append(methodNames(), "auto") {
		t.Run(name, func(t *testing.T) {
			args := []string{"--method", name, "--rank", "4", "--iters", "30", "--neighbors", "3"}
			code, out, errs := runCmd(t, append([]string{"eval", "--train", train, "--test", test, "--json"}, args...)...)
			if code != 0 || errs != "" {
				t.Fatalf("eval: exit %d, stderr %q", code, errs)
			}
			var got map[string]any
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatal(err)
			}
			wantName := name
			if name == "auto" {
				wantName = autoMethod
			}
			if got["method"] != wantName {
				t.Errorf("method %v, want %s", got["method"], wantName)
			}
			// Three separated classes: every method classifies them (all
			// measure 1.000, multik since its α = 0 form uses the
			// scale-free τ cost).
			floor := 0.9
			t.Logf("%s: accuracy %.3f", name, got["accuracy"].(float64))
			if acc := got["accuracy"].(float64); acc < floor {
				t.Errorf("accuracy %.3f, want ≥ %.1f", acc, floor)
			}
			m := filepath.Join(dir, name+".model")
			code, _, errs = runCmd(t, append([]string{"fit", "--train", train, "--save", m}, args...)...)
			if code != 0 {
				t.Fatalf("fit: exit %d: %s", code, errs)
			}
			if _, spec, _ := lookupMethod(wantName); spec.state != nil {
				p := fitParams{method: wantName, rank: 4, iters: 30, neighbors: 3, seed: 1, projector: "graph"}
				kernelRoundTrip(t, m, train, test, p, spec)
				// The same with Nyström landmarks: their rows and maps are
				// saved, and the loaded model projects as the fit.
				ny := filepath.Join(dir, name+".nystrom.model")
				mustRun(t, append([]string{"fit", "--train", train, "--save", ny, "--landmarks", "10"}, args...)...)
				p.landmarks = 10
				kernelRoundTrip(t, ny, train, test, p, spec)
			}
			pred := filepath.Join(dir, name+".pred.arrow")
			out = mustRun(t, "classify", "--model", m, "--in", test, "--out", pred)
			if !strings.Contains(out, "accuracy on the 22 labeled records") {
				t.Errorf("classify: %q", out)
			}
		})
	}
}

// kernelRoundTrip checks that a saved kernel model codes the test file
// exactly (==) as the method fitted in memory with the same flags, under
// each projection, but the paper's for flexible-kernel NMF with Nyström
// landmarks, which needs the exact kernel and must be refused. A model
// fitted with p.landmarks must have saved them.
func kernelRoundTrip(t *testing.T, path, train, test string, p fitParams, spec methodSpec) {
	t.Helper()
	ctx := context.Background()
	f, err := fitFile(ctx, train, p, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := loadModel(path)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Method != p.method || snap.Extra["kernel.coef"] == nil {
		t.Fatalf("saved model: method %q, extras %d", snap.Method, len(snap.Extra))
	}
	if lm := snap.Extra["kernel.landmarks"]; p.landmarks > 0 && (lm == nil || lm.RawMatrix().Cols != p.landmarks) {
		t.Fatalf("saved model of --landmarks %d: landmarks %v", p.landmarks, lm)
	}
	for _, name := range []string{"graph", "nnls", "pinv"} {
		proj, _ := model.ParseProjection(name)
		in, got, err := codeFile(ctx, snap, proj, test, sources.Opener{}, io.Discard)
		if _, ok := f.m.(*kernel.Flexible); ok && p.landmarks > 0 && name == "pinv" {
			if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "--projector pinv") || !strings.Contains(err.Error(), "projects by graph or NNLS") {
				t.Errorf("pinv with Nyström landmarks: %v; want a usage error naming the flag, graph and NNLS", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		sp, err := spaceOf(snap)
		if err != nil {
			t.Fatal(err)
		}
		x, err := modelData(sp, in)
		if err != nil {
			t.Fatal(err)
		}
		switch m := f.m.(type) {
		case *kernel.Flexible:
			m.Projection = kernelProjection(name)
		case *kernel.MultiK:
			m.Projection = kernelProjection(name)
		}
		var want mat.Dense
		if err := spec.project(f.m, &want, x); err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(got, &want) {
			t.Errorf("%s: loaded model codes differ from the fitted method's", name)
		}
	}
}

// TestGraphMetricSaved checks that --graph-metric cosine reaches the fit and
// the model file: the saved model's graph searches by the cosine, a loaded
// model codes new records as the fit's own projector does, and the codes
// differ from those of a Euclidean fit.
func TestGraphMetricSaved(t *testing.T) {
	dir := t.TempDir()
	train, test, _ := digitsFiles(t, dir, 4)
	p := fitParams{method: "gnmf", rank: 20, iters: 60, seed: 1, projector: "graph", graphMetric: "cosine"}
	f, _, x := fitInProcess(t, train, test, p)
	if f.snap.Graph.Metric != graph.Cosine || f.snap.Params["graph-metric"] != "cosine" {
		t.Fatalf("snapshot graph %+v, params %v: want the cosine", f.snap.Graph, f.snap.Params)
	}
	direct := &mat.Dense{}
	if err := f.m.(*model.GNMF).Projector(model.ProjectGraph).ProjectTo(direct, x); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "cos.model")
	if err := sinks.SaveModel(path, f.snap); err != nil {
		t.Fatal(err)
	}
	back, err := sources.LoadModel(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := codeData(context.Background(), back, model.ProjectGraph, x, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if back.Graph.Metric != graph.Cosine || !mat.Equal(got, direct) {
		t.Errorf("loaded model: graph %+v; its codes equal the fit's projector's: %v", back.Graph, mat.Equal(got, direct))
	}
	p.graphMetric = "euclidean"
	fe, _, _ := fitInProcess(t, train, test, p)
	if mat.Equal(fe.m.Codes(), f.m.Codes()) {
		t.Error("the cosine fit's codes equal the Euclidean fit's")
	}
}
