package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/model/metrics"
)

// runSpeed times the library on each whole image data set and sets the
// times beside scikit-learn's on the same data (peers.py, task "speed").
func (r *runner) runSpeed() error {
	if !r.g.speed {
		return nil
	}
	for _, d := range r.datasets() {
		id := peerID("speed", d.name, 0)
		x := model.DenseRows(d.x)
		rep := speedRepeat(r.g, d.name)
		common := func() model.Common {
			// A fixed budget (Tol < 0), as peers.py runs scikit-learn's mu
			// solver with tol = 0.
			return model.Common{Rank: r.g.rank, MaxIter: speedIters, Tol: -1, Src: rand.NewPCG(r.seed, r.seed)}
		}
		var nmf *model.NMF
		nmfSecs := bestOf(rep, func() error {
			nmf = &model.NMF{Common: common()}
			return nmf.Fit(x, nil)
		})
		r.addSpeed(d.name, fmt.Sprintf("NMF fit (%d multiplicative updates, K = %d)", speedIters, r.g.rank), "s", nmfSecs, r.peer(id, "nmf_fit_seconds"), false)
		var g *model.GNMF
		gnmfSecs := bestOf(rep, func() error {
			g = &model.GNMF{Common: common()}
			return g.Fit(x, nil)
		})
		r.addSpeed(d.name, "GNMF fit incl. 5-NN graph (vs scikit-learn NMF)", "s", gnmfSecs, r.peer(id, "nmf_fit_seconds"), false)
		knnSecs := bestOf(rep, func() error {
			_, err := graph.KNN{K: 5}.Dense(d.x)
			return err
		})
		r.addSpeed(d.name, "exact 5-NN graph", "s", knnSecs, r.peer(id, "knn_graph_seconds"), false)

		rows := projectRows(len(d.y))
		test := model.DenseRows(metrics.TakeRows(d.x, seq(rows)))
		if nmf != nil {
			p := &model.Projector{Method: model.ProjectNNLS, U: nmf.Basis()}
			secs := bestOf(rep, func() error {
				var dst mat.Dense
				return p.ProjectTo(&dst, test)
			})
			r.addSpeed(d.name, "projection, NNLS (vs NMF.transform)", "samples/s", float64(rows)/secs, r.peer(id, "project_rows_per_second"), true)
		}
		if g != nil {
			p := g.Projector(model.ProjectGraph)
			secs := bestOf(rep, func() error {
				var dst mat.Dense
				return p.ProjectTo(&dst, test)
			})
			r.addSpeed(d.name, "projection, graph-aware (vs NMF.transform)", "samples/s", float64(rows)/secs, r.peer(id, "project_rows_per_second"), true)
		}
		for _, s := range r.rep.Stream {
			if s.Dataset == d.name && s.Error == "" {
				r.addSpeed(d.name, "stream, model.Online batches of 50 (vs MiniBatchNMF.partial_fit)", "records/s", s.RecordsPerSecond, r.peer(id, "stream_records_per_second"), true)
			}
		}
		r.progress("speed %s done", d.name)
	}
	r.note("Speed: best of %d runs (1 on MNIST) on this machine (%d CPUs, load average %s at start); ratios compare with scikit-learn run in the same report. The stream row compares different algorithms: model.Online keeps an exact k-NN graph and refreshes codes, MiniBatchNMF does not.",
		max(r.g.speedRepeat, 1), r.rep.Meta.CPUs, r.rep.Meta.LoadAvg)
	return nil
}

// addSpeed records a timing; rate says that larger is better.
func (r *runner) addSpeed(dataset, what, unit string, goVal, sk float64, rate bool) {
	sp := math.NaN()
	if !math.IsNaN(sk) && goVal > 0 && sk > 0 {
		if rate {
			sp = goVal / sk
		} else {
			sp = sk / goVal
		}
	}
	r.rep.Speed = append(r.rep.Speed, SpeedRow{Dataset: dataset, What: what, Unit: unit, Go: Num(goVal), Sklearn: Num(sk), Speedup: Num(sp)})
}

// bestOf returns the shortest wall time of n runs of f in seconds, or NaN
// if f fails.
func bestOf(n int, f func() error) float64 {
	best := math.Inf(1)
	for range n {
		start := time.Now()
		if err := f(); err != nil {
			return math.NaN()
		}
		best = min(best, time.Since(start).Seconds())
	}
	return best
}

// seq returns 0, 1, …, n−1.
func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}
