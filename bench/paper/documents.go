package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/nmfstream/nmfstream/datasets"
	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/classify"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/model/kernel"
	"github.com/nmfstream/nmfstream/model/metrics"
	"github.com/nmfstream/nmfstream/model/sparse"
	"github.com/nmfstream/nmfstream/stages"
)

// docMethods are the representations of the document experiments.
var docMethods = []string{"tf-idf", "nmf", "gnmf", "dgnmf", "ssknmf", "n2s2l"}

// runDocuments classifies the Brown corpus by genre (5-fold stratified
// cross-validation, multinomial logistic regression on the codes, as the
// KNMF thesis does with a linear SVM) and clusters it (k-means on the
// codes against k-means on TF-IDF, clustering accuracy and NMI, as in the
// multiple-kernel paper).
func (r *runner) runDocuments() error {
	if !r.g.brown || !r.rep.Meta.Brown {
		return nil
	}
	docs, genres, err := datasets.Brown(filepath.Join(r.cfg.Data, "brown"))
	if err != nil {
		return err
	}
	var enc metrics.LabelEncoder
	enc.Fit(genres)
	y, err := enc.Encode(nil, genres)
	if err != nil {
		return err
	}
	// TF-IDF over the whole corpus: it uses no labels, so fitting it once
	// does not leak the held-out folds' genres.
	tf := &stages.TFIDF{StopWords: stages.EnglishStopWords(), MinDF: stages.DocFreq{Count: 3}, MaxDF: stages.DocFreq{Fraction: 0.5}, SublinearTF: true}
	x, err := tf.FitTransform(docs)
	if err != nil {
		return err
	}
	n, dim := x.Dims()
	classes := len(enc.Classes())
	res := &Documents{Docs: n, Classes: classes, Features: dim, Rank: r.g.docRank, Folds: r.g.docFolds}
	r.rep.Documents = res
	folds := stratifiedFolds(y, r.g.docFolds, r.seed)

	for _, name := range docMethods {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		row := DocRow{Method: name}
		start := time.Now()
		var accs []float64
		for f := range r.g.docFolds {
			var trainIdx, testIdx []int
			for i, fi := range folds {
				if fi == f {
					testIdx = append(testIdx, i)
				} else {
					trainIdx = append(trainIdx, i)
				}
			}
			acc, err := r.docFold(name, x, y, trainIdx, testIdx)
			if err != nil {
				row.Error = err.Error()
				break
			}
			accs = append(accs, acc)
		}
		row.Seconds = Num(time.Since(start).Seconds())
		if row.Error == "" {
			mean, std := stat.MeanStdDev(accs, nil)
			row.Accuracy, row.Std = Num(mean), Num(std)
			r.progress("brown %d-fold %-7s accuracy %.4f ± %.4f", r.g.docFolds, name, mean, std)
		} else {
			row.Accuracy, row.Std = Num(math.NaN()), Num(math.NaN())
			r.progress("brown %s: %s", name, row.Error)
		}
		res.Classify = append(res.Classify, row)
	}

	for _, name := range []string{"tf-idf", "nmf", "gnmf", "multik"} {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		row := DocRow{Method: name}
		start := time.Now()
		feat, err := r.docCodes(name, x, classes)
		if err == nil {
			km := classify.KMeans{K: classes, Src: rand.NewPCG(r.seed, 31)}
			if err = km.Fit(feat); err == nil {
				pred := km.LabelsTo(nil)
				row.Accuracy = Num(metrics.ClusteringAccuracy(pred, y))
				row.NMI = Num(metrics.NMI(pred, y))
			}
		}
		row.Seconds = Num(time.Since(start).Seconds())
		if err != nil {
			row.Error, row.Accuracy, row.NMI = err.Error(), Num(math.NaN()), Num(math.NaN())
			r.progress("brown clustering %s: %v", name, err)
		} else {
			r.progress("brown clustering %-7s accuracy %.4f NMI %.4f", name, float64(row.Accuracy), float64(row.NMI))
		}
		res.Cluster = append(res.Cluster, row)
	}
	r.note("Brown corpus: %d documents, %d genres, TF-IDF with English stop words, sublinear tf, terms in 3 to 50%% of the documents (%d terms). Classification: %d-fold stratified cross-validation, multinomial logistic regression (classify.Linear, C = 1) on standardized codes of rank %d; the factorizations are fitted on the training folds (with their labels for the semi-supervised methods) and the test fold is projected (graph-aware). Clustering: k-means (10 restarts) with one cluster per genre on all documents, codes of rank %d with unit-norm rows.",
		n, classes, dim, r.g.docFolds, r.g.docRank, classes)
	return nil
}

// docFold returns the test-fold accuracy of representation name.
func (r *runner) docFold(name string, x *sparse.CSR, y, trainIdx, testIdx []int) (float64, error) {
	xtr, xte := sparseRows(x, trainIdx), sparseRows(x, testIdx)
	ytr, yte := metrics.Take(y, trainIdx), metrics.Take(y, testIdx)
	var ftr, fte *mat.Dense
	if name == "tf-idf" {
		ftr, fte = xtr.ToDense(), xte.ToDense()
	} else {
		me, _ := lookup(name)
		c := model.Common{Rank: r.g.docRank, MaxIter: r.g.iters, Src: rand.NewPCG(r.seed, r.seed)}
		m := me.build(c, hyper{})
		if g, ok := m.(*model.GNMF); ok {
			g.Graph.Metric = graph.Cosine
		}
		var labels []int
		if me.semi() {
			labels = ytr
		}
		if err := m.Fit(model.SparseRows(xtr), labels); err != nil {
			return 0, fmt.Errorf("%s: %w", name, err)
		}
		var codes mat.Dense
		var err error
		if g, ok := m.(*model.GNMF); ok {
			err = g.Projector(model.ProjectGraph).ProjectTo(&codes, model.SparseRows(xte))
		} else {
			err = projectGraph(m, model.SparseRows(xtr), &codes, model.SparseRows(xte))
		}
		if err != nil {
			return 0, fmt.Errorf("%s: projection: %w", name, err)
		}
		ftr, fte = standardize(m.Codes(), &codes)
	}
	lin := classify.Linear{}
	if err := lin.Fit(ftr, ytr); err != nil {
		return 0, err
	}
	return metrics.Accuracy(lin.PredictTo(nil, fte), yte), nil
}

// docCodes returns the features that k-means clusters for representation
// name: TF-IDF rows, or unit-norm codes of rank classes.
func (r *runner) docCodes(name string, x *sparse.CSR, classes int) (*mat.Dense, error) {
	if name == "tf-idf" {
		return x.ToDense(), nil
	}
	c := model.Common{Rank: classes, MaxIter: r.g.iters, Src: rand.NewPCG(r.seed, r.seed)}
	var m model.Method
	switch name {
	case "nmf":
		m = &model.NMF{Common: c, NormalizeU: true}
	case "gnmf":
		m = &model.GNMF{Common: c, Graph: graph.KNN{Metric: graph.Cosine}}
	case "multik":
		m = &kernel.MultiK{Common: c, Alpha: 1, Step: kernel.TauEntropy}
	}
	if err := m.Fit(model.SparseRows(x), nil); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	v := mat.DenseCopyOf(m.Codes())
	n, _ := v.Dims()
	for i := range n {
		row := v.RawRowView(i)
		var s float64
		for _, e := range row {
			s += e * e
		}
		if s > 0 {
			s = 1 / math.Sqrt(s)
			for j := range row {
				row[j] *= s
			}
		}
	}
	return v, nil
}

// stratifiedFolds assigns each sample a fold in [0, k), every class
// spread evenly over the folds in a seeded random order.
func stratifiedFolds(y []int, k int, seed uint64) []int {
	byClass := map[int][]int{}
	for i, c := range y {
		byClass[c] = append(byClass[c], i)
	}
	keys := make([]int, 0, len(byClass))
	for c := range byClass {
		keys = append(keys, c)
	}
	sort.Ints(keys)
	rnd := rand.New(rand.NewPCG(seed, 41))
	folds := make([]int, len(y))
	next := 0
	for _, c := range keys {
		idx := byClass[c]
		rnd.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
		for _, i := range idx {
			folds[i] = next % k
			next++
		}
	}
	return folds
}

// sparseRows returns the given rows of x as a new CSR.
func sparseRows(x *sparse.CSR, rows []int) *sparse.CSR {
	_, c := x.Dims()
	out := sparse.Zeros(0, c)
	for _, i := range rows {
		ind, val := x.Row(i)
		out.AppendRow(append([]int(nil), ind...), append([]float64(nil), val...))
	}
	return out
}

// standardize centres and scales the columns of train (and test alike)
// by the training mean and standard deviation.
func standardize(train, test *mat.Dense) (*mat.Dense, *mat.Dense) {
	tr, te := mat.DenseCopyOf(train), mat.DenseCopyOf(test)
	n, k := tr.Dims()
	m, _ := te.Dims()
	col := make([]float64, n)
	for j := range k {
		mat.Col(col, j, tr)
		mean, std := stat.MeanStdDev(col, nil)
		if std == 0 || math.IsNaN(std) {
			std = 1
		}
		for i := range n {
			tr.Set(i, j, (tr.At(i, j)-mean)/std)
		}
		for i := range m {
			te.Set(i, j, (te.At(i, j)-mean)/std)
		}
	}
	return tr, te
}
