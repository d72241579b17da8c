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

// TestFitKernelRecords checks that fit and eval refuse, before fitting, a
// kernel method on more training records than maxKernelRecords, naming
// the count, the bound and what to do, and write no model; the same
// records fit with GNMF.
func TestFitKernelRecords(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("a,b,c,label\n")
	for i := range maxKernelRecords + 1 {
		fmt.Fprintf(&b, "%d,%d,%d,%d\n", 1+i%7, 1+i%5, 1+i%3, i%2)
	}
	train := filepath.Join(dir, "big.csv")
	if err := os.WriteFile(train, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "m.model")
	want := fmt.Sprintf("%d training records, over the %d a kernel method takes here", maxKernelRecords+1, maxKernelRecords)
	for _, args := range [][]string{
		{"fit", "--train", train, "--save", out, "--method", "kernel", "--rank", "2"},
		{"eval", "--train", train, "--test", train, "--method", "multik", "--rank", "2"},
	} {
		code, _, stderr := runCmd(t, args...)
		if code == 0 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "or use another --method") {
			t.Errorf("%v: exit %d, %q; want a refusal saying %q and what to do", args, code, stderr, want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a model was written")
	}
	mustRun(t, "fit", "--train", train, "--save", out, "--method", "gnmf", "--rank", "2", "--iters", "3")
}
