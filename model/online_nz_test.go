package model

import (
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/gemm"
	"github.com/nmfstream/nmfstream/model/graph"
)

// TestOnlineNonzerosSame checks that the step's products through the rows'
// nonzeros (online_nz.go) leave U, V and the statistics exactly as the
// dense products over the gathered rows do: on the digits with their
// faintest pixels (below 4 of 16) set to zero, so that about two thirds of
// the entries are zero, with a window that turns over twice (slots written
// over, their nonzeros listed anew), serially and in parts, with the rows
// shared with the graph and with the model's own copy (SearchDim).
func TestOnlineNonzerosSame(t *testing.T) {
	if !gemm.Serves64(true) {
		t.Skip("no kernels here: the step's products do not run through the nonzeros")
	}
	train, _, _, _, _ := digitsSplit(t, 10)
	split := halves(nil)
	x := mat.DenseCopyOf(train.Slice(0, 600, 0, 64))
	x.Apply(func(_, _ int, v float64) float64 {
		if v < 4 {
			return 0
		}
		return v
	}, x)
	run := func(nz bool, minRows, searchDim int) *Online {
		defer func(v bool, m int) { stepNonzeros, stepMinRows = v, m }(stepNonzeros, stepMinRows)
		stepNonzeros, stepMinRows = nz, minRows
		o := &Online{Rank: 10, Graph: graph.KNN{K: 5, Window: 250}, Split: split, SearchDim: searchDim}
		feed(t, o, x, 25)
		return o
	}
	for _, c := range []struct {
		name               string
		minRows, searchDim int
	}{{"serial", 1 << 30, 0}, {"parts", 1, 0}, {"own rows", 1, 16}} {
		dense, nz := run(false, c.minRows, c.searchDim), run(true, c.minRows, c.searchDim)
		if c.searchDim == 0 && !nz.sharedRows() || c.searchDim > 0 && nz.sharedRows() {
			t.Fatalf("%s: shared rows %v", c.name, nz.sharedRows())
		}
		if !nz.nzServes(100) || nz.nz.entries != 600*64 {
			t.Fatalf("%s: the products do not run through the nonzeros (%d of %d entries counted nonzero)", c.name, nz.nz.nonzeros, nz.nz.entries)
		}
		for _, m := range []struct {
			name string
			a, b *mat.Dense
		}{{"U", dense.Basis(), nz.Basis()}, {"V", dense.Codes(), nz.Codes()}, {"A", &dense.a, &nz.a}, {"B", &dense.b, &nz.b}} {
			if !mat.Equal(m.a, m.b) {
				t.Errorf("%s: %s differs between the dense products and those through the nonzeros (max |diff| %g)", c.name, m.name, maxAbsDiff(m.a, m.b))
			}
		}
	}
}

// TestOnlineNonzerosDense checks the choice of the step's products: rows
// more than half of whose entries are nonzero (the digits with one added to
// every pixel: none zero) run the dense products, and a model restored
// from a state counts its window's rows as the original did.
func TestOnlineNonzerosDense(t *testing.T) {
	if !gemm.Serves64(true) {
		t.Skip("no kernels here: the step's products do not run through the nonzeros")
	}
	train, _, _, _, _ := digitsSplit(t, 10)
	x := mat.DenseCopyOf(train.Slice(0, 300, 0, 64))
	x.Apply(func(_, _ int, v float64) float64 { return v + 1 }, x)
	o := &Online{Rank: 10, Graph: graph.KNN{K: 5}}
	feed(t, o, x, 25)
	if o.nzServes(100) || o.nz.nonzeros != o.nz.entries || o.nz.entries != 300*64 {
		t.Fatalf("dense rows: through the nonzeros %v, %d of %d entries nonzero", o.nzServes(100), o.nz.nonzeros, o.nz.entries)
	}
	st, err := o.State(nil)
	if err != nil {
		t.Fatal(err)
	}
	re := &Online{Rank: 10, Graph: graph.KNN{K: 5}}
	if err := re.Restore(st); err != nil {
		t.Fatal(err)
	}
	if re.nz.entries != o.nz.entries || re.nz.nonzeros != o.nz.nonzeros || re.nzServes(100) {
		t.Fatalf("restored: %d of %d entries nonzero, want %d of %d", re.nz.nonzeros, re.nz.entries, o.nz.nonzeros, o.nz.entries)
	}
}
