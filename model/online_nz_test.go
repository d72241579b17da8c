package model

import (
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/gemm"
	"github.com/nmfstream/nmfstream/model/graph"
)

// TestOnlineNonzerosSame checks that the step's products through the rows'
// nonzeros (online_nz.go) leave U, V and the statistics exactly as the
// dense products over the gathered rows do: on the digits (about half
// their pixels zero), with a window that turns over twice (slots written
// over, their nonzeros listed anew), serially and in parts, with the rows
// shared with the graph and with the model's own copy (SearchDim).
func TestOnlineNonzerosSame(t *testing.T) {
	if !gemm.Serves64(true) {
		t.Skip("no kernels here: the step's products do not run through the nonzeros")
	}
	train, _, _, _, _ := digitsSplit(t, 10)
	split := halves(nil)
	x := train.Slice(0, 600, 0, 64).(*mat.Dense)
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
