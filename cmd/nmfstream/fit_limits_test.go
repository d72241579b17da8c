package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFitMaxBasis checks that fit refuses, before fitting, a basis larger
// than --max-basis: a 1024×1024-pixel IDX file (D = 2²⁰, the largest
// --max-dim allows) at rank 200 would need a 1.6 GiB basis, over the
// default 1 GiB; a small --max-basis refuses the digits, and 0 lifts the
// bound.
func TestFitMaxBasis(t *testing.T) {
	dir := t.TempDir()
	idx := filepath.Join(dir, "big.idx")
	const n, side = 3, 1024
	b := make([]byte, 16+n*side*side)
	binary.BigEndian.PutUint32(b[0:], 0x00000803)
	binary.BigEndian.PutUint32(b[4:], n)
	binary.BigEndian.PutUint32(b[8:], side)
	binary.BigEndian.PutUint32(b[12:], side)
	for i := range b[16:] {
		b[16+i] = byte(i % 7)
	}
	if err := os.WriteFile(idx, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "m.model")
	code, _, stderr := runCmd(t, "fit", "--train", idx, "--save", out, "--rank", "200", "--method", "gnmf")
	if code == 0 || !strings.Contains(stderr, "--max-basis") || !strings.Contains(stderr, "1048576 features") {
		t.Errorf("a 2²⁰×200 basis: exit %d, %q; want a refusal naming the features and --max-basis", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a model was written")
	}

	train, _, _ := digitsFiles(t, dir, 10)
	code, _, stderr = runCmd(t, "fit", "--train", train, "--save", out, "--rank", "10", "--max-basis", "5000")
	if code == 0 || !strings.Contains(stderr, "--max-basis") {
		t.Errorf("64×10 basis (5120 bytes) over --max-basis 5000: exit %d, %q", code, stderr)
	}
	mustRun(t, "fit", "--train", train, "--save", out, "--rank", "10", "--max-basis", "5120")
	mustRun(t, "fit", "--train", train, "--save", out, "--rank", "10", "--max-basis", "0")
}

// TestFitKernelRecords checks how fit and eval give the kernel methods
// their kernel matrices: exact up to maxKernelExact training records, and
// above it Nyström features on landmarks, said on stderr, reported by fit
// and eval --json and saved with the model (which classify then reads);
// --landmarks sets them, within
// the records and the bound, and only for the kernel methods; features
// over maxKernelFeatureBytes are refused before fitting, naming the sizes
// and what to do, and no model is written.
func TestFitKernelRecords(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, n int) string {
		var b strings.Builder
		b.WriteString("a,b,c,label\n")
		for i := range n {
			fmt.Fprintf(&b, "%d,%d,%d,%d\n", 1+i%7, 1+i%5, 1+i%3, i%2)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	small, big := write("small.csv", 50), write("big.csv", maxKernelExact+1)
	out := filepath.Join(dir, "m.model")
	said := fmt.Sprintf("%d training records, over the %d of exact kernel matrices: Nyström features on %d landmarks", maxKernelExact+1, maxKernelExact, defaultLandmarks)
	code, stdout, stderr := runCmd(t, "fit", "--train", big, "--save", out, "--method", "kernel", "--rank", "2", "--iters", "3", "--json")
	if code != 0 || !strings.Contains(stderr, said) || !strings.Contains(stdout, fmt.Sprintf(`"landmarks":%d`, defaultLandmarks)) {
		t.Fatalf("fit --method kernel on %d records: exit %d, %q, %q; want a fit saying %q and reporting its landmarks", maxKernelExact+1, code, stdout, stderr, said)
	}
	snap, err := loadModel(out)
	if err != nil {
		t.Fatal(err)
	}
	if lm := snap.Extra["kernel.landmarks"]; lm == nil || lm.RawMatrix().Cols != defaultLandmarks {
		t.Fatalf("saved model: landmarks %v, want %d", lm, defaultLandmarks)
	}
	if o := mustRun(t, "classify", "--model", out, "--in", small, "--out", filepath.Join(dir, "p.arrow")); !strings.Contains(o, "accuracy on the 50 labeled records") {
		t.Errorf("classify with the Nyström model: %q", o)
	}
	code, stdout, stderr = runCmd(t, "fit", "--train", small, "--save", out, "--method", "kernel", "--rank", "2", "--iters", "3", "--json")
	if code != 0 || strings.Contains(stderr, "Nyström") || strings.Contains(stdout, "landmarks") {
		t.Errorf("fit --method kernel on 50 records: exit %d, %q, %q; want exact kernels, silently", code, stdout, stderr)
	}
	if snap, err := loadModel(out); err != nil || snap.Extra["kernel.landmarks"] != nil || snap.Extra["kernel.kinvsqrt"] == nil {
		t.Errorf("50 records: %v; want the exact model's matrices and no landmarks", err)
	}
	if err := os.Remove(out); err != nil {
		t.Fatal(err)
	}
	if o := mustRun(t, "eval", "--train", small, "--test", small, "--method", "multik", "--rank", "2", "--iters", "3", "--landmarks", "10", "--json"); !strings.Contains(o, `"landmarks":10`) {
		t.Errorf("eval --landmarks 10 --json: %s; want the landmarks reported", o)
	}

	huge := write("huge.csv", maxKernelFeatureBytes/(8*maxKernelExact*10)+1) // ten kernels in multik's pool
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"eval", "--train", huge, "--test", small, "--method", "multik", "--landmarks", fmt.Sprint(maxKernelExact)},
			"take 1024 MiB of Nyström features, over 1024 MiB"},
		{[]string{"fit", "--train", small, "--save", out, "--method", "kernel", "--landmarks", "51"},
			"--landmarks 51: " + small + " has 50 training records"},
		{[]string{"fit", "--train", small, "--save", out, "--method", "kernel", "--landmarks", fmt.Sprint(maxKernelExact + 1)},
			fmt.Sprintf("--landmarks must be in [0, %d]", maxKernelExact)},
		{[]string{"fit", "--train", small, "--save", out, "--method", "gnmf", "--landmarks", "10"},
			"method gnmf has no kernel matrix to approximate"},
	} {
		code, _, stderr := runCmd(t, append(c.args, "--rank", "2")...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want a refusal saying %q", c.args, code, stderr, c.want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused fit wrote a model")
	}
}
