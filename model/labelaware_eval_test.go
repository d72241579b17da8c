package model

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/datasets"
	"github.com/nmfstream/nmfstream/model/classify"
	"github.com/nmfstream/nmfstream/model/metrics"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// digitsTask is one evaluation split of docs/DESIGN.md §7 on the digits: a
// training pool with L labels per class (−1 for the rest) and held-out
// samples.
type digitsTask struct {
	train      *mat.Dense // pool rows
	trainY     []int      // −1 for unlabeled pool rows
	trainTrue  []int      // the true classes of all pool rows (diagnostics)
	test       *mat.Dense
	testY      []int
	labeledPos []int // positions of labeled rows in train
}

func gatherRows(x *mat.Dense, idx []int) *mat.Dense {
	_, d := x.Dims()
	out := mat.NewDense(len(idx), d, nil)
	for r, i := range idx {
		out.SetRow(r, x.RawRowView(i))
	}
	return out
}

// newDigitsTask splits the digits: one third held out, l labels per class
// from the pool, with seed (s, s). If validation is true the held-out third
// is discarded and the pool itself is split again the same way, so that
// tuning never sees the test samples.
func newDigitsTask(l int, seed uint64, validation bool) digitsTask {
	inner := uint64(0)
	if validation {
		inner = seed + 100
	}
	return newDigitsSplit(l, seed, inner)
}

// newDigitsSplit is newDigitsTask with the seed of the validation split
// given: inner = 0 means the test split, inner > 0 splits the pool of the
// (seed, seed) split again with rand.NewPCG(inner, inner). Tuning averages
// over several inner seeds because one validation split of the digits has
// about 400 samples, so one error moves the accuracy by 0.25%.
func newDigitsSplit(l int, seed, inner uint64) digitsTask {
	x, y := datasets.Digits()
	return newSplitTask(x, y, l, seed, inner)
}

// newSplitTask is newDigitsSplit on any data set: x holds one sample per
// row, y its classes.
func newSplitTask(x *mat.Dense, y []int, l int, seed, inner uint64) digitsTask {
	validation := inner > 0
	sp, err := metrics.Split(y, 1.0/3, l, rand.NewPCG(seed, seed))
	if err != nil {
		panic(err)
	}
	if validation {
		pool := sp.Train
		py := make([]int, len(pool))
		for r, i := range pool {
			py[r] = y[i]
		}
		vs, err := metrics.Split(py, 1.0/3, l, rand.NewPCG(inner, inner))
		if err != nil {
			panic(err)
		}
		remap := func(idx []int) []int {
			out := make([]int, len(idx))
			for r, i := range idx {
				out[r] = pool[i]
			}
			return out
		}
		sp = metrics.SplitIndices{Train: remap(vs.Train), Test: remap(vs.Test), Labeled: remap(vs.Labeled)}
	}
	var t digitsTask
	t.train = gatherRows(x, sp.Train)
	t.test = gatherRows(x, sp.Test)
	t.trainY, t.labeledPos = sp.PoolLabels(y)
	for _, i := range sp.Train {
		t.trainTrue = append(t.trainTrue, y[i])
	}
	for _, i := range sp.Test {
		t.testY = append(t.testY, y[i])
	}
	return t
}

// knnRows returns, for each row of q, 0-1 weights to its k nearest rows of
// r (brute force; test helper).
func knnRows(q, r *mat.Dense, k int) *sparse.CSR {
	nq, _ := q.Dims()
	nr, _ := r.Dims()
	b := sparse.NewBuilder(nq, nr)
	idx := make([]int, nr)
	d := make([]float64, nr)
	for i := 0; i < nq; i++ {
		qi := q.RawRowView(i)
		for j := 0; j < nr; j++ {
			rj := r.RawRowView(j)
			var s float64
			for c, v := range qi {
				e := v - rj[c]
				s += e * e
			}
			d[j], idx[j] = s, j
		}
		slices.SortFunc(idx, func(a, b int) int { return cmp.Or(cmp.Compare(d[a], d[b]), cmp.Compare(a, b)) })
		for _, j := range idx[:k] {
			b.Add(i, j, 1)
		}
		for j := range idx {
			idx[j] = j
		}
	}
	return b.CSR()
}

// score fits m on the task's pool, codes the held-out samples with proj
// (graph-aware projection uses 5 neighbours among the pool and weight
// alpha), and returns the 1-NN accuracy against the labeled pool codes.
func (t digitsTask) score(m Method, proj Projection, alpha float64) (float64, error) {
	if err := m.Fit(DenseRows(t.train), t.trainY); err != nil {
		return 0, err
	}
	codes, err := t.codes(m, proj, alpha)
	if err != nil {
		return 0, err
	}
	return t.nnAccuracy(m.Codes(), codes), nil
}

// autoCodes fits the default method, Auto(40), on the training part and
// projects the held-out part graph-aware, anchored with the method's k-NN
// graph weight (SSKNMF's β = 10).
func (t digitsTask) autoCodes(tb testing.TB) (Method, *mat.Dense) {
	tb.Helper()
	m := Auto(40)
	if err := m.Fit(DenseRows(t.train), t.trainY); err != nil {
		tb.Fatal(err)
	}
	codes, err := t.codes(m, ProjectGraph, 10)
	if err != nil {
		tb.Fatal(err)
	}
	return m, codes
}

// codes projects the held-out samples on m's basis.
func (t digitsTask) codes(m Method, proj Projection, alpha float64) (*mat.Dense, error) {
	q := Query{Train: DenseRows(t.train)}
	p := Projector{Method: proj, U: m.Basis(), TrainCodes: m.Codes(), Alpha: alpha, Neighbors: q.Weights}
	var v mat.Dense
	if err := p.ProjectTo(&v, DenseRows(t.test)); err != nil {
		return nil, err
	}
	return &v, nil
}

// nnAccuracy classifies test codes by 1-NN against the labeled training codes.
func (t digitsTask) nnAccuracy(trainCodes, testCodes mat.Matrix) float64 {
	_, k := trainCodes.Dims()
	ref := mat.NewDense(len(t.labeledPos), k, nil)
	ys := make([]int, len(t.labeledPos))
	for r, i := range t.labeledPos {
		for c := 0; c < k; c++ {
			ref.Set(r, c, trainCodes.At(i, c))
		}
		ys[r] = t.trainY[i]
	}
	var nn classify.NearestNeighbor
	if err := nn.Fit(ref, ys); err != nil {
		panic(err)
	}
	return metrics.Accuracy(nn.PredictTo(nil, testCodes), t.testY)
}

// selfLabel extends the labels y (−1 = unlabeled) of the training codes by
// self-training in code space (classify.SelfTraining).
func selfLabel(codes *mat.Dense, y []int, rounds int, share float64) []int {
	st := classify.SelfTraining{Rounds: rounds, Share: share}
	if err := st.Fit(codes, y); err != nil {
		panic(err)
	}
	return st.Labels()
}

// selfLabelAccuracy scores test codes by 1-NN against the training codes
// labeled by selfLabel (5 rounds, share 0.8, chosen
// on validation splits of the digits pool, BENCHMARKS.md, "Tuning").
func (t digitsTask) selfLabelAccuracy(trainCodes *mat.Dense, testCodes mat.Matrix) float64 {
	y := selfLabel(trainCodes, t.trainY, 5, 0.8)
	var nn classify.NearestNeighbor
	if err := nn.Fit(trainCodes, y); err != nil {
		panic(err)
	}
	return metrics.Accuracy(nn.PredictTo(nil, testCodes), t.testY)
}

// jointAccuracy scores test codes by JointClassifier at its defaults
// (kernel self-training on pixels and codes, then a kernel classifier on
// pixels).
func (t digitsTask) jointAccuracy(trainCodes, testCodes *mat.Dense) float64 {
	return t.jointWith(JointClassifier{}, trainCodes, testCodes)
}

// voteAccuracy scores test codes by JointClassifier's previous algorithm
// (Vote: self-training in code space, then 5-NN on pixels and codes).
func (t digitsTask) voteAccuracy(trainCodes, testCodes *mat.Dense) float64 {
	return t.jointWith(JointClassifier{Vote: true}, trainCodes, testCodes)
}

func (t digitsTask) jointWith(j JointClassifier, trainCodes, testCodes *mat.Dense) float64 {
	if err := j.Fit(DenseRows(t.train), trainCodes, t.trainY); err != nil {
		panic(err)
	}
	return metrics.Accuracy(j.PredictTo(nil, DenseRows(t.test), testCodes), t.testY)
}
