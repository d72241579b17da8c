package stages

import (
	"math/rand/v2"
	"strconv"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/datasets"
	"github.com/nmfstream/nmfstream/record"
)

// testRecord is one input record of a test stream: a sample (x non-nil) or a
// late label.
type testRecord struct {
	x       []float64
	id      string
	label   string
	labeled bool
}

// digitsStream returns the digits shuffled with seed 1, as a stream in
// which a fraction frac of the samples are labeled and each label arrives
// as a label-only record delay samples after its sample (or at the end).
// truth holds every sample's true label by id.
func digitsStream(frac float64, delay int) (recs []testRecord, truth map[string]string) {
	x, y := datasets.Digits()
	n, _ := x.Dims()
	rnd := rand.New(rand.NewPCG(1, 1))
	perm := rnd.Perm(n)
	labeled := map[int]bool{}
	for _, p := range rnd.Perm(n)[:int(frac*float64(n)+0.5)] {
		labeled[p] = true
	}
	truth = map[string]string{}
	due := map[int][]testRecord{}
	for t, i := range perm {
		id := strconv.Itoa(i)
		lab := strconv.Itoa(y[i])
		truth[id] = lab
		recs = append(recs, testRecord{x: x.RawRowView(i), id: id})
		if labeled[t] {
			due[t+delay] = append(due[t+delay], testRecord{id: id, label: lab, labeled: true})
		}
		recs = append(recs, due[t]...)
		delete(due, t)
	}
	for t := n; len(due) > 0; t++ {
		recs = append(recs, due[t]...)
		delete(due, t)
	}
	return recs, truth
}

// batches cuts recs into sources.Batches of size records each, numbering
// offsets from 0.
func batches(recs []testRecord, size int) []*record.Batch {
	var out []*record.Batch
	for lo := 0; lo < len(recs); lo += size {
		b := &record.Batch{Form: record.FormDense}
		var rows [][]float64
		for o := lo; o < min(lo+size, len(recs)); o++ {
			r := recs[o]
			if r.x == nil {
				b.LateLabels = append(b.LateLabels, record.LateLabel{Offset: int64(o), ID: r.id, Label: r.label})
				continue
			}
			rows = append(rows, r.x)
			b.IDs = append(b.IDs, r.id)
			b.Labels = append(b.Labels, r.label)
			b.Labeled = append(b.Labeled, r.labeled)
			b.Offsets = append(b.Offsets, int64(o))
		}
		if len(rows) > 0 {
			b.Dense = mat.NewDense(len(rows), len(rows[0]), nil)
			for i, r := range rows {
				b.Dense.SetRow(i, r)
			}
		}
		out = append(out, b)
	}
	return out
}
