package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/nmfstream/nmfstream/distributed"
	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/sparse"
	"github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/sinks"
	"github.com/nmfstream/nmfstream/stages"
)

// natsArgs reports whether stream's arguments ask for the distributed
// learner (--nats), and returns them with a bare --nats (followed by
// another flag or nothing) given the value "embedded".
func natsArgs(args []string) ([]string, bool) {
	for i, a := range args {
		if a == "--" {
			break
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "nats" {
			continue
		}
		if !strings.Contains(a, "=") && (i+1 == len(args) || strings.HasPrefix(args[i+1], "-")) {
			return append(append(args[:i:i], "--nats=embedded"), args[i+1:]...), true
		}
		return args, true
	}
	return args, false
}

// streamNATSSummary is the JSON object stream --nats --json prints; the
// counters mean what they mean for the single-machine stream.
type streamNATSSummary struct {
	Accuracy         jsonFloat `json:"accuracy"`
	NScored          int64     `json:"n_scored"`
	Early            int64     `json:"early"`
	Records          int64     `json:"records"`
	Rejected         int64     `json:"rejected"`
	Samples          int64     `json:"samples"`
	LateLabels       int64     `json:"late_labels"`
	UnknownLabels    int64     `json:"unknown_labels"` // late labels for no sample seen
	Labeled          int64     `json:"labeled"`
	Correct          int64     `json:"correct"`
	Unpredicted      int64     `json:"unpredicted"`
	Applied          uint64    `json:"applied"` // samples applied to the statistics
	Left             uint64    `json:"left"`    // samples that left the owners' windows
	Version          uint64    `json:"version"`
	Seconds          float64   `json:"seconds"`
	RecordsPerSecond float64   `json:"records_per_second"`
	Workers          int       `json:"workers"`
	Partitions       int       `json:"partitions"`
	Server           string    `json:"server"`
}

// print writes the summary: one JSON object with asJSON, text otherwise.
func (sum streamNATSSummary) print(stdout, stderr io.Writer, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(stdout).Encode(sum)
	}
	fmt.Fprintf(stdout, "records %d (%.0f/s), samples %d, rejected %d, late labels %d (%d for unknown samples); %d instance(s) on %d partitions, %d samples applied, %d left the windows\n",
		sum.Records, sum.RecordsPerSecond, sum.Samples, sum.Rejected, sum.LateLabels, sum.UnknownLabels, sum.Workers, sum.Partitions, sum.Applied, sum.Left)
	fmt.Fprintf(stdout, "prequential accuracy %.4f: %d of the %d labeled samples after the first label right on arrival (%d without a prediction, counted wrong)\n",
		float64(sum.Accuracy), sum.Correct, sum.NScored, sum.Unpredicted)
	if sum.Rejected > 0 {
		fmt.Fprintf(stderr, "nmfstream stream: %d records rejected\n", sum.Rejected)
	}
	return nil
}

// natsFlags are the flags of the distributed learner that stream --nats
// and serve --nats share.
type natsFlags struct {
	url, listen, store string
	workers            int
	vote, probes       int
	predictor          string
	batch              int
	sharedDF           bool
	ownerTimeout       time.Duration
	cfg                distributed.Config
	given              map[string]bool // the flags the command line set
}

func (f *natsFlags) add(fs *flag.FlagSet) {
	fs.StringVar(&f.url, "nats", "", "NATS server `URL`s, comma-separated, or embedded (an in-process server, in a binary built with -tags nats)")
	fs.StringVar(&f.listen, "listen", "127.0.0.1:0", "embedded server: `host:port` to listen on (port 0: any free port)")
	fs.StringVar(&f.store, "store", "", "embedded server: JetStream storage `directory` (empty: a temporary one, removed at exit)")
	fs.IntVar(&f.workers, "workers", 1, "instances of the learner to run in this process (0: others run them)")
	fs.IntVar(&f.vote, "vote", 5, "neighbours voting on a prediction")
	fs.StringVar(&f.predictor, "predictor", "spread", "spread (the labels spread over each partition's k-NN graph; the neighbours vote with their class scores, labeled or not) or nearest (the labeled neighbours vote)")
	fs.IntVar(&f.probes, "probes", 0, "partitions asked for neighbours, nearest to the sample first (0: all)")
	fs.IntVar(&f.batch, "batch", 10, "records per step: predicted together, then published (a label reaches predictions from the next step on)")
	fs.BoolVar(&f.sharedDF, "shared-df", false, "documents: keep the TF-IDF document frequencies in the namespace's model bucket, shared by every stream --nats and serve --nats that sets it (a compare-and-set per batch), instead of this process's own")
	c := &f.cfg
	fs.StringVar(&c.Namespace, "namespace", "nmf", "prefix of the subjects, streams and buckets of this stream")
	fs.IntVar(&c.Rank, "rank", 10, "rank K of the factorization")
	fs.IntVar(&c.Partitions, "partitions", 1, "virtual partitions P (fixed for a namespace)")
	fs.Float64Var(&c.Alpha, "alpha", model.DefaultGNMFAlpha, "GNMF's graph weight α on each partition's k-NN graph (0: NMF)")
	fs.IntVar(&c.GraphK, "neighbors", 5, "k of each partition's k-NN graph")
	fs.IntVar(&c.Window, "window", 10000, "samples each partition's owner keeps (0: unbounded)")
	fs.IntVar(&c.Staleness, "staleness", 0, "rounds an owner may run ahead of U's version")
	fs.IntVar(&c.Refresh, "refresh", 100, "older codes swept per round and partition, round-robin, besides those whose graph edges changed (0: all)")
	fs.IntVar(&c.Replicas, "replicas", 1, "replicas of the streams and buckets")
	fs.Uint64Var(&c.Seed, "seed", 1, "seed of the partitioner and of U's initialization")
	fs.DurationVar(&c.PinnedTTL, "pinned-ttl", 2*time.Second, "time after which a silent instance's roles move to another (failover time)")
	fs.DurationVar(&f.ownerTimeout, "owner-timeout", 0, "with --workers 0: fail if no worker of the namespace is live within this `duration` (0: wait, saying so every few seconds)")
}

// check validates the flags of fs (parsed) and records which were given.
func (f *natsFlags) check(fs *flag.FlagSet) error {
	c := &f.cfg
	if f.workers < 0 || f.vote < 1 || f.probes < 0 || f.batch < 1 || c.Rank < 1 || c.Partitions < 1 || c.Window < 0 || !(c.Alpha >= 0) || f.ownerTimeout < 0 {
		return fmt.Errorf("%w: --workers, --probes, --alpha, --window and --owner-timeout must not be negative, --batch, --vote, --rank and --partitions must be positive", errUsage)
	}
	f.given = givenFlags(fs)
	// Owners that got nothing new in a round pause this long: short, since
	// every step waits for a round.
	c.Idle = 5 * time.Millisecond
	return f.fit()
}

// fit checks the predictor against the settings (as given, or as the
// namespace holds them) and resolves --probes 0 to every partition.
func (f *natsFlags) fit() error {
	c := &f.cfg
	switch f.predictor {
	case "spread":
		if c.Alpha == 0 {
			return fmt.Errorf("%w: --predictor spread needs the partitions' k-NN graphs, which --alpha 0 turns off: use --predictor nearest", errUsage)
		}
	case "nearest":
	default:
		return fmt.Errorf("%w: --predictor %q: want spread or nearest", errUsage, f.predictor)
	}
	if f.probes == 0 || f.probes > c.Partitions || !f.given["probes"] {
		f.probes = c.Partitions
	}
	return nil
}

// join takes the namespace's settings for the flags not given
// (adoptNamespace) and, when no instance runs in this process, waits for
// a live worker of the namespace: saying so every few seconds, or failing
// after --owner-timeout if set.
func (f *natsFlags) join(ctx context.Context, nc *nats.Conn, server, cmd string, stderr io.Writer) error {
	if err := adoptNamespace(ctx, nc, &f.cfg, f.given, cmd, stderr); err != nil {
		return err
	}
	if err := f.fit(); err != nil {
		return fmt.Errorf("namespace %q: %w", f.cfg.Namespace, err)
	}
	if f.workers > 0 {
		return nil
	}
	wctx, cancel := ctx, context.CancelFunc(func() {})
	if f.ownerTimeout > 0 {
		wctx, cancel = context.WithTimeout(ctx, f.ownerTimeout)
	}
	defer cancel()
	hint := fmt.Sprintf("start one: nmfstream worker --nats %s --namespace %s", server, f.cfg.Namespace)
	err := distributed.AwaitWorker(wctx, nc, f.cfg, ownerReport, func(waited time.Duration) {
		fmt.Fprintf(stderr, "nmfstream %s: no live worker on namespace %q at %s after %v; waiting (%s)\n", cmd, f.cfg.Namespace, server, waited.Round(time.Second), hint)
	})
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("no live worker on namespace %q at %s within --owner-timeout %v (%s)", f.cfg.Namespace, server, f.ownerTimeout, hint)
	}
	return err
}

// ownerReport is the interval of join's messages while no worker is live.
const ownerReport = 3 * time.Second

// adoptNamespace replaces the settings of cfg that the command line did
// not give (given: flag name → set) by those cfg's namespace holds, and
// says so on stderr when that changes any; a namespace that holds none
// takes cfg's from its first instance.
func adoptNamespace(ctx context.Context, nc *nats.Conn, cfg *distributed.Config, given map[string]bool, cmd string, stderr io.Writer) error {
	got, ok, err := distributed.AdoptConfig(ctx, nc, *cfg, func(name string) bool { return given[name] })
	if err != nil || !ok {
		return err
	}
	if got != *cfg {
		fmt.Fprintf(stderr, "nmfstream %s: namespace %q: its settings for the flags not given: rank %d, partitions %d, staleness %d, alpha %g, neighbors %d, window %d, refresh %d, seed %d\n",
			cmd, got.Namespace, got.Rank, got.Partitions, got.Staleness, got.Alpha, got.GraphK, got.Window, got.Refresh, got.Seed)
	}
	*cfg = got
	return nil
}

// givenFlags returns the names of the flags that fs's command line set.
func givenFlags(fs *flag.FlagSet) map[string]bool {
	given := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	return given
}

// start connects to the server (starting an embedded one for --nats
// embedded), starts the instances of the learner and returns the driver
// and a function that stops the instances and returns their errors.
// Close the driver after that function has returned.
func (f *natsFlags) start(ctx context.Context, cmd string, stderr io.Writer) (*natsStream, func() error, error) {
	s := &natsStream{vote: f.vote, sharedDF: f.sharedDF}
	s.ask = distributed.SpreadNeighbors
	if f.predictor == "nearest" {
		s.ask = distributed.LabeledNeighbors
	}
	s.server = f.url
	if s.server == "embedded" || s.server == "" {
		if !haveEmbeddedNATS {
			return nil, nil, fmt.Errorf("%w: %s --nats needs a server: pass --nats nats://HOST:PORT (scripts/nats-cluster.sh starts one), or build with -tags nats for an embedded one (go run -tags nats ./cmd/nmfstream %s --nats ...)", errUsage, cmd, cmd)
		}
		u, stop, err := embeddedNATS(f.listen, f.store)
		if err != nil {
			return nil, nil, err
		}
		s.closers = append(s.closers, stop)
		s.server = u
		fmt.Fprintf(stderr, "nmfstream %s: embedded NATS server on %s (join with --nats %s)\n", cmd, u, u)
	}
	connect := func() (*nats.Conn, error) {
		nc, err := nats.Connect(s.server, distributed.ClientOptions()...)
		if err != nil {
			return nil, fmt.Errorf("--nats %s: %w", s.server, err)
		}
		s.closers = append(s.closers, nc.Close)
		return nc, nil
	}
	var err error
	if s.nc, err = connect(); err != nil {
		s.close()
		return nil, nil, err
	}
	if err := f.join(ctx, s.nc, s.server, cmd, stderr); err != nil {
		s.close()
		return nil, nil, err
	}
	s.cfg, s.probes = f.cfg, f.probes
	wctx, cancel := context.WithCancel(ctx)
	s.done = make(chan error, f.workers)
	started := 0
	wait := func() error {
		cancel()
		var errs []error
		for range started {
			errs = append(errs, <-s.done)
		}
		return errors.Join(errs...)
	}
	fail := func(err error) (*natsStream, func() error, error) {
		err = errors.Join(err, wait())
		s.close()
		return nil, nil, err
	}
	for range f.workers {
		wc, err := connect()
		if err != nil {
			return fail(err)
		}
		w, err := distributed.NewWorker(wctx, wc, f.cfg)
		if err != nil {
			return fail(err)
		}
		started++
		go func() { s.done <- w.Run(wctx) }()
	}
	if s.pub, err = distributed.NewPublisher(ctx, s.nc, f.cfg); err != nil {
		return fail(err)
	}
	s.classes = distributed.NewClassTable(s.pub)
	return s, wait, nil
}

// close closes the driver's connections and stops the embedded server,
// newest first.
func (s *natsStream) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.closers = nil
}

func closeSink(s sinks.Sink) error {
	if s == nil {
		return nil
	}
	return s.Close()
}

// natsStream is stream --nats's driver: it predicts a batch's samples
// from the owners' labeled neighbours, then publishes the batch, and
// keeps the prequential counters.
type natsStream struct {
	nc     *nats.Conn
	cfg    distributed.Config
	pub    *distributed.Publisher
	part   *distributed.Partitioner
	ask    func(context.Context, *nats.Conn, distributed.Config, *distributed.Partitioner, distributed.Sample, int, int) ([]distributed.Neighbor, error)
	vote   int
	probes int
	done   chan error // a worker that ends on its own

	server  string   // the NATS server's URLs
	closers []func() // connections and the embedded server, oldest first

	classes *distributed.ClassTable // the namespace's class table
	preq    distributed.Prequential // arrival predictions, labels and their scores
	dim     int                     // the stream's dimension, fixed by its first usable sample
	sum     streamNATSSummary       // the counters of records and rejects (summary adds the rest)

	// feat turns documents into the hashed TF-IDF rows of the
	// single-machine stream (stages.DefaultStreamTFIDF), its document
	// frequencies following the documents this driver has seen, in input
	// order. Every sample it publishes is featurized here, so the owners
	// see rows of one vectorizer (see distributed/DESIGN.md, "Documents", on several publishers).
	feat stages.Featurize
	// sharedDF keeps the document frequencies in the namespace's model
	// bucket instead of feat, shared by every driver that sets it.
	sharedDF bool
}

// featurize returns the TF-IDF rows of the batch's usable documents, their
// positions in the batch, and a *stages.RowError for each unusable one, as
// stages.Featurize.Rows does; with sharedDF the vectorizer is the
// namespace's (distributed.Publisher.SharedRows).
func (s *natsStream) featurize(ctx context.Context, b *record.Batch) (model.Data, []int, []error, error) {
	if !s.sharedDF {
		x, keep, bad := s.feat.Rows(b)
		return x, keep, bad, nil
	}
	return s.pub.SharedRows(ctx, b)
}

// summary returns the driver's counters, the scores of its arrival
// predictions (distributed.Prequential's stages.Scorer) included.
func (s *natsStream) summary() streamNATSSummary {
	sum := s.sum
	c := s.preq.Scorer.Counters()
	sum.NScored, sum.Labeled, sum.Correct, sum.Unpredicted, sum.Early = c.Labeled, c.Labeled, c.Correct, c.Unpredicted, c.Early
	sum.Samples, sum.LateLabels, sum.UnknownLabels = s.preq.Samples, s.preq.LateLabels, s.preq.UnknownLabels
	sum.Accuracy = jsonFloat(c.Accuracy())
	return sum
}

// settleWithin bounds the wait for the owners to take what was published:
// failover takes a few pinned TTLs, a server's leader election seconds.
const settleWithin = 2 * time.Minute

// settle waits until every owner holds everything published so far.
func (s *natsStream) settle(ctx context.Context) error {
	last := s.pub.LastSeq()
	if last == 0 {
		return nil
	}
	deadline := time.Now().Add(settleWithin)
	for {
		st, err := distributed.ReadState(ctx, s.nc, s.cfg)
		if err == nil && st.Ingested >= last {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the owners did not take the records published within %v (every partition needs an instance: --workers, or nmfstream worker on the same --nats and --namespace)", settleWithin)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-s.done:
			s.done <- err
			if err == nil {
				err = errors.New("a worker stopped")
			}
			return fmt.Errorf("stream: %w", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// step predicts the batch's usable samples, publishes them and the late
// labels in input order, and returns the predictions, one per usable
// sample, their record offsets, and the rejected samples (a negative or
// non-finite value, a dimension other than the stream's, a document
// without a usable term). Documents become sparse TF-IDF rows (s.feat)
// before anything else.
func (s *natsStream) step(ctx context.Context, b *record.Batch) (res sinks.Results, offs []int64, rejects []record.Reject, err error) {
	s.sum.Records += int64(b.Records())
	s.sum.Rejected += int64(len(b.Rejects))
	samples, rows, rejects, err := s.samplesOf(ctx, b)
	if err != nil || len(samples) == 0 && len(b.LateLabels) == 0 {
		return res, offs, rejects, err
	}
	if err := s.settle(ctx); err != nil {
		return res, offs, rejects, err
	}
	if err := s.learnClasses(ctx, b, rows); err != nil {
		return res, offs, rejects, err
	}
	// Predict every sample of the batch before any of it is published.
	res, offs, preds, err := s.predict(ctx, b, rows, samples)
	if err != nil {
		return res, offs, rejects, err
	}
	labels, err := s.preq.Apply(b, rows, samples, preds, s.classes)
	if err != nil {
		return res, offs, rejects, err
	}
	if err := s.pub.Publish(ctx, samples); err != nil {
		return res, offs, rejects, err
	}
	for _, l := range labels {
		if err := s.pub.Label(ctx, l.ID, l.Class); err != nil {
			return res, offs, rejects, err
		}
	}
	return res, offs, rejects, nil
}

// samplesOf returns the batch's usable samples as the owners take them
// (a sample's ID on the bus is its record offset + 1; no class yet), the
// batch row of each, and the batch's rejects, the source's first.
func (s *natsStream) samplesOf(ctx context.Context, b *record.Batch) (samples []distributed.Sample, rows []int, rejects []record.Reject, err error) {
	rejects = slices.Clone(b.Rejects)
	reject := func(i int, err error) {
		s.sum.Rejected++
		rejects = append(rejects, record.Rejectf(b.Offsets[i], b.IDs[i], "%v", err))
	}
	var docs *sparse.CSR // TF-IDF rows of the usable documents
	docRow := map[int]int{}
	if b.Form == record.FormText && b.Len() > 0 {
		x, keep, bad, err := s.featurize(ctx, b)
		if err != nil {
			return nil, nil, rejects, err
		}
		for _, e := range bad {
			re := e.(*stages.RowError)
			reject(re.Row, re.Err)
		}
		if x != nil {
			docs = model.Rows(x).(*sparse.CSR)
		}
		for r, i := range keep {
			docRow[i] = r
		}
	}
	for i := range b.Len() {
		smp := distributed.Sample{ID: uint64(b.Offsets[i]) + 1, Label: -1}
		switch b.Form {
		case record.FormText:
			r, ok := docRow[i]
			if !ok {
				continue // rejected above
			}
			ind, val := docs.Row(r)
			_, d := docs.Dims()
			smp.Dim, smp.Index, smp.Value = d, ind, val
		case record.FormSparse:
			ind, val := b.Sparse.Row(i)
			_, d := b.Sparse.Dims()
			smp.Dim, smp.Index, smp.Value = d, ind, val
		default:
			smp.Dense = b.Dense.RawRowView(i)
			smp.Dim = len(smp.Dense)
		}
		err := smp.Check()
		if err == nil && s.dim != 0 && smp.Dim != s.dim {
			err = fmt.Errorf("dimension %d, the stream's %d", smp.Dim, s.dim)
		}
		if err != nil {
			reject(i, err)
			continue
		}
		s.dim = smp.Dim
		samples, rows = append(samples, smp), append(rows, i)
	}
	return samples, rows, rejects, nil
}

// predict asks the owners for each sample's neighbours and returns the
// vote (distributed.Vote): the predictions to write, their record offsets,
// and the predicted classes (stages.NoPrediction for none).
func (s *natsStream) predict(ctx context.Context, b *record.Batch, rows []int, samples []distributed.Sample) (res sinks.Results, offs []int64, preds []int, err error) {
	n := len(samples)
	res = sinks.Results{IDs: make([]string, n), Preds: make([]string, n), Scores: make([]float64, n)}
	offs = make([]int64, n)
	preds = make([]int, n)
	for j := range samples {
		res.IDs[j], offs[j] = b.IDs[rows[j]], b.Offsets[rows[j]]
		preds[j], res.Scores[j] = stages.NoPrediction, math.NaN()
		if s.part == nil {
			continue
		}
		nb, err := s.ask(ctx, s.nc, s.cfg, s.part, samples[j], s.vote, s.probes)
		if err != nil {
			return res, offs, preds, fmt.Errorf("record %d: %w", b.Offsets[rows[j]], err)
		}
		c, score := distributed.Vote(nb)
		if c >= s.classes.Len() {
			// A class another driver placed since this one last read.
			if err := s.classes.Sync(ctx, nil); err != nil {
				return res, offs, preds, err
			}
		}
		if c >= 0 && c < s.classes.Len() {
			preds[j], res.Preds[j], res.Scores[j] = c, s.classes.Name(c), score
		}
	}
	return res, offs, preds, nil
}

// learnClasses reads the partitioner (once there is one) and places the
// labels of b's samples rows and of its late labels in the namespace's
// class table.
func (s *natsStream) learnClasses(ctx context.Context, b *record.Batch, rows []int) error {
	if s.part == nil {
		var err error
		if s.part, err = s.pub.Partitioner(ctx); err != nil {
			return err
		}
	}
	var names []string
	for _, i := range rows {
		if b.Labeled[i] {
			names = append(names, b.Labels[i])
		}
	}
	for _, ll := range b.LateLabels {
		names = append(names, ll.Label)
	}
	return s.classes.Learn(ctx, names)
}
