package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"text/tabwriter"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/datasets"
	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/classify"
	"github.com/nmfstream/nmfstream/model/metrics"
)

func init() {
	register(command{
		name:    "demo",
		summary: "fit GNMF on the embedded 8×8 digits and print held-out accuracy (no data needed)",
		run:     runDemo,
	})
}

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("demo", "demo [-seed s] [-rank K] [-labels L]", stderr)
	seed := fs.Uint64("seed", 1, "seed of the split and of the initialization")
	rank := fs.Int("rank", 40, "rank K of the factorization")
	labels := fs.Int("labels", 10, "labeled training samples per class")
	if err := fs.Parse(args); err != nil {
		return err
	}
	x, y := datasets.Digits()
	split, err := metrics.Split(y, 1.0/3, *labels, rand.NewPCG(*seed, *seed))
	if err != nil {
		return err
	}
	train := rowsOf(x, split.Train)
	test := rowsOf(x, split.Test)
	// The model sees the whole pool; only the labeled part keeps its labels.
	trainY := make([]int, len(split.Train))
	isLabeled := make(map[int]bool, len(split.Labeled))
	for _, i := range split.Labeled {
		isLabeled[i] = true
	}
	var labeledRows []int
	for r, i := range split.Train {
		trainY[r] = -1
		if isLabeled[i] {
			trainY[r] = y[i]
			labeledRows = append(labeledRows, r)
		}
	}
	testY := pick(y, split.Test)

	fmt.Fprintf(stdout, "nmfstream demo: 8×8 digits, %d training samples (%d labeled, %d per class), %d held out, seed %d\n\n",
		len(split.Train), len(split.Labeled), *labels, len(split.Test), *seed)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "method\tprojection\theld-out 1-NN accuracy\tfit time")

	// Peer: 1-NN on raw pixels with the same labeled samples.
	raw := classify.NearestNeighbor{}
	if err := raw.Fit(rowsOf(train, labeledRows), pick(trainY, labeledRows)); err != nil {
		return err
	}
	fmt.Fprintf(tw, "raw pixels\t-\t%.3f\t-\n", metrics.Accuracy(raw.PredictTo(nil, test), testY))

	g := &model.GNMF{Common: model.Common{Rank: *rank, Src: rand.NewPCG(*seed, *seed)}}
	start := time.Now()
	if err := g.Fit(model.DenseRows(train), trainY); err != nil {
		return err
	}
	fit := time.Since(start)
	var codes mat.Dense
	for _, p := range []model.Projection{model.ProjectGraph, model.ProjectNNLS, model.ProjectClampedPinv, model.ProjectPinv} {
		if err := ctx.Err(); err != nil {
			return err
		}
		codes.Reset()
		if err := g.Projector(p).ProjectTo(&codes, model.DenseRows(test)); err != nil {
			return err
		}
		nn := classify.NearestNeighbor{}
		if err := nn.Fit(rowsOf(g.Codes(), labeledRows), pick(trainY, labeledRows)); err != nil {
			return err
		}
		fmt.Fprintf(tw, "gnmf\t%s\t%.3f\t%.2fs\n", p, metrics.Accuracy(nn.PredictTo(nil, &codes), testY), fit.Seconds())
	}
	return tw.Flush()
}

// rowsOf returns the given rows of m as a new matrix.
func rowsOf(m *mat.Dense, rows []int) *mat.Dense {
	_, c := m.Dims()
	out := mat.NewDense(len(rows), c, nil)
	for r, i := range rows {
		out.SetRow(r, m.RawRowView(i))
	}
	return out
}

func pick(y []int, idx []int) []int {
	out := make([]int, len(idx))
	for r, i := range idx {
		out[r] = y[i]
	}
	return out
}
