package distributed

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"gonum.org/v1/gonum/mat"
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

// sample is one of the tests' dense samples: its ID (from 1), its row and
// its cluster.
type sample struct {
	ID    uint64
	Label int
	Dense []float64
}

// clusteredSamples returns n dense samples of dimension d near c cluster
// centres, non-negative, with IDs from 1, sample i in cluster i mod c.
func clusteredSamples(n, d, c int, seed uint64) []sample {
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
	out := make([]sample, n)
	for i := range out {
		x := make([]float64, d)
		for j, m := range centres[i%c] {
			x[j] = m + 0.2*rnd.Float64()
		}
		out[i] = sample{ID: uint64(i + 1), Label: i % c, Dense: x}
	}
	return out
}

// rowsOf returns the samples as an N×D matrix.
func rowsOf(samples []sample) *mat.Dense {
	x := mat.NewDense(len(samples), len(samples[0].Dense), nil)
	for i := range samples {
		x.SetRow(i, samples[i].Dense)
	}
	return x
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

// startDriver returns a context that ends with the test or after a minute,
// and a new driver of cfg's namespace with settings, closed with the test.
func startDriver(t testing.TB, nc *nats.Conn, cfg Config, settings []byte) (context.Context, *ChainDriver) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	d, err := NewChainDriver(ctx, nc, cfg, settings)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return ctx, d
}
