package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/pipeline"
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
replayed before serve listens. Without --checkpoint nothing is durable. --model M starts a new
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

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if args, ok := natsArgs(args); ok {
		return runServeNATS(ctx, args, stdout, stderr)
	}
	fs := newFlags("serve", serveSynopsis, stderr)
	ckpt := fs.String("checkpoint", "", "checkpoint `file` (from stream or serve) to resume from if it exists, and to save to")
	modelPath := fs.String("model", "", "fitted model `file` (fit --save) that seeds a new stream with its training records; read, never written")
	addr := fs.String("addr", "127.0.0.1:8080", "listen `address`")
	every := fs.Int64("checkpoint-every", 10000, "records between checkpoints (with --checkpoint)")
	maxBody := fs.Int64("max-body", 64<<20, "largest request body in `bytes`")
	maxInFlight := fs.Int("max-inflight", 16, "requests handled at once; more are answered 429 (0: no cap). Bodies take at most this × --max-body")
	token := fs.String("token", "", "bearer `token` every request but /healthz and /openapi.json must carry (Authorization: Bearer …); empty: none")
	readTimeout := fs.Duration("read-timeout", time.Minute, "longest time to read a request, body included")
	writeTimeout := fs.Duration("write-timeout", 5*time.Minute, "longest time from the end of a request's headers to the end of its answer (learning included)")
	walPath := fs.String("wal", "", "write-ahead `file` of the records and labels acknowledged since the last checkpoint (with --checkpoint; default <checkpoint>.wal; off: none)")
	fsync := fs.String("fsync", "always", "when the write-ahead log is fsynced before an answer: always (group commit), interval (every --fsync-interval) or never (see -help)")
	fsyncEvery := fs.Duration("fsync-interval", defaultFsyncEvery, "fsync period of --fsync interval")
	recent := fs.Int("recent", 10000, "records whose code and prediction GET /v1/records/{id} returns: the most recent ones with an id (0: none)")
	predictor := fs.String("predictor", "graph", "classifier: graph, spread, nearest, walk or propagate (see stream -help)")
	metric := fs.String("metric", "euclidean", "code-space distance of the classifier: euclidean or cosine")
	var cfg onlineConfig
	addOnlineFlags(fs, &cfg)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q (flags go before, as --flag value)", errUsage, fs.Arg(0))
	}
	var err error
	if cfg.Predictor, err = parsePredictor(*predictor); err != nil {
		return err
	}
	if cfg.Metric, err = parseMetric(*metric); err != nil {
		return err
	}
	if err := checkCodeUse(cfg); err != nil {
		return err
	}
	if cfg.Rank <= 0 || cfg.Batch < 0 || *recent < 0 {
		return fmt.Errorf("%w: -rank must be positive, -batch and -recent not negative", errUsage)
	}
	if cfg.Batch == 0 {
		cfg.Batch = autoBatch(cfg.Window)
	}
	cpath, seed, err := modelOrCheckpoint("serve", *modelPath, *ckpt, stderr)
	if err != nil {
		return err
	}
	if err := checkOutput("--checkpoint", cpath); err != nil {
		return err
	}
	policy, err := wal.ParsePolicy(*fsync)
	if err != nil {
		return fmt.Errorf("%w: --fsync: %v", errUsage, err)
	}
	if *fsyncEvery <= 0 {
		return fmt.Errorf("%w: --fsync-interval must be positive", errUsage)
	}
	l, cfg, cp, err := openLearner(cpath, seed, fs, cfg, stderr)
	if err != nil {
		return err
	}
	if *maxInFlight < 0 || *readTimeout <= 0 || *writeTimeout <= 0 {
		return fmt.Errorf("%w: --max-inflight must not be negative, --read-timeout and --write-timeout must be positive", errUsage)
	}
	s := &server{learner: l, cfg: cfg, ckpt: cpath, every: *every, maxBody: *maxBody, recentMax: *recent,
		maxInFlight: *maxInFlight, token: *token, readTimeout: *readTimeout, writeTimeout: *writeTimeout,
		fsync: policy, fsyncEvery: *fsyncEvery}
	if cp != nil {
		s.resume(cp)
	}
	switch {
	case *walPath == "off":
	case cpath == "" && *walPath != "":
		return fmt.Errorf("%w: --wal needs --checkpoint (the log holds what the last checkpoint lacks)", errUsage)
	case cpath != "":
		path := *walPath
		if path == "" {
			path = cpath + ".wal"
		}
		n, err := s.openWAL(path)
		if err != nil {
			return err
		}
		if n > 0 {
			fmt.Fprintf(stderr, "nmfstream serve: replayed %d acknowledged requests from %s\n", n, path)
		}
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "nmfstream serve: listening on http://%s\n", ln.Addr())
	if ta, ok := ln.Addr().(*net.TCPAddr); ok && ta.IP.IsUnspecified() {
		auth := "with a bearer token"
		if *token == "" {
			auth = "WITHOUT authentication (set --token)"
		}
		fmt.Fprintf(stderr, "nmfstream serve: warning: %s listens on every network interface, %s; --addr 127.0.0.1:PORT keeps it on this machine\n", *addr, auth)
	}
	return s.serve(ctx, ln)
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
	b := &sources.Batch{}
	switch {
	case s.TrainDense != nil:
		b.Form, b.Dense = sources.FormDense, s.TrainDense
	case s.TrainSparse != nil:
		b.Form, b.Sparse = sources.FormSparse, s.TrainSparse
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
// stages.Prepare, in parallel, order kept; learn is the one goroutine that
// owns the learner (and writes the checkpoints and the metrics); respond
// completes a request once every part of it has been learned and counted,
// so that a client that got a 2xx reads its own writes in /metrics.
type server struct {
	learner *stages.Learner
	cfg     onlineConfig
	ckpt    string
	every   int64
	maxBody int64
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

	mu      sync.Mutex // guards the fields below, written by the learn stage
	counts  stages.Counters
	pending int
	lat     latency
	saveErr error
	recent  recentRecords
}

// request is the work of one HTTP request. Its handler sets batches (the
// records, offsets numbered from 0 across the body) or labels, submits it,
// and reads steps and k once done is closed: the pipeline writes them
// before it closes done.
type request struct {
	batches []*sources.Batch
	labels  []labelRecord
	entry   []byte // the write-ahead log entry (walEntry), nil without a log
	done    chan struct{}

	steps []*stages.Step // one per batch, in order
	k     int            // the rank of the codes, 0 before the model's first fit
	seq   uint64         // the log entry's sequence number, 0 for none
}

// part is the item of serve's pipeline: one batch of a request, and on the
// request's last part its labels.
type part struct {
	req   *request
	batch *sources.Batch     // nil for a request without records
	feat  *stages.Featurized // set by featurize when batch is not nil
	step  *stages.Step       // set by learn when batch is not nil
	last  bool               // the request's last part: learn applies req.labels, respond completes req
	k     int
	took  time.Duration // featurize and learn time of batch
}

type labelRecord struct {
	ID    string
	Label string
}

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
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
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
		for _, b := range r.batches {
			shiftOffsets(b, next)
			parts = append(parts, &part{req: r, batch: b})
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
	featurize := func(_ context.Context, p *part) (*part, error) {
		if p.batch != nil {
			start := time.Now()
			p.feat = stages.Prepare(p.batch)
			p.batch = nil
			p.took = time.Since(start)
		}
		return p, nil
	}
	// --checkpoint-every counts the records and the posted labels learned.
	var posted int64 // labels learned from /v1/labels
	lastSave := s.learner.Counters().Records
	learn := func(_ context.Context, p *part) (*part, error) {
		l := s.learner
		if p.feat != nil {
			start := time.Now()
			st, err := l.LearnFeatures(p.feat)
			if err != nil {
				return nil, err
			}
			p.step, p.feat = st, nil
			p.took += time.Since(start)
		}
		if p.last {
			for _, lr := range p.req.labels {
				if err := l.Label(lr.ID, lr.Label); err != nil {
					return nil, err
				}
			}
			posted += int64(len(p.req.labels))
			if s.log != nil && p.req.entry != nil {
				seq, err := s.log.Append(p.req.entry)
				if err != nil {
					return nil, err
				}
				p.req.seq, p.req.entry, s.walSeq = seq, nil, seq
			}
		}
		if l.Model.Started() {
			p.k = l.Model.Rank
		}
		c := l.Counters()
		s.mu.Lock()
		s.counts, s.pending = c, l.Pending()
		if p.step != nil {
			s.lat.observe(p.took.Seconds())
			for _, pr := range p.step.Predictions {
				s.recent.add(s.recentMax, pr)
			}
		}
		s.mu.Unlock()
		// Only between requests: a checkpoint then covers every log entry
		// appended, and the log can be emptied.
		if applied := c.Records + posted; p.last && s.ckpt != "" && s.every > 0 && applied-lastSave >= s.every {
			if err := s.save(); err != nil {
				s.mu.Lock()
				s.saveErr = err
				s.mu.Unlock()
			}
			lastSave = applied
		}
		return p, nil
	}
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
	return pipeline.New(
		pipeline.FromChan("http", s.requests),
		[]pipeline.Stage{
			pipeline.FlatMap("split", 1, split),
			pipeline.Ordered(pipeline.Map("featurize", featurizers(), featurize)),
			pipeline.Map("learn", 1, learn),
		},
		pipeline.To("respond", pipeline.WriteFunc[*part](respond)),
	)
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

func shiftOffsets(b *sources.Batch, base int64) {
	for i := range b.Offsets {
		b.Offsets[i] += base
	}
	for i := range b.LateLabels {
		b.LateLabels[i].Offset += base
	}
	for i := range b.Rejects {
		b.Rejects[i].Offset += base
		if re, ok := b.Rejects[i].Reason.(*sources.RecordError); ok {
			re.Offset += base
		}
	}
}

// errStopping answers requests that arrive while the service shuts down.
var errStopping = errors.New("the service is shutting down")

// submit hands r to the pipeline and waits until it has been learned,
// counted and, with a write-ahead log, committed to it. It gives up when the request is cancelled (what was handed over
// is still learned) or when the pipeline stops.
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

// jsonRecord is one line of a JSON-lines records body.
type jsonRecord struct {
	ID    json.RawMessage `json:"id"`
	X     []float64       `json:"x"`
	Text  *string         `json:"text"`
	Label json.RawMessage `json:"label"`
}

// rawString turns a JSON string or number into a string ("" for null).
func rawString(r json.RawMessage) (string, error) {
	r = bytes.TrimSpace(r)
	if len(r) == 0 || string(r) == "null" {
		return "", nil
	}
	if r[0] == '"' {
		var s string
		err := json.Unmarshal(r, &s)
		return s, err
	}
	var n json.Number
	if err := json.Unmarshal(r, &n); err != nil {
		return "", fmt.Errorf("want a string or a number, got %s", r)
	}
	return n.String(), nil
}

// parseJSONRecords reads JSON lines into batches of at most size records:
// each line has "x" (dense features) or "text", optional "id" and
// "label"; a line with an id, a label and no features is a late label.
// Bad lines become rejects.
func parseJSONRecords(r io.Reader, size int) ([]*sources.Batch, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var out []*sources.Batch
	var cur *sources.Batch
	var rows [][]float64
	var off int64
	flush := func() {
		if cur == nil {
			return
		}
		if len(rows) > 0 {
			d := len(rows[0])
			cur.Dense = mat.NewDense(len(rows), d, nil)
			for i, row := range rows {
				copy(cur.Dense.RawRowView(i), row)
			}
		}
		out = append(out, cur)
		cur, rows = nil, nil
	}
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if cur != nil && cur.Records() >= size {
			flush()
		}
		var rec jsonRecord
		err := json.Unmarshal(line, &rec)
		var id, label string
		if err == nil {
			if id, err = rawString(rec.ID); err == nil {
				label, err = rawString(rec.Label)
			}
		}
		form := sources.FormDense
		if rec.Text != nil {
			form = sources.FormText
		}
		if cur == nil {
			cur = &sources.Batch{Form: form}
		}
		reject := func(err error) {
			cur.Rejects = append(cur.Rejects, sources.Reject{Offset: off, ID: id, Reason: &sources.RecordError{Offset: off, ID: id, Err: err}})
		}
		switch {
		case err != nil:
			reject(fmt.Errorf("bad JSON record: %v", err))
		case rec.X == nil && rec.Text == nil:
			if id != "" && label != "" {
				cur.LateLabels = append(cur.LateLabels, sources.LateLabel{Offset: off, ID: id, Label: label})
			} else {
				reject(errors.New("no features, and not a late label (id and label)"))
			}
		case form != cur.Form:
			reject(fmt.Errorf("%v record in a %v body: one feature form per request", form, cur.Form))
		case form == sources.FormDense && len(rows) > 0 && len(rec.X) != len(rows[0]):
			reject(fmt.Errorf("%d features, the request's first record has %d", len(rec.X), len(rows[0])))
		case form == sources.FormDense && len(rec.X) == 0:
			reject(errors.New("empty x"))
		default:
			if form == sources.FormDense {
				rows = append(rows, rec.X)
			} else {
				cur.Text = append(cur.Text, *rec.Text)
			}
			cur.IDs = append(cur.IDs, id)
			cur.Labels = append(cur.Labels, label)
			cur.Labeled = append(cur.Labeled, label != "")
			cur.Offsets = append(cur.Offsets, off)
		}
		off++
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	flush()
	return out, nil
}

// readArrowRecords reads an Arrow IPC stream body into batches.
func readArrowRecords(r io.Reader, size int) ([]*sources.Batch, error) {
	a := sources.NewArrowStream(r)
	a.BatchSize = size
	defer a.Close()
	var out []*sources.Batch
	for a.Next() {
		out = append(out, a.Batch().Clone())
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
	var body io.Reader = http.MaxBytesReader(w, r.Body, s.maxBody)
	ct := r.Header.Get("Content-Type")
	arrow := strings.HasPrefix(ct, mediaArrow) || strings.HasPrefix(ct, "application/vnd.apache.arrow")
	var kind byte = entryJSONL
	if arrow {
		kind = entryArrow
	}
	entry, body, err := s.capture(kind, body)
	if err != nil {
		writeBodyError(w, "cannot read records", err)
		return
	}
	var batches []*sources.Batch
	if arrow {
		batches, err = readArrowRecords(body, s.cfg.Batch)
	} else {
		batches, err = parseJSONRecords(body, s.cfg.Batch)
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
			preds = append(preds, st.Predictions...)
			for _, rj := range st.Rejects {
				resp.Rejected = append(resp.Rejected, rejectJSON{rj.Offset, rj.ID, rj.Reason.Error()})
			}
			resp.Duplicates += len(st.Duplicates)
		}
	}
	if strings.Contains(r.Header.Get("Accept"), "application/vnd.apache.arrow") {
		w.Header().Set("Content-Type", mediaArrow)
		res := sinks.Results{}
		var codes *mat.Dense
		if k > 0 && len(preds) > 0 {
			codes = mat.NewDense(len(preds), k, nil)
		}
		for i, p := range preds {
			res.IDs = append(res.IDs, p.ID)
			res.Preds = append(res.Preds, p.Label)
			res.Scores = append(res.Scores, p.Score)
			if codes != nil && p.Code != nil {
				codes.SetRow(i, p.Code)
			}
		}
		res.Codes = codes
		aw := sinks.NewArrow(w, k)
		if err := aw.Write(res); err != nil {
			writeError(w, http.StatusInternalServerError, "internal", err.Error())
			return
		}
		aw.Close()
		return
	}
	for _, p := range preds {
		resp.Predictions = append(resp.Predictions, predictionOf(p))
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

func (s *server) handleLabels(w http.ResponseWriter, r *http.Request) {
	entry, body, err := s.capture(entryLabels, http.MaxBytesReader(w, r.Body, s.maxBody))
	if err != nil {
		writeBodyError(w, "cannot read labels", err)
		return
	}
	labels, err := parseLabels(body)
	if err != nil {
		writeBodyError(w, "bad label record", err)
		return
	}
	if len(labels) == 0 {
		entry = nil
	}
	if err := s.submit(r.Context(), &request{labels: labels, entry: entry}); err != nil {
		writeError(w, http.StatusServiceUnavailable, "unavailable", err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, "{\"applied\":%d}\n", len(labels))
}

// parseLabels reads a labels body: JSON values {"id": …, "label": …},
// each with a non-empty id and label.
func parseLabels(r io.Reader) ([]labelRecord, error) {
	var labels []labelRecord
	dec := json.NewDecoder(r)
	for {
		var rec struct {
			ID    json.RawMessage `json:"id"`
			Label json.RawMessage `json:"label"`
		}
		if err := dec.Decode(&rec); err == io.EOF {
			return labels, nil
		} else if err != nil {
			return nil, err
		}
		id, err1 := rawString(rec.ID)
		lab, err2 := rawString(rec.Label)
		if err := errors.Join(err1, err2); err != nil || id == "" || lab == "" {
			return nil, fmt.Errorf("label record %d needs an id and a label", len(labels)+1)
		}
		labels = append(labels, labelRecord{id, lab})
	}
}

func (s *server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	c, pending, lat := s.counts, s.pending, s.lat
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
	metric("nmfstream_correct_total", "counter", "Scored predictions that were right.", float64(c.Correct))
	metric("nmfstream_accuracy", "gauge", "Prequential accuracy of the answered predictions.", c.Accuracy())
	metric("nmfstream_pending_labels", "gauge", "Labels waiting for their sample.", float64(pending))
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
