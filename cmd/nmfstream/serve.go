package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/pipeline"
	"github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/sinks"
	"github.com/nmfstream/nmfstream/sources"
	"github.com/nmfstream/nmfstream/stages"
	"github.com/nmfstream/nmfstream/wal"
)

func init() {
	register(command{
		name:    "serve",
		summary: "ingestion service: HTTP records in, codes and predictions out, learning as they arrive",
		run:     runServe,
	})
}

// defaultFsyncEvery is the default of serve --fsync-interval.
const defaultFsyncEvery = 100 * time.Millisecond

// defaultServeImagePixels is the default of serve --max-image-pixels: 2²²
// pixels (4 megapixels, e.g. 2048×2048), a quarter of what a file source
// takes (2²⁴), since serve decodes the images of --max-inflight requests at
// once. README.md ("Limits: what a client can make serve hold") gives the
// bytes a pixel that decoding an image holds.
const defaultServeImagePixels = 1 << 22

// Media types of the records and predictions bodies.
const (
	mediaArrow = "application/vnd.apache.arrow.stream"
	mediaJSONL = "application/x-ndjson"
)

const serveSynopsis = `serve [--addr 127.0.0.1:8080] [--checkpoint C] [--model M] [--method M] [--window n] [--batch n]

Runs the stream of "nmfstream stream" behind HTTP, as an ingestion
service: POST /v1/records takes records (JSON lines, or an Arrow IPC
stream) and answers each one's code and arrival-time prediction once it
has been learned; POST /v1/labels takes late labels; GET /v1/records/{id}
returns a recent record's code and prediction; GET /metrics (Prometheus),
GET /healthz and GET /openapi.json (the API's OpenAPI 3 document).
With --checkpoint C it resumes from C when C exists and saves its state to
C every --checkpoint-every records and posted labels, and at shutdown. It
also keeps a write-ahead log (--wal, default C.wal): a POST is answered
2xx only once it is learned and appended to the log, and synced as
--fsync says: always (before each answer; concurrent requests share one
fsync) survives a crash of the machine; interval (every
--fsync-interval) and never (left to the OS) survive kill -9 of the
process only. On start, the log's entries after the checkpoint are
replayed before serve listens. A torn tail (the partial last write of a
crash) is dropped with a warning naming its bytes; a complete entry that
fails its checksum refuses the start unless --wal-recover, which replays
the entries before it. Dropped bytes are kept in <wal>.dropped-<offset>.
Without --checkpoint nothing is durable.

No request can stop serve: a record is checked before it touches the
model, and one that fails a check is rejected with the reason. A record
with fewer features than --rank lowers the rank to its features before
the first fit. What a client can make serve hold is bounded in bytes:
bodies (--max-body, --max-inflight), features (--max-dim), images
(--max-image-pixels), the window
(--max-window-bytes), classes (--max-classes), ids and labels (256
bytes each), texts (1 MiB),
the log (--checkpoint-bytes), and slow bodies are cut off
(--min-body-rate after --body-grace). Prefer --token-file to --token,
which other users see in ps; any address but loopback is warned about. --model M starts a new
stream from a fitted model (fit --save) and its training records; M is
read, never written. --model CKPT (a checkpoint, or a file that does not
exist yet) is the deprecated spelling of --checkpoint CKPT. It listens on
loopback unless --addr says otherwise; SIGINT or SIGTERM stop it
gracefully. With --nats URL it serves the distributed learner instead
(see nmfstream serve --nats URL -help).

Examples:
  nmfstream serve
  nmfstream serve --addr 127.0.0.1:9000 --checkpoint service.ckpt
  nmfstream serve --model digits.model --checkpoint service.ckpt
  curl -s --data-binary '{"id":"a","x":[0,3,16,2]}' http://127.0.0.1:8080/v1/records`

// serveOptions are serve's flags beyond the stream's (onlineConfig).
type serveOptions struct {
	ckpt, modelPath, addr, walPath, fsync, predictor, metric string
	token, tokenFile                                         string
	every, ckptBytes, maxBody, maxWindowBytes, minBodyRate   int64
	maxInFlight, recent, maxDim, maxClasses, maxImagePixels  int
	readTimeout, writeTimeout, fsyncEvery, bodyGrace         time.Duration
	walRecover                                               bool
}

// serveFlags registers serve's flags on fs.
func serveFlags(fs *flag.FlagSet, o *serveOptions) {
	fs.StringVar(&o.ckpt, "checkpoint", "", "checkpoint `file` (from stream or serve) to resume from if it exists, and to save to")
	fs.StringVar(&o.modelPath, "model", "", "fitted model `file` (fit --save) that seeds a new stream with its training records; read, never written")
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "listen `address`")
	bodyBoundFlags(fs, o)
	learnerBoundFlags(fs, &o.maxClasses, &o.maxWindowBytes)
	fs.Int64Var(&o.every, "checkpoint-every", 10000, "records and posted labels between checkpoints (with --checkpoint)")
	fs.Int64Var(&o.ckptBytes, "checkpoint-bytes", 64<<20, "also checkpoint once the write-ahead log holds this many `bytes`, which bounds the log and its replay (0: count only)")
	fs.StringVar(&o.token, "token", "", "bearer `token` every request but /healthz and /openapi.json must carry (Authorization: Bearer …); visible to other users in ps: prefer --token-file")
	fs.StringVar(&o.tokenFile, "token-file", "", "`file` holding the bearer token (surrounding white space ignored)")
	fs.StringVar(&o.walPath, "wal", "", "write-ahead `file` of the records and labels acknowledged since the last checkpoint (with --checkpoint; default <checkpoint>.wal; off: none)")
	fs.BoolVar(&o.walRecover, "wal-recover", false, "start even if the write-ahead log is damaged: replay its entries before the damage, set the rest aside in <wal>.dropped-<offset> (see -help)")
	fs.StringVar(&o.fsync, "fsync", "always", "when the write-ahead log is fsynced before an answer: always (group commit), interval (every --fsync-interval) or never (see -help)")
	fs.DurationVar(&o.fsyncEvery, "fsync-interval", defaultFsyncEvery, "fsync period of --fsync interval")
	fs.IntVar(&o.recent, "recent", 10000, "records whose code and prediction GET /v1/records/{id} returns: the most recent ones with an id (0: none)")
	fs.StringVar(&o.predictor, "predictor", "graph", "classifier: graph, spread, nearest, walk or propagate (see stream -help)")
	fs.StringVar(&o.metric, "metric", "euclidean", "code-space distance of the classifier: euclidean or cosine")
	fs.IntVar(&o.maxImagePixels, "max-image-pixels", defaultServeImagePixels, "largest image of an Arrow body's image column, in `pixels` (width·height), refused from its header before it is decoded (a reject of its record); a request's images are decoded one at a time")
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if args, ok := natsArgs(args); ok {
		return runServeNATS(ctx, args, stdout, stderr)
	}
	fs := newFlags("serve", serveSynopsis, stderr)
	var o serveOptions
	serveFlags(fs, &o)
	var cfg onlineConfig
	addOnlineFlags(fs, &cfg)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	s, err := newServer(fs, &o, cfg, stderr)
	if err != nil {
		return err
	}
	if err := s.openLog(o.walPath, o.walRecover); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "nmfstream serve: listening on http://%s\n", ln.Addr())
	if w := exposureWarning(ln.Addr(), s.token != ""); w != "" {
		fmt.Fprintf(stderr, "nmfstream serve: warning: %s\n", w)
	}
	return s.serve(ctx, ln)
}

// newServer checks serve's flags and builds the service with its learner,
// resumed from the checkpoint if there is one.
func newServer(fs *flag.FlagSet, o *serveOptions, cfg onlineConfig, stderr io.Writer) (*server, error) {
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("%w: unexpected argument %q (flags go before, as --flag value)", errUsage, fs.Arg(0))
	}
	var err error
	if cfg.Predictor, err = parsePredictor(o.predictor); err != nil {
		return nil, err
	}
	if cfg.Metric, err = parseMetric(o.metric); err != nil {
		return nil, err
	}
	if err := errors.Join(checkCodeUse(cfg), checkOnlineConfig(&cfg)); err != nil {
		return nil, err
	}
	if cfg.Rank <= 0 || cfg.Batch < 0 || o.recent < 0 || o.maxDim <= 0 || o.maxImagePixels <= 0 || o.ckptBytes < 0 || o.minBodyRate < 0 {
		return nil, fmt.Errorf("%w: -rank, -max-dim and -max-image-pixels must be positive; -batch, -recent, -checkpoint-bytes and -min-body-rate not negative", errUsage)
	}
	if o.maxInFlight < 0 || o.readTimeout <= 0 || o.writeTimeout <= 0 || o.fsyncEvery <= 0 {
		return nil, fmt.Errorf("%w: --max-inflight must not be negative, --read-timeout, --write-timeout and --fsync-interval must be positive", errUsage)
	}
	if cfg.Batch == 0 {
		cfg.Batch = autoBatch(cfg.Window)
	}
	token, err := readToken(o.token, o.tokenFile)
	if err != nil {
		return nil, err
	}
	cpath, seed, err := modelOrCheckpoint("serve", o.modelPath, o.ckpt, stderr)
	if err != nil {
		return nil, err
	}
	if err := checkOutput("--checkpoint", cpath); err != nil {
		return nil, err
	}
	policy, err := wal.ParsePolicy(o.fsync)
	if err != nil {
		return nil, fmt.Errorf("%w: --fsync: %v", errUsage, err)
	}
	l, cfg, cp, err := openLearner(cpath, seed, fs, cfg, stderr)
	if err != nil {
		return nil, err
	}
	// A fitted model fixes the form of the samples from the start; a fresh
	// model learns it from the first request, too late to refuse a setting
	// (a resumed one goes on with its checkpoint's settings).
	if seed != nil && cp == nil {
		if form, dim, ok := seedForm(seed); ok {
			if err := checkFormUse(cfg, form, dim); err != nil {
				return nil, err
			}
		}
	}
	s := &server{learner: l, cfg: cfg, ckpt: cpath, every: o.every, ckptBytes: o.ckptBytes, maxBody: o.maxBody, recentMax: o.recent,
		maxInFlight: o.maxInFlight, token: token, readTimeout: o.readTimeout, writeTimeout: o.writeTimeout,
		minBodyRate: o.minBodyRate, bodyGrace: o.bodyGrace, fsync: policy, fsyncEvery: o.fsyncEvery, stderr: stderr,
		limits: sources.JSONLimits{MaxDim: o.maxDim}, maxImagePixels: o.maxImagePixels}
	s.limit(o.maxDim, o.maxClasses, o.maxWindowBytes)
	if cp != nil {
		s.resume(cp)
	}
	return s, nil
}

// limit applies --max-dim, --max-classes and --max-window-bytes to the
// learner: checks made before a record touches the model
// (stages.Featurize).
func (s *server) limit(maxDim, maxClasses int, windowBytes int64) {
	s.learner.Featurize.MaxDim, s.learner.Featurize.MaxClasses = maxDim, maxClasses
	s.learner.Featurize.MaxWindowBytes = windowBytes
}

// readToken returns the bearer token of --token or --token-file.
func readToken(token, file string) (string, error) {
	if file == "" {
		return token, nil
	}
	if token != "" {
		return "", fmt.Errorf("%w: --token and --token-file: give one", errUsage)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("--token-file: %w", err)
	}
	t := strings.TrimSpace(string(b))
	if t == "" || strings.ContainsAny(t, "\r\n") {
		return "", fmt.Errorf("--token-file: %s must hold one non-empty line", file)
	}
	return t, nil
}

// exposureWarning returns a warning for a listener that other machines can
// reach (any address but loopback), or "" for none: without a token anyone
// who reaches the port can post records and labels.
func exposureWarning(a net.Addr, token bool) string {
	ta, ok := a.(*net.TCPAddr)
	if !ok || ta.IP.IsLoopback() {
		return ""
	}
	where := fmt.Sprintf("%s is reachable from other machines", ta)
	if ta.IP.IsUnspecified() {
		where = fmt.Sprintf("%s listens on every network interface", ta)
	}
	if token {
		return where + ", with a bearer token (use TLS in front of it: the token travels in clear)"
	}
	return where + " WITHOUT authentication (set --token-file); --addr 127.0.0.1:PORT keeps it on this machine"
}

// openLog opens the write-ahead log that --checkpoint and --wal ask for
// and replays it (openWAL).
func (s *server) openLog(walPath string, recover bool) error {
	switch {
	case walPath == "off":
		return nil
	case s.ckpt == "" && walPath != "":
		return fmt.Errorf("%w: --wal needs --checkpoint (the log holds what the last checkpoint lacks)", errUsage)
	case s.ckpt == "":
		return nil
	}
	if walPath == "" {
		walPath = s.ckpt + ".wal"
	}
	n, err := s.openWAL(walPath, recover)
	if err != nil {
		return err
	}
	if n > 0 {
		fmt.Fprintf(s.stderr, "nmfstream serve: replayed %d acknowledged requests from %s\n", n, walPath)
	}
	return nil
}

// openLearner resumes from the checkpoint at ckpt if it exists; else it
// starts from the fitted model seed if not nil, else from a fresh model.
// The checkpoint is never the fitted model's file (modelOrCheckpoint), so
// serve never overwrites a model given as input.
// It returns the checkpoint it resumed from, nil for none.
func openLearner(ckpt string, seed *model.Snapshot, fs *flag.FlagSet, cfg onlineConfig, stderr io.Writer) (*stages.Learner, onlineConfig, *checkpoint, error) {
	if ckpt != "" {
		cp, err := loadCheckpoint(ckpt)
		switch {
		case err == nil:
			if ferr := sameConfig(fs, cfg, cp.Config); ferr != nil {
				return nil, cfg, nil, fmt.Errorf("%w: %s: %v", errUsage, ckpt, ferr)
			}
			l, err := cp.restore()
			if err != nil {
				return nil, cfg, nil, fmt.Errorf("%s: %w", ckpt, err)
			}
			if seed != nil {
				fmt.Fprintf(stderr, "nmfstream serve: resuming from checkpoint %s; --model is used only to start a new stream\n", ckpt)
			}
			return l, cp.Config, cp, nil
		case !errors.Is(err, errNoCheckpoint):
			return nil, cfg, nil, fmt.Errorf("--checkpoint: %w", err)
		}
	}
	if seed != nil {
		l, err := seedFromSnapshot(seed, cfg)
		return l, cfg, nil, err
	}
	return cfg.learner(), cfg, nil, nil
}

// seedFromSnapshot starts a stream from a fitted model's training samples
// and labels: they are the first batch (a batch GNMF on them, the online
// model's first fit), so the service predicts from its first request. The
// fitted basis itself is not reused: model.Online has no way to start from
// a given U.
func seedFromSnapshot(s *model.Snapshot, cfg onlineConfig) (*stages.Learner, error) {
	l := cfg.learner()
	b := &record.Batch{}
	switch {
	case s.TrainDense != nil:
		b.Form, b.Dense = record.FormDense, s.TrainDense
	case s.TrainSparse != nil:
		b.Form, b.Sparse = record.FormSparse, s.TrainSparse
	default:
		return nil, errors.New("saved model has no training samples to seed a stream with")
	}
	if s.Vectorizer != nil {
		l.Featurize.TFIDF = &stages.TFIDF{}
		if err := l.Featurize.TFIDF.UnmarshalBinary(s.Vectorizer); err != nil {
			return nil, err
		}
	}
	n, _ := model.Rows(s.Train()).Dims()
	if w := cfg.Window; w > 0 && n > w {
		return nil, fmt.Errorf("saved model has %d training samples, more than -window %d", n, w)
	}
	l.Model.InitSize = n
	for i := range n {
		b.IDs = append(b.IDs, "")
		b.Offsets = append(b.Offsets, int64(i))
		lab := ""
		if i < len(s.Labels) && s.Labels[i] >= 0 && s.Labels[i] < len(s.Classes) {
			lab = s.Classes[s.Labels[i]]
		}
		b.Labels = append(b.Labels, lab)
		b.Labeled = append(b.Labeled, lab != "")
	}
	if _, err := l.Learn(b); err != nil {
		return nil, err
	}
	return l, nil
}

// server is the ingestion service. Its handlers decode requests and hand
// them to a pipeline that runs the stages of stream (chain.go):
//
//	http → split → featurize → learn → respond
//
// http is a pipeline.FromChan of the handlers' requests; split cuts a
// request into its batches (parts) and numbers its records; featurize is
// stages.NewFeatures, in parallel, order kept; learn is the one goroutine that
// owns the learner (and writes the checkpoints and the metrics); respond
// completes a request once every part of it has been learned and counted,
// so that a client that got a 2xx reads its own writes in /metrics.
type server struct {
	learner *stages.Learner
	cfg     onlineConfig
	ckpt    string
	every   int64
	// ckptBytes, if positive, also checkpoints once the write-ahead log
	// holds that many bytes: it bounds the log, and the replay after a
	// crash.
	ckptBytes int64
	maxBody   int64
	// limits bound each JSON record (--max-dim, id, label and text sizes).
	limits sources.JSONLimits
	// maxImagePixels bounds an Arrow record's image (--max-image-pixels),
	// checked from its header before it is decoded; 0 means
	// defaultServeImagePixels.
	maxImagePixels int
	// minBodyRate, if positive, is the slowest body accepted in bytes per
	// second once bodyGrace has passed (slowBody).
	minBodyRate int64
	bodyGrace   time.Duration
	stderr      io.Writer // warnings while opening the log
	// maxInFlight caps the requests handled at once (0: no cap); token,
	// if set, is the bearer token requests must carry.
	maxInFlight int
	token       string
	posting     atomic.Int64 // POST requests in flight

	// readTimeout and writeTimeout bound a request's reading and its
	// answer (http.Server's); zero means none (tests).
	readTimeout, writeTimeout time.Duration
	// recentMax bounds the records GET /v1/records/{id} remembers; 0
	// remembers none.
	recentMax int

	// log, if not nil, is the write-ahead log: the learn stage appends
	// each request to it once learned, and its handler answers once the
	// entry is committed under the fsync policy. walSeq is the sequence
	// number of the last entry appended (learn stage, and serve after the
	// pipeline stopped); a checkpoint records it and truncates the log.
	log        *wal.Writer
	fsync      wal.Policy
	fsyncEvery time.Duration
	walSeq     uint64

	requests chan *request // handlers → the pipeline; closed by serve under inMu
	inMu     sync.RWMutex  // senders hold it for reading, the closer for writing
	closed   bool          // requests is closed; guarded by inMu
	stopped  chan struct{} // closed once the pipeline has stopped
	runErr   error         // why it stopped; read only after stopped is closed

	mu        sync.Mutex // guards the fields below, written by the learn stage
	counts    stages.Counters
	pending   int
	forgotten int64 // waiting labels forgotten (stages.Learner.ForgottenLabels)
	lat       latency
	saveErr   error
	recent    recentRecords
}

// request is the work of one HTTP request. Its handler sets batches (the
// records, offsets numbered from 0 across the body; a POST /v1/labels is
// one batch of late labels, labelsBatch), submits it, and reads base,
// steps, k and tally once done is closed: the pipeline writes them before
// it closes done.
type request struct {
	batches []*record.Batch
	labels  bool   // a POST /v1/labels: batches is its one batch of late labels
	entry   []byte // the write-ahead log entry (walEntry), nil without a log
	done    chan struct{}

	base  int64          // the stream offset of the request's first record (split)
	steps []*stages.Step // one per batch, in order
	k     int            // the rank of the codes, 0 before the model's first fit
	seq   uint64         // the log entry's sequence number, 0 for none
	tally labelTally     // with labels, what became of them (learned)
}

// part is the item of serve's pipeline: one batch of a request, and on the
// request's last part its labels.
type part struct {
	link // the batch (nil for a request without records) and what the chain made of it
	req  *request
	last bool // the request's last part: learn applies req.labels, respond completes req
	k    int
}

func (p *part) chainLink() *link { return &p.link }

// latency is a Prometheus histogram of batch latencies.
type latency struct {
	counts []int64 // per bucket, cumulative at exposition
	sum    float64
	n      int64
}

var latencyBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

func (h *latency) observe(s float64) {
	if h.counts == nil {
		h.counts = make([]int64, len(latencyBuckets))
	}
	for i, b := range latencyBuckets {
		if s <= b {
			h.counts[i]++
		}
	}
	h.sum += s
	h.n++
}

// serve runs the HTTP server and the pipeline until ctx is cancelled, then
// shuts down gracefully: requests in flight finish, the pipeline drains,
// and the final checkpoint is written. If the pipeline fails (the learner
// cannot go on), serve stops the HTTP server, writes no checkpoint (the
// last one stays valid) and returns the pipeline's error, which names the
// failing stage; requests waiting for it get 503.
func (s *server) serve(ctx context.Context, ln net.Listener) error {
	s.requests = make(chan *request)
	s.stopped = make(chan struct{})
	s.counts = s.learner.Counters()
	s.pending = s.learner.Pending()
	p := s.pipeline()
	var wg sync.WaitGroup
	wg.Go(func() {
		// Not ctx: a cancelled ctx ends the stream softly, by closing
		// requests once the handlers are done, so that everything accepted
		// is learned and answered.
		s.runErr = p.Run(context.Background())
		close(s.stopped)
	})

	srv := &http.Server{Handler: s.handler(), ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout: s.readTimeout, WriteTimeout: s.writeTimeout, IdleTimeout: 2 * time.Minute}

	errc := make(chan error, 1)
	wg.Go(func() { errc <- srv.Serve(ln) })
	syncErr := make(chan error, 1)
	stopSync := func() error { return nil }
	if s.log != nil && s.fsync == wal.SyncInterval {
		sctx, cancel := context.WithCancel(context.Background())
		wg.Go(func() { syncErr <- s.log.SyncLoop(sctx, s.fsyncEvery) })
		stopSync = func() error { cancel(); return <-syncErr }
	}
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
	case <-s.stopped:
	}
	if err == nil {
		// Drain: every request in flight is answered, however long its
		// client may legitimately take (its headers, then --write-timeout
		// to the end of its answer, the body and the learning included);
		// past that, the server has cut the connection itself.
		sctx, cancel := context.WithTimeout(context.Background(), drainTimeout(srv))
		err = srv.Shutdown(sctx)
		cancel()
		if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) {
			err = errors.Join(err, serr)
		}
	}
	// No handler sends any more (a late one finds closed set): end the
	// stream, let the pipeline drain, and wait for it.
	s.inMu.Lock()
	s.closed = true
	close(s.requests)
	s.inMu.Unlock()
	err = errors.Join(err, stopSync())
	wg.Wait()
	if s.runErr != nil {
		// No checkpoint: the last one and the log after it stay valid.
		if s.log != nil {
			s.log.Close()
		}
		return errors.Join(s.runErr, ignoreClosed(err))
	}
	if serr := s.save(); serr != nil {
		err = errors.Join(err, serr)
	}
	if s.log != nil {
		err = errors.Join(err, s.log.Close())
	}
	return ignoreClosed(err)
}

// drainTimeout bounds serve's drain: the longest a request may last on
// srv (ReadHeaderTimeout, then WriteTimeout to the end of its answer), and
// a few seconds more.
func drainTimeout(srv *http.Server) time.Duration {
	return srv.ReadHeaderTimeout + max(srv.WriteTimeout, srv.ReadTimeout) + 5*time.Second
}

func ignoreClosed(err error) error {
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// pipeline builds serve's pipeline; Run starts it.
func (s *server) pipeline() *pipeline.Pipeline {
	next := s.learner.Counters().Records // offset of the next record
	split := func(_ context.Context, r *request) ([]*part, error) {
		// The records of a request are contiguous in the stream: their
		// offsets follow the records counted before them.
		parts := make([]*part, 0, max(1, len(r.batches)))
		r.base = next
		for _, b := range r.batches {
			shiftOffsets(b, next)
			parts = append(parts, &part{req: r, link: link{batch: b}})
		}
		for _, b := range r.batches {
			next += int64(b.Records())
		}
		if len(parts) == 0 {
			parts = append(parts, &part{req: r})
		}
		parts[len(parts)-1].last = true
		return parts, nil
	}
	var ls learnState
	ls.lastSave, ls.formKnown = s.learner.Counters().Records, s.learner.Model.KNN() != nil
	learned := func(p *part) error { return s.learned(&ls, p) }
	respond := func(_ context.Context, p *part) error {
		r := p.req
		if p.step != nil {
			r.steps = append(r.steps, p.step)
		}
		r.k = p.k
		if p.last {
			close(r.done)
		}
		return nil
	}
	return newChain(s.learner, pipeline.FromChan("http", s.requests),
		[]pipeline.Stage{pipeline.FlatMap("split", 1, split)}, learned,
		pipeline.To("respond", pipeline.WriteFunc[*part](respond)))
}

// learnState is the learn stage's own count for --checkpoint-every: the
// records (samples, labels and rejects) counted at the last checkpoint.
type learnState struct {
	lastSave int64
	// formKnown: the learner's samples have fixed their form, and the
	// settings were checked against it (warnForm).
	formKnown bool
}

// warnForm, once the first records have fixed the form of a fresh
// service's samples, says on stderr which of its settings change nothing
// on them (checkFormUse): serve, which could not know the form when it
// started, keeps them. A service seeded by --model was checked when it
// started, and a resumed one goes on with its checkpoint's settings.
func (s *server) warnForm(ls *learnState) {
	l := s.learner
	if ls.formKnown || l.Model.KNN() == nil || s.stderr == nil {
		return
	}
	ls.formKnown = true
	form, dim := record.FormDense, l.Featurize.Dim()
	switch {
	case l.Model.Sparse() && l.Featurize.TFIDF != nil:
		form, dim = record.FormText, 0
	case l.Model.Sparse():
		form, dim = record.FormSparse, 0
	}
	for _, err := range joined(checkFormUse(s.cfg, form, dim)) {
		fmt.Fprintf(s.stderr, "nmfstream serve: warning: %v (kept: the first records fixed the form after the service started; restart without it)\n", err)
	}
}

// learned runs on the chain's learn stage once p's batch is learned: it
// counts what became of a label request's labels (request.tally); on a
// request's last part it appends the request to the write-ahead log; it
// publishes the counters and checkpoints when --checkpoint-every or
// --checkpoint-bytes says. It runs on the one goroutine that owns the
// learner; an error stops the service (the learner cannot go on).
func (s *server) learned(ls *learnState, p *part) error {
	l := s.learner
	if st := p.step; p.req.labels && st != nil {
		p.req.tally = labelTally{waited: len(st.Waited), waiting: l.StillWaiting(st.Waited),
			forgotten: st.Forgotten, replaced: stages.Replaced(st.Waited)}
	}
	if p.last {
		if s.log != nil && p.req.entry != nil {
			seq, err := s.log.Append(p.req.entry)
			if err != nil {
				return err
			}
			p.req.seq, p.req.entry, s.walSeq = seq, nil, seq
		}
	}
	if l.Model.Started() {
		p.k = l.Model.Rank
	}
	s.warnForm(ls)
	c := l.Counters()
	s.mu.Lock()
	s.counts, s.pending, s.forgotten = c, l.Pending(), l.ForgottenLabels()
	if p.step != nil {
		s.lat.observe(p.took.Seconds())
		for _, pr := range p.step.Predictions {
			s.recent.add(s.recentMax, pr)
		}
	}
	s.mu.Unlock()
	// Only between requests: a checkpoint then covers every log entry
	// appended, and the log can be emptied.
	due := s.every > 0 && c.Records-ls.lastSave >= s.every ||
		s.log != nil && s.ckptBytes > 0 && s.log.Size() >= s.ckptBytes
	if p.last && s.ckpt != "" && due {
		if err := s.save(); err != nil {
			s.mu.Lock()
			s.saveErr = err
			s.mu.Unlock()
		}
		ls.lastSave = c.Records
	}
	return nil
}

// replacedReason is the reject reason of a waiting label that the later
// label of the same id at offset by (of the request's body) replaced.
func replacedReason(by int64) string {
	return fmt.Sprintf("replaced by the later label of the same id at offset %d (one label waits per id)", by)
}

// save writes the checkpoint, then empties the write-ahead log, whose
// entries the checkpoint covers; only the learn stage (between requests),
// or serve before the pipeline starts or after it stopped, calls it.
func (s *server) save() error {
	if s.ckpt == "" {
		return nil
	}
	st, err := s.learner.State()
	if err != nil {
		return err
	}
	s.mu.Lock()
	recent := s.recent.list()
	s.mu.Unlock()
	if err := saveCheckpoint(s.ckpt, &checkpoint{Config: s.cfg, State: st, WALSeq: s.walSeq, Recent: recent}); err != nil {
		return err
	}
	if s.log != nil {
		return s.log.Truncate()
	}
	return nil
}

func shiftOffsets(b *record.Batch, base int64) {
	for i := range b.Offsets {
		b.Offsets[i] += base
	}
	for i := range b.LateLabels {
		b.LateLabels[i].Offset += base
	}
	for i := range b.Rejects {
		b.Rejects[i].Offset += base
		if re, ok := b.Rejects[i].Reason.(*record.Error); ok {
			re.Offset += base
		}
	}
}

// errStopping answers requests that arrive while the service shuts down.
var errStopping = errors.New("the service is shutting down")

// submit hands r to the pipeline and waits until it has been learned,
// counted and, with a write-ahead log, committed to it. When ctx is
// cancelled (the client left) after r was handed over, it still waits for
// the pipeline to be done with r, which is learned all the same, and then
// returns ctx's error; it gives up when the pipeline stops.
func (s *server) submit(ctx context.Context, r *request) error {
	r.done = make(chan struct{})
	if err := s.send(ctx, r); err != nil {
		return err
	}
	select {
	case <-r.done:
		return s.commit(r)
	case <-s.stopped:
		select {
		case <-r.done: // completed just before a soft stop
			return s.commit(r)
		default:
			return s.stopErr()
		}
	case <-ctx.Done():
		// The client left, but the pipeline holds the request: wait for
		// it, so that the handler's --max-inflight slot (and the body)
		// stays taken until the pipeline lets go of it. Otherwise clients
		// that hang up after their upload queue bodies past the bound.
		select {
		case <-r.done:
		case <-s.stopped:
		}
		return ctx.Err()
	}
}

// send delivers r to the pipeline's source, holding inMu for reading so
// that serve does not close requests under it.
func (s *server) send(ctx context.Context, r *request) error {
	s.inMu.RLock()
	defer s.inMu.RUnlock()
	if s.closed {
		return errStopping
	}
	select {
	case s.requests <- r:
		return nil
	case <-s.stopped:
		return s.stopErr()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stopErr says why the pipeline stopped; call it after stopped is closed.
func (s *server) stopErr() error {
	if s.runErr != nil {
		return s.runErr
	}
	return errStopping
}

// maxDecodedRatio bounds the bytes an Arrow body's records take once
// decoded (dense features at 8 bytes a value, and texts), as a multiple
// of --max-body: an IPC stream may be compressed, and a few bytes then
// decode to any number of zeros.
const maxDecodedRatio = 4

// readArrowRecords reads an Arrow IPC stream body into batches, with the
// service's --max-dim, at most one record per byte of --max-body, and at
// most maxDecodedRatio × --max-body bytes of decoded features and texts.
// Images are decoded one at a time, in the caller's goroutine; one over
// --max-image-pixels is a reject of its record.
func (s *server) readArrowRecords(r io.Reader) ([]*record.Batch, error) {
	a := sources.NewArrowStream(r)
	a.BatchSize, a.MaxDim, a.MaxRecords = s.cfg.Batch, s.limits.MaxDim, max(s.maxBody, 1)
	a.MaxImagePixels = cmp.Or(s.maxImagePixels, defaultServeImagePixels)
	a.MaxDecodedBytes = maxDecodedRatio * max(s.maxBody, 1) // a compressed batch's, before it is decompressed
	defer a.Close()
	var out []*record.Batch
	var decoded int64
	limit := maxDecodedRatio * s.maxBody
	for a.Next() {
		b := a.Batch().Clone()
		if b.Dense != nil {
			r, c := b.Dense.Dims()
			decoded += 8 * int64(r) * int64(c)
		}
		for _, t := range b.Text {
			decoded += int64(len(t))
		}
		if s.maxBody > 0 && decoded > limit {
			return nil, &http.MaxBytesError{Limit: limit}
		}
		out = append(out, b)
	}
	return out, a.Err()
}

// predictionJSON is one prediction in a JSON response.
type predictionJSON struct {
	ID     string    `json:"id,omitempty"`
	Offset int64     `json:"offset"`
	Node   int       `json:"node"`
	Pred   *string   `json:"pred"`
	Score  jsonFloat `json:"score"`
	Code   []float64 `json:"code,omitempty"`
}

type rejectJSON struct {
	Offset int64  `json:"offset"`
	ID     string `json:"id,omitempty"`
	Reason string `json:"reason"`
}

type recordsResponse struct {
	Predictions []predictionJSON `json:"predictions"`
	Rejected    []rejectJSON     `json:"rejected"`
	Duplicates  int              `json:"duplicates"`
}

func (s *server) handleRecords(w http.ResponseWriter, r *http.Request) {
	body := s.body(w, r)
	ct := r.Header.Get("Content-Type")
	arrow := strings.HasPrefix(ct, mediaArrow) || strings.HasPrefix(ct, "application/vnd.apache.arrow")
	var kind byte = entryJSONL
	if arrow {
		kind = entryArrow
	}
	entry, body, err := s.capture(kind, body)
	if err == nil && arrow && entry == nil {
		// The whole body first: the Arrow reader decodes images as it
		// goes, which must not count against the client's read deadline.
		var data []byte
		data, err = io.ReadAll(body)
		body = bytes.NewReader(data)
	}
	if err != nil {
		writeBodyError(w, "cannot read records", err)
		return
	}
	var batches []*record.Batch
	if arrow {
		batches, err = s.readArrowRecords(body)
	} else {
		batches, err = sources.ReadJSONLines(body, s.cfg.Batch, s.limits)
	}
	if err != nil {
		writeBodyError(w, "cannot read records", err)
		return
	}
	var resp recordsResponse
	resp.Predictions, resp.Rejected = []predictionJSON{}, []rejectJSON{}
	var preds []stages.Prediction
	k := 0
	if len(batches) > 0 {
		req := &request{batches: batches, entry: entry}
		if err := s.submit(r.Context(), req); err != nil {
			writeError(w, http.StatusServiceUnavailable, "unavailable", err.Error())
			return
		}
		k = req.k
		for _, st := range req.steps {
			preds = append(preds, arrivals(st)...)
			for _, rj := range st.Rejects {
				resp.Rejected = append(resp.Rejected, rejectJSON{rj.Offset, rj.ID, rj.Reason.Error()})
			}
			resp.Duplicates += len(st.Duplicates)
		}
	}
	if strings.Contains(r.Header.Get("Accept"), "application/vnd.apache.arrow") {
		writeArrowAnswer(w, preds, k, &resp)
		return
	}
	for _, p := range preds {
		resp.Predictions = append(resp.Predictions, predictionOf(p))
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

// writeArrowAnswer writes /v1/records' answer as Arrow (sinks.Arrow, k code
// columns): a row per prediction, its code null when it has none (before
// the model's first fit) or when it is not a finite float32 (the sink
// refuses such a code), as the JSON answer leaves it out, and the JSON
// answer's rejected records and duplicates in the schema's metadata
// ("rejected", the same JSON array; "duplicates", a count).
func writeArrowAnswer(w http.ResponseWriter, preds []stages.Prediction, k int, resp *recordsResponse) {
	w.Header().Set("Content-Type", mediaArrow)
	res := sinks.Results{}
	if k > 0 && len(preds) > 0 {
		res.Codes, res.NoCode = mat.NewDense(len(preds), k, nil), make([]bool, len(preds))
	}
	for i, p := range preds {
		res.IDs = append(res.IDs, p.ID)
		res.Preds = append(res.Preds, p.Label)
		res.Scores = append(res.Scores, p.Score)
		if res.Codes != nil {
			res.NoCode[i] = len(p.Code) != k || !finite32Row(p.Code)
			if !res.NoCode[i] {
				res.Codes.SetRow(i, p.Code)
			}
		}
	}
	aw := sinks.NewArrow(w, k)
	rej, _ := json.Marshal(resp.Rejected)
	aw.Metadata = map[string]string{"rejected": string(rej), "duplicates": strconv.Itoa(resp.Duplicates)}
	if err := aw.Write(res); err != nil {
		writeError(w, http.StatusInternalServerError, "internal", err.Error())
		return
	}
	aw.Close()
}

// labelsResponse is the answer to POST /v1/labels: applied counts the
// labels learned now (their record is in the window, or its arrival
// prediction waits to be scored), pending those that wait for a record not
// seen yet (up to the learner's horizon), rejected the bad lines.
type labelsResponse struct {
	Applied int `json:"applied"`
	Pending int `json:"pending"`
	// Forgotten counts the waiting labels (of earlier requests, or of
	// this one) forgotten, oldest first, to keep the labels that wait
	// within their bound (README.md, "Limits").
	Forgotten int          `json:"forgotten,omitempty"`
	Rejected  []rejectJSON `json:"rejected"`
}

func (s *server) handleLabels(w http.ResponseWriter, r *http.Request) {
	entry, body, err := s.capture(entryLabels, s.body(w, r))
	if err != nil {
		writeBodyError(w, "cannot read labels", err)
		return
	}
	labels, rejects, err := sources.ReadJSONLabels(body, s.limits)
	if err != nil {
		writeBodyError(w, "cannot read labels", err)
		return
	}
	if len(labels) == 0 {
		entry = nil
	}
	req := &request{labels: true, entry: entry}
	if len(labels) > 0 {
		req.batches = []*record.Batch{labelsBatch(labels)}
	}
	if err := s.submit(r.Context(), req); err != nil {
		writeError(w, http.StatusServiceUnavailable, "unavailable", err.Error())
		return
	}
	resp := labelsAnswer(len(labels), rejects, req.steps, req.tally, req.base)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

// labelsBatch is the batch of late labels of a POST /v1/labels, offsets
// numbered from 0 across its body (the lines' numbers).
func labelsBatch(labels []sources.LabelLine) *record.Batch {
	b := &record.Batch{LateLabels: make([]record.LateLabel, len(labels))}
	for i, l := range labels {
		b.LateLabels[i] = record.LateLabel{Offset: l.Offset, ID: l.ID, Label: l.Label}
	}
	return b
}

// labelsAnswer is the answer to a POST /v1/labels of n labels, from what
// the learner made of them (t, and steps, the Steps of their batches,
// whose offsets follow base): rejected lists the lines that are not labels
// (bad, by line), the labels the learner refused (the steps' Rejects: one
// class more than --max-classes) and the waiting labels a later one of the
// same id replaced, by line; pending counts the ids whose label still
// waits, forgotten the waiting labels forgotten meanwhile, and applied the
// labels neither refused nor waiting when applied. serve and serve --nats
// answer with it.
func labelsAnswer(n int, bad []record.Reject, steps []*stages.Step, t labelTally, base int64) labelsResponse {
	resp := labelsResponse{Applied: n - t.waited, Pending: t.waiting, Forgotten: int(t.forgotten), Rejected: []rejectJSON{}}
	for _, rj := range bad {
		resp.Rejected = append(resp.Rejected, rejectJSON{rj.Offset, rj.ID, rj.Reason.Error()})
	}
	for _, st := range steps {
		for _, rj := range st.Rejects {
			resp.Rejected = append(resp.Rejected, bodyReject(rj, base))
			resp.Applied--
		}
	}
	for _, rl := range t.replaced {
		resp.Rejected = append(resp.Rejected, rejectJSON{rl.Offset - base, rl.ID, replacedReason(rl.By - base)})
	}
	slices.SortStableFunc(resp.Rejected, func(a, b rejectJSON) int { return cmp.Compare(a.Offset, b.Offset) })
	return resp
}

func (s *server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	c, pending, forgotten, lat := s.counts, s.pending, s.forgotten, s.lat
	lat.counts = append([]int64(nil), s.lat.counts...)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	var b strings.Builder
	metric := func(name, typ, help string, v float64) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n%s %s\n", name, help, name, typ, name, promFloat(v))
	}
	metric("nmfstream_records_total", "counter", "Input records consumed (samples, late labels, duplicates, rejects).", float64(c.Records))
	metric("nmfstream_posts_in_flight", "gauge", "POST requests being read or waiting for their answer.", float64(s.posting.Load()))
	metric("nmfstream_samples_total", "counter", "Samples added to the model.", float64(c.Samples))
	metric("nmfstream_rejected_total", "counter", "Records that could not be used.", float64(c.Rejected))
	metric("nmfstream_duplicates_total", "counter", "Samples skipped because their id was in the window.", float64(c.Duplicates))
	metric("nmfstream_late_labels_total", "counter", "Labels that arrived without features.", float64(c.LateLabels))
	metric("nmfstream_labeled_total", "counter", "Arrival predictions scored against a known label (samples that arrived after the first label).", float64(c.Labeled))
	metric("nmfstream_early_total", "counter", "Labeled samples that arrived before any label was known: not scored.", float64(c.Early))
	metric("nmfstream_unlearned_labels_total", "counter", "Labels that came after their sample had left the window: scored, not learned (a longer --window learns them).", float64(c.Unlearned))
	metric("nmfstream_correct_total", "counter", "Scored predictions that were right.", float64(c.Correct))
	metric("nmfstream_accuracy", "gauge", "Prequential accuracy of the answered predictions.", c.Accuracy())
	metric("nmfstream_pending_labels", "gauge", "Labels waiting for their sample.", float64(pending))
	metric("nmfstream_forgotten_labels_total", "counter", "Labels that waited for their sample and were forgotten, oldest first, to keep the pending labels within their bound.", float64(forgotten))
	if s.log != nil {
		metric("nmfstream_wal_bytes", "gauge", "Size of the write-ahead log: the requests acknowledged since the last checkpoint.", float64(s.log.Size()))
		metric("nmfstream_wal_fsyncs_total", "counter", "Fsyncs of the write-ahead log (with --fsync always, requests that wait at once share one).", float64(s.log.Syncs()))
	}
	fmt.Fprintf(&b, "# HELP nmfstream_batch_seconds Time the model took per batch.\n# TYPE nmfstream_batch_seconds histogram\n")
	for i, ub := range latencyBuckets {
		var n int64
		if lat.counts != nil {
			n = lat.counts[i]
		}
		fmt.Fprintf(&b, "nmfstream_batch_seconds_bucket{le=\"%s\"} %d\n", promFloat(ub), n)
	}
	fmt.Fprintf(&b, "nmfstream_batch_seconds_bucket{le=\"+Inf\"} %d\n", lat.n)
	fmt.Fprintf(&b, "nmfstream_batch_seconds_sum %s\nnmfstream_batch_seconds_count %d\n", promFloat(lat.sum), lat.n)
	io.WriteString(w, b.String())
}

func promFloat(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// finite32Row reports whether every entry of code is a finite float32, the
// type the Arrow outputs hold codes in.
func finite32Row(code []float64) bool {
	for _, v := range code {
		if math.IsNaN(v) || math.Abs(v) > math.MaxFloat32 {
			return false
		}
	}
	return true
}
