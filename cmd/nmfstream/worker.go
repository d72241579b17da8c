package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/nmfstream/nmfstream/distributed"
)

func init() {
	register(command{
		name:    "worker",
		summary: "run owners of the distributed chain on NATS JetStream (the partitions' learners, with failover) for stream --nats and serve --nats",
		run:     runWorker,
	})
}

const workerSynopsis = `worker [--nats URL] [--namespace ns] [--workers n] [--partitions P] [--replicas R] [--json]

Runs --workers owners of the chain of stream --nats and serve --nats on a
NATS JetStream namespace (package distributed, "The chain on the owners"
in distributed/DESIGN.md). Each of the namespace's --partitions partitions
has one owner at a time among the owners of every process on the same
--nats and --namespace; the owner of a partition runs stream's learner,
built from the learner settings the namespace's first driver stored (its
--method, --rank, --window, --predictor, …), on the batches the drivers
send to the partition, and answers each with its predictions. When an
owner stops pulling for --pinned-ttl, another takes the partition over
and replays its batches, so that every driver receives each batch's
answer exactly once. The partitions spread over the live workers: a
worker holds at most ⌈P/n⌉ of them, n the workers it hears (the first
worker of a namespace takes them all and gives them up as others come).
Each partition taken and released is printed on stderr, and so is the
loss of the NATS server (again every 30 s while it lasts) and its return:
the owners retake their partitions once it is back.

The namespace holds its partitions (and the other settings of its first
instance): a worker takes them unless --partitions is given, and is
refused, with a message naming the setting, if it gives another. A worker
runs until interrupted and then prints what its owners did.

The learner's flags (--rank, --alpha, --window, …) are the drivers':
give them to stream --nats or serve --nats. To learn a file on the
owners, run stream --nats --in F (with --workers 0 when workers run
elsewhere). --chain, once needed to run these owners, is accepted and
does nothing: the chain is the only distributed learner.

Without --nats, a binary built with -tags nats starts an embedded
single-node server on --listen (storing in --store, or a temporary
directory); drivers and other workers join it with --nats nats://HOST:PORT.
A binary built without the tag needs --nats: scripts/nats-cluster.sh
starts a 3-node cluster on loopback.

Examples:
  go run -tags nats ./cmd/nmfstream worker --listen 127.0.0.1:4222
  nmfstream worker --nats nats://127.0.0.1:4222 --namespace digits --partitions 3 --workers 2
  nmfstream worker --nats nats://127.0.0.1:4222,nats://127.0.0.1:4223,nats://127.0.0.1:4224 --replicas 3 --json`

// workerSummary is the JSON object worker --json prints when it stops.
type workerSummary struct {
	// Batches counts the batch shares the owners learned and answered
	// (replays after a takeover included), Samples the predictions in
	// those answers.
	Batches int `json:"batches"`
	Samples int `json:"samples"`
	// Takeovers counts the partitions the owners took, their first
	// included.
	Takeovers int `json:"takeovers"`
	// Skipped counts the batch messages the owners could not read (not
	// the chain's, or damaged), logged and skipped.
	Skipped    int     `json:"skipped"`
	Seconds    float64 `json:"seconds"`
	Workers    int     `json:"workers"`
	Partitions int     `json:"partitions"`
	Server     string  `json:"server"`
}

func runWorker(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseWorkerFlags(args, stderr)
	if err != nil {
		return err
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
	logLine := lineLogger(stderr, "nmfstream worker:")
	opts := natsOptions(server, logLine)
	connect := func() (*nats.Conn, error) {
		nc, err := nats.Connect(server, opts...)
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
	pool := &workerPool{cancel: cancel, done: make(chan error, o.workers), log: logLine}
	start := time.Now()
	if err := pool.start(ctx, connect, o.cfg, o.workers, o.snapshotEvery); err != nil {
		return errors.Join(err, pool.wait())
	}
	fmt.Fprintf(stderr, "nmfstream worker: %d owner(s) running on namespace %q (%d partitions) at %s\n", o.workers, o.cfg.Namespace, o.cfg.Partitions, server)
	pool.awaitEnd(ctx)
	elapsed := time.Since(start)
	if err := pool.wait(); err != nil {
		return err
	}
	sum := workerSummary{Seconds: elapsed.Seconds(), Workers: o.workers, Partitions: o.cfg.Partitions, Server: server}
	for _, w := range pool.ws {
		st := w.Stats()
		sum.Batches += st.Rounds
		sum.Samples += st.Samples
		sum.Takeovers += st.Takeovers
		sum.Skipped += st.Skipped
	}
	return sum.print(stdout, o.asJSON)
}

// workerOptions are worker's flags, parsed and checked.
type workerOptions struct {
	url, listen, store string
	workers            int
	snapshotEvery      int // batches between an owner's snapshots (distributed.Worker.SnapshotEvery)
	asJSON             bool
	cfg                distributed.Config
	given              map[string]bool // the flags the command line set
}

// retiredWorkerFlags are the flags of the owners' own GNMF step, retired
// with it: each names what to use instead.
var retiredWorkerFlags = map[string]string{
	"in":     "worker --in was retired with the owners' own GNMF step: learn a file on the owners with stream --nats NATS --in F (--workers 0 when workers run elsewhere)",
	"after":  "worker --after was retired with worker --in: learn a file with stream --nats --in F",
	"rounds": "worker --rounds was retired with the owners' own GNMF step: a worker runs until interrupted",
}

// learnerFlags are the learner's flags that worker once took: the
// owners' learner is the namespace's (its first driver's flags).
var learnerFlags = []string{"rank", "staleness", "sweeps", "refresh", "alpha", "neighbors", "window", "seed"}

// parseWorkerFlags parses worker's arguments; an error says which flag is
// wrong (a retired one: what replaces it), or, without a server and an
// embedded one, how to get one.
func parseWorkerFlags(args []string, stderr io.Writer) (*workerOptions, error) {
	if err := retiredFlag(args); err != nil {
		return nil, err
	}
	o := &workerOptions{}
	fs := newFlags("worker", workerSynopsis, stderr)
	fs.StringVar(&o.url, "nats", "", "NATS server `URL`s, comma-separated (empty: an embedded server, in a binary built with -tags nats)")
	fs.StringVar(&o.listen, "listen", "127.0.0.1:4222", "embedded server: `host:port` to listen on (port 0: any free port)")
	fs.StringVar(&o.store, "store", "", "embedded server: JetStream storage `directory` (empty: a temporary one, removed at exit)")
	fs.IntVar(&o.workers, "workers", 1, "owners to run in this process")
	fs.IntVar(&o.snapshotEvery, "snapshot-every", 100, "batches between the snapshots of an owner's learner in the namespace and the point up to which its partition's batches are trimmed from the batch stream (-1: none: nothing is trimmed, a takeover replays the partition from its first batch)")
	fs.BoolVar(&o.asJSON, "json", false, "print one JSON object instead of text when stopped")
	fs.Bool("chain", true, "accepted and ignored: the owners always run the chain (once it chose them over the retired GNMF step)")
	cfg := &o.cfg
	fs.StringVar(&cfg.Namespace, "namespace", "nmf", "prefix of the subjects, streams and buckets of the namespace (the drivers' --namespace)")
	fs.IntVar(&cfg.Partitions, "partitions", 1, "partitions P of a new namespace (an existing one's unless given; the drivers' --partitions)")
	fs.IntVar(&cfg.Replicas, "replicas", 1, "replicas of the streams and buckets (3 on a 3-node cluster survives a node's loss)")
	fs.DurationVar(&cfg.PinnedTTL, "pinned-ttl", 2*time.Second, "time after which a silent owner's partition moves to another (failover time)")
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	if o.snapshotEvery == 0 {
		return nil, fmt.Errorf("%w: --snapshot-every must not be 0 (-1: no snapshots)", errUsage)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	o.given = givenFlags(fs)
	switch {
	case o.workers < 1:
		return nil, fmt.Errorf("%w: --workers %d: a worker runs at least one owner (nothing to do with 0)", errUsage, o.workers)
	case cfg.Partitions < 1:
		return nil, fmt.Errorf("%w: --partitions %d must be positive", errUsage, cfg.Partitions)
	case cfg.Replicas < 1 || cfg.Replicas > 5:
		return nil, fmt.Errorf("%w: --replicas %d must be 1 to 5", errUsage, cfg.Replicas)
	case cfg.PinnedTTL <= 0:
		return nil, fmt.Errorf("%w: --pinned-ttl %v must be positive", errUsage, cfg.PinnedTTL)
	}
	if o.url == "" && !haveEmbeddedNATS {
		_, _, err := embeddedNATS(o.listen, o.store) // says how to get one
		return nil, err
	}
	return o, nil
}

// retiredFlag returns a usage error naming the first retired flag of
// args and what replaces it, or nil.
func retiredFlag(args []string) error {
	for _, a := range args {
		if a == "--" || !strings.HasPrefix(a, "-") {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if msg, ok := retiredWorkerFlags[name]; ok {
			return fmt.Errorf("%w: %s", errUsage, msg)
		}
		for _, l := range learnerFlags {
			if name == l {
				return fmt.Errorf("%w: worker --%s: the owners learn with the namespace's learner settings, which its first driver stores: give --%s to stream --nats or serve --nats", errUsage, name, name)
			}
		}
	}
	return nil
}

// workerPool is the owners that worker runs, each on its own goroutine
// and connection; wait stops them and returns their errors.
type workerPool struct {
	cancel context.CancelFunc // stops every owner
	done   chan error         // each owner's end, buffered for all
	ws     []*distributed.Worker
	log    func(line string) // each owner's Worker.Log
}

// lineLogger returns a function that writes each line to w after prefix,
// one at a time (the owners' roles log from their goroutines).
func lineLogger(w io.Writer, prefix string) func(line string) {
	var mu sync.Mutex
	return func(line string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(w, prefix, line)
	}
}

// start starts n owners of the chain (distributed.NewChainWorker with
// stream's learner, learnerOf) on connections from connect.
func (p *workerPool) start(ctx context.Context, connect func() (*nats.Conn, error), cfg distributed.Config, n, snapshotEvery int) error {
	for i := range n {
		wc, err := connect()
		if err != nil {
			return err
		}
		w, err := distributed.NewChainWorker(ctx, wc, cfg, learnerOf)
		if err != nil {
			return err
		}
		w.Log, w.SnapshotEvery, w.Expect, w.Index = p.log, snapshotEvery, n, i
		p.ws = append(p.ws, w)
		go func() { p.done <- w.Run(ctx) }()
	}
	return nil
}

// awaitEnd returns when ctx ends (an interrupt) or an owner ends on its
// own (corrupt data in the namespace: wait returns its error).
func (p *workerPool) awaitEnd(ctx context.Context) {
	select {
	case <-ctx.Done():
	case err := <-p.done:
		p.done <- err
		p.cancel()
	}
}

// wait cancels the owners and waits for each to end.
func (p *workerPool) wait() error {
	p.cancel()
	var errs []error
	for range p.ws {
		errs = append(errs, <-p.done)
	}
	return errors.Join(errs...)
}

// print writes the summary: one JSON object with asJSON, text otherwise.
func (sum workerSummary) print(stdout io.Writer, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(stdout).Encode(sum)
	}
	_, err := fmt.Fprintf(stdout, "answered %d batch shares (%d predictions) in %.2fs with %d owner(s) on %d partitions, %d takeovers, %d unreadable messages skipped\n",
		sum.Batches, sum.Samples, sum.Seconds, sum.Workers, sum.Partitions, sum.Takeovers, sum.Skipped)
	return err
}
