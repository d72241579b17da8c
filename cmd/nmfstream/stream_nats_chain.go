package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"runtime"
	"time"

	"github.com/nats-io/nats.go"
	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/distributed"
	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/pipeline"
	"github.com/nmfstream/nmfstream/sources"
	"github.com/nmfstream/nmfstream/stages"
)

const streamNATSSynopsis = `stream --nats URL --in F [--out P.jsonl] [--workers n] [--namespace ns] [stream's flags]

Runs stream's chain of stages with its learning step on the owners of a
distributed namespace (package distributed, NATS JetStream): this process
decodes the records of F and featurizes them (stages.NewFeatures), publishes
each batch (--batch records) to the namespace, and writes the owners'
predictions (id, pred, score; null codes in an Arrow output, the owners
keeping the codes) to --out in input order; the owner of the
partition runs the stages.Learner that stream would run, built from the
same flags (--method, --rank, --window, --predictor, …), on the same
batches in the same order. With one partition the predictions are stream's,
byte for byte. The namespace holds the learner's settings of its first
driver; a driver with others is refused. With P > 1 partitions a dense
sample goes to the partition of its nearest anchor (fixed from the first
50·P samples, read ahead), and each labeled dense sample is also learned by
the other owners; the batches up to the first --warm unlabeled ones (a
common start) are learned once, by partition 0's owner, and the other
owners start from its learner's state; sparse rows and text go by id
(--json's partition_samples gives the shares).

--workers instances of the owner run in this process. --nats embedded (or
a bare --nats) starts an embedded server in a binary built with -tags nats.
With --checkpoint C the driver saves where it is (its name, the batches
whose predictions --out holds, the owners' counters) every
--checkpoint-every records and at the end; a run that finds C (after a
crash, even kill -9, on a server that kept the namespace) resumes: --out is
continued without a prediction lost or repeated, and a batch the crashed
run had sent is learned once. The owners snapshot their learners every
--snapshot-every batches, so an owner that takes a partition over replays
only the batches after the latest snapshot.

Examples:
  go run -tags nats ./cmd/nmfstream stream --nats --in stream.arrow --out pred.jsonl --json
  nmfstream stream --nats nats://127.0.0.1:4222 --in stream.arrow --workers 2`

// chainNATS are the flags of stream --nats beyond stream's: where the
// owners run.
type chainNATS struct {
	url, listen, store string
	workers            int
	ownerTimeout       time.Duration
	snapshotEvery      int
	cfg                distributed.Config
	partitionsGiven    bool // --partitions was on the command line
	// resume, if set, is the position of the driver to resume
	// (stream --nats --checkpoint).
	resume *distributed.ChainPosition
	// maxClasses and maxWindowBytes are --max-classes and
	// --max-window-bytes, which check puts in the learner settings
	// (onlineConfig) for the owners to apply.
	maxClasses     int
	maxWindowBytes int64
}

func (f *chainNATS) add(fs *flag.FlagSet) {
	fs.StringVar(&f.url, "nats", "", "NATS server `URL`s, comma-separated, or embedded (an in-process server, in a binary built with -tags nats)")
	fs.StringVar(&f.listen, "listen", "127.0.0.1:0", "embedded server: `host:port` to listen on (port 0: any free port)")
	fs.StringVar(&f.store, "store", "", "embedded server: JetStream storage `directory` (empty: a temporary one, removed at exit)")
	fs.IntVar(&f.workers, "workers", 1, "owners to run in this process (0: other processes run them)")
	fs.IntVar(&f.snapshotEvery, "snapshot-every", 100, "batches between the snapshots of an owner's learner in the namespace (the owners of this process), up to which the partition's batches are trimmed from the batch stream (-1: none: nothing is trimmed, a takeover replays the partition from its first batch)")
	fs.DurationVar(&f.ownerTimeout, "owner-timeout", 0, "with --workers 0: fail if no worker of the namespace is live within this `duration` (0: wait, saying so every few seconds)")
	c := &f.cfg
	fs.StringVar(&c.Namespace, "namespace", "nmf", "prefix of the subjects, streams and buckets of this stream")
	fs.IntVar(&c.Partitions, "partitions", 1, "partitions P, each with its own owner and learner on its share of the records (dense samples by nearest anchor, others by id; every label goes to every owner); 1 gives stream's predictions exactly")
	fs.IntVar(&c.Replicas, "replicas", 1, "replicas of the streams and buckets")
	fs.DurationVar(&c.PinnedTTL, "pinned-ttl", 2*time.Second, "time after which a silent owner's partition moves to another (failover time)")
	fs.IntVar(&c.Warm, "warm", 2000, "with P > 1: the batches up to the first `n` unlabeled dense samples are learned once, by partition 0's owner, and the other owners start from its state (a common start, at most half a short stream's samples; -1: none)")
	learnerBoundFlags(fs, &f.maxClasses, &f.maxWindowBytes)
}

// check checks the flags against stream's options o and completes the
// namespace's configuration.
func (f *chainNATS) check(o *streamOptions) error {
	f.partitionsGiven = o.fs != nil && isSet(o.fs, "partitions")
	switch {
	case f.snapshotEvery == 0:
		return fmt.Errorf("%w: --snapshot-every must not be 0 (-1: no snapshots)", errUsage)
	case f.workers < 0 || f.ownerTimeout < 0 || f.cfg.Partitions < 1:
		return fmt.Errorf("%w: --workers and --owner-timeout must not be negative, --partitions must be positive", errUsage)
	case o.batchRef != 0:
		return fmt.Errorf("%w: --batch-reference refits the local learner's window; with --nats the models are the owners' (run stream without --nats for it)", errUsage)
	case f.workers > 0 && o.fs != nil && isSet(o.fs, "owner-timeout"):
		return fmt.Errorf("%w: --owner-timeout bounds the wait for a separate worker, with --workers 0; with --workers %d the owners run here: drop it, or use --workers 0", errUsage, f.workers)
	case f.maxClasses < 0 || f.maxWindowBytes < 0:
		return fmt.Errorf("%w: --max-classes and --max-window-bytes must not be negative (0: no bound)", errUsage)
	}
	o.cfg.MaxClasses, o.cfg.MaxWindowBytes = f.maxClasses, f.maxWindowBytes
	f.cfg.Rank = o.cfg.Rank
	if f.cfg.Warm <= 0 {
		f.cfg.Warm = -1 // none (distributed.Config's zero is its default)
	}
	return nil
}

// partitionedBatch is the records per driver batch at P = parts > 1 when
// --batch is not given, once partitionedBatchAfter records have been read:
// P times autoBatch (no more than a bounded window), so that each owner
// steps on about autoBatch samples of its share, as one machine does,
// rather than P times as often on a P-th of them (each step has costs
// independent of its size). Before that the batch is autoBatch: a model
// that learns from few samples loses more to larger steps (BENCHMARKS.md,
// "Scale-out"). At P = 1 the batches are stream's, for stream's
// predictions exactly.
func partitionedBatch(window, parts int) int {
	b := autoBatch(window) * parts
	if window > 0 {
		b = min(b, window)
	}
	return b
}

// partitionedBatchAfter is the count of records from which the driver's
// batches grow to partitionedBatch.
const partitionedBatchAfter = 2000

// growingBatches is a Source whose batches grow to size records once a
// batch has reached record offset after-1. Its batch boundaries depend on
// the records alone, so a resumed driver (sources.Reader.Skip) reads the
// batches the first run read.
type growingBatches struct {
	sources.Source
	after int64
	size  int
	set   func(int) // sets the source's batch size for its next Next
}

// Next reads the next batch, then grows the batches if it reached after.
func (g *growingBatches) Next() bool {
	ok := g.Source.Next()
	if ok && g.set != nil {
		if _, last := g.Source.Batch().Span(); last+1 >= g.after {
			g.set(g.size)
			g.set = nil
		}
	}
	return ok
}

// growBatches returns src with batches growing to partitionedBatch at P >
// 1 when --batch was not given (and src's kind can change its batch size:
// not Parquet, whose reader fixes it when it opens); src itself otherwise.
func (f *chainNATS) growBatches(o *streamOptions, src sources.Source) sources.Source {
	if f.cfg.Partitions < 2 || (o.fs != nil && isSet(o.fs, "batch")) {
		return src
	}
	return newGrowingBatches(src, partitionedBatchAfter, partitionedBatch(o.cfg.Window, f.cfg.Partitions))
}

// mergeAfterStart is the records of anchoredRead's merged batches: at P >
// 1 without --batch (as growBatches), partitionedBatch; else 0, none.
func (f *chainNATS) mergeAfterStart(o *streamOptions) int {
	if f.cfg.Partitions < 2 || (o.fs != nil && isSet(o.fs, "batch")) {
		return 0
	}
	return partitionedBatch(o.cfg.Window, f.cfg.Partitions)
}

// mergeBatches returns fs with consecutive batches merged, in order, into
// batches of at most size records (a batch of size or more stays alone);
// only batches of dense rows (or none) of one dimension merge.
func mergeBatches(fs []*stages.Features, size int) []*stages.Features {
	var out []*stages.Features
	var group []*stages.Features
	n := 0
	flush := func() {
		if len(group) > 0 {
			out = append(out, concatDense(group))
		}
		group, n = nil, 0
	}
	for _, f := range fs {
		if !denseBatch(f) {
			flush()
			out = append(out, f)
			continue
		}
		if len(group) > 0 && (n+f.Records() > size || group[0].Dim != f.Dim) {
			flush()
		}
		group, n = append(group, f), n+f.Records()
	}
	flush()
	return out
}

// denseBatch reports whether f's rows are dense or absent (no text).
func denseBatch(f *stages.Features) bool {
	if f.Text != nil {
		return false
	}
	if f.X == nil {
		return true
	}
	_, ok := model.Rows(f.X).(*mat.Dense)
	return ok
}

// concatDense returns the batches fs (dense or without rows, of one
// dimension, in input order) as one: their samples, late labels, rejects
// and unusable samples in order; fs itself if it is one batch.
func concatDense(fs []*stages.Features) *stages.Features {
	if len(fs) == 1 {
		return fs[0]
	}
	out := &stages.Features{Dim: fs[0].Dim}
	var rows []float64
	d := 0
	for _, f := range fs {
		out.IDs, out.Labels = append(out.IDs, f.IDs...), append(out.Labels, f.Labels...)
		out.Labeled, out.Offsets = append(out.Labeled, f.Labeled...), append(out.Offsets, f.Offsets...)
		out.LateLabels = append(out.LateLabels, f.LateLabels...)
		out.Rejects, out.Unusable = append(out.Rejects, f.Rejects...), append(out.Unusable, f.Unusable...)
		if f.X == nil {
			continue
		}
		x := model.Rows(f.X).(*mat.Dense)
		r, c := x.Dims()
		d = c
		for i := range r {
			rows = append(rows, x.RawRowView(i)...)
		}
	}
	if len(out.Offsets) > 0 && d > 0 {
		out.X = model.DenseRows(mat.NewDense(len(out.Offsets), d, rows))
	}
	return out
}

// newGrowingBatches returns src with batches of size records once a batch
// has reached record offset after-1 (growingBatches), or src itself if its
// kind cannot change its batch size.
func newGrowingBatches(src sources.Source, after int64, size int) sources.Source {
	g := &growingBatches{Source: src, after: after, size: size}
	switch s := src.(type) {
	case *sources.Arrow:
		g.set = func(n int) { s.BatchSize = n }
	case *sources.CSV:
		g.set = func(n int) { s.BatchSize = n }
	case *sources.IDX:
		g.set = func(n int) { s.BatchSize = n }
	case *sources.Images:
		g.set = func(n int) { s.BatchSize = n }
	default:
		return src
	}
	return g
}

// learnerOf is the owners' distributed.NewLearner: settings are a
// driver's onlineConfig as JSON, and the Learner is stream's
// (onlineConfig.learner), sharing its search bases with the other owners
// of this process.
func learnerOf(settings []byte) (*stages.Learner, error) {
	var c onlineConfig
	if err := json.Unmarshal(settings, &c); err != nil {
		return nil, fmt.Errorf("learner settings: %w", err)
	}
	if err := checkOnlineConfig(&c); err != nil {
		return nil, err
	}
	l := c.learner()
	l.Model.SearchBases = ownerSearchBases
	return l, nil
}

// sharedLearners is learnerOf for one of n owners of this process: with n
// > 1 each learner runs its parts (Split) on GOMAXPROCS/n processors, one
// at least, since the owners themselves run at once.
func sharedLearners(n int) func([]byte) (*stages.Learner, error) {
	if n <= 1 {
		return learnerOf
	}
	split := pipeline.Split(runtime.GOMAXPROCS(0) / n)
	return func(settings []byte) (*stages.Learner, error) {
		l, err := learnerOf(settings)
		if err != nil {
			return nil, err
		}
		l.Split, l.Model.Split = split, split
		return l, nil
	}
}

// ownerSearchBases shares the search basis fits of the owners of this
// process (model.SearchBases): the owners of a namespace fit on the same
// rows while they learn the common start, and a partition's new owner
// learns again what its former one did. The newest fits are kept up to
// 32 MiB (32 MNIST bases of rank 40).
var ownerSearchBases = model.NewSearchBases(32 << 20)

// owners is a driver on a namespace, with the owners this process runs.
type owners struct {
	drv     *distributed.ChainDriver
	nc      *nats.Conn // the driver's connection
	server  string
	closers []func() // connections and the embedded server, oldest first
	cancel  context.CancelCauseFunc
	done    chan error // the owners' Run results
	started int
}

// start connects to the server (starting an embedded one for --nats
// embedded), starts --workers owners and the driver, whose learner
// settings are settings. A failing owner cancels ctx's child that it
// returns, with the owner's error as the cause.
func (f *chainNATS) start(ctx context.Context, cmd string, settings []byte, stderr io.Writer) (*owners, context.Context, error) {
	on := &owners{server: f.url, done: make(chan error, f.workers)}
	if on.server == "embedded" || on.server == "" {
		if !haveEmbeddedNATS {
			return nil, nil, fmt.Errorf("%w: %s --nats needs a server: pass --nats nats://HOST:PORT (scripts/nats-cluster.sh starts one), or build with -tags nats for an embedded one (go run -tags nats ./cmd/nmfstream %s --nats ...)", errUsage, cmd, cmd)
		}
		u, stop, err := embeddedNATS(f.listen, f.store)
		if err != nil {
			return nil, nil, err
		}
		on.closers = append(on.closers, stop)
		on.server = u
		fmt.Fprintf(stderr, "nmfstream %s: embedded NATS server on %s (join with --nats %s)\n", cmd, u, u)
	}
	opts := natsOptions(on.server, lineLogger(stderr, "nmfstream "+cmd+":"))
	connect := func() (*nats.Conn, error) {
		nc, err := nats.Connect(on.server, opts...)
		if err != nil {
			return nil, fmt.Errorf("--nats %s: %w", on.server, err)
		}
		on.closers = append(on.closers, nc.Close)
		return nc, nil
	}
	rctx, cancel := context.WithCancelCause(ctx)
	on.cancel = cancel
	fail := func(err error) (*owners, context.Context, error) { return nil, nil, errors.Join(err, on.close()) }
	nc, err := connect()
	if err != nil {
		return fail(err)
	}
	on.nc = nc
	// Separate workers may be starting with the driver, and the first
	// instance of a namespace stores its settings: wait for a live one
	// before reading them, or the driver's own could be refused later.
	if f.workers == 0 {
		if err := f.await(rctx, nc, on.server, cmd, stderr); err != nil {
			return fail(err)
		}
	}
	// The namespace's distributed settings (rank, window, … of the owners'
	// own step) do not shape the chain's learner, which its learner
	// settings do: take them, and its partitions unless given.
	if err := adoptNamespace(ctx, nc, &f.cfg, map[string]bool{"partitions": f.partitionsGiven}, cmd, io.Discard); err != nil {
		return fail(err)
	}
	for i := range f.workers {
		nc, err := connect()
		if err != nil {
			return fail(err)
		}
		w, err := distributed.NewChainWorker(ctx, nc, f.cfg, sharedLearners(f.workers))
		if err != nil {
			return fail(err)
		}
		w.SnapshotEvery, w.Expect, w.Index = f.snapshotEvery, f.workers, i
		on.started++
		go func() {
			err := w.Run(rctx)
			if err != nil {
				cancel(fmt.Errorf("owner: %w", err))
			}
			on.done <- err
		}()
	}
	if f.resume != nil {
		on.drv, err = distributed.ResumeChainDriver(ctx, nc, f.cfg, settings, *f.resume)
	} else {
		on.drv, err = distributed.NewChainDriver(ctx, nc, f.cfg, settings)
	}
	if err != nil {
		return fail(err)
	}
	return on, rctx, nil
}

// await waits for a live worker of the namespace, saying so every few
// seconds, or fails after --owner-timeout if set.
func (f *chainNATS) await(ctx context.Context, nc *nats.Conn, server, cmd string, stderr io.Writer) error {
	wctx, cancel := ctx, context.CancelFunc(func() {})
	if f.ownerTimeout > 0 {
		wctx, cancel = context.WithTimeout(ctx, f.ownerTimeout)
	}
	defer cancel()
	err := distributed.AwaitWorker(wctx, nc, f.cfg, ownerReport, func(waited time.Duration) {
		fmt.Fprintf(stderr, "nmfstream %s: no live worker on namespace %q at %s after %v; waiting (start one: nmfstream worker --nats %s --namespace %s)\n", cmd, f.cfg.Namespace, server, waited.Round(time.Second), server, f.cfg.Namespace)
	})
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("no live worker on namespace %q at %s within --owner-timeout %v (start one: nmfstream worker)", f.cfg.Namespace, server, f.ownerTimeout)
	}
	return err
}

// close stops the owners, waits for them, and closes the driver, the
// connections and the embedded server, newest first. It returns the
// owners' errors.
func (on *owners) close() error {
	on.cancel(nil)
	var errs []error
	for range on.started {
		errs = append(errs, <-on.done)
	}
	on.started = 0
	if on.drv != nil {
		on.drv.Close()
	}
	for i := len(on.closers) - 1; i >= 0; i-- {
		on.closers[i]()
	}
	on.closers = nil
	return errors.Join(errs...)
}

func runStreamNATS(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var nf chainNATS
	o, err := parseStreamFlagsWith(args, stderr, streamNATSSynopsis, nf.add)
	if err != nil {
		return err
	}
	if err := nf.check(o); err != nil {
		return err
	}
	// The whole process: driver, embedded server and --workers.
	stop, err := startProfile(o.profile, o.trace)
	if err != nil {
		return err
	}
	defer stop()
	src, err := o.csvf.openStream(o.in, o.cfg.Batch)
	if err != nil {
		return err
	}
	defer src.Close()
	src = nf.growBatches(o, src)
	// The form is read before the server starts: a file that cannot be
	// used fails at once, and so do settings that change nothing on it.
	if err := o.checkForm(src); err != nil {
		return err
	}
	res, prev, err := nf.resumeFrom(o)
	if err != nil {
		return err
	}
	settings, err := json.Marshal(o.cfg)
	if err != nil {
		return err
	}
	var done outputState
	if prev != nil {
		done = prev.Output
	}
	out, err := o.openOutputs(done)
	if err != nil {
		return err
	}
	sink := &natsWriter{w: out, res: res}
	on, rctx, err := nf.start(ctx, "stream", settings, stderr)
	if err != nil {
		return errors.Join(err, sink.Close())
	}
	if res != nil {
		res.trim = func(pos distributed.ChainPosition) { _ = on.drv.TrimAnswers(ctx, pos) }
	} else {
		on.drv.TrimEvery = trimAnswersEvery // no checkpoint: nothing resumes from an earlier answer
	}
	r := &natsRun{o: o, workers: nf.workers, parts: nf.cfg.Partitions, namespace: nf.cfg.Namespace, pr: newProgress(stderr, "stream"), start: time.Now(), res: res, prev: prev, drv: on.drv}
	if prev != nil {
		r.last = distributed.ChainStep{Counters: prev.Counters, Scores: prev.Scores, Pending: prev.Pending}
	}
	read, err := anchoredRead(rctx, checkedReader(src, res, prev), on.drv, nf.cfg.Partitions, nf.mergeAfterStart(o))
	if err != nil {
		return errors.Join(err, on.close(), sink.Close())
	}
	p := newRemoteChain(on.drv, pipeline.From("records", read), nil, r.collected, pipeline.To("predictions", sink))
	runErr := p.Run(rctx)
	r.pr.done()
	elapsed := time.Since(r.start).Seconds()
	if nf.cfg.Partitions > 1 {
		r.shares = on.drv.Shares()
	}
	if cause := context.Cause(rctx); runErr != nil && cause != nil && ctx.Err() == nil {
		runErr = cause // an owner failed
	}
	if err := on.close(); err != nil && runErr == nil {
		runErr = err
	}
	if runErr != nil && !errors.Is(runErr, context.Canceled) && !errors.Is(runErr, context.DeadlineExceeded) {
		return changedInput(runErr, o.ckpt, o.in)
	}
	return errors.Join(r.report(stdout, stderr, elapsed, on.server), runErr)
}

// anchoredRead returns the stream's records as chain steps. With P > 1 it
// first reads and featurizes the batches up to 50·P samples, or twice the
// driver's common start if more, and has the driver fix the namespace's
// anchors from them before anything is sent (distributed/DESIGN.md,
// "Locality"); a stream that ends within them is short, and its common
// start at most half its samples (ChainDriver.ShortStream). Those batches
// come first, then the rest of rd. With merge > 0, the batches read ahead
// after a common start learned once (ChainDriver.StartLen) are merged, in
// order, into batches of at most merge records (mergeBatches). A read
// error met while reading ahead comes after them.
func anchoredRead(ctx context.Context, rd *sources.Reader, drv *distributed.ChainDriver, parts, merge int) (pipeline.ReadFunc[*streamStep], error) {
	var ahead []*streamStep
	var aheadErr error
	if parts > 1 {
		var feats []*stages.Features
		n := 0
		for n < max(50*parts, 2*drv.Warm()) {
			b, err := rd.Read(ctx)
			if err != nil {
				aheadErr = err
				break
			}
			f := stages.NewFeatures(b)
			feats, n = append(feats, f), n+len(f.Offsets)
			ahead = append(ahead, &streamStep{link: link{feat: f}})
		}
		if errors.Is(aheadErr, io.EOF) {
			drv.ShortStream(n)
		}
		if err := drv.Anchor(ctx, feats); err != nil {
			return nil, err
		}
		if k := drv.StartLen(feats); k > 0 && merge > 0 {
			ahead = ahead[:k]
			for _, f := range mergeBatches(feats[k:], merge) {
				ahead = append(ahead, &streamStep{link: link{feat: f}})
			}
		}
	}
	return func(ctx context.Context) (*streamStep, error) {
		if len(ahead) > 0 {
			x := ahead[0]
			ahead = ahead[1:]
			return x, nil
		}
		if err := aheadErr; err != nil {
			aheadErr = nil // a reject skips one record; io.EOF comes again
			return nil, err
		}
		b, err := rd.Read(ctx)
		if err != nil {
			return nil, err
		}
		return &streamStep{link: link{batch: b}}, nil
	}, nil
}

// natsRun is one run of stream --nats: the owners' counters after the last
// batch collected, and this run's totals.
type natsRun struct {
	o         *streamOptions
	workers   int // owners run in this process
	parts     int // the namespace's partitions
	last      distributed.ChainStep
	records   int64 // input records of the batches this run sent (not those a resume skipped)
	samples   int64 // this run's samples: predicted, or skipped as duplicates (dups)
	dups      int64 // this run's samples whose id the owners' windows held
	namespace string
	input     int64   // input records of every batch collected, skipped ones included
	shares    []int64 // samples sent to each partition, P > 1
	pr        *progress
	start     time.Time

	// With --checkpoint: the checkpoint's keeper, the checkpoint resumed
	// from (nil for none) and the driver, whose Position each batch's
	// checkpoint records.
	res  *natsResume
	prev *natsCheckpoint
	drv  *distributed.ChainDriver
}

// collected runs on the collect stage after each batch.
func (r *natsRun) collected(ss *streamStep) error {
	a := ss.answer
	if a != nil && !a.Skipped {
		r.last = *a
		r.records += int64(ss.records)
		r.dups += int64(len(a.Step.Duplicates))
		r.samples += int64(len(a.Step.Predictions) + len(a.Step.Duplicates))
	}
	r.input += int64(ss.records)
	if r.res != nil {
		r.res.collected(r.drv.Position(), a, r.input, r.prev)
	}
	r.pr.update(int(r.input), 0, "records")
	return nil
}

// report prints the run's summary, stream's (streamSummary) from the
// owner's counters: one JSON object with --json, text otherwise. The
// codes' scores (code_1nn, code_nmi) are the owner's and not reported.
func (r *natsRun) report(stdout, stderr io.Writer, elapsed float64, server string) error {
	sum := r.summary(elapsed)
	c, sc := r.last.Counters, r.last.Scores
	lo, hi := c.Interval(1.96)
	warnUnlearned(stderr, c)
	if r.o.asJSON {
		return json.NewEncoder(stdout).Encode(natsStats{streamSummary: sum, Workers: r.workers, Partitions: r.parts, Server: server, Shares: r.shares})
	}
	fmt.Fprintf(stdout, "records %d (%.0f/s) on the owners at %s, samples %d, rejected %d, duplicates %d, late labels %d, pending labels %d\n",
		c.Records, sum.RecordsPerSecond, server, c.Samples, c.Rejected, c.Duplicates, c.LateLabels, sum.Pending)
	fmt.Fprintf(stdout, "prequential accuracy %.4f (95%% interval %.4f–%.4f): %d of the %d labeled samples after the first label right on arrival (%d without a prediction, counted wrong); balanced accuracy %.4f, macro-F1 %.4f; always answering the most frequent class %.4f\n",
		c.Accuracy(), lo, hi, c.Correct, c.Labeled, c.Unpredicted, sc.BalancedAccuracy, sc.MacroF1, sc.Majority)
	if c.Rejected > 0 {
		fmt.Fprintf(stderr, "nmfstream stream: %d records rejected\n", c.Rejected)
	}
	if err := nothingUsable(c); err != nil {
		return err
	}
	if r.dups > 0 && r.dups == r.samples {
		// The counters above are the namespace's, every driver's: say
		// what this run did.
		return fmt.Errorf("no usable record: all %d samples of this run were duplicates of samples the owners of namespace %q hold (streamed there before?), so none was predicted or learned: use a fresh --namespace to learn the input again", r.dups, r.namespace)
	}
	return nil
}

// summary is stream's summary (streamSummary) of the owner's counters
// after the last batch collected; the codes' scores (code_1nn, code_nmi)
// are the owner's and null.
func (r *natsRun) summary(elapsed float64) streamSummary {
	c, sc := r.last.Counters, r.last.Scores
	lo, hi := c.Interval(1.96)
	sum := streamSummary{
		AccuracyCI95: [2]jsonFloat{jsonFloat(lo), jsonFloat(hi)},
		Accuracy:     jsonFloat(c.Accuracy()), NScored: c.Labeled, Early: c.Early,
		BalancedAccuracy: jsonFloat(sc.BalancedAccuracy), MacroF1: jsonFloat(sc.MacroF1), Majority: jsonFloat(sc.Majority),
		Records: c.Records, Rejected: c.Rejected, Samples: c.Samples, Duplicates: c.Duplicates,
		LateLabels: c.LateLabels, Labeled: c.Labeled, Correct: c.Correct, Unpredicted: c.Unpredicted, Unlearned: c.Unlearned,
		Pending: r.last.Pending, Seconds: elapsed, RunRecords: r.records,
		CodeNN1: jsonFloat(math.NaN()), CodeNMI: jsonFloat(math.NaN()),
	}
	if r.o != nil {
		sum.Window, sum.Rank = r.o.cfg.Window, r.o.cfg.Rank
	}
	if r.prev != nil {
		sum.ResumedFrom = r.prev.Records
	}
	if elapsed > 0 {
		sum.RecordsPerSecond = float64(r.records) / elapsed
	}
	return sum
}
