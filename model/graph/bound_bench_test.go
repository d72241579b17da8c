//go:build unix

package graph

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/pipeline"
)

// mnistShifted returns the 60,000 MNIST training images followed by the
// same images shifted one pixel to the right: 120,000 distinct rows, for
// windows larger than the training set.
func mnistShifted(b *testing.B) *mat.Dense {
	x := mnistImages(b, 60000)
	n, d := x.Dims()
	out := mat.NewDense(2*n, d, nil)
	for i := 0; i < n; i++ {
		src := x.RawRowView(i)
		out.SetRow(i, src)
		dst := out.RawRowView(n + i)
		for p := 0; p < d; p++ {
			if p%28 != 0 {
				dst[p] = src[p-1]
			}
		}
	}
	return out
}

// BenchmarkInsertWindow times the insertion of batches of 100 MNIST rows
// into a full window (K = 5, the stream's default; both cores through
// pipeline.Split), with the bounded search and with the full scan, on the
// same graph one after the other; the lists are the same either way. It
// reports records/s, and records per CPU second of the process (user +
// system), which other tenants of a busy machine move less. The window is
// filled by a batch build first, and one batch is inserted, neither timed
// (see the loop): the figures are the steady state of a long stream.
//
//	go test ./model/graph -run '^$' -bench InsertWindow -benchtime 20x
func BenchmarkInsertWindow(b *testing.B) {
	x := mnistShifted(b)
	n, d := x.Dims()
	for _, w := range []int{1000, 3000, 10000, 30000, 100000} {
		b.Run(fmt.Sprintf("window=%d", w), func(b *testing.B) {
			g, err := KNN{K: 5, Window: w}.Dense(x.Slice(0, w, 0, d))
			if err != nil {
				b.Fatal(err)
			}
			g.SetSplit(pipeline.Split(2))
			next := w
			for _, mode := range []string{"bounded", "full"} {
				b.Run(mode, func(b *testing.B) {
					defer func(v int) { boundMinRefs = v }(boundMinRefs)
					if mode == "full" {
						boundMinRefs = 1 << 30
					}
					const step = 100
					// One batch untimed: the window's first insertion makes
					// the float32 copy of its rows (store.enable32) and, for
					// the bounded search, its first basis; a stream pays
					// these once, and the basis again once per window of
					// insertions, which 20 timed batches would overweight.
					if _, err := g.InsertDense(x.Slice(next, next+step, 0, d)); err != nil {
						b.Fatal(err)
					}
					next += step
					b.ResetTimer()
					t0, c0 := time.Now(), cpuSeconds(b)
					for i := 0; i < b.N; i++ {
						if next+step > n {
							b.Fatalf("out of rows after %d batches", i)
						}
						if _, err := g.InsertDense(x.Slice(next, next+step, 0, d)); err != nil {
							b.Fatal(err)
						}
						next += step
					}
					b.ReportMetric(float64(b.N*step)/time.Since(t0).Seconds(), "records/s")
					b.ReportMetric(float64(b.N*step)/(cpuSeconds(b)-c0), "records/cpu-s")
				})
			}
		})
	}
}

// cpuSeconds returns the user and system CPU time of the process so far.
func cpuSeconds(b *testing.B) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
