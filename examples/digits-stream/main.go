// Command digits-stream replays the 8×8 digits as a stream in which only a
// few samples are ever labeled and their labels arrive late, and shows the
// prequential accuracy of online GNMF as the stream goes by.
//
//	go run ./examples/digits-stream [-labeled 0.1] [-delay 100] [-batch 10]
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"os/signal"
	"strconv"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/datasets"
	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/pipeline"
	"github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/stages"
)

func main() {
	labeled := flag.Float64("labeled", 0.1, "fraction of samples whose label ever arrives")
	delay := flag.Int("delay", 100, "samples between a sample and its label")
	batch := flag.Int("batch", 10, "records per learning step")
	rank := flag.Int("rank", 20, "rank K")
	seed := flag.Uint64("seed", 1, "seed of the shuffle and of the model")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	batches := digitsBatches(*labeled, *delay, *batch, *seed)

	learner := &stages.Learner{Model: &model.Online{Rank: *rank, Graph: graph.KNN{K: 5}, Src: rand.NewPCG(*seed, *seed)}}
	learn := func(ctx context.Context, b *record.Batch) (stages.Counters, error) {
		if _, err := learner.Learn(b); err != nil {
			return stages.Counters{}, err
		}
		return learner.Counters(), nil
	}
	next := int64(200)
	report := pipeline.WriteFunc[stages.Counters](func(ctx context.Context, c stages.Counters) error {
		if c.Samples >= next {
			fmt.Println(progressLine(c))
			next += 200
		}
		return nil
	})
	p := pipeline.New(pipeline.FromSlice("digits", batches),
		[]pipeline.Stage{pipeline.Map("learn", 1, learn)}, // one goroutine owns the model
		pipeline.To("report", report))
	if err := p.Run(ctx); err != nil {
		log.Fatal(err)
	}
	c := learner.Counters()
	lo, hi := c.Interval(1.96)
	fmt.Printf("\n%d samples, labels each %d samples late: prequential accuracy %.4f (95%% interval %.4f–%.4f) over the %d labeled samples after the first label (%d before it not scored)\n",
		c.Samples, *delay, c.Accuracy(), lo, hi, c.Labeled, c.Early)
}

// digitsBatches returns the stream in batches of batch records: the
// digits shuffled by seed, each a sample without a label, and for a
// fraction labeled of them (drawn by the same seed) its label as a
// label-only record (same id, no features) delay samples later.
func digitsBatches(labeled float64, delay, batch int, seed uint64) []*record.Batch {
	x, y := datasets.Digits()
	n, d := x.Dims()
	rnd := rand.New(rand.NewPCG(seed, seed))
	order := rnd.Perm(n)
	isLabeled := map[int]bool{}
	for _, t := range rnd.Perm(n)[:int(labeled*float64(n))] {
		isLabeled[t] = true
	}
	var batches []*record.Batch
	cur := &record.Batch{Form: record.FormDense}
	var rows [][]float64
	off := int64(0)
	flush := func() {
		if len(rows) > 0 {
			cur.Dense = mat.NewDense(len(rows), d, nil)
			for i, r := range rows {
				cur.Dense.SetRow(i, r)
			}
		}
		batches = append(batches, cur)
		cur, rows = &record.Batch{Form: record.FormDense}, nil
	}
	due := map[int][]int{}
	for t := 0; t < n+delay+1; t++ {
		if t < n {
			i := order[t]
			rows = append(rows, x.RawRowView(i))
			cur.IDs = append(cur.IDs, strconv.Itoa(i))
			cur.Labels = append(cur.Labels, "")
			cur.Labeled = append(cur.Labeled, false)
			cur.Offsets = append(cur.Offsets, off)
			off++
			if isLabeled[t] {
				due[t+delay] = append(due[t+delay], i)
			}
		}
		for _, i := range due[t] {
			cur.LateLabels = append(cur.LateLabels, record.LateLabel{Offset: off, ID: strconv.Itoa(i), Label: strconv.Itoa(y[i])})
			off++
		}
		if cur.Records() >= batch {
			flush()
		}
	}
	flush()
	return batches
}

// progressLine is one line of the stream's progress: samples seen, labeled
// samples scored so far and, once there is one, the prequential accuracy.
// Before the first late label arrives nothing has been scored, and the
// line says so rather than print the accuracy of no samples (NaN).
func progressLine(c stages.Counters) string {
	if c.Labeled == 0 {
		return fmt.Sprintf("%5d samples  %4d labels so far  no labeled sample scored yet (labels arrive late)", c.Samples, c.Labeled)
	}
	return fmt.Sprintf("%5d samples  %4d labels so far  prequential accuracy %.3f", c.Samples, c.Labeled, c.Accuracy())
}
