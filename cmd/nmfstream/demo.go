package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/datasets"
	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/classify"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/model/kernel"
	"github.com/nmfstream/nmfstream/model/methods"
	"github.com/nmfstream/nmfstream/model/metrics"
	"github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/stages"
)

func init() {
	register(command{
		name:    "demo",
		summary: "fit and stream the embedded 8×8 digits and print held-out accuracy (no data needed)",
		run:     runDemo,
	})
}

// demoSplit is the evaluation split of docs/DESIGN.md §7 on the digits.
type demoSplit struct {
	train, test   *mat.Dense
	trainY, testY []int // trainY is −1 where the label is hidden
	labeled       []int // rows of train that keep their label
}

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("demo", `demo [--all] [--seed s] [--rank K] [--labels L]

Runs the main job on the embedded 8×8 digits (package datasets), with no
data and no flags needed: fits GNMF and the default semi-supervised method
with L labels per class, scores the held-out third (1-NN on the labeled
codes, and the joint classifier that classify uses), then replays all the
digits as a stream, 10% labeled, each label 100 records late, and scores
every prediction made on arrival. About 15 seconds.

Examples:
  nmfstream demo
  nmfstream demo --seed 2 --labels 5
  nmfstream demo --all`, stderr)
	seed := fs.Uint64("seed", 1, "seed of the split, the initialization and the stream order")
	rank := fs.Int("rank", 40, "rank K of the factorizations")
	labels := fs.Int("labels", 10, "labeled training samples per class")
	all := fs.Bool("all", false, "also fit the flexible-kernel method (N×N kernels: about a minute more)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *labels < 1 || *rank < 1 {
		return fmt.Errorf("%w: --labels %d --rank %d: the demo needs at least 1 labeled sample per class and a rank of at least 1", errUsage, *labels, *rank)
	}
	x, y := datasets.Digits()
	if _, d := x.Dims(); *rank > d {
		return fmt.Errorf("%w: --rank %d: the digits have %d features, pass --rank %d or less", errUsage, *rank, d, d)
	}
	sp, err := splitDigits(x, y, *labels, *seed)
	if err != nil {
		return fmt.Errorf("%w: --labels %d: %v", errUsage, *labels, err)
	}
	// The graphs' metric as fit and eval choose it (--graph-metric auto).
	metric := model.ChooseMetric(model.DenseRows(sp.train), sp.trainY, 0, model.DefaultBatchMetric)
	fmt.Fprintf(stdout, "nmfstream demo: 8×8 digits, %d training samples (%d labeled, %d per class), %d held out, seed %d; graphs by the %s distance\n\n",
		len(sp.trainY), len(sp.labeled), *labels, len(sp.testY), *seed, metric.String())
	if err := demoBatch(ctx, stdout, sp, *rank, *seed, *all, metric); err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	return demoStream(ctx, stdout, x, y, *seed)
}

// demoBatch fits GNMF and the default semi-supervised method on the
// training pool and scores the held-out samples: 1-NN on the labeled codes
// under each projection, and the joint classifier of classify (whose final
// classifier reads the pixels, the codes shaping its self-training), against
// the same classifier on the pixels alone.
func demoBatch(ctx context.Context, stdout io.Writer, sp demoSplit, rank int, seed uint64, all bool, metric graph.Metric) error {
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "method\t1-NN on labeled codes, by projection\tjoint classifier (as classify)\tfit time")
	raw := classify.NearestNeighbor{}
	if err := raw.Fit(metrics.TakeRows(sp.train, sp.labeled), metrics.Take(sp.trainY, sp.labeled)); err != nil {
		return err
	}
	// The peer of the joint classifier: its kernel self-training and
	// kernel classifier on the pixels alone, without codes.
	kr := classify.KernelRidge{Gamma: 2, Lambda: 0.01}
	kst := classify.KernelSelfTraining{Kernel: kr}
	if err := kst.Fit(sp.train, sp.trainY); err != nil {
		return err
	}
	if err := kr.Fit(sp.train, kst.Labels()); err != nil {
		return err
	}
	pixels := metrics.Accuracy(kr.PredictTo(nil, sp.test), sp.testY)
	fmt.Fprintf(tw, "raw pixels (peer)\t%.3f (the pixels)\t%.3f\t-\n", metrics.Accuracy(raw.PredictTo(nil, sp.test), sp.testY), pixels)
	fits, err := demoFits(rank, seed, all, metric)
	if err != nil {
		return err
	}
	best := math.Inf(-1)
	for _, m := range fits {
		if err := ctx.Err(); err != nil {
			return err
		}
		joint, err := demoFit(tw, m, sp, metric)
		if err != nil {
			return err
		}
		best = max(best, joint)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "the codes in the joint classifier against the pixels alone: %+.1f points on this split (on these\n"+
		"64-pixel digits +0.1 over 20 splits; on three MNIST splits +1.4, +2.5 and +1.9, on ten Fashion-MNIST\n"+
		"splits +0.5: BENCHMARKS.md, \"The batch graphs' metric\")\n", 100*(best-pixels))
	return nil
}

// demoMethod is a method of the demo's table and the projections its
// 1-NN column scores, the first one also the joint classifier's.
type demoMethod struct {
	name   string
	method model.Method
	projs  []model.Projection
}

// demoFits builds the demo's methods, their graphs searched by metric:
// GNMF, the default semi-supervised method and, with all, the
// flexible-kernel method (which searches its kernel space).
func demoFits(rank int, seed uint64, all bool, metric graph.Metric) ([]demoMethod, error) {
	src := func() rand.Source { return rand.NewPCG(seed, seed) }
	build := func(name string, src rand.Source) (model.Method, error) {
		return methods.New(name, methods.Options{Common: model.Common{Rank: rank, Src: src, Metric: metric}})
	}
	g, err := build("gnmf", src())
	if err != nil {
		return nil, err
	}
	auto, err := build(methods.Auto, nil) // model.Auto's fixed seed
	if err != nil {
		return nil, err
	}
	fits := []demoMethod{
		{"gnmf", g, []model.Projection{model.ProjectGraph, model.ProjectNNLS, model.ProjectClampedPinv, model.ProjectPinv}},
		{model.AutoMethod + " (auto)", auto, []model.Projection{model.ProjectGraph}},
	}
	if all {
		flex, err := build("kernel", src())
		if err != nil {
			return nil, err
		}
		fits = append(fits, demoMethod{"kernel (flexible, Gaussian)", flex, []model.Projection{model.ProjectGraph}})
	}
	return fits, nil
}

// demoFit fits m on the training pool, writes its row of the table to tw
// and returns its joint classifier's held-out accuracy.
func demoFit(tw io.Writer, m demoMethod, sp demoSplit, metric graph.Metric) (float64, error) {
	train, test := model.DenseRows(sp.train), model.DenseRows(sp.test)
	start := time.Now()
	if err := m.method.Fit(train, sp.trainY); err != nil {
		return 0, fmt.Errorf("%s: %w", m.name, err)
	}
	fit := time.Since(start)
	var jc classify.Joint
	if err := jc.Fit(denseRows(train), m.method.Codes(), sp.trainY); err != nil {
		return 0, err
	}
	var nn classify.NearestNeighbor
	if err := nn.Fit(metrics.TakeRows(m.method.Codes(), sp.labeled), metrics.Take(sp.trainY, sp.labeled)); err != nil {
		return 0, err
	}
	var nns []string
	var joint float64
	for i, p := range m.projs {
		var codes mat.Dense
		if err := projectWith(m.method, train, test, p, metric, &codes); err != nil {
			return 0, fmt.Errorf("%s: %w", m.name, err)
		}
		nns = append(nns, fmt.Sprintf("%s %.3f", p, metrics.Accuracy(nn.PredictTo(nil, &codes), sp.testY)))
		if i == 0 {
			joint = metrics.Accuracy(jc.PredictTo(nil, denseRows(test), &codes), sp.testY)
		}
	}
	fmt.Fprintf(tw, "%s\t%s\t%.3f\t%.1fs\n", m.name, strings.Join(nns, ", "), joint, fit.Seconds())
	return joint, nil
}

// projectWith codes test on m's basis into dst. GNMF builds its own
// projector and the kernel method projects in kernel space (graph-aware by
// default); other methods get graph-aware projection on the training
// samples, searched by metric, with GNMF's α, as the command line does.
func projectWith(m model.Method, train, test model.Data, p model.Projection, metric graph.Metric, dst *mat.Dense) error {
	switch m := m.(type) {
	case *model.GNMF:
		return m.Projector(p).ProjectTo(dst, test)
	case *kernel.Flexible:
		return m.ProjectTo(dst, test)
	}
	q := &model.Query{Train: train, K: graph.DefaultK, Metric: metric}
	pr := &model.Projector{Method: p, U: m.Basis(), TrainCodes: m.Codes(), Alpha: model.DefaultGNMFAlpha, Neighbors: q.Weights}
	return pr.ProjectTo(dst, test)
}

// demoStream replays the digits in a seeded random order through the
// online learner, 10% of them labeled, each label arriving 100 records
// after its sample, and reports the prequential accuracy.
func demoStream(ctx context.Context, stdout io.Writer, x *mat.Dense, y []int, seed uint64) error {
	const (
		labeledShare = 0.1
		delay        = 100
		batchSize    = 10
	)
	n, d := x.Dims()
	rnd := rand.New(rand.NewPCG(seed, seed))
	order := rnd.Perm(n)
	pos := make([]int, n) // position in the stream of each digit
	for t, i := range order {
		pos[i] = t
	}
	isLabeled := map[int]bool{}
	for _, t := range rnd.Perm(n)[:int(labeledShare*float64(n)+0.5)] {
		isLabeled[t] = true
	}
	l := &stages.Learner{Model: &model.Online{Rank: 40, Graph: graph.KNN{Window: 1000}, Src: rand.NewPCG(seed, seed)}}
	due := map[int][]record.LateLabel{}
	// The demo knows every digit's class, which the stream sees for 10%
	// only: it scores every digit after the first label as an outside
	// scorer would, a digit without a prediction counting as wrong.
	firstLabel := -1
	var right, scored [2]int // first and second half of the digits after the first label
	start := time.Now()
	var offset int64
	for lo := 0; lo < n || len(due) > 0; lo += batchSize {
		if err := ctx.Err(); err != nil {
			return err
		}
		b := &record.Batch{Form: record.FormDense}
		var rows []float64
		for t := lo; t < lo+batchSize; t++ {
			if t < n {
				i := order[t]
				rows = append(rows, x.RawRowView(i)...)
				b.IDs = append(b.IDs, strconv.Itoa(i))
				b.Labels = append(b.Labels, "")
				b.Labeled = append(b.Labeled, false)
				b.Offsets = append(b.Offsets, offset)
				offset++
				if isLabeled[t] {
					due[t+delay] = append(due[t+delay], record.LateLabel{ID: strconv.Itoa(i), Label: strconv.Itoa(y[i])})
				}
			}
			for _, ll := range due[t] {
				if firstLabel < 0 {
					firstLabel = t
				}
				ll.Offset = offset
				offset++
				b.LateLabels = append(b.LateLabels, ll)
			}
			delete(due, t)
		}
		if len(rows) > 0 {
			b.Dense = mat.NewDense(len(rows)/d, d, rows)
		}
		st, err := l.Learn(b)
		if err != nil {
			return err
		}
		scoreHalves(st.Predictions, pos, y, firstLabel, n, &right, &scored)
	}
	c := l.Counters()
	secs := time.Since(start).Seconds()
	fmt.Fprintf(stdout, "stream: %d digits in random order, %.0f%% labeled, each label %d records late, window 1000, rank 40\n",
		c.Samples, 100*labeledShare, delay)
	printDemoStream(stdout, c, right, scored, secs)
	emb := l.Embedding()
	fmt.Fprintf(stdout, "  the window's %d labeled codes (gnmf): 1-NN among them %.3f, NMI of their k-means clusters %.3f (stream --json: code_1nn, code_nmi)\n",
		emb.N, emb.NN1, emb.NMI)
	return nil
}

// scoreHalves scores the predictions of digits that arrived after the
// first label (at stream position firstLabel) against their true classes
// y, by half of those digits: pos is each digit's position in the stream.
func scoreHalves(preds []stages.Prediction, pos, y []int, firstLabel, n int, right, scored *[2]int) {
	for _, p := range preds {
		i, _ := strconv.Atoi(p.ID)
		if t := pos[i]; firstLabel >= 0 && t > firstLabel {
			h := 0
			if 2*(t-firstLabel) > n-firstLabel {
				h = 1
			}
			scored[h]++
			if p.Label == strconv.Itoa(y[i]) {
				right[h]++
			}
		}
	}
}

// printDemoStream prints the demo stream's scores.
func printDemoStream(stdout io.Writer, c stages.Counters, right, scored [2]int, secs float64) {
	lo, hi := c.Interval(1.96)
	fmt.Fprintf(stdout, "  prequential accuracy %.3f (95%% interval %.3f–%.3f) as the stream scores itself: %d of the %d labeled digits after the first label right on arrival\n",
		c.Accuracy(), lo, hi, c.Correct, c.Labeled)
	all := scored[0] + scored[1]
	fmt.Fprintf(stdout, "  every digit after the first label against its true class: %.3f (%d of %d; first half %.3f, second half %.3f)\n",
		float64(right[0]+right[1])/float64(all), right[0]+right[1], all,
		float64(right[0])/float64(scored[0]), float64(right[1])/float64(scored[1]))
	fmt.Fprintf(stdout, "  %d records in %.1fs (%.0f records/s)\n", c.Records, secs, float64(c.Records)/secs)
}

// splitDigits draws the split of docs/DESIGN.md §7.
func splitDigits(x *mat.Dense, y []int, perClass int, seed uint64) (demoSplit, error) {
	s, err := metrics.Split(y, 1.0/3, perClass, rand.NewPCG(seed, seed))
	if err != nil {
		return demoSplit{}, err
	}
	sp := demoSplit{train: metrics.TakeRows(x, s.Train), test: metrics.TakeRows(x, s.Test), testY: metrics.Take(y, s.Test)}
	sp.trainY, sp.labeled = s.PoolLabels(y)
	return sp, nil
}
