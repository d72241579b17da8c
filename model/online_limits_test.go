package model

import (
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/nmfstream/nmfstream/model/sparse"
)

// TestOnlineBasisTooLarge: samples whose dimension would make U (D×K
// float64) exceed MaxBasisBytes are refused with ErrTooLarge before
// anything of that size is allocated.
func TestOnlineBasisTooLarge(t *testing.T) {
	for _, d := range []int{1e8, 1e12, math.MaxInt64} {
		x := sparse.Zeros(0, d)
		x.AppendRow([]int{3}, []float64{1})
		o := &Online{Rank: 40}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := o.PartialFit(SparseRows(x))
		runtime.ReadMemStats(&after)
		if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "MaxBasisBytes") {
			t.Errorf("D = %d: err = %v, want ErrTooLarge naming MaxBasisBytes", d, err)
		}
		// 1 MiB: the graph's bookkeeping at most, far from 8·D·K bytes.
		if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
			t.Errorf("D = %d: refusing allocated %d bytes", d, got)
		}
	}
	// The bound is a field: a small one refuses a small D, a negative one
	// disables the check.
	x := sparse.Zeros(0, 1000)
	x.AppendRow([]int{3}, []float64{1})
	if _, err := (&Online{Rank: 10, MaxBasisBytes: 8 * 1000 * 10 / 2}).PartialFit(SparseRows(x)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("MaxBasisBytes below 8·D·K: err = %v", err)
	}
	if _, err := (&Online{Rank: 10, MaxBasisBytes: -1}).PartialFit(SparseRows(x)); err != nil {
		t.Errorf("MaxBasisBytes -1: %v", err)
	}
}
