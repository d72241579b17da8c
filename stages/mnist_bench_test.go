package stages

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/sources"
)

// mnistBatches reads the first n MNIST training records in batches of bs
// (IDX files in $NMFSTREAM_MNIST, as fetch-data.sh leaves them).
func mnistBatches(tb testing.TB, n, bs int) []*sources.Batch {
	dir := os.Getenv("NMFSTREAM_MNIST")
	if dir == "" {
		tb.Skip("set NMFSTREAM_MNIST to the folder of the MNIST IDX files")
	}
	op := sources.Opener{BatchSize: bs}
	src, err := op.Open(filepath.Join(dir, "train-images-idx3-ubyte"))
	if err != nil {
		tb.Fatal(err)
	}
	defer src.Close()
	var out []*sources.Batch
	for len(out)*bs < n && src.Next() {
		out = append(out, cloneBatch(src.Batch()))
	}
	return out
}

func cloneBatch(b *sources.Batch) *sources.Batch {
	c := *b
	c.IDs, c.Labels, c.Labeled, c.Offsets = slices.Clone(b.IDs), slices.Clone(b.Labels), slices.Clone(b.Labeled), slices.Clone(b.Offsets)
	c.LateLabels, c.Rejects = slices.Clone(b.LateLabels), slices.Clone(b.Rejects)
	if b.Dense != nil {
		c.Dense = mat.DenseCopyOf(b.Dense)
	}
	return &c
}

// BenchmarkLearnMNIST20000x50 streams MNIST records (784 features, all
// labeled) through a window of 20,000 at rank 50, in steps of 100, and
// reports records per second over the measured part, after the window has
// filled when the run is long enough (NMFSTREAM_MNIST_N records, default
// 3,000), and the rate over the batches that arrive once the window is
// full ("full-window-records/s": every record then evicts one). Set
// NMFSTREAM_SEARCH_DIM to set Online.SearchDim.
func BenchmarkLearnMNIST20000x50(b *testing.B) {
	b.ReportAllocs()
	n := 3000
	if v, err := strconv.Atoi(os.Getenv("NMFSTREAM_MNIST_N")); err == nil {
		n = v
	}
	sd, _ := strconv.Atoi(os.Getenv("NMFSTREAM_SEARCH_DIM"))
	revisit, _ := strconv.Atoi(os.Getenv("NMFSTREAM_REVISIT"))
	size := 100
	if v, err := strconv.Atoi(os.Getenv("NMFSTREAM_BATCH")); err == nil {
		size = v
	}
	bs := mnistBatches(b, n, size)
	const window = 20000
	var steady time.Duration
	var steadyRecords int
	var acc float64
	for range b.N {
		l := &Learner{Model: &model.Online{Rank: 50, Graph: graph.KNN{K: 5, Window: window}, SearchDim: sd, Revisit: model.Revisit(revisit), Src: rand.NewPCG(1, 1)}}
		if os.Getenv("NMFSTREAM_PREDICTOR") == "walk" {
			l.Predictor = PredictWalk
		}
		for i, x := range bs {
			start := time.Now()
			if _, err := l.Learn(x); err != nil {
				b.Fatal(err)
			}
			if i*size >= window {
				steady += time.Since(start)
				steadyRecords += x.Len()
			}
		}
		acc = l.Counters().Accuracy()
	}
	b.ReportMetric(acc, "prequential-accuracy")
	b.ReportMetric(float64(len(bs)*size*b.N)/b.Elapsed().Seconds(), "records/s")
	if steadyRecords > 0 {
		b.ReportMetric(float64(steadyRecords)/steady.Seconds(), "full-window-records/s")
	}
}
