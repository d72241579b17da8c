package model

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/datasets"
	"github.com/nmfstream/nmfstream/model/graph"
)

// TestOnlineClassCols checks the columns of the codes that classify: all K
// before the first fit and for every method but N²S²L, whose are its q
// discriminative columns once the first fit has fixed q (Q here, and
// 3K/4 when the first fit has no label).
func TestOnlineClassCols(t *testing.T) {
	x, _ := datasets.Digits()
	first := DenseRows(mat.DenseCopyOf(x.Slice(0, 300, 0, 64)))
	for _, c := range []struct {
		method string
		q      int
		lo, hi int
	}{{"n2s2l", 7, 0, 7}, {"n2s2l", 0, 0, 15}, {"nge", 7, 0, 20}, {"gnmf", 0, 0, 20}, {"ssknmf", 0, 0, 20}} {
		o := &Online{Method: c.method, Rank: 20, Q: c.q, Graph: graph.KNN{K: 5}, Src: rand.NewPCG(1, 1)}
		if lo, hi := o.ClassCols(); lo != 0 || hi != 20 {
			t.Errorf("%s before the first fit: [%d, %d), want [0, 20)", c.method, lo, hi)
		}
		if _, err := o.PartialFit(first); err != nil {
			t.Fatalf("%s: %v", c.method, err)
		}
		if !o.Started() {
			t.Fatalf("%s: no first fit on 300 samples", c.method)
		}
		if lo, hi := o.ClassCols(); lo != c.lo || hi != c.hi {
			t.Errorf("%s, Q = %d: [%d, %d), want [%d, %d)", c.method, c.q, lo, hi, c.lo, c.hi)
		}
	}
}
