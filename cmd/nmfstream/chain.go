package main

import (
	"context"
	"runtime"

	"github.com/nmfstream/nmfstream/pipeline"
	"github.com/nmfstream/nmfstream/sources"
	"github.com/nmfstream/nmfstream/stages"
)

// stream and serve run the same chain of stages (docs/DESIGN.md §3):
//
//	decode → featurize → learn → sinks
//
// decode is a sources.Reader (stream) or the HTTP handlers (serve, through
// pipeline.FromChan); featurize is stages.Prepare, in parallel with the
// order kept; learn is the one stage that owns the stages.Learner (graph
// insertion, partial fit, prediction, labels, checkpoints), of parallelism
// 1; the sinks write predictions and rejects (stream) or answer the
// requests (serve).

// featurizers is the parallelism of the featurize stage: Prepare checks and
// copies rows, far cheaper than a learning step, so a few goroutines keep
// it ahead of the learner.
func featurizers() int { return min(4, runtime.GOMAXPROCS(0)) }

// featurizeStage is the featurize stage of stream: stages.Prepare on each
// batch, in parallel, in input order.
func featurizeStage() pipeline.Stage {
	return pipeline.Ordered(pipeline.Map("featurize", featurizers(), func(_ context.Context, b *sources.Batch) (*stages.Featurized, error) {
		return stages.Prepare(b), nil
	}))
}
