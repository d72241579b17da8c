// Command batch-methods shows the methods that learn in batch only (the
// flexible-kernel and multiple-kernel methods, DPCA, SSNMF), which `stream`
// refuses, at work in a pipeline: each is fitted on two thirds of the 8×8
// digits, 10 of them labeled per class, and the held-out third then arrives as a stream of small batches through pipeline stages that
// code each batch on the fitted model and classify the codes by their
// nearest labeled training code. It prints each method's accuracy on the
// arrivals and the time its fit took.
//
//	go run ./examples/batch-methods [-methods kernel,multik,dpca,ssnmf] [-rank 40] [-batch 50] [-seed 1]
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"os/signal"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/datasets"
	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/classify"
	"github.com/nmfstream/nmfstream/model/kernel"
	"github.com/nmfstream/nmfstream/model/methods"
	"github.com/nmfstream/nmfstream/model/metrics"
	"github.com/nmfstream/nmfstream/pipeline"
)

func main() {
	names := flag.String("methods", "kernel,multik,dpca,ssnmf", "comma-separated methods (any of nmfstream's --method names but auto)")
	rank := flag.Int("rank", 40, "rank K")
	batch := flag.Int("batch", 50, "arriving samples per batch")
	seed := flag.Uint64("seed", 1, "seed of the shuffle and of the fits")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	for _, name := range strings.Split(*names, ",") {
		r, err := run(ctx, name, *rank, *batch, *seed)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%-7s 1-NN accuracy on the codes of %d arriving digits: %.4f (fit %.2f s)\n", name, r.n, r.accuracy, r.fit.Seconds())
	}
}

// result is one method's run.
type result struct {
	accuracy float64       // of the arriving samples' predictions
	n        int           // arriving samples
	fit      time.Duration // of the batch fit
}

// block is a batch of arriving samples (rows) and their true classes, for
// scoring only.
type block struct {
	x *mat.Dense
	y []int
}

// coded is a block's codes beside its classes.
type coded struct {
	v *mat.Dense
	y []int
}

// run fits the method name on the training part of the digits and streams
// the rest through the pipeline's code and classify stages.
func run(ctx context.Context, name string, rank, batch int, seed uint64) (result, error) {
	train, labels, ref, blocks := digits(seed, batch)
	m, err := methods.New(name, methods.Options{
		Common:     model.Common{Rank: rank, Src: rand.NewPCG(seed, seed)},
		Projection: model.ProjectGraph,
	})
	if err != nil {
		return result{}, err
	}
	start := time.Now()
	if err := m.Fit(model.DenseRows(train), labels); err != nil {
		return result{}, fmt.Errorf("%s: %w", name, err)
	}
	fit := time.Since(start)
	code := coderOf(m, model.DenseRows(train))
	// The labeled training samples' codes, the 1-NN's references.
	nn := classify.NearestNeighbor{K: 1}
	if err := nn.Fit(metrics.TakeRows(m.Codes(), ref), metrics.Take(labels, ref)); err != nil {
		return result{}, err
	}

	var r result
	var right int
	score := pipeline.WriteFunc[[]bool](func(_ context.Context, ok []bool) error {
		for _, b := range ok {
			r.n++
			if b {
				right++
			}
		}
		return nil
	})
	p := pipeline.New(pipeline.FromSlice("arrivals", blocks),
		[]pipeline.Stage{
			// One goroutine each: a model's projection is not safe for
			// concurrent use.
			pipeline.Map("code", 1, func(_ context.Context, b block) (coded, error) {
				var v mat.Dense
				if err := code(&v, model.DenseRows(b.x)); err != nil {
					return coded{}, err
				}
				return coded{v: &v, y: b.y}, nil
			}),
			pipeline.Map("classify", 1, func(_ context.Context, c coded) ([]bool, error) {
				pred := nn.PredictTo(nil, c.v)
				ok := make([]bool, len(pred))
				for i := range pred {
					ok[i] = pred[i] == c.y[i]
				}
				return ok, nil
			}),
		},
		pipeline.To("score", score))
	if err := p.Run(ctx); err != nil {
		return result{}, err
	}
	r.accuracy, r.fit = float64(right)/float64(r.n), fit
	return r, nil
}

// digits splits the 8×8 digits as eval's held-out protocol does
// (metrics.Split, seeded): two thirds of each class the training pool, 10
// of them labeled, the rest −1; the last third, in the dataset's order, the
// blocks of batch arriving samples. It also returns the labeled rows'
// positions in the pool.
func digits(seed uint64, batch int) (train *mat.Dense, labels, labeled []int, blocks []block) {
	x, y := datasets.Digits()
	s, err := metrics.Split(y, 1.0/3, 10, rand.NewPCG(seed, seed))
	if err != nil {
		panic(err) // the embedded digits have 174 or more samples a class
	}
	labels, labeled = s.PoolLabels(y)
	for lo := 0; lo < len(s.Test); lo += batch {
		idx := s.Test[lo:min(lo+batch, len(s.Test))]
		blocks = append(blocks, block{x: metrics.TakeRows(x, idx), y: metrics.Take(y, idx)})
	}
	return metrics.TakeRows(x, s.Train), labels, labeled, blocks
}

// coderOf returns the function that codes new samples with the method m
// fitted on train (one row of dst per sample): DPCA's linear map, and for
// the others the graph-aware projection (the command line's default,
// `project --projector graph`), each new sample's code drawn towards the
// codes of its nearest training samples: in their kernel space for the
// kernel methods (their Projection, set by methods.Options), on the basis
// for the factorizations (5 neighbours, GNMF's weight where the method
// keeps no graph of its own).
func coderOf(m model.Method, train model.Data) func(dst *mat.Dense, x model.Data) error {
	switch m := m.(type) {
	case kernel.Projector:
		return m.ProjectTo
	case *model.DPCA:
		return m.TransformTo
	case interface {
		Projector(model.Projection) *model.Projector
	}:
		return m.Projector(model.ProjectGraph).ProjectTo
	}
	q := &model.Query{Train: train, K: 5}
	p := &model.Projector{Method: model.ProjectGraph, U: m.Basis(), TrainCodes: m.Codes(),
		Alpha: model.DefaultGNMFAlpha, Neighbors: q.Weights}
	return p.ProjectTo
}
