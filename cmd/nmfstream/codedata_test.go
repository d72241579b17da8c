package main

import (
	"context"
	"errors"
	"io"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
)

// TestCodeDataBlocksInParallel checks that codeData, which codes blocks
// of codeBlock samples on several goroutines with a projector each, gives
// the codes one projector gives coding the same blocks in order, and that
// a cancelled context stops it with the context's error.
func TestCodeDataBlocksInParallel(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	dir := t.TempDir()
	train, test, _ := digitsFiles(t, dir, 4)
	f, _, one := fitInProcess(t, train, test, fitParams{method: "gnmf", rank: 12, iters: 30, seed: 1, projector: "graph"})
	// The test rows over and over: three blocks and a short fourth.
	r := model.Rows(one).(*mat.Dense)
	n1, d := r.Dims()
	n := 3*codeBlock + 100
	rows := mat.NewDense(n, d, nil)
	for i := range n {
		rows.SetRow(i, r.RawRowView(i%n1))
	}
	x := model.DenseRows(rows)
	got, err := codeData(context.Background(), f.snap, model.ProjectGraph, x, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	p, err := snapshotProjector(f.snap, model.ProjectGraph)
	if err != nil {
		t.Fatal(err)
	}
	_, k := got.Dims()
	for lo := 0; lo < n; lo += codeBlock {
		hi := min(lo+codeBlock, n)
		var want mat.Dense
		if err := p.ProjectTo(&want, rowBlock(x, lo, hi)); err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(got.Slice(lo, hi, 0, k), &want) {
			t.Fatalf("block [%d, %d): the codes differ from one projector's", lo, hi)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := codeData(ctx, f.snap, model.ProjectGraph, x, io.Discard); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: error %v, want context.Canceled", err)
	}
}
