package distributed

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
)

func connect(t testing.TB, url string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// clusteredSamples returns n dense samples of dimension d near c cluster
// centres, non-negative, with IDs from 1.
func clusteredSamples(n, d, c int, seed uint64) []Sample {
	rnd := rand.New(rand.NewPCG(seed, 9))
	centres := make([][]float64, c)
	for i := range centres {
		centres[i] = make([]float64, d)
		for j := range centres[i] {
			if rnd.Float64() < 0.3 {
				centres[i][j] = 1 + rnd.Float64()
			}
		}
	}
	out := make([]Sample, n)
	for i := range out {
		x := make([]float64, d)
		for j, m := range centres[i%c] {
			x[j] = m + 0.2*rnd.Float64()
		}
		out[i] = Sample{ID: uint64(i + 1), Label: i % c, Dim: d, Dense: x}
	}
	return out
}

// rowsOf returns the samples as an N×D matrix.
func rowsOf(samples []Sample) *mat.Dense {
	x := mat.NewDense(len(samples), samples[0].Dim, nil)
	for i := range samples {
		x.SetRow(i, samples[i].Dense)
	}
	return x
}

// runWorkers starts n workers of cfg and returns a function that stops
// them and returns their first error.
// publishAll publishes samples under cfg through a new Publisher on nc and
// returns the partitioner the publisher fitted on them.
func publishAll(t testing.TB, nc *nats.Conn, cfg Config, samples []Sample) *Partitioner {
	t.Helper()
	ctx := context.Background()
	pub, err := NewPublisher(ctx, nc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := pub.Publish(ctx, samples); err != nil {
		t.Fatal(err)
	}
	part, err := pub.Partitioner(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return part
}

func runWorkers(t testing.TB, url string, cfg Config, n int) ([]*Worker, []context.CancelFunc, func() error) {
	t.Helper()
	return runWorkersOf(t, url, n, func(nc *nats.Conn) (*Worker, error) { return NewWorker(context.Background(), nc, cfg) })
}

// runWorkersOf starts n workers made by newWorker, each on its own
// connection to url, and returns them, their cancels, and a stop that
// cancels all and returns the first error of their Runs.
func runWorkersOf(t testing.TB, url string, n int, newWorker func(*nats.Conn) (*Worker, error)) ([]*Worker, []context.CancelFunc, func() error) {
	t.Helper()
	ws := make([]*Worker, n)
	cancels := make([]context.CancelFunc, n)
	errs := make(chan error, n)
	for i := range n {
		w, err := newWorker(connect(t, url))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		ws[i], cancels[i] = w, cancel
		go func() { errs <- w.Run(ctx) }()
	}
	return ws, cancels, func() error {
		for _, c := range cancels {
			c()
		}
		var first error
		for range n {
			if err := <-errs; err != nil && first == nil {
				first = err
			}
		}
		return first
	}
}

// waitState polls the basis until ok accepts it, failing the test after
// limit.
func waitState(t testing.TB, nc *nats.Conn, cfg Config, limit time.Duration, ok func(State) bool) State {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		st, err := ReadState(context.Background(), nc, cfg)
		if err == nil && ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("state not reached within %v: last %+v, err %v", limit, st, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// singleMachine returns the basis that the single-machine multiplicative
// updates reach on x in rounds iterations from the distributed run's start:
// its initial basis (from the partitioner part and cfg.Seed) and codes of
// ones swept cfg.initSweeps() times, the reference of the oracle tests.
func singleMachine(t testing.TB, x *mat.Dense, part *Partitioner, cfg Config, rounds int) *mat.Dense {
	t.Helper()
	n, d := x.Dims()
	u := initialBasis(d, cfg.Rank, part.Mean, cfg.Seed)
	v := mat.NewDense(n, cfg.Rank, nil)
	for i := range v.RawMatrix().Data {
		v.RawMatrix().Data[i] = 1
	}
	if err := model.SweepRows(v, model.DenseRows(x), u, cfg.initSweeps()); err != nil {
		t.Fatal(err)
	}
	eng := model.Engine{Loss: model.NewFrobenius(model.DenseRows(x)), MaxIter: rounds, Tol: -1}
	if _, err := eng.Run(u, v); err != nil {
		t.Fatal(err)
	}
	return u
}
