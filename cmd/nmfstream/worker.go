package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/distributed"
	"github.com/nmfstream/nmfstream/model"
)

func init() {
	register(command{
		name:    "worker",
		summary: "run instances of the distributed learner on NATS JetStream (partitions with failover), and publish a file to it",
		run:     runWorker,
	})
}

const workerSynopsis = `worker [--nats URL] [--in F] [--workers n] [--rank K] [--partitions P] [--staleness s] [--rounds T] [--alpha α] [--window n] [--json]

Runs instances of the distributed learner (package distributed) on a NATS
JetStream server: samples are split into --partitions virtual partitions
by a locality-preserving key, each partition has one exclusive owner at a
time among the instances (another takes over within --pinned-ttl when it
dies), owners publish additive deltas of the statistics B = XV and A = VᵀV,
and one coordinator steps the basis U from their exactly-once sum and
versions it in a key-value bucket. Every instance, in this process or in
others on the same --nats and --namespace, shares the work. With
--staleness 0 the rounds are synchronous and U is NMF's single-machine
multiplicative update to rounding (distributed/DESIGN.md). With --alpha
the owners learn GNMF on their partition's k-NN graph; --window bounds
the samples each keeps. The first instance of a namespace (worker,
stream --nats or serve --nats) stores its settings there (--rank,
--partitions, --staleness, --alpha, --neighbors, --window, --refresh,
--sweeps, --seed); a later instance takes the namespace's value of each
of these flags it does not give, and is refused, with a message naming
the setting and the namespace's value, if it gives another.

With --in F, the records of F (read as fit reads them: Arrow, Parquet,
CSV, IDX; dense or sparse, not text) are published, sample IDs being their
row numbers from 1, and the command exits once every one is applied,
after --after more versions of U,
printing the counters, the rate and the relative error ‖X − UVᵀ‖/‖X‖ of F
coded on the final U. Without --in it works until interrupted (or until
U's version reaches --rounds).

Without --nats, a binary built with -tags nats starts an embedded
single-node server on --listen (storing in --store, or a temporary
directory); other instances join it with --nats nats://HOST:PORT. A
binary built without the tag needs --nats: scripts/nats-cluster.sh starts
a 3-node cluster on loopback.

Examples:
  go run -tags nats ./cmd/nmfstream worker --in train-images-idx3-ubyte --rank 20
  nmfstream worker --nats nats://127.0.0.1:4222 --in mnist.arrow --workers 3 --partitions 6 --json
  nmfstream worker --nats nats://127.0.0.1:4222,nats://127.0.0.1:4223 --replicas 3`

// workerSummary is the JSON object worker --json prints.
type workerSummary struct {
	Samples          uint64   `json:"samples"` // applied to the statistics
	Deltas           uint64   `json:"deltas"`
	Version          uint64   `json:"version"`
	Published        int      `json:"published"`
	Seconds          float64  `json:"seconds"`
	PublishSeconds   float64  `json:"publish_seconds"`
	SamplesPerSecond float64  `json:"samples_per_second"`
	RelativeError    *float64 `json:"relative_error,omitempty"`
	Workers          int      `json:"workers"`
	Partitions       int      `json:"partitions"`
	Takeovers        int      `json:"takeovers"`
	Server           string   `json:"server"`
}

func runWorker(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseWorkerFlags(args, stderr)
	if err != nil {
		return err
	}
	var samples []distributed.Sample
	var x model.Data
	if o.in != "" {
		if samples, x, err = readSamples(ctx, o.in, o.csvf); err != nil {
			return err
		}
	}
	server := o.url
	if server == "" {
		u, stop, err := embeddedNATS(o.listen, o.store)
		if err != nil {
			return err
		}
		defer stop()
		server = u
		fmt.Fprintf(stderr, "nmfstream worker: embedded NATS server on %s (join with --nats %s)\n", u, u)
	}
	var conns []*nats.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	connect := func() (*nats.Conn, error) {
		nc, err := nats.Connect(server, distributed.ClientOptions()...)
		if err != nil {
			return nil, fmt.Errorf("--nats %s: %w", server, err)
		}
		conns = append(conns, nc)
		return nc, nil
	}
	nc, err := connect()
	if err != nil {
		return err
	}
	if err := adoptNamespace(ctx, nc, &o.cfg, o.given, "worker", stderr); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pool := &workerPool{cancel: cancel, done: make(chan error, o.workers), log: lineLogger(stderr, "nmfstream worker:")}
	if err := pool.start(ctx, connect, o.cfg, o.workers, o.chain); err != nil {
		return errors.Join(err, pool.wait())
	}
	start := time.Now()
	if err := publishSamples(ctx, nc, o.cfg, samples); err != nil {
		return errors.Join(err, pool.wait())
	}
	published := time.Since(start)
	st := pool.awaitEnd(ctx, nc, o.cfg, len(samples), o.after)
	elapsed := time.Since(start)
	if err := pool.wait(); err != nil {
		return err
	}
	if len(samples) > 0 && st.Samples < uint64(len(samples)) {
		return fmt.Errorf("interrupted with %d of %d samples applied", st.Samples, len(samples))
	}
	sum := workerSummary{Samples: st.Samples, Deltas: st.Deltas, Version: st.Version, Published: len(samples),
		Seconds: elapsed.Seconds(), PublishSeconds: published.Seconds(), Workers: o.workers, Partitions: o.cfg.Partitions, Server: server}
	sum.SamplesPerSecond = float64(st.Samples) / max(elapsed.Seconds(), 1e-9)
	for _, w := range pool.ws {
		sum.Takeovers += w.Stats().Takeovers
	}
	if x != nil && st.U != nil {
		e, err := relativeError(x, st.U)
		if err != nil {
			return err
		}
		sum.RelativeError = &e
	}
	return sum.print(stdout, o.asJSON)
}

// workerOptions are worker's flags, parsed and checked.
type workerOptions struct {
	url, listen, store, in string
	workers, after         int
	asJSON                 bool
	chain                  bool // run the chain's owners (learnerOf)
	cfg                    distributed.Config
	csvf                   csvFlags
	given                  map[string]bool // the flags the command line set
}

// parseWorkerFlags parses worker's arguments; an error says which flag is
// wrong, or, without a server and an embedded one, how to get one.
func parseWorkerFlags(args []string, stderr io.Writer) (*workerOptions, error) {
	o := &workerOptions{}
	fs := newFlags("worker", workerSynopsis, stderr)
	fs.StringVar(&o.url, "nats", "", "NATS server `URL`s, comma-separated (empty: an embedded server, in a binary built with -tags nats)")
	fs.StringVar(&o.listen, "listen", "127.0.0.1:4222", "embedded server: `host:port` to listen on (port 0: any free port)")
	fs.StringVar(&o.store, "store", "", "embedded server: JetStream storage `directory` (empty: a temporary one, removed at exit)")
	fs.StringVar(&o.in, "in", "", "publish the records of this `file`, then exit once all are applied")
	fs.IntVar(&o.workers, "workers", 1, "instances to run in this process")
	fs.IntVar(&o.after, "after", 20, "with --in: versions of U to wait for after every sample is applied (rounds that sweep every code, refining U as batch NMF does)")
	fs.BoolVar(&o.asJSON, "json", false, "print one JSON object instead of text")
	fs.BoolVar(&o.chain, "chain", false, "run the owners of stream --nats's chain: the learner of the namespace's settings (a driver's flags) on its one partition; not with --in")
	cfg := &o.cfg
	fs.StringVar(&cfg.Namespace, "namespace", "nmf", "prefix of the subjects, streams and buckets of this factorization")
	fs.IntVar(&cfg.Rank, "rank", 10, "rank K of the factorization")
	fs.IntVar(&cfg.Partitions, "partitions", 4, "virtual partitions P (fixed for a namespace)")
	fs.IntVar(&cfg.Staleness, "staleness", 1, "rounds an owner may run ahead of U's version (0: synchronous rounds)")
	fs.IntVar(&cfg.Rounds, "rounds", 0, "stop at this version of U (0: no limit)")
	fs.IntVar(&cfg.Sweeps, "sweeps", 1, "multiplicative sweeps of a partition's older codes per round")
	fs.IntVar(&cfg.Refresh, "refresh", 0, "older codes swept per round and partition, round-robin (0: all)")
	fs.Float64Var(&cfg.Alpha, "alpha", 0, "GNMF's graph weight α on each partition's k-NN graph (0: NMF; every instance of a namespace must use the same)")
	fs.IntVar(&cfg.GraphK, "neighbors", 5, "k of each partition's k-NN graph (with --alpha)")
	fs.IntVar(&cfg.Window, "window", 0, "samples each partition's owner keeps (0: all)")
	fs.IntVar(&cfg.Replicas, "replicas", 1, "replicas of the streams and buckets (3 on a 3-node cluster survives a node's loss)")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "seed of the partitioner and of U's initialization")
	fs.DurationVar(&cfg.PinnedTTL, "pinned-ttl", 2*time.Second, "time after which a silent instance's roles move to another (failover time)")
	addCSVFlags(fs, &o.csvf)
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	o.given = givenFlags(fs)
	if o.workers < 0 || o.after < 0 || cfg.Rank < 1 || cfg.Partitions < 1 || !(cfg.Alpha >= 0) || cfg.Window < 0 {
		return nil, fmt.Errorf("%w: --workers, --after, --alpha and --window must not be negative, --rank and --partitions must be positive", errUsage)
	}
	if o.chain {
		if o.in != "" {
			return nil, fmt.Errorf("%w: --chain owners learn what stream --nats and serve --nats send: not with --in", errUsage)
		}
		if !o.given["partitions"] {
			cfg.Partitions = 1
		}
	}
	if o.workers == 0 && o.in == "" {
		return nil, fmt.Errorf("%w: --workers 0 without --in has nothing to do", errUsage)
	}
	if err := checkInput("--in", o.in); err != nil {
		return nil, err
	}
	if o.url == "" && !haveEmbeddedNATS {
		_, _, err := embeddedNATS(o.listen, o.store) // says how to get one
		return nil, err
	}
	return o, nil
}

// workerPool is the instances of the learner that worker runs, each on its
// own goroutine and connection; wait stops them and returns their errors.
type workerPool struct {
	cancel context.CancelFunc // stops every instance
	done   chan error         // each instance's end, buffered for all
	ws     []*distributed.Worker
	log    func(line string) // each instance's Worker.Log
}

// lineLogger returns a function that writes each line to w after prefix,
// one at a time (the instances' roles log from their goroutines).
func lineLogger(w io.Writer, prefix string) func(line string) {
	var mu sync.Mutex
	return func(line string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(w, prefix, line)
	}
}

// start starts n instances on connections from connect: the chain's
// owners with chain (distributed.NewChainWorker, learnerOf), else the
// workers of the owners' own GNMF step.
func (p *workerPool) start(ctx context.Context, connect func() (*nats.Conn, error), cfg distributed.Config, n int, chain bool) error {
	for range n {
		wc, err := connect()
		if err != nil {
			return err
		}
		var w *distributed.Worker
		if chain {
			w, err = distributed.NewChainWorker(ctx, wc, cfg, learnerOf)
		} else {
			w, err = distributed.NewWorker(ctx, wc, cfg)
		}
		if err != nil {
			return err
		}
		w.Log = p.log
		p.ws = append(p.ws, w)
		go func() { p.done <- w.Run(ctx) }()
	}
	return nil
}

// wait cancels the instances and waits for each to end.
func (p *workerPool) wait() error {
	p.cancel()
	var errs []error
	for range p.ws {
		errs = append(errs, <-p.done)
	}
	return errors.Join(errs...)
}

// publishSamples publishes samples in messages of up to 1,000.
func publishSamples(ctx context.Context, nc *nats.Conn, cfg distributed.Config, samples []distributed.Sample) error {
	if len(samples) == 0 {
		return nil
	}
	pub, err := distributed.NewPublisher(ctx, nc, cfg)
	if err != nil {
		return err
	}
	for i := 0; i < len(samples); i += 1000 {
		if err := pub.Publish(ctx, samples[i:min(i+1000, len(samples))]); err != nil {
			return err
		}
	}
	return nil
}

// awaitEnd waits for the end and returns the namespace's last state read:
// the n samples published all applied and after more versions of U, version
// cfg.Rounds, an instance ending on its own (corrupt data in the
// namespace), or ctx's end.
func (p *workerPool) awaitEnd(ctx context.Context, nc *nats.Conn, cfg distributed.Config, n, after int) distributed.State {
	var st distributed.State
	var allIn uint64 // the version at which every sample was applied
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return st
		case err := <-p.done:
			p.done <- err
			p.cancel()
			return st
		case <-tick.C:
			s, err := distributed.ReadState(ctx, nc, cfg)
			if err != nil {
				continue // no basis yet
			}
			st = s
			if n > 0 && st.Samples >= uint64(n) && allIn == 0 {
				allIn = st.Version
			}
			if (allIn > 0 && st.Version >= allIn+uint64(after)) || (cfg.Rounds > 0 && st.Version >= uint64(cfg.Rounds)) {
				p.cancel()
				return st
			}
		}
	}
}

// print writes the summary: one JSON object with asJSON, text otherwise.
func (sum workerSummary) print(stdout io.Writer, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(stdout).Encode(sum)
	}
	fmt.Fprintf(stdout, "applied %d samples in %d deltas, U at version %d, in %.2fs (%.0f samples/s) with %d instance(s) on %d partitions\n",
		sum.Samples, sum.Deltas, sum.Version, sum.Seconds, sum.SamplesPerSecond, sum.Workers, sum.Partitions)
	if sum.RelativeError != nil {
		fmt.Fprintf(stdout, "relative error ‖X − UVᵀ‖/‖X‖ of the input coded on U: %.4f\n", *sum.RelativeError)
	}
	return nil
}

// readSamples reads path as fit does and returns its samples, IDs being
// row numbers from 1 and labels class indices in order of appearance.
func readSamples(ctx context.Context, path string, csvf csvFlags) ([]distributed.Sample, model.Data, error) {
	in, err := readInput(ctx, path, csvf.opener(os.Stdin), nil)
	if err != nil {
		return nil, nil, err
	}
	if in.text != nil {
		return nil, nil, fmt.Errorf("%s: the worker takes dense or sparse features, not text (stream --nats featurizes documents and publishes them)", path)
	}
	if in.n() == 0 {
		return nil, nil, fmt.Errorf("%s: no usable record", path)
	}
	classes := map[string]int{}
	out := make([]distributed.Sample, in.n())
	for i := range out {
		s := distributed.Sample{ID: uint64(i + 1), Label: -1, Dim: in.d}
		if in.labeled[i] {
			c, ok := classes[in.labels[i]]
			if !ok {
				c = len(classes)
				classes[in.labels[i]] = c
			}
			s.Label = c
		}
		if in.sp != nil {
			ind, val := in.sp.Row(i)
			s.Index, s.Value = ind, val
		} else {
			s.Dense = in.dense[i*in.d : (i+1)*in.d]
		}
		out[i] = s
	}
	x, err := in.data(nil, false)
	if err != nil {
		return nil, nil, err
	}
	return out, x, nil
}

// relativeError codes x on u (10 multiplicative sweeps from constant
// codes) and returns ‖X − UVᵀ‖/‖X‖.
func relativeError(x model.Data, u *mat.Dense) (float64, error) {
	_, n := x.Dims()
	_, k := u.Dims()
	v := mat.NewDense(n, k, nil)
	for i := range v.RawMatrix().Data {
		v.RawMatrix().Data[i] = 1
	}
	if err := model.SweepRows(v, x, u, 10); err != nil {
		return 0, err
	}
	f := model.NewFrobenius(x)
	return math.Sqrt(f.Value(u, v) / x.SqNorm()), nil
}
