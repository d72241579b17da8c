package stages_test

import (
	"context"
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/pipeline"
	"github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/stages"
)

// The stages of a stream composed with package pipeline, as the stream and
// serve commands do: decode (here a slice of batches; sources.Reader for a
// file) → featurize (NewFeatures, stateless, so run in parallel with the order
// kept) → learn (LearnFeatures, on the one goroutine that owns the
// Learner) → a sink. Two well separated clusters; labels for the first
// two samples arrive late, as label-only records of the second batch, so
// the third batch is predicted from them.
func Example_pipeline() {
	rnd := rand.New(rand.NewPCG(1, 1))
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
	first, second, third := batch(0), batch(20), batch(42)
	second.Dense.Set(5, 0, -1) // a negative value: sample "25" is rejected
	second.LateLabels = []record.LateLabel{{Offset: 40, ID: "0", Label: "left"}, {Offset: 41, ID: "1", Label: "right"}}

	l := &stages.Learner{Model: &model.Online{Rank: 2, Graph: graph.KNN{K: 3}, InitSize: 20, Src: rand.NewPCG(1, 1)}}
	p := pipeline.New(
		pipeline.FromSlice("batches", []*record.Batch{first, second, third}),
		[]pipeline.Stage{
			pipeline.Ordered(pipeline.Map("featurize", 2, func(_ context.Context, b *record.Batch) (*stages.Features, error) {
				return stages.NewFeatures(b), nil
			})),
			pipeline.Map("learn", 1, func(_ context.Context, f *stages.Features) (*stages.Step, error) {
				return l.LearnFeatures(f)
			}),
		},
		pipeline.To("print", pipeline.WriteFunc[*stages.Step](func(_ context.Context, st *stages.Step) error {
			for _, p := range st.Predictions[:2] {
				fmt.Printf("%s:%q ", p.ID, p.Label)
			}
			fmt.Println("rejected", len(st.Rejects))
			return nil
		})),
	)
	if err := p.Run(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	c := l.Counters()
	fmt.Println("records", c.Records, "samples", c.Samples, "late labels", c.LateLabels, "rejected", c.Rejected)
	// Output:
	// 0:"" 1:"" rejected 0
	// 20:"" 21:"" rejected 1
	// 42:"left" 43:"right" rejected 0
	// records 62 samples 59 late labels 2 rejected 1
}
