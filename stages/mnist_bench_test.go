package stages

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/testenv"
	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/sources"
)

// mnistBatches reads the first n MNIST training records in batches of bs
// (the IDX files of testenv.Data's mnist, as scripts/fetch-data.sh leaves
// them). It skips tb without them.
func mnistBatches(tb testing.TB, n, bs int) []*record.Batch {
	tb.Helper()
	op := sources.Opener{BatchSize: bs}
	src, err := op.Open(testenv.Data(tb, "mnist", "train-images-idx3-ubyte"))
	if err != nil {
		tb.Fatal(err)
	}
	defer src.Close()
	var out []*record.Batch
	for len(out)*bs < n && src.Next() {
		out = append(out, cloneBatch(src.Batch()))
	}
	return out
}

func cloneBatch(b *record.Batch) *record.Batch {
	c := *b
	c.IDs, c.Labels, c.Labeled, c.Offsets = slices.Clone(b.IDs), slices.Clone(b.Labels), slices.Clone(b.Labeled), slices.Clone(b.Offsets)
	c.LateLabels, c.Rejects = slices.Clone(b.LateLabels), slices.Clone(b.Rejects)
	if b.Dense != nil {
		c.Dense = mat.DenseCopyOf(b.Dense)
	}
	return &c
}

// BenchmarkLearnMNIST20000x50 streams MNIST records (784 features, all
// labeled) through a window of 20,000 at rank 50 and reports records per
// second over the measured part and the prequential accuracy; the runs
// long enough to fill the window also report the rate over the batches
// that arrive once it is full ("full-window-records/s": every record then
// evicts one). The sub-benchmarks name the records streamed, the batch
// size, Online.SearchDim and the predictor; those of more than 20,000
// records need NMFSTREAM_LONG=1. BENCHMARKS.md's "Speed" runs
//
//	NMFSTREAM_LONG=1 go test ./stages -run '^$' -bench 'LearnMNIST20000x50/n=24000' -benchtime 1x
func BenchmarkLearnMNIST20000x50(b *testing.B) {
	const window = 20000
	for _, c := range []struct {
		n, size, searchDim int
		walk               bool
	}{
		{3000, 100, 0, false},
		{3000, 100, 0, true},
		{3000, 100, 64, true},
		{24000, 200, 64, true},
	} {
		name := fmt.Sprintf("n=%d/batch=%d/search-dim=%d/predictor=nearest", c.n, c.size, c.searchDim)
		if c.walk {
			name = strings.TrimSuffix(name, "nearest") + "walk"
		}
		b.Run(name, func(b *testing.B) {
			if c.n > window && !testenv.Long() {
				b.Skipf("streams %d records: set %s=1", c.n, testenv.LongVar)
			}
			b.ReportAllocs()
			bs := mnistBatches(b, c.n, c.size)
			var steady time.Duration
			var steadyRecords int
			var acc float64
			for range b.N {
				l := &Learner{Model: &model.Online{Rank: 50, Graph: graph.KNN{K: 5, Window: window}, SearchDim: c.searchDim, Src: rand.NewPCG(1, 1)}}
				if c.walk {
					l.Predictor = PredictWalk
				}
				for i, x := range bs {
					start := time.Now()
					if _, err := l.Learn(x); err != nil {
						b.Fatal(err)
					}
					if i*c.size >= window {
						steady += time.Since(start)
						steadyRecords += x.Len()
					}
				}
				acc = l.Counters().Accuracy()
			}
			b.ReportMetric(acc, "prequential-accuracy")
			b.ReportMetric(float64(len(bs)*c.size*b.N)/b.Elapsed().Seconds(), "records/s")
			if steadyRecords > 0 {
				b.ReportMetric(float64(steadyRecords)/steady.Seconds(), "full-window-records/s")
			}
		})
	}
}
