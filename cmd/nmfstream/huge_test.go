package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nmfstream/nmfstream/datasets"
)

// hugeCSVs writes train.csv (the first 300 digits, every tenth labeled)
// and test.csv (the next 60, labeled, with two more records: "huge" of
// values 10⁵⁰, within record.MaxValue but far beyond the training data's,
// and "over" of values 10²⁰⁰, above it) to dir.
func hugeCSVs(t *testing.T, dir string) (train, test string) {
	t.Helper()
	x, y := datasets.Digits()
	write := func(name string, lo, hi int, extra ...string) string {
		var b strings.Builder
		b.WriteString("id,label")
		for j := range 64 {
			fmt.Fprintf(&b, ",f%d", j)
		}
		b.WriteString("\n")
		for i := lo; i < hi; i++ {
			lab := ""
			if name == "test.csv" || i%10 == 0 {
				lab = fmt.Sprint(y[i])
			}
			fmt.Fprintf(&b, "r%d,%s", i, lab)
			for _, v := range x.RawRowView(i) {
				fmt.Fprintf(&b, ",%g", v)
			}
			b.WriteString("\n")
		}
		for _, e := range extra {
			b.WriteString(e + "\n")
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	row := func(id, v string) string { return id + ",3" + strings.Repeat(","+v, 64) }
	return write("train.csv", 0, 300), write("test.csv", 300, 360, row("huge", "1e50"), row("over", "1e200"))
}

// TestHugeRecords checks that a record of huge values costs that record
// only: project and classify reject a record whose code is not a finite
// float32 (the type they write codes in), naming it, and code the others;
// the kernel methods give a record whose kernel values overflow NaN codes,
// rejected the same way, instead of failing the whole projection, with
// exact kernels or Nyström features; eval,
// which writes no codes, classifies the huge record and rejects the one
// above record.MaxValue. Before, one such record stopped each command.
func TestHugeRecords(t *testing.T) {
	dir := t.TempDir()
	train, test := hugeCSVs(t, dir)
	for _, fit := range [][]string{{"gnmf"}, {"multik"}, {"multik", "--landmarks", "50"}, {"kernel"}, {"kernel", "--landmarks", "50"}} {
		method := strings.Join(fit, "")
		// A Gaussian kernel (the kernel method's) of a sample of 10⁵⁰ is
		// 0, not an overflow: its features are 0 and its code finite, and
		// only the record above record.MaxValue is rejected.
		gaussian := fit[0] == "kernel"
		modelPath := filepath.Join(dir, method+".model")
		mustRun(t, append([]string{"fit", "--train", train, "--save", modelPath, "--rank", "10", "--iters", "30", "--method"}, fit...)...)
		for _, cmd := range []string{"project", "classify"} {
			out, rej := filepath.Join(dir, method+cmd+".arrow"), filepath.Join(dir, method+cmd+".rejects")
			mustRun(t, cmd, "--model", modelPath, "--in", test, "--out", out, "--rejects", rej)
			ids, codes, _, _ := readResults(t, out)
			if gaussian {
				if len(ids) != 61 || len(codes) != 61 || ids[60] != "huge" {
					t.Errorf("%s %s: %d ids (…%v), want the 60 digits and huge", method, cmd, len(ids), ids[max(len(ids)-1, 0):])
				}
			} else if len(ids) != 60 || len(codes) != 60 || ids[0] != "r300" || ids[59] != "r359" {
				t.Errorf("%s %s: %d ids (%v…), want the 60 digits", method, cmd, len(ids), ids[:min(len(ids), 2)])
			}
			b, err := os.ReadFile(rej)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			if !strings.Contains(lines[0], `"over"`) || !strings.Contains(lines[0], "above 1e+60") ||
				(gaussian && len(lines) != 1) || (!gaussian && (len(lines) != 2 || !strings.Contains(lines[1], `"huge"`) || !strings.Contains(lines[1], "too large for the model"))) {
				t.Errorf("%s %s: rejects %q, want over (above record.MaxValue), and huge (its code) but for a Gaussian kernel", method, cmd, lines)
			}
		}
	}
	out := mustRun(t, "eval", "--train", train, "--test", test, "--method", "gnmf", "--rank", "10", "--iters", "30", "--json")
	var sum struct {
		NTest    int     `json:"n_test"`
		Rejected int     `json:"rejected"`
		Accuracy float64 `json:"accuracy"`
	}
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("eval --json: %q: %v", out, err)
	}
	if sum.NTest != 61 || sum.Rejected != 1 || sum.Accuracy < 0.8 {
		t.Errorf("eval: %+v, want 61 test records scored (huge among them), 1 rejected, accuracy ≥ 0.8", sum)
	}
}

// TestHugeTrainingRecord adds to hugeCSVs's training file one unlabeled
// record of 10²⁰ in every feature: fit and eval reject it, naming
// --max-norm-ratio, and eval scores the test records as without it. With
// the bound off (--max-norm-ratio -1) it is fitted, and it costs eval most
// of its accuracy (0.987 → 0.12 on a digits split of scratch files): the
// kernel classifier's and the basis's scale are its alone.
func TestHugeTrainingRecord(t *testing.T) {
	dir := t.TempDir()
	train, test := hugeCSVs(t, dir)
	b, err := os.ReadFile(train)
	if err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.csv")
	if err := os.WriteFile(big, append(b, []byte("big,"+strings.Repeat(",1e20", 64)+"\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	type summary struct {
		NTrain   int     `json:"n_train"`
		Rejected int     `json:"rejected"`
		Accuracy float64 `json:"accuracy"`
		CodeNN1  float64 `json:"code_1nn"`
	}
	eval := func(path string, args ...string) summary {
		t.Helper()
		out := mustRun(t, append([]string{"eval", "--train", path, "--test", test, "--method", "gnmf", "--rank", "10", "--iters", "30", "--json"}, args...)...)
		var s summary
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatalf("eval --json: %q: %v", out, err)
		}
		return s
	}
	clean, guarded, open := eval(train), eval(big), eval(big, "--max-norm-ratio", "-1")
	t.Logf("eval accuracy / code 1-NN: clean %.4f / %.4f, the 1e20 record rejected %.4f / %.4f, fitted (--max-norm-ratio -1) %.4f / %.4f",
		clean.Accuracy, clean.CodeNN1, guarded.Accuracy, guarded.CodeNN1, open.Accuracy, open.CodeNN1)
	if guarded.Rejected != clean.Rejected+1 || guarded.NTrain != clean.NTrain || guarded.Accuracy != clean.Accuracy || guarded.CodeNN1 != clean.CodeNN1 {
		t.Errorf("eval with the huge training record: %+v, want %+v with one more rejected", guarded, clean)
	}
	if open.Rejected != clean.Rejected || open.Accuracy > clean.Accuracy-0.1 {
		t.Errorf("eval with the bound off: %+v, want the huge record fitted and accuracy well below %.3f", open, clean.Accuracy)
	}
	rej := filepath.Join(dir, "fit.rejects")
	mustRun(t, "fit", "--train", big, "--save", filepath.Join(dir, "big.model"), "--method", "gnmf", "--rank", "10", "--iters", "30", "--rejects", rej)
	if r, err := os.ReadFile(rej); err != nil || !strings.Contains(string(r), `"big"`) || !strings.Contains(string(r), "--max-norm-ratio") {
		t.Errorf("fit --rejects: %q (%v), want the huge record, naming --max-norm-ratio", r, err)
	}
}
