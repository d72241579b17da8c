package report

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

// method is one row of the report's method table.
type method struct {
	name string
	// semi marks methods that use the labels of the training pool.
	semi bool
	// alpha, beta say whether the method has an α or a β to sweep.
	alpha, beta bool
	build       func(c model.Common, h hyper) model.Method
	// project codes new samples; nil means the shared graph-aware
	// projection on U (projectGraph).
	project func(m model.Method, train model.Data, dst *mat.Dense, test model.Data) error
	// linear marks codes that are x·U (DPCA).
	linear bool
}

// methodTable lists every method of the report in display order.
var methodTable = []method{
	{name: "nmf", build: func(c model.Common, h hyper) model.Method {
		return &model.NMF{Common: c, NormalizeU: true}
	}},
	{name: "gnmf", alpha: true, build: func(c model.Common, h hyper) model.Method {
		return &model.GNMF{Common: c, Alpha: h.Alpha}
	}, project: func(m model.Method, _ model.Data, dst *mat.Dense, test model.Data) error {
		return m.(*model.GNMF).Projector(model.ProjectGraph).ProjectTo(dst, test)
	}},
	{name: "dgnmf", semi: true, alpha: true, build: func(c model.Common, h hyper) model.Method {
		return &model.DGNMF{Common: c, Alpha: h.Alpha}
	}},
	{name: "ssknmf", semi: true, alpha: true, beta: true, build: func(c model.Common, h hyper) model.Method {
		return &model.SSKNMF{Common: c, Alpha: h.Alpha, Beta: h.Beta}
	}},
	{name: "n2s2l", semi: true, alpha: true, beta: true, build: func(c model.Common, h hyper) model.Method {
		return &model.N2S2L{Common: c, Alpha: h.Alpha, Beta: h.Beta}
	}},
	{name: "nge", semi: true, alpha: true, beta: true, build: func(c model.Common, h hyper) model.Method {
		return &model.NGE{Common: c, Alpha: h.Alpha, Beta: h.Beta}
	}},
	{name: "dpca", semi: true, linear: true, build: func(c model.Common, h hyper) model.Method {
		return &model.DPCA{Rank: c.Rank}
	}, project: func(m model.Method, _ model.Data, dst *mat.Dense, test model.Data) error {
		return m.(*model.DPCA).TransformTo(dst, test)
	}},
	{name: "kernel", build: func(c model.Common, h hyper) model.Method {
		f := &kernel.Flexible{Common: c}
		if h.Nystrom > 0 {
			f.Nystrom = &kernel.Nystrom{Landmarks: h.Nystrom, Src: rand.NewPCG(1, 1)}
		}
		return f
	}, project: func(m model.Method, _ model.Data, dst *mat.Dense, test model.Data) error {
		return m.(*kernel.Flexible).ProjectTo(dst, test)
	}},
	// multik is AdapGrNMF_MultiK with the smooth (entropy) τ step, α = 1,
	// the kernel package's digits settings (model/kernel digits_long_test).
	{name: "multik", alpha: true, build: func(c model.Common, h hyper) model.Method {
		a := h.Alpha
		if a == 0 {
			a = 1
		}
		mk := &kernel.MultiK{Common: c, Alpha: a, Step: kernel.TauEntropy}
		if h.Nystrom > 0 {
			mk.Nystrom = &kernel.Nystrom{Landmarks: h.Nystrom, Src: rand.NewPCG(1, 1)}
		}
		return mk
	}, project: func(m model.Method, _ model.Data, dst *mat.Dense, test model.Data) error {
		return m.(*kernel.MultiK).ProjectTo(dst, test)
	}},
}

// lookup returns the method called name.
func lookup(name string) (method, bool) {
	for _, m := range methodTable {
		if m.name == name {
			return m, true
		}
	}
	return method{}, false
}

// projectGraph is graph-aware out-of-sample projection (DESIGN.md §4) for
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

// split is one evaluation split of DESIGN.md §7, materialized.
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
	s := &split{idx: idx, train: rowsOf(x, idx.Train), test: rowsOf(x, idx.Test)}
	s.trainY, s.labeled = idx.PoolLabels(y)
	s.fullTrainY = pick(y, idx.Train)
	s.testY = pick(y, idx.Test)
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
	if me.semi {
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
// the labeled training samples (DESIGN.md §7).
func classify1NN(trainCodes *mat.Dense, s *split, testCodes *mat.Dense, testY []int) (float64, error) {
	nn := classify.NearestNeighbor{}
	if err := nn.Fit(rowsOf(trainCodes, s.labeled), pick(s.trainY, s.labeled)); err != nil {
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

// rowsOf returns the given rows of m as a new matrix.
func rowsOf(m *mat.Dense, rows []int) *mat.Dense {
	if len(rows) == 0 {
		return &mat.Dense{}
	}
	_, c := m.Dims()
	out := mat.NewDense(len(rows), c, nil)
	for r, i := range rows {
		out.SetRow(r, m.RawRowView(i))
	}
	return out
}

// pick returns y at the given indices.
func pick(y []int, idx []int) []int {
	out := make([]int, len(idx))
	for r, i := range idx {
		out[r] = y[i]
	}
	return out
}

// errSkipped marks a configuration the report does not run (and says why).
var errSkipped = errors.New("report: skipped")
