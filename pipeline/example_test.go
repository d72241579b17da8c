package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nmfstream/nmfstream/pipeline"
)

// A source, three typed stages and a sink. Parallel stages are wrapped in
// Ordered so that the output order is the input order.
func Example() {
	words := strings.Fields("3 1 4 1 5 9 2 6")
	p := pipeline.New(
		pipeline.FromSlice("words", words),
		[]pipeline.Stage{
			pipeline.Ordered(pipeline.Map("parse", 4, func(_ context.Context, s string) (int, error) {
				return strconv.Atoi(s)
			})),
			pipeline.Filter("odd", 1, func(_ context.Context, x int) (bool, error) { return x%2 == 1, nil }),
			pipeline.Batch[int]("pairs", 2, 0),
		},
		pipeline.To("print", pipeline.WriteFunc[[]int](func(_ context.Context, b []int) error {
			fmt.Println(b)
			return nil
		})),
	)
	if err := p.Run(context.Background()); err != nil {
		fmt.Println(err)
	}
	// Output:
	// [3 1]
	// [1 5]
	// [9]
}

// A stage rejects bad records with Reject: they are counted and sent to the
// Rejects sink, and the stream goes on. A plain error would stop the run.
func ExampleReject() {
	p := pipeline.New(
		pipeline.FromSlice("pixels", []float64{0.5, -1, 2, -3}),
		[]pipeline.Stage{
			pipeline.Map("check", 1, func(_ context.Context, x float64) (float64, error) {
				if x < 0 {
					return 0, pipeline.Reject(fmt.Errorf("negative value %g", x))
				}
				return x, nil
			}),
		},
		pipeline.To("print", pipeline.WriteFunc[float64](func(_ context.Context, x float64) error {
			fmt.Println("ok", x)
			return nil
		})),
	)
	// Rejections are written from the pipeline's goroutines, one at a time.
	var rejected []pipeline.Rejection
	p.Rejects = pipeline.To("rejects", pipeline.WriteFunc[pipeline.Rejection](func(_ context.Context, r pipeline.Rejection) error {
		rejected = append(rejected, r)
		return nil
	}))
	if err := p.Run(context.Background()); err != nil {
		fmt.Println(err)
	}
	for _, r := range rejected {
		fmt.Printf("rejected by %s: %v (item %v)\n", r.Stage, r.Err, r.Item)
	}
	fmt.Println("rejected:", p.Rejected())
	// Output:
	// ok 0.5
	// ok 2
	// rejected by check: negative value -1 (item -1)
	// rejected by check: negative value -3 (item -3)
	// rejected: 2
}

// A plain error from a stage stops the run; Run wraps it with the stage's
// name, and errors.Is still sees the original.
func ExamplePipeline_Run_error() {
	errBad := errors.New("bad input")
	p := pipeline.New(
		pipeline.FromSlice("ints", []int{1, 2, 3}),
		[]pipeline.Stage{
			pipeline.Map("fail", 1, func(_ context.Context, x int) (int, error) {
				if x == 2 {
					return 0, errBad
				}
				return x, nil
			}),
		},
	)
	err := p.Run(context.Background())
	fmt.Println(err)
	fmt.Println(errors.Is(err, errBad))
	// Output:
	// pipeline: stage "fail": bad input
	// true
}

// Stats reports per-step counters; it may be called while Run runs, for
// example by a metrics endpoint.
func ExamplePipeline_Stats() {
	p := pipeline.New(
		pipeline.FromSlice("ints", []int{1, 2, 3, 4, 5}),
		[]pipeline.Stage{
			pipeline.FlatMap("twice", 1, func(_ context.Context, x int) ([]int, error) { return []int{x, x}, nil }),
			pipeline.Filter("small", 2, func(_ context.Context, x int) (bool, error) { return x < 3, nil }),
		},
		pipeline.To("discard", pipeline.WriteFunc[int](func(context.Context, int) error { return nil })),
	)
	if err := p.Run(context.Background()); err != nil {
		fmt.Println(err)
	}
	for _, s := range p.Stats() {
		fmt.Printf("%-7s in=%d out=%d rejected=%d\n", s.Name, s.In, s.Out, s.Rejected)
	}
	// Output:
	// ints    in=5 out=5 rejected=0
	// twice   in=5 out=10 rejected=0
	// small   in=10 out=4 rejected=0
	// discard in=4 out=4 rejected=0
}

// FromScanner reads a bufio.Scanner-style iterator.
func ExampleFromScanner() {
	sc := &wordScanner{words: strings.Fields("graph regularized nmf")}
	p := pipeline.New(pipeline.FromScanner("words", sc),
		[]pipeline.Stage{pipeline.Map("upper", 1, func(_ context.Context, s string) (string, error) {
			return strings.ToUpper(s), nil
		})},
		pipeline.To("print", pipeline.WriteFunc[string](func(_ context.Context, s string) error {
			fmt.Println(s)
			return nil
		})))
	if err := p.Run(context.Background()); err != nil {
		fmt.Println(err)
	}
	// Output:
	// GRAPH
	// REGULARIZED
	// NMF
}

// A service feeds a running pipeline from other goroutines through a
// channel; closing the channel ends the stream softly, so everything sent
// goes through.
func ExampleFromChan() {
	in := make(chan int)
	p := pipeline.New(
		pipeline.FromChan("requests", in),
		[]pipeline.Stage{pipeline.Map("square", 1, func(_ context.Context, x int) (int, error) { return x * x, nil })},
		pipeline.To("print", pipeline.WriteFunc[int](func(_ context.Context, x int) error {
			fmt.Println(x)
			return nil
		})),
	)
	go func() {
		defer close(in) // the sender closes the channel
		for x := range 3 {
			in <- x + 1
		}
	}()
	if err := p.Run(context.Background()); err != nil {
		fmt.Println(err)
	}
	// Output:
	// 1
	// 4
	// 9
}
