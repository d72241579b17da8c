// Package pipeline runs typed streaming pipelines (source → stages → sinks)
// on top of github.com/reugn/go-streams, adding errors, rejections, context
// cancellation and bounded memory.
//
// A Pipeline is built from a Source (From, FromChan, FromScanner,
// FromSlice), a list of Stages (Map, Filter, FlatMap, Batch, optionally
// wrapped in Ordered) and Sinks (To), then run once with Run:
//
//	p := pipeline.New(pipeline.From("rows", rows),
//		[]pipeline.Stage{
//			pipeline.Ordered(pipeline.Map("decode", 4, decode)),
//			pipeline.Batch[Sample]("batch", 64, 50*time.Millisecond),
//			pipeline.Map("fit", 1, fit), // single writer: parallelism 1
//		},
//		pipeline.To("codes", codes))
//	p.Rejects = pipeline.To("rejects", rejects)
//	err := p.Run(ctx)
//
// This is the only package of nmfstream that starts goroutines or imports
// go-streams. The model stages it runs are synchronous functions.
//
// # Shapes
//
// Every stage is a typed function of an item: func(ctx, In) (Out, error)
// for Map, (bool, error) for Filter, ([]Out, error) for FlatMap; Batch turns
// items T into batches []T. A stage's parameters In and Out are erased in
// the Stage value, so a pipeline is a plain list.
//
// Types are checked once, at the boundary: when Run starts, before any
// goroutine or item, each step's declared output type is checked against
// the next step's input type, and a mismatch is returned as an error
// wrapping a *TypeError. When a step declares an interface output (such as
// any), the check that is left is made per item with a checked type
// assertion; a mismatch fails the run with a *TypeError, never a panic.
//
// Inside, items travel through go-streams operators (flow.Map for Map,
// Filter and FlatMap, flow.Batch for Batch) as chan any; an adapter in
// front of and behind each operator does the conversions, carries errors
// beside the items, and makes every channel operation context-aware.
//
// # Errors
//
// An error from a source, stage or sink is either fatal or a rejection.
//
// A rejection, made with Reject(err), is a data error about one item (a
// negative pixel, an undecodable image, an empty document). The item is
// counted in its step's Rejected counter, a Rejection (step name, item,
// reason) is written to the Rejects sink if there is one, and the stream
// continues. Reject may be wrapped further; errors.As finds it.
//
// Any other error is fatal: it cancels the run, and Run returns it wrapped
// once with where it happened, for example
// `pipeline: stage "decode": png: invalid format`. The first fatal error
// wins; errors that merely report the cancellation are dropped.
//
// # Cancellation
//
// A cancelled ctx is a hard stop: the source stops reading, items in flight
// are discarded (stage functions still running are waited for, and should
// return promptly once their ctx is done), sinks are closed but not flushed,
// and Run returns ctx.Err(). A fatal error stops the run the same way.
//
// io.EOF from the source is a soft stop: every item already read goes
// through every stage (a Batch stage emits its last, short batch), then
// every sink is flushed and closed, and Run returns nil.
//
// # Concurrency
//
// Run starts every goroutine of the pipeline and returns only after all of
// them have exited; New and the stage constructors start none. go-streams
// operators start goroutines when they are built, so Run builds them. The
// goroutines are owned by a sync.WaitGroup and stopped through
// context.WithCancelCause; go-streams' own goroutines are joined by
// receiving from their output until they close it, which is the last
// thing they do.
//
// Every blocking send made by the pipeline selects on the run's context,
// and every channel is closed by its only sender. go-streams' sends do not
// select on anything, so after a hard stop every consumer keeps receiving,
// and discarding, until its input is closed: no goroutine is left blocked.
//
// Memory is bounded: all channels are bounded (Pipeline.Buffer between
// steps, unbuffered inside go-streams), so a slow sink stops the source.
// With Buffer B, a stage of parallelism p holds at most B+p+3 items
// (B+2p+3 when Ordered), the source B+2 and the sinks B+1.
//
// A stage with parallelism 1 keeps the input order (go-streams Map
// semantics). With parallelism p > 1 it calls its function from p
// goroutines (the function must be safe for that) and may reorder items,
// unless wrapped in Ordered, which numbers items and restores their order
// with a reorder buffer of at most 2p items. Keep model fitting in a stage
// of parallelism 1: one goroutine owns the model.
//
// The source is read from one goroutine, and all sinks are written from
// one goroutine, in order, each item to each sink in turn. Writes to the
// Rejects sink are serialized by the pipeline, but come from any step's
// goroutine, so they are not ordered with the main sinks' writes.
//
// Pipeline.Stats and Pipeline.Rejected read atomic counters and may be
// called at any time, for instance by a Prometheus handler.
//
// # Ownership and reuse
//
// Items are passed on, not copied: a stage owns its input while its
// function runs and hands ownership of its output downstream. Do not keep
// and modify an item after returning it. Batch emits a new slice per
// batch; FlatMap's returned slice is not retained.
//
// A Pipeline owns its source and sinks for the duration of Run: it calls
// Flush (if the sink's Writer is a Flusher) once at a soft stop, and Close
// (if it is an io.Closer) exactly once when the sinks' goroutine ends, on
// every path (also when Run fails its type check and starts nothing); the
// Rejects sink is flushed and closed the same way, after all other
// goroutines have exited. Run does not close the source: its owner does,
// after Run returns. Run may be called once per Pipeline;
// Source, Stage and Sink values are descriptions and may be reused, but
// sources and writers usually hold state of their own.
//
// Panics in user functions are not recovered: a stage function, reader or
// writer that panics crashes the program, as in go-streams.
//
// # References
//
// go-streams v0.13.0, github.com/reugn/go-streams: the operators (flow.Map,
// flow.Batch) and interfaces (streams.Source, streams.Flow, streams.Sink)
// this package adapts.
//
// The error, cancellation and soft-stop rules follow benthos'
// public/service package and golang.org/x/sync/errgroup; "the sender closes
// the channel" and "every send selects on ctx.Done" are from the Go blog's
// "Go Concurrency Patterns: Pipelines and cancellation" (Ajmani, 2014).
package pipeline
