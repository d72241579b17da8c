package main

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/classify"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/model/kernel"
	"github.com/nmfstream/nmfstream/model/methods"
	"github.com/nmfstream/nmfstream/model/metrics"
)

// hyper holds the hyperparameters a sweep varies. A zero field means the
// method's documented default.
type hyper struct {
	Rank  int
	Alpha float64
	Beta  float64
	Iters int
	// Nystrom, if positive, makes the kernel methods use that many Nyström
	// landmarks instead of exact N×N kernels (MNIST-sized pools).
	Nystrom int
}

// method is a method of the registry (package model/methods) as the
// report runs it.
type method struct {
	name string
	info methods.Info
	// tune, if set, adjusts the built method to the report's settings.
	tune func(m model.Method, h hyper)
	// project codes new samples; nil means the shared graph-aware
	// projection on U (projectGraph).
	project func(m model.Method, train model.Data, dst *mat.Dense, test model.Data) error
}

// semi reports whether the method uses the labels of the training pool.
func (me method) semi() bool { return me.info.UsesLabels }

// build returns the method with c and h.
func (me method) build(c model.Common, h hyper) model.Method {
	m := me.info.New(methods.Options{Common: c, Alpha: h.Alpha, Beta: h.Beta, Nystrom: h.Nystrom})
	if me.tune != nil {
		me.tune(m, h)
	}
	return m
}

// lookup returns the method called name ("auto" included), as the report
// runs it: the registry's, coded as the command line's eval codes it (GNMF by its own
// graph projection, DPCA by its linear map, the kernel methods by theirs,
// the others by projectGraph), except for multik (see below).
func lookup(name string) (method, bool) {
	i, err := methods.Lookup(name)
	if err != nil {
		return method{}, false
	}
	me := method{name: name, info: i}
	switch {
	case name == "gnmf":
		me.project = func(m model.Method, _ model.Data, dst *mat.Dense, test model.Data) error {
			return m.(*model.GNMF).Projector(model.ProjectGraph).ProjectTo(dst, test)
		}
	case i.Linear:
		me.project = func(m model.Method, _ model.Data, dst *mat.Dense, test model.Data) error {
			return m.(*model.DPCA).TransformTo(dst, test)
		}
	case i.Kernel():
		me.project = func(m model.Method, _ model.Data, dst *mat.Dense, test model.Data) error {
			return m.(kernel.Projector).ProjectTo(dst, test)
		}
	}
	if name == "multik" {
		// The report runs AdapGrNMF_MultiK with the smooth (entropy) τ
		// step and α = 1 by default, the kernel package's digits settings
		// (model/kernel digits_long_test); the registry's default is the
		// command line's NMF_MultiK.
		me.tune = func(m model.Method, h hyper) {
			mk := m.(*kernel.MultiK)
			if h.Alpha == 0 {
				mk.Alpha = 1
			}
			mk.Step, mk.Cost = kernel.TauEntropy, kernel.CostReconstruction
		}
	}
	return me, true
}

// projectGraph is graph-aware out-of-sample projection (docs/DESIGN.md §4) for
// methods without their own: each test sample joins the 5-NN graph of the
// training samples (Euclidean, 0-1 weights), whose codes stay fixed, with
// the anchor weight GNMF was tuned with — the same rule as the command
// line's fit for these methods.
func projectGraph(m model.Method, train model.Data, dst *mat.Dense, test model.Data) error {
	q := &model.Query{Train: train, K: graph.DefaultK}
	p := &model.Projector{
		Method:     model.ProjectGraph,
		U:          m.Basis(),
		TrainCodes: m.Codes(),
		Alpha:      model.DefaultGNMFAlpha,
		Neighbors:  q.Weights,
	}
	return p.ProjectTo(dst, test)
}

// split is one evaluation split of docs/DESIGN.md §7, materialized.
type split struct {
	train, test *mat.Dense
	// trainY holds the pool's labels with −1 for the unlabeled samples;
	// fullTrainY holds every pool label (for transductive scoring).
	trainY, fullTrainY []int
	testY              []int
	labeled            []int // rows of train that carry a label
	idx                metrics.SplitIndices
}

// makeSplit draws the §7 split of (x, y): testFrac held out, l labels per
// class, seeded by seed.
func makeSplit(x *mat.Dense, y []int, testFrac float64, l int, seed uint64) (*split, error) {
	idx, err := metrics.Split(y, testFrac, l, rand.NewPCG(seed, seed))
	if err != nil {
		return nil, err
	}
	s := &split{idx: idx, train: metrics.TakeRows(x, idx.Train), test: metrics.TakeRows(x, idx.Test)}
	s.trainY, s.labeled = idx.PoolLabels(y)
	s.fullTrainY = metrics.Take(y, idx.Train)
	s.testY = metrics.Take(y, idx.Test)
	return s, nil
}

// fitResult is one fitted method on one split.
type fitResult struct {
	m       model.Method
	fitTime time.Duration
	// objective holds the objective after each iteration (Common.Callback).
	objective []float64
}

// fit fits method me with h on s. seed drives the initialization.
func fit(me method, h hyper, s *split, seed uint64) (*fitResult, error) {
	r := &fitResult{}
	c := model.Common{
		Rank:    h.Rank,
		MaxIter: h.Iters,
		Src:     rand.NewPCG(seed, seed^0x9e3779b97f4a7c15),
		Callback: func(st model.Stats) bool {
			r.objective = append(r.objective, st.Objective)
			return true
		},
	}
	r.m = me.build(c, h)
	var labels []int
	if me.semi() {
		labels = s.trainY
	}
	start := time.Now()
	err := r.m.Fit(model.DenseRows(s.train), labels)
	r.fitTime = time.Since(start)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", me.name, err)
	}
	return r, nil
}

// projectTest codes test (one sample per row) with the fitted method.
func projectTest(me method, r *fitResult, s *split, test *mat.Dense) (*mat.Dense, error) {
	var codes mat.Dense
	proj := me.project
	if proj == nil {
		proj = projectGraph
	}
	if err := proj(r.m, model.DenseRows(s.train), &codes, model.DenseRows(test)); err != nil {
		return nil, fmt.Errorf("%s: projection: %w", me.name, err)
	}
	return &codes, nil
}

// classify1NN scores codes of test samples by 1-NN against the codes of
// the labeled training samples (docs/DESIGN.md §7).
func classify1NN(trainCodes *mat.Dense, s *split, testCodes *mat.Dense, testY []int) (float64, error) {
	nn := classify.NearestNeighbor{}
	if err := nn.Fit(metrics.TakeRows(trainCodes, s.labeled), metrics.Take(s.trainY, s.labeled)); err != nil {
		return math.NaN(), err
	}
	return metrics.Accuracy(nn.PredictTo(nil, testCodes), testY), nil
}

// heldOut fits me on s and returns its held-out 1-NN accuracy.
func heldOut(me method, h hyper, s *split, seed uint64) (float64, *fitResult, error) {
	r, err := fit(me, h, s, seed)
	if err != nil {
		return math.NaN(), nil, err
	}
	codes, err := projectTest(me, r, s, s.test)
	if err != nil {
		return math.NaN(), r, err
	}
	acc, err := classify1NN(r.m.Codes(), s, codes, s.testY)
	return acc, r, err
}

// errSkipped marks a configuration the report does not run (and says why).
var errSkipped = errors.New("report: skipped")
