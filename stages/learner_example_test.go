package stages_test

import (
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/stages"
)

// A stream of two well separated clusters: the first batch starts the
// model, labels arrive late, and later samples are predicted on arrival.
func ExampleLearner() {
	rnd := rand.New(rand.NewPCG(1, 1))
	l := &stages.Learner{Model: &model.Online{Rank: 2, Graph: graph.KNN{K: 3}, InitSize: 20, Src: rand.NewPCG(1, 1)}}
	batch := func(off int) *record.Batch {
		b := &record.Batch{Form: record.FormDense, Dense: mat.NewDense(20, 4, nil)}
		for i := range 20 {
			c := i % 2 // cluster 0 lives on features 0-1, cluster 1 on 2-3
			b.Dense.Set(i, 2*c, 1+rnd.Float64())
			b.Dense.Set(i, 2*c+1, 1+rnd.Float64())
			b.IDs = append(b.IDs, fmt.Sprint(off+i))
			b.Labels = append(b.Labels, "")
			b.Labeled = append(b.Labeled, false)
			b.Offsets = append(b.Offsets, int64(off+i))
		}
		return b
	}
	l.Learn(batch(0))
	// Late labels for the first two samples (ids "0" and "1").
	l.Label("0", "left")
	l.Label("1", "right")
	st, _ := l.Learn(batch(20))
	for _, p := range st.Predictions[:4] {
		fmt.Println(p.ID, p.Label)
	}
	c := l.Counters()
	// Samples 0 and 1 arrived before any label was known: not scored.
	fmt.Println("samples", c.Samples, "late labels", c.LateLabels, "scored", c.Labeled, "early", c.Early)
	// Output:
	// 20 left
	// 21 right
	// 22 left
	// 23 right
	// samples 40 late labels 2 scored 0 early 2
}
