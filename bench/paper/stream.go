package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/classify"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/model/metrics"
)

// Stream settings of the brief: a tenth of the records get a label, which
// arrives 100 records after the sample.
const (
	streamLabelFrac = 0.1
	streamLabelLag  = 100
	// recentRecords is the span of the stream's recent-accuracy curve.
	recentRecords = 500
)

// runObjective collects the objective after every iteration of the base
// fits (model.Common.Callback).
func (r *runner) runObjective() error {
	for _, d := range r.datasets() {
		for _, name := range r.methodsFor(d) {
			f := r.fits[d.name][name]
			if f == nil || len(f.res.objective) == 0 {
				continue
			}
			c := Curve{Dataset: d.name, Method: name, Objective: make([]Num, len(f.res.objective))}
			for i, v := range f.res.objective {
				c.Objective[i] = Num(v)
			}
			r.rep.Objective = append(r.rep.Objective, c)
		}
	}
	r.note("Objective curves: each method's own objective (loss plus its terms), divided by its value after the first iteration. MultiK's curve restarts at each alternation (graph and kernel weights τ are rebuilt there); DPCA is closed-form and has none.")
	return nil
}

// runStream replays each image data set as a stream into model.Online and
// scores prequentially: every record is predicted on arrival by 1-NN
// against the codes of the live samples whose label has arrived.
func (r *runner) runStream() error {
	if !r.g.stream {
		return nil
	}
	for _, d := range r.datasets() {
		n := len(d.y)
		window := 0
		if d.name == "mnist" {
			if r.g.streamMNIST <= 0 {
				continue
			}
			n = min(n, r.g.streamMNIST)
			window = 5000
		}
		res := r.stream(d, n, window)
		if res.Error != "" {
			r.progress("stream %s: %s", d.name, res.Error)
		} else {
			r.progress("stream %s: %d records, prequential accuracy %.4f, %.0f records/s", d.name, res.Records, float64(res.Accuracy), res.RecordsPerSecond)
		}
		r.rep.Stream = append(r.rep.Stream, res)
	}
	return nil
}

// stream runs one prequential replay of the first n records of d, in a
// seeded random order.
func (r *runner) stream(d *dataset, n, window int) StreamResult {
	batch := r.g.streamBatch
	res := StreamResult{Dataset: d.name, Records: n, Batch: batch, LabelFrac: streamLabelFrac, LabelLag: streamLabelLag, Window: window}
	rnd := rand.New(rand.NewPCG(r.seed, 21))
	order := rnd.Perm(len(d.y))[:n]
	gets := make([]bool, n)
	for i := range gets {
		gets[i] = rnd.Float64() < streamLabelFrac
	}
	o := &model.Online{Rank: r.g.rank, Graph: graph.KNN{Window: window}, Src: rand.NewPCG(r.seed, r.seed)}
	type pending struct{ at, id int }
	type known struct {
		label int
		gen   uint32
	}
	var queue []pending
	labeled := map[int]known{}
	arrivalLabel := map[int]int{} // id → truth, for the queued ones
	var correct, predicted int
	var hist [][2]int // (correct, predicted) after each batch
	var fitTime time.Duration
	start := time.Now()
	_, dim := d.x.Dims()
	for at := 0; at < n; at += batch {
		if err := r.ctx.Err(); err != nil {
			res.Error = err.Error()
			return res
		}
		end := min(at+batch, n)
		xb := mat.NewDense(end-at, dim, nil)
		for i := at; i < end; i++ {
			xb.SetRow(i-at, d.x.RawRowView(order[i]))
		}
		t0 := time.Now()
		ids, err := o.PartialFit(model.DenseRows(xb))
		fitTime += time.Since(t0)
		if err != nil {
			res.Error = fmt.Sprintf("partial fit at record %d: %v", at, err)
			break
		}
		g := o.KNN()
		// Labeled live samples whose label has arrived.
		var refIDs, refY []int
		for id, k := range labeled {
			if g != nil && g.Live(id) && g.Gen(id) == k.gen {
				refIDs = append(refIDs, id)
				refY = append(refY, k.label)
			} else {
				delete(labeled, id)
			}
		}
		if o.Started() && len(refIDs) > 0 {
			codes := o.Codes()
			nn := classify.NearestNeighbor{}
			if err := nn.Fit(metrics.TakeRows(codes, refIDs), refY); err == nil {
				pred := nn.PredictTo(nil, metrics.TakeRows(codes, ids))
				for i, p := range pred {
					predicted++
					if p == d.y[order[at+i]] {
						correct++
					}
				}
			}
		}
		for i, id := range ids {
			if gets[at+i] {
				queue = append(queue, pending{at: at + i, id: id})
				arrivalLabel[id] = d.y[order[at+i]]
			}
		}
		// Reveal the labels that are streamLabelLag records old.
		for len(queue) > 0 && queue[0].at <= end-1-streamLabelLag {
			q := queue[0]
			queue = queue[1:]
			if g != nil && g.Live(q.id) {
				labeled[q.id] = known{label: arrivalLabel[q.id], gen: g.Gen(q.id)}
			}
			delete(arrivalLabel, q.id)
		}
		res.At = append(res.At, end)
		res.Running = append(res.Running, Num(ratio(correct, predicted)))
		hist = append(hist, [2]int{correct, predicted})
		back := max(0, len(hist)-1-recentRecords/batch)
		res.Recent = append(res.Recent, Num(ratio(correct-hist[back][0], predicted-hist[back][1])))
	}
	res.Seconds = time.Since(start).Seconds()
	res.RecordsPerSecond = float64(n) / fitTime.Seconds()
	res.Predicted = predicted
	res.Accuracy = Num(ratio(correct, predicted))
	return res
}

func ratio(a, b int) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}
