//go:build nats

package distributed

import (
	"context"
	"sync"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/graph"
)

// restoreOwner rebuilds partition p's owner state from the logs, as a new
// holder of the role does.
func restoreOwner(t *testing.T, url string, cfg Config, p int) *owner {
	t.Helper()
	w, err := NewWorker(context.Background(), connect(t, url), cfg)
	if err != nil {
		t.Fatal(err)
	}
	o := &owner{w: w, p: p}
	if err := o.restore(context.Background()); err != nil {
		t.Fatal(err)
	}
	return o
}

func codesOf(o *owner) *mat.Dense {
	v := mat.NewDense(len(o.codes), len(o.codes[0]), nil)
	for i, c := range o.codes {
		v.SetRow(i, c)
	}
	return v
}

// TestSynchronousGNMFEqualsSingleMachine is the oracle of the graph term:
// with one partition and synchronous rounds, an owner that learns GNMF
// (Alpha > 0) reaches the basis and codes of GNMF's single-machine
// iteration (the engine with a GraphTerm) on the same samples and k-NN
// graph, from the same start, to rounding.
func TestSynchronousGNMFEqualsSingleMachine(t *testing.T) {
	const n, d, k, rounds, alpha = 120, 20, 4, 15, 3.0
	samples := clusteredSamples(n, d, 6, 3)
	nc, url := startServer(t)
	cfg := Config{Partitions: 1, Rank: k, Rounds: rounds, Seed: 7, Alpha: alpha, GraphK: 4, PinnedTTL: time.Second}
	part := publishAll(t, nc, cfg, samples)
	_, _, stop := runWorkers(t, url, cfg, 2)
	st := waitState(t, nc, cfg, 30*time.Second, func(s State) bool { return s.Version == rounds })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if st.Samples != n || st.Deltas != rounds || st.Left != 0 {
		t.Errorf("counters: %d samples in %d deltas, %d left; want %d in %d, 0", st.Samples, st.Deltas, st.Left, n, rounds)
	}

	// The reference: the batch k-NN graph of the samples (the owner built
	// its own incrementally), codes of ones swept InitSweeps times with the
	// graph term on U₀, then GNMF's iterations.
	x := rowsOf(samples)
	g, err := graph.KNN{K: cfg.GraphK}.Dense(x)
	if err != nil {
		t.Fatal(err)
	}
	s := g.Weights(graph.Weighting{})
	u := initialBasis(d, k, part.Mean, cfg.Seed)
	v := mat.NewDense(n, k, nil)
	for i := range v.RawMatrix().Data {
		v.RawMatrix().Data[i] = 1
	}
	if err := model.SweepGraphRows(v, model.DenseRows(x), u, s, alpha, nil, cfg.initSweeps()); err != nil {
		t.Fatal(err)
	}
	eng := model.Engine{Loss: model.NewFrobenius(model.DenseRows(x)), Terms: []model.Term{&model.GraphTerm{Weight: alpha, S: s}}, MaxIter: rounds - 1, Tol: -1}
	if _, err := eng.Run(u, v); err != nil {
		t.Fatal(err)
	}
	// The owner's last round (rounds−1) swept its codes on U at version
	// rounds−1; version rounds is one more U step.
	o := restoreOwner(t, url, cfg, 0)
	check := func(what string, got, want *mat.Dense, tol float64) {
		t.Helper()
		var diff mat.Dense
		diff.Sub(got, want)
		rel := mat.Norm(&diff, 2) / mat.Norm(want, 2)
		if rel > tol {
			t.Errorf("%s differs from the single-machine GNMF by %.3g (relative)", what, rel)
		}
		t.Logf("%s: relative difference %.2g", what, rel)
	}
	// 1e-9: fifteen iterations whose sums run in another order (B and A
	// summed from deltas, rows swept through Rows).
	check("V", codesOf(o), v, 1e-9)
	eng.MaxIter = 1
	if _, err := eng.Run(u, v); err != nil {
		t.Fatal(err)
	}
	check("U", st.U, u, 1e-9)
	for i := range o.codes {
		for _, c := range o.codes[i] {
			if !(c >= 0) {
				t.Fatalf("code of row %d: %v", i, o.codes[i])
			}
		}
	}
	// The graph term does work: NMF from the same start ends elsewhere.
	nmf := singleMachine(t, x, part, cfg, rounds)
	var diff mat.Dense
	diff.Sub(nmf, st.U)
	if mat.Norm(&diff, 2) < 1e-3*mat.Norm(nmf, 2) {
		t.Errorf("GNMF's basis is NMF's to 1e-3: the graph term has no effect")
	}
}

// TestWindowStatisticsExact checks the window and the late labels: with
// Window W per partition, samples published in two batches, a graph term
// and partial refresh, every owner keeps its last W samples, the counters
// are exact (samples in, samples left), the coordinator's B and A equal
// XV and VᵀV of the samples the owners keep with their codes, and the
// owners keep the labels they were sent.
// It runs on dense samples (D = 16) and on sparse ones of the hashed
// TF-IDF's dimension (D = 2¹⁶, 8 nonzeros each), which stay sparse on the
// wire and in the owners' windows: there, the oracle XV is
// model.AddStats on the kept sparse rows, against the owners' deltas that
// carry only the rows of ΔB at the features their samples touch.
func TestWindowStatisticsExact(t *testing.T) {
	t.Run("dense", func(t *testing.T) { windowStatistics(t, clusteredSamples(160, 16, 4, 5)) })
	t.Run("sparse", func(t *testing.T) { windowStatistics(t, sparseSamples(160, 1<<16, 4, 8, 5)) })
}

func windowStatistics(t *testing.T, samples []Sample) {
	const k, parts, window = 3, 2, 30
	n := len(samples)
	for i := range samples {
		samples[i].Label = -1
	}
	nc, url := startServer(t)
	cfg := Config{Partitions: parts, Rank: k, Seed: 3, Alpha: 1, Window: window, Refresh: 5,
		PinnedTTL: time.Second, Idle: 20 * time.Millisecond}
	ctx := context.Background()
	pub, err := NewPublisher(ctx, nc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, _, stopWorkers := runWorkers(t, url, cfg, 2)
	stop := sync.OnceValue(stopWorkers)
	defer stop()
	// Labels for every third sample, each published after its sample; a
	// label of an unknown ID goes to every partition and is ignored.
	labeled := map[uint64]int{}
	for _, batch := range [][]Sample{samples[:n/2], samples[n/2:]} {
		if err := pub.Publish(ctx, batch); err != nil {
			t.Fatal(err)
		}
		for _, s := range batch {
			if s.ID%3 == 0 {
				labeled[s.ID] = int(s.ID % 4)
				if err := pub.Label(ctx, s.ID, int(s.ID%4)); err != nil {
					t.Fatal(err)
				}
			}
		}
		last := pub.LastSeq()
		waitState(t, nc, cfg, 30*time.Second, func(s State) bool { return s.Ingested >= last })
	}
	if err := pub.Label(ctx, 10_000, 1); err != nil {
		t.Fatal(err)
	}
	last := pub.LastSeq()
	st := waitState(t, nc, cfg, 30*time.Second, func(s State) bool { return s.Ingested >= last })
	part, _ := pub.Partitioner(ctx)

	if err := stop(); err != nil {
		t.Fatal(err)
	}

	// Each owner keeps the last W samples of its partition, labels set.
	var b, a mat.Dense
	var kept uint64
	for p := range parts {
		var mine []uint64
		for i := range samples {
			if part.Partition(&samples[i]) == p {
				mine = append(mine, samples[i].ID)
			}
		}
		mine = mine[max(0, len(mine)-window):]
		o := restoreOwner(t, url, cfg, p)
		if len(o.rows) != len(mine) {
			t.Fatalf("partition %d keeps %d samples, want %d", p, len(o.rows), len(mine))
		}
		xs := make([]*Sample, len(o.rows))
		for i := range o.rows {
			if (o.rows[i].Dense == nil) != (samples[0].Dense == nil) {
				t.Fatalf("partition %d: row %d is dense %v, the samples published %v", p, i, o.rows[i].Dense != nil, samples[0].Dense != nil)
			}
			if o.rows[i].ID != mine[i] {
				t.Fatalf("partition %d: row %d is sample %d, want %d", p, i, o.rows[i].ID, mine[i])
			}
			want, ok := labeled[o.rows[i].ID]
			if !ok {
				want = -1
			}
			if o.rows[i].Label != want {
				t.Errorf("sample %d has label %d, want %d", o.rows[i].ID, o.rows[i].Label, want)
			}
			xs[i] = &o.rows[i]
		}
		model.AddStats(&b, &a, blockData(xs), codesOf(o), 1)
		kept += uint64(len(o.rows))
	}
	if st.Samples != uint64(n) || st.Samples-st.Left != kept {
		t.Errorf("counters: %d samples in, %d left; the owners keep %d of %d", st.Samples, st.Left, kept, n)
	}
	w, err := NewWorker(ctx, connect(t, url), cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := &coord{w: w}
	if err := c.restore(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct {
		name      string
		got, want *mat.Dense
	}{{"B", &c.b, &b}, {"A", &c.a, &a}} {
		var diff mat.Dense
		diff.Sub(m.got, m.want)
		// 1e-9: sums of some hundred deltas, additions and subtractions.
		if rel := mat.Norm(&diff, 2) / mat.Norm(m.want, 2); rel > 1e-9 {
			t.Errorf("%s differs from the kept samples' statistics by %.3g (relative)", m.name, rel)
		} else {
			t.Logf("%s: relative difference %.2g", m.name, rel)
		}
	}
}
