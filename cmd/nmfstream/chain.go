package main

import (
	"context"
	"runtime"
	"time"

	"github.com/nmfstream/nmfstream/distributed"
	"github.com/nmfstream/nmfstream/pipeline"
	"github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/stages"
)

// stream and serve run the same chain of stages, built by newChain
// (docs/DESIGN.md §3, and the package doc of stages for the stages inside
// learn):
//
//	decode → featurize → learn → sinks
//
// decode is a sources.Reader (stream) or the HTTP handlers (serve, through
// pipeline.FromChan and a split of each request into batches); featurize
// is stages.NewFeatures, in parallel with the order kept; learn is the one
// stage that owns the stages.Learner (featurize's in-order half, identify,
// graph insertion and the factorization step, prediction, labels and
// scoring), of parallelism 1, followed on the same goroutine by the
// driver's own work (checkpoints, posted labels, metrics); the sinks write
// predictions and rejects (stream) or answer the requests (serve).

// link is what the chain makes of one batch. An item of the chain (stream's
// *streamStep, serve's *part) carries one, through the chainLink method.
type link struct {
	batch *record.Batch    // set by the source; nil for an item without records
	feat  *stages.Features // set by featurize, which drops batch
	step  *stages.Step     // set by learn, which drops feat; nil without records
	took  time.Duration    // featurize and learn time of the batch
	// records is the number of input records of the batch (samples, late
	// labels and rejects), set by learn.
	records int
	// answer is the owners' answer of the batch when learn runs on them
	// (newRemoteChain), with their Learner's counters; nil in process.
	answer *distributed.ChainStep
	sent   bool // publish sent the batch to the owners
}

// linked is an item of the chain.
type linked interface{ chainLink() *link }

// featurizers is the parallelism of the featurize stage: NewFeatures checks
// and copies rows, far cheaper than a learning step, so a few goroutines
// keep it ahead of the learner.
func featurizers() int { return min(4, runtime.GOMAXPROCS(0)) }

// newChain returns the pipeline of the chain on items of type T:
//
//	src → pre… → featurize → learn → sink
//
// featurize runs stages.NewFeatures on each item's batch, featurizers() at
// once, in input order. learn runs l.LearnFeatures on the item's features,
// then after (if not nil) with the item, on the one goroutine that owns l:
// after may use l, and its error stops the pipeline. An error of l stops it
// too. The pipeline is built, not started: Run starts it.
func newChain[T linked](l *stages.Learner, src pipeline.Source, pre []pipeline.Stage, after func(T) error, sink pipeline.Sink) *pipeline.Pipeline {
	learn := func(_ context.Context, x T) (T, error) {
		if k := x.chainLink(); k.feat != nil {
			start := time.Now()
			k.records = k.feat.Records()
			st, err := l.LearnFeatures(k.feat)
			if err != nil {
				return x, err
			}
			k.step, k.feat = st, nil
			k.took += time.Since(start)
		}
		if after != nil {
			return x, after(x)
		}
		return x, nil
	}
	return pipeline.New(src, featurized[T](pre, hasherOf(l), pipeline.Map("learn", 1, learn)), sink)
}

// hasherOf returns the Hasher of l's TFIDF, or of the stream's default
// TFIDF when l has none yet (the one its first text batch makes): the
// featurize stage then tokenizes and hashes the documents, and l only
// counts and weighs them. It reads l, so it runs before the pipeline.
func hasherOf(l *stages.Learner) *stages.Hasher {
	if t := l.Featurize.TFIDF; t != nil {
		return t.Hasher()
	}
	return stages.DefaultStreamTFIDF().Hasher()
}

// featurize returns the featurize stage's function: stages.NewFeatures on
// each item's batch, then its documents' columns under h (nil: none),
// featurizers() items at once, in input order.
func featurize[T linked](h *stages.Hasher) func(context.Context, T) (T, error) {
	return func(_ context.Context, x T) (T, error) {
		if k := x.chainLink(); k.batch != nil {
			start := time.Now()
			k.feat = stages.NewFeatures(k.batch)
			k.feat.HashText(h)
			k.batch = nil
			k.took = time.Since(start)
		}
		return x, nil
	}
}

// featurized returns the stages pre… → featurize → learn…, featurize
// hashing documents with h (nil: the learner does).
func featurized[T linked](pre []pipeline.Stage, h *stages.Hasher, learn ...pipeline.Stage) []pipeline.Stage {
	st := append(pre[:len(pre):len(pre)], pipeline.Ordered(pipeline.Map("featurize", featurizers(), featurize[T](h))))
	return append(st, learn...)
}

// newRemoteChain is newChain with learn run on the owners of a
// distributed namespace (distributed/DESIGN.md, "The chain on the
// owners"): publish sends each item's features to d, one batch at a
// time in input order, and collect takes the owners' answers in the same
// order, sets the item's step (and answer) and calls after, if not nil.
// publish runs ahead of collect by the pipeline's buffer, so that several
// batches are in flight. An error of d, or of after, stops the pipeline.
func newRemoteChain[T linked](d *distributed.ChainDriver, src pipeline.Source, pre []pipeline.Stage, after func(T) error, sink pipeline.Sink) *pipeline.Pipeline {
	publish := func(ctx context.Context, x T) (T, error) {
		if k := x.chainLink(); k.feat != nil {
			k.records = k.feat.Records()
			if _, err := d.Send(ctx, k.feat); err != nil {
				return x, err
			}
			k.feat, k.sent = nil, true
		}
		return x, nil
	}
	collect := func(ctx context.Context, x T) (T, error) {
		if k := x.chainLink(); k.sent {
			start := time.Now()
			a, err := d.Receive(ctx)
			if err != nil {
				return x, err
			}
			k.answer, k.step = a, a.Step
			k.took += time.Since(start)
		}
		if after != nil {
			return x, after(x)
		}
		return x, nil
	}
	// The owners hash their documents (Features.Terms does not travel).
	return pipeline.New(src, featurized[T](pre, nil, pipeline.Map("publish", 1, publish), pipeline.Map("collect", 1, collect)), sink)
}
