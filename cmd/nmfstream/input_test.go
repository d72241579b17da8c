package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// TestInputContainers runs eval, fit and classify on every container that
// sources.Open reads besides Arrow IPC files (TestInputForms covers those):
// CSV, IDX with a labels file, image folders, and an Arrow IPC stream saved
// under a .arrow name. Each holds the same three well-separated classes.
func TestInputContainers(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 1))
	const n, d, w = 90, 36, 6 // d = w×w for the images
	x, y := synthetic(n, d, rnd)
	// labeled reports whether training row i keeps its label: 30 of the 68
	// training rows, the rest unlabeled (IDX labels every row).
	labeled := func(i int) bool { return i < 30 || i%3 == 0 }
	var train, test []int
	for i := 0; i < n; i++ {
		if i%4 == 3 {
			test = append(test, i)
		} else {
			train = append(train, i)
		}
	}
	countLabeled := func(all bool) int {
		c := 0
		for _, i := range train {
			if all || labeled(i) {
				c++
			}
		}
		return c
	}

	writeCSV := func(path string, rows []int, isTest bool) {
		// The label first, read with --label-column 1; no header.
		var sb strings.Builder
		for _, i := range rows {
			if isTest || labeled(i) {
				fmt.Fprintf(&sb, "%d", y[i])
			}
			for _, v := range x[i] {
				fmt.Fprintf(&sb, ",%g", v)
			}
			sb.WriteByte('\n')
		}
		writeTestFile(t, path, []byte(sb.String()))
	}
	// IDX stores unsigned bytes, read back scaled by 1/255.
	writeIDX := func(images string, rows []int) {
		hdr := func(dims ...int) []byte {
			b := []byte{0, 0, 0x08, byte(len(dims))}
			for _, n := range dims {
				b = binary.BigEndian.AppendUint32(b, uint32(n))
			}
			return b
		}
		img, lab := hdr(len(rows), w, w), hdr(len(rows))
		for _, i := range rows {
			for _, v := range x[i] {
				img = append(img, byte(min(255, v*120)))
			}
			lab = append(lab, byte(y[i]))
		}
		writeTestFile(t, images, img)
		writeTestFile(t, strings.Replace(images, ".idx", ".labels.idx", 1), lab)
	}
	writeFolder := func(dir string, rows []int, isTest bool) {
		for _, i := range rows {
			p := filepath.Join(dir, fmt.Sprintf("u%03d.png", i))
			if isTest || labeled(i) {
				p = filepath.Join(dir, fmt.Sprint("class", y[i]), fmt.Sprintf("%03d.png", i))
			}
			writeTestFile(t, p, pngOf(t, x[i], w, w))
		}
	}
	writeStream := func(path string, rows []int, isTest bool) {
		schema := arrow.NewSchema([]arrow.Field{field("x", f64List), field("label", arrow.PrimitiveTypes.Int64)}, nil)
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		b := array.NewRecordBuilder(mem, schema)
		defer b.Release()
		for _, i := range rows {
			appendValue(t, b.Field(0), x[i])
			var l any
			if isTest || labeled(i) {
				l = int64(y[i])
			}
			appendValue(t, b.Field(1), l)
		}
		rec := b.NewRecord()
		defer rec.Release()
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		sw := ipc.NewWriter(f, ipc.WithSchema(schema), ipc.WithAllocator(mem))
		if err := sw.Write(rec); err != nil {
			t.Fatal(err)
		}
		if err := sw.Close(); err != nil {
			t.Fatal(err)
		}
	}

	for _, c := range []struct {
		name        string
		write       func(dir string) (train, test string)
		allLabeled  bool
		accuracyMin float64
		flags       []string // input flags of eval, fit and classify
	}{
		{"csv", func(dir string) (string, string) {
			a, b := filepath.Join(dir, "train.csv"), filepath.Join(dir, "test.csv")
			writeCSV(a, train, false)
			writeCSV(b, test, true)
			return a, b
		}, false, 0.9, []string{"--label-column", "1"}},
		{"idx", func(dir string) (string, string) {
			a, b := filepath.Join(dir, "train.idx"), filepath.Join(dir, "test.idx")
			writeIDX(a, train)
			writeIDX(b, test)
			return a, b
		}, true, 0.9, nil},
		{"image folders", func(dir string) (string, string) {
			a, b := filepath.Join(dir, "train"), filepath.Join(dir, "test")
			writeFolder(a, train, false)
			writeFolder(b, test, true)
			return a, b
		}, false, 0.9, nil},
		{"arrow stream named .arrow", func(dir string) (string, string) {
			a, b := filepath.Join(dir, "train.arrow"), filepath.Join(dir, "test.arrow")
			writeStream(a, train, false)
			writeStream(b, test, true)
			return a, b
		}, false, 0.9, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			trainPath, testPath := c.write(dir)
			args := append([]string{"--rank", "3", "--iters", "50", "--neighbors", "4"}, c.flags...)
			out := mustRun(t, append([]string{"eval", "--train", trainPath, "--test", testPath, "--json"}, args...)...)
			var got map[string]any
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("eval --json: %q: %v", out, err)
			}
			if got["n_train"] != float64(len(train)) || got["n_test"] != float64(len(test)) ||
				got["n_labeled"] != float64(countLabeled(c.allLabeled)) || got["rejected"] != 0.0 {
				t.Errorf("eval: %s; want n_train %d, n_test %d, n_labeled %d, rejected 0",
					out, len(train), len(test), countLabeled(c.allLabeled))
			}
			// Three well-separated classes: anything lower is a bug in the plumbing.
			if acc, _ := got["accuracy"].(float64); acc < c.accuracyMin {
				t.Errorf("accuracy %v, want ≥ %v: %s", got["accuracy"], c.accuracyMin, out)
			}
			m := filepath.Join(dir, "m.model")
			mustRun(t, append([]string{"fit", "--train", trainPath, "--save", m}, args...)...)
			pred := filepath.Join(dir, "pred.arrow")
			out = mustRun(t, append([]string{"classify", "--model", m, "--in", testPath, "--out", pred}, c.flags...)...)
			_, codes, preds, _ := readResults(t, pred)
			if len(codes) != len(test) || len(preds) != len(test) {
				t.Errorf("classify wrote %d codes, %d preds for %d records", len(codes), len(preds), len(test))
			}
			if !strings.Contains(out, "accuracy") {
				t.Errorf("classify found no labels in %s: %s", testPath, out)
			}
		})
	}
}

func writeTestFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
