package pipeline_test

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/nmfstream/nmfstream/pipeline"
)

// benchRun pushes b.N ints through three cheap Map stages of the given
// parallelism, so that it measures the pipeline's own per-item cost, and
// reports items/s.
func benchRun(b *testing.B, parallelism int, ordered bool) {
	b.ReportAllocs()
	i := 0
	src := pipeline.From("ints", pipeline.ReadFunc[int](func(context.Context) (int, error) {
		if i == b.N {
			return 0, io.EOF
		}
		i++
		return i, nil
	}))
	inc := func(_ context.Context, x int) (int, error) { return x + 1, nil }
	stages := []pipeline.Stage{
		pipeline.Map("a", parallelism, inc),
		pipeline.Map("b", parallelism, inc),
		pipeline.Map("c", parallelism, inc),
	}
	if ordered {
		for k := range stages {
			stages[k] = pipeline.Ordered(stages[k])
		}
	}
	var sum int
	p := pipeline.New(src, stages, pipeline.To("sum", pipeline.WriteFunc[int](func(_ context.Context, x int) error {
		sum += x
		return nil
	})))
	b.ResetTimer()
	start := time.Now()
	if err := p.Run(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "items/s")
	if want := b.N*(b.N+1)/2 + 3*b.N; sum != want {
		b.Fatalf("sum %d, want %d", sum, want)
	}
}

func BenchmarkRun3Stages(b *testing.B)          { benchRun(b, 1, false) }
func BenchmarkRun3StagesParallel2(b *testing.B) { benchRun(b, 2, false) }
func BenchmarkRun3StagesOrdered2(b *testing.B)  { benchRun(b, 2, true) }
