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

// TestCodeWorkers checks codeData's number of projectors: one per block up
// to GOMAXPROCS, fewer where a graph projector's scratch (a block of 256
// queries' products with every training sample) would exceed
// codeWorkerBytes together, and one for a kernel model.
func TestCodeWorkers(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	n := 10 * codeBlock
	small := &model.Snapshot{Method: "gnmf", TrainDense: mat.NewDense(1000, 2, nil)}
	// 8 bytes × DefaultQueryBlock × m above half the budget: one projector's worth.
	big := &model.Snapshot{Method: "gnmf", TrainDense: mat.NewDense(codeWorkerBytes/(8*model.DefaultQueryBlock)/2+1, 1, nil)}
	for _, c := range []struct {
		name string
		s    *model.Snapshot
		proj model.Projection
		n    int
		want int
	}{
		{"small training set", small, model.ProjectGraph, n, 4},
		{"two blocks", small, model.ProjectGraph, 2 * codeBlock, 2},
		{"a short block", small, model.ProjectGraph, 10, 1},
		{"large training set", big, model.ProjectGraph, n, 1},
		{"large training set, nnls", big, model.ProjectNNLS, n, 4},
		{"kernel model", &model.Snapshot{Method: "kernel", TrainDense: mat.NewDense(10, 2, nil)}, model.ProjectNNLS, n, 1},
	} {
		if got := codeWorkers(c.s, c.proj, c.n); got != c.want {
			t.Errorf("%s: %d projectors, want %d", c.name, got, c.want)
		}
	}
}
