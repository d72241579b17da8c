package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nmfstream/nmfstream/distributed"
	"github.com/nmfstream/nmfstream/pipeline"
	"github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/sources"
	"github.com/nmfstream/nmfstream/stages"
)

const serveNATSSynopsis = `serve --nats URL [--addr 127.0.0.1:8080] [--workers n] [--namespace ns] [--token-file F] [serve's learner flags]

Serves stream --nats's chain over HTTP: each request's records are split
into batches (--batch records), featurized here (stages.NewFeatures) and
sent to the namespace, whose owner runs the stages.Learner that serve and
stream would run, built from the same flags (--method, --rank, --window,
--predictor, …); a request is answered with the owner's predictions once
it has learned the request's batches. Routes:

  POST /v1/records  JSON lines {"id": …, "x": [features ≥ 0], "label": …}
                    or {"id": …, "text": "…", "label": …} (an id, a
                    label and no features is a late label); answers
                    {"predictions": [{"id", "offset", "pred", "score"}],
                    "rejected": [{"offset", "id", "reason"}],
                    "duplicates": n}: a record whose id is in the owner's
                    window (posted to this or another instance) is a
                    duplicate, its label a late label
  POST /v1/labels   JSON lines {"id": …, "label": …}; answers
                    {"applied": n, "pending": m, "forgotten": f}, as
                    serve: m of its labels wait on the owner for a record
                    not seen yet, and f waiting labels were forgotten,
                    oldest first, to keep them within their bound
  GET  /v1/stats    the owner's counters, as stream --nats --json, and the
                    live workers of the namespace
  GET  /metrics     Prometheus text: serve's metric names where they apply
  GET  /healthz     ok

Requests are served concurrently, in one order through the chain: the
prediction of a record sees every record and label of the requests that
entered the chain before it. Several instances (and stream --nats) on one
namespace share its owner, and so its window, classes and document
frequencies. The counters are the owner's, over every instance. No
checkpoint: the namespace's streams hold the batches. --nats embedded (or
a bare --nats) starts an embedded server in a binary built with -tags nats.

serve's bounds apply, with serve's defaults: --max-body and
--max-inflight (429 beyond), --min-body-rate after --body-grace (408),
--read-timeout, --write-timeout and --max-dim here, on the driver, which
holds at most --max-inflight × (5 × --max-body + 400 bytes a record of a
body) of requests in flight (README.md, "Scale-out on NATS JetStream");
--max-classes and --max-window-bytes on the owners, through the
namespace's learner settings (stream --nats takes them with the same
defaults; 0 and 0 on a namespace created before them). A request the
chain does not answer within --write-timeout (no live owner, say) is
answered 504 if it was handed to the chain (it is learned when an owner
answers; posting it again is safe: the owner skips an id it holds) or
503 if not (not learned), so that its --max-inflight slot is freed.
SIGINT or SIGTERM
stop it: new requests, and those not yet handed to the chain, are
answered 503 at once; those in the chain are answered once learned, or
504 at their --write-timeout, within serve's drain bound (10 s + the
longer of --read-timeout and --write-timeout + 5 s), past which the
chain is stopped.

Example:
  go run -tags nats ./cmd/nmfstream serve --nats --addr 127.0.0.1:8080`

// natsServer answers HTTP requests through the chain on the owners.
type natsServer struct {
	on    *owners
	parts int // the namespace's partitions
	// front holds serve's request bounds only (maxBody, minBodyRate,
	// bodyGrace, readTimeout, writeTimeout, maxInFlight, token and limits,
	// the JSON records' --max-dim): its awaitBody, body and authorized
	// read this service's requests as serve's.
	front  *server
	batch  int
	window int // the learner's --window and --rank, which /v1/stats reports
	rank   int
	watch  *distributed.WorkerWatch // the namespace's live workers

	reqs     chan *natsRequest // handlers → the chain; closed by drain under inMu
	inMu     sync.RWMutex      // senders hold it for reading, the closer for writing
	closed   bool              // reqs is closed; guarded by inMu
	stopping chan struct{}     // closed when the drain begins
	stopped  chan struct{}     // closed once the chain has stopped
	runErr   error             // why it stopped; read only after stopped is closed
	next     int64             // offset of the next record: the split stage's
	handlers sync.WaitGroup    // HTTP handlers running, which the drain waits for
	hmu      sync.Mutex        // orders handlers.Add before the drain's Wait
	draining bool              // stopping is closed; guarded by hmu

	mu          sync.Mutex // guards the fields below, written by the collect stage
	last        distributed.ChainStep
	dups, preds int64 // samples skipped as duplicates, predictions with a class
	forgotten   int64 // waiting labels the owners forgot while learning this instance's batches
	requests    atomic.Int64
}

// natsRequest is the work of one HTTP request: its handler sets batches
// and reads steps and labels once done is closed.
type natsRequest struct {
	batches []*record.Batch
	done    chan struct{}
	steps   []*stages.Step // one per batch, in order
	// labels sums the owners' counts of the late labels of the request's
	// batches (distributed.ChainStep's LabelsWaited, LabelsWaiting,
	// LabelsForgotten).
	labels  labelTally
	base    int64 // the stream offset of the request's first record (split)
	refused bool  // not handed over, as the drain had begun (split): not learned
	// state is reqQueued until split hands the request over (reqHanded)
	// or its handler withdraws it, past its deadline (reqWithdrawn).
	state atomic.Int32
}

// The states of a natsRequest (natsRequest.state).
const (
	reqQueued int32 = iota
	reqHanded
	reqWithdrawn
)

// answerMargin is what a handler keeps of --write-timeout to write its
// answer: it stops waiting for the chain that long before the server's
// write deadline.
const answerMargin = time.Second

// errNotTaken and errNotAnswered end a request that the chain did not take,
// or did not answer, within --write-timeout (answerMargin before it).
var (
	errNotTaken    = errors.New("the chain took no request within --write-timeout (is a worker live? GET /v1/stats says): these records were not learned; post them again later")
	errNotAnswered = errors.New("handed to the chain but not answered within --write-timeout (is a worker live? GET /v1/stats says): they will be learned when an owner answers; posting them again is safe, a record whose id the owner holds is a duplicate")
)

// labelTally is what became of a label request's labels, as the learner
// counted them (serve: its Step; serve --nats: the owners',
// distributed.ChainStep): waited for their record when applied (every
// label), still waiting after the request (one per id), the waiting labels
// forgotten while the request was learned, and those a later label of the
// same id replaced while they waited.
type labelTally struct {
	waited, waiting int
	forgotten       int64
	replaced        []stages.ReplacedLabel
}

// natsPart is the item of serve --nats's chain: one batch of a request.
type natsPart struct {
	link
	req  *natsRequest
	last bool
}

func (p *natsPart) chainLink() *link { return &p.link }

func runServeNATS(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", serveNATSSynopsis, stderr)
	var nf chainNATS
	nf.add(fs)
	var cfg onlineConfig
	addOnlineFlags(fs, &cfg)
	var o serveOptions
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "listen `address`")
	bodyBoundFlags(fs, &o)
	fs.StringVar(&o.token, "token", "", "bearer `token` every request but /healthz must carry (Authorization: Bearer …); empty: none; visible to other users in ps: prefer --token-file")
	fs.StringVar(&o.tokenFile, "token-file", "", "`file` holding the bearer token (surrounding white space ignored)")
	fs.StringVar(&o.predictor, "predictor", "graph", "classifier: graph, spread, nearest, walk or propagate (see stream -help)")
	fs.StringVar(&o.metric, "metric", "euclidean", "code-space distance of the classifier: euclidean or cosine")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q (flags go before, as --flag value)", errUsage, fs.Arg(0))
	}
	if err := checkServeNATS(fs, &cfg, &nf, &o); err != nil {
		return err
	}
	settings, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	// The owners and the chain outlive ctx until the requests in flight
	// have been answered (drain).
	on, rctx, err := nf.start(context.WithoutCancel(ctx), "serve", settings, stderr)
	if err != nil {
		return err
	}
	on.drv.TrimEvery = trimAnswersEvery // serve --nats does not resume a driver
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return errors.Join(err, on.close())
	}
	fmt.Fprintf(stderr, "nmfstream serve: listening on http://%s (the chain's owners on %s)\n", ln.Addr(), on.server)
	if w := exposureWarning(ln.Addr(), o.token != ""); w != "" {
		fmt.Fprintf(stderr, "nmfstream serve: warning: %s\n", w)
	}
	ns := &natsServer{on: on, parts: nf.cfg.Partitions, batch: cfg.Batch, window: cfg.Window, rank: cfg.Rank,
		reqs: make(chan *natsRequest), stopping: make(chan struct{}), stopped: make(chan struct{}),
		front: &server{maxBody: o.maxBody, maxInFlight: o.maxInFlight, token: o.token, readTimeout: o.readTimeout, writeTimeout: o.writeTimeout,
			minBodyRate: o.minBodyRate, bodyGrace: o.bodyGrace, limits: sources.JSONLimits{MaxDim: o.maxDim}}}
	if ns.watch, err = distributed.WatchWorkers(on.nc, nf.cfg); err != nil {
		return errors.Join(err, ln.Close(), on.close())
	}
	defer ns.watch.Stop()
	go func() {
		ns.runErr = ns.pipeline().Run(rctx)
		close(ns.stopped)
	}()
	return ns.serve(ctx, ln)
}

// checkServeNATS checks serve --nats's flags and completes cfg, with
// --max-classes and --max-window-bytes (chainNATS.check) for the owners.
func checkServeNATS(fs *flag.FlagSet, cfg *onlineConfig, nf *chainNATS, o *serveOptions) error {
	var err error
	if cfg.Predictor, err = parsePredictor(o.predictor); err != nil {
		return err
	}
	if cfg.Metric, err = parseMetric(o.metric); err != nil {
		return err
	}
	if o.maxBody < 1 || o.maxInFlight < 0 || o.minBodyRate < 0 || o.bodyGrace < 0 || o.readTimeout <= 0 || o.writeTimeout <= answerMargin {
		return fmt.Errorf("%w: --max-body and --read-timeout must be positive, --write-timeout over %v; --max-inflight, --min-body-rate and --body-grace not negative", errUsage, answerMargin)
	}
	if err := errors.Join(checkCodeUse(*cfg), checkOnlineConfig(cfg)); err != nil {
		return err
	}
	if o.token, err = readToken(o.token, o.tokenFile); err != nil {
		return err
	}
	so := &streamOptions{fs: fs, cfg: *cfg}
	if err := nf.check(so); err != nil {
		return err
	}
	*cfg = so.cfg
	return nil
}

// serve answers HTTP on ln until ctx ends or the chain stops, then drains
// (drain) and stops the owners.
func (ns *natsServer) serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: ns.handler(), ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout: ns.front.readTimeout, WriteTimeout: ns.front.writeTimeout, IdleTimeout: 2 * time.Minute}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
	case <-ns.stopped:
		err = fmt.Errorf("the chain stopped: %w", ns.runErr)
	}
	derr := ns.drain(srv)
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	if ns.runErr != nil && !errors.Is(ns.runErr, context.Canceled) && err == nil {
		err = ns.runErr
	}
	return errors.Join(err, derr, ns.on.close())
}

// errDrainBound is the cause of the chain's cancellation when the drain
// outlasts its bound.
var errDrainBound = errors.New("the shutdown's drain outlasted its bound")

// drain shuts the service down within drainTimeout(srv), serve's bound
// (the longest a request may last, and 5 s): new requests and those not
// yet handed to the chain are answered 503 at once (submit); those in
// the chain are answered once learned. Past the bound the chain is
// cancelled and the requests it held are answered 503 ("the chain
// stopped"), and the error says so. It returns once every handler has
// returned and the chain has stopped.
func (ns *natsServer) drain(srv *http.Server) error {
	bound := drainTimeout(srv)
	dctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	ns.hmu.Lock()
	ns.draining = true // a handler that starts now answers 503, uncounted
	close(ns.stopping)
	ns.hmu.Unlock()
	// The senders see stopping and leave: nothing sends after this.
	ns.inMu.Lock()
	ns.closed = true
	close(ns.reqs)
	ns.inMu.Unlock()
	err := srv.Shutdown(dctx)
	if err == nil {
		select {
		case <-ns.stopped:
		case <-dctx.Done():
			err = dctx.Err()
		}
	}
	if err != nil {
		ns.on.cancel(errDrainBound)
		err = fmt.Errorf("%w (%v): the requests still in the chain were answered 503: %v", errDrainBound, bound, err)
	}
	<-ns.stopped
	// The handlers of the requests the chain held answer now (503): let
	// them write for a few seconds before the connections are cut.
	waited := make(chan struct{})
	go func() { ns.handlers.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(drainAnswerGrace):
	}
	srv.Close() // the connections left past the bound
	<-waited
	return err
}

// drainAnswerGrace is how long drain lets the handlers write their answers
// once the chain has stopped, before it closes their connections.
const drainAnswerGrace = 5 * time.Second

// pipeline is serve --nats's chain: split each request into its batches,
// numbering their records after those before, then the remote chain. A
// request is handed over to the chain when split numbers it; once the
// drain has begun (stopping), split refuses the requests it has not yet
// numbered, which their handlers answer 503.
func (ns *natsServer) pipeline() *pipeline.Pipeline {
	split := func(_ context.Context, r *natsRequest) ([]*natsPart, error) {
		stopping := false
		select {
		case <-ns.stopping:
			stopping = true
		default:
		}
		if stopping || !r.state.CompareAndSwap(reqQueued, reqHanded) {
			// Not handed over (the drain began, or its handler gave
			// up on it): answered 503, not learned.
			r.refused = true
			return []*natsPart{{req: r, last: true}}, nil
		}
		// The request's records are contiguous in the stream, and its
		// batches' offsets count from its first record (as serve's).
		r.base = ns.next
		parts := make([]*natsPart, 0, max(1, len(r.batches)))
		for _, b := range r.batches {
			shiftOffsets(b, r.base)
			ns.next += int64(b.Records())
			parts = append(parts, &natsPart{req: r, link: link{batch: b}})
		}
		if len(parts) == 0 {
			parts = append(parts, &natsPart{req: r})
		}
		parts[len(parts)-1].last = true
		return parts, nil
	}
	respond := func(_ context.Context, p *natsPart) error {
		if p.step != nil {
			p.req.steps = append(p.req.steps, p.step)
		}
		if p.last {
			close(p.req.done)
		}
		return nil
	}
	return newRemoteChain(ns.on.drv, pipeline.FromChan("http", ns.reqs), []pipeline.Stage{pipeline.FlatMap("split", 1, split)},
		ns.collected, pipeline.To("respond", pipeline.WriteFunc[*natsPart](respond)))
}

// collected runs on the collect stage after each part: it keeps the
// owner's counters and this instance's.
func (ns *natsServer) collected(p *natsPart) error {
	a := p.answer
	if a == nil {
		return nil
	}
	ns.mu.Lock()
	defer ns.mu.Unlock()
	t := &p.req.labels
	t.waited += a.LabelsWaited
	t.waiting += a.LabelsWaiting
	t.forgotten += a.LabelsForgotten
	t.replaced = append(t.replaced, a.LabelsReplaced...)
	ns.forgotten += a.LabelsForgotten
	ns.last = *a
	ns.dups += int64(len(a.Step.Duplicates))
	for _, pr := range a.Step.Predictions {
		if pr.Label != "" {
			ns.preds++
		}
	}
	return nil
}

// submit sends r into the chain and waits until it is answered, the
// chain stops, or the deadline (its handler's --write-timeout less
// answerMargin) passes. Once split has handed r over, r is learned even if
// the client goes away; past the deadline its handler stops waiting
// (errNotAnswered) and so frees its --max-inflight slot, and a request not
// yet handed over is withdrawn (errNotTaken, not learned). The drain's
// start before r is handed over, or the client's leaving before it is
// sent, end it with errStopping or the context's error.
func (ns *natsServer) submit(ctx context.Context, r *natsRequest, deadline time.Time) error {
	r.done = make(chan struct{})
	late := time.NewTimer(time.Until(deadline))
	defer late.Stop()
	if err := ns.send(ctx, r, late.C); err != nil {
		return err
	}
	select {
	case <-r.done:
	case <-ns.stopped:
		select {
		case <-r.done: // answered as the chain ended
		default:
			return fmt.Errorf("the chain stopped: %v", ns.runErr)
		}
	case <-late.C:
		if r.state.CompareAndSwap(reqQueued, reqWithdrawn) {
			return errNotTaken
		}
		return errNotAnswered
	}
	if r.refused {
		if r.state.Load() == reqWithdrawn {
			return errNotTaken
		}
		return errStopping
	}
	return nil
}

// submitError writes the answer of a request that submit ended with err.
func submitError(w http.ResponseWriter, err error) {
	if errors.Is(err, errNotAnswered) {
		writeError(w, http.StatusGatewayTimeout, "not_answered", err.Error())
		return
	}
	writeError(w, http.StatusServiceUnavailable, "unavailable", err.Error())
}

// send hands r to the chain's source, holding inMu for reading so that
// drain does not close reqs under it.
func (ns *natsServer) send(ctx context.Context, r *natsRequest, late <-chan time.Time) error {
	ns.inMu.RLock()
	defer ns.inMu.RUnlock()
	if ns.closed {
		return errStopping
	}
	select {
	case ns.reqs <- r:
		return nil
	case <-ns.stopping:
		return errStopping
	case <-ns.stopped:
		return fmt.Errorf("the chain stopped: %v", ns.runErr)
	case <-late:
		return errNotTaken
	case <-ctx.Done():
		return ctx.Err()
	}
}

// handler returns the service's HTTP handler. Once the drain has begun
// every request is answered 503. With a token, every route but /healthz
// wants "Authorization: Bearer <token>" (401 otherwise). A POST takes one
// of --max-inflight slots once the first byte of its body has arrived
// (429 with Retry-After when none is free; 408 when it does not begin
// within --body-grace), and a body announced over --max-body is refused
// (413), as serve's (server.handler).
func (ns *natsServer) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/records", ns.handleRecords)
	mux.HandleFunc("POST /v1/labels", ns.handleLabels)
	mux.HandleFunc("GET /v1/stats", ns.handleStats)
	mux.HandleFunc("GET /metrics", ns.handleMetrics)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	var slots chan struct{}
	if ns.front.maxInFlight > 0 {
		slots = make(chan struct{}, ns.front.maxInFlight)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ns.hmu.Lock()
		if ns.draining {
			ns.hmu.Unlock()
			w.Header().Set("Connection", "close")
			writeError(w, http.StatusServiceUnavailable, "unavailable", errStopping.Error())
			return
		}
		ns.handlers.Add(1)
		ns.hmu.Unlock()
		defer ns.handlers.Done()
		if ns.front.token != "" && r.URL.Path != "/healthz" && !ns.front.authorized(r) {
			writeError(w, http.StatusUnauthorized, "unauthorized", "missing or wrong bearer token")
			return
		}
		if r.Method == http.MethodPost {
			release, ok := ns.front.admitPost(w, r, slots)
			if !ok {
				return
			}
			defer release()
		}
		mux.ServeHTTP(w, r)
	})
}

// natsPredictionJSON is one arrival-time prediction of serve --nats.
type natsPredictionJSON struct {
	ID     string    `json:"id,omitempty"`
	Offset int64     `json:"offset"`
	Pred   *string   `json:"pred"`
	Score  jsonFloat `json:"score"`
}

type natsRecordsResponse struct {
	Predictions []natsPredictionJSON `json:"predictions"`
	Rejected    []rejectJSON         `json:"rejected"`
	Duplicates  int                  `json:"duplicates"` // samples whose id was in the owner's window
}

func (ns *natsServer) handleRecords(w http.ResponseWriter, r *http.Request) {
	deadline := time.Now().Add(ns.front.writeTimeout - answerMargin)
	batches, err := sources.ReadJSONLines(ns.front.body(w, r), ns.batch, ns.front.limits)
	if err != nil {
		writeBodyError(w, "cannot read records", err)
		return
	}
	req := &natsRequest{batches: batches}
	if err := ns.submit(r.Context(), req, deadline); err != nil {
		submitError(w, err)
		return
	}
	resp := natsRecordsResponse{Predictions: []natsPredictionJSON{}, Rejected: []rejectJSON{}}
	for _, st := range req.steps {
		for _, p := range arrivals(st) {
			pj := natsPredictionJSON{ID: p.ID, Offset: p.Offset, Score: jsonFloat(p.Score)}
			if p.Label != "" {
				pj.Pred = &p.Label
			}
			resp.Predictions = append(resp.Predictions, pj)
		}
		for _, rj := range st.Rejects {
			resp.Rejected = append(resp.Rejected, rejectJSON{rj.Offset, rj.ID, rj.Reason.Error()})
		}
		resp.Duplicates += len(st.Duplicates)
	}
	ns.requests.Add(1)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

// handleLabels answers POST /v1/labels as serve's (labelsAnswer): the
// labels are one batch of late labels (labelsBatch), and what became of
// them the owners' counts (distributed.ChainStep's LabelsWaited,
// LabelsWaiting, LabelsForgotten and LabelsReplaced, which each owner
// counts from its Learner's Step as serve does).
func (ns *natsServer) handleLabels(w http.ResponseWriter, r *http.Request) {
	deadline := time.Now().Add(ns.front.writeTimeout - answerMargin)
	labels, rejects, err := sources.ReadJSONLabels(ns.front.body(w, r), ns.front.limits)
	if err != nil {
		writeBodyError(w, "cannot read labels", err)
		return
	}
	req := &natsRequest{batches: []*record.Batch{labelsBatch(labels)}}
	if err := ns.submit(r.Context(), req, deadline); err != nil {
		submitError(w, err)
		return
	}
	resp := labelsAnswer(len(labels), rejects, req.steps, req.labels, req.base)
	ns.requests.Add(1)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

// bodyReject is rj, a reject of the record at stream offset rj.Offset,
// numbered as the line of its request's body (rj.Offset - base), in its
// reason too (record.Error's "sources: record N").
func bodyReject(rj record.Reject, base int64) rejectJSON {
	reason := rj.Reason.Error()
	if rest, ok := strings.CutPrefix(reason, fmt.Sprintf("sources: record %d", rj.Offset)); ok {
		reason = fmt.Sprintf("sources: record %d", rj.Offset-base) + rest
	}
	return rejectJSON{rj.Offset - base, rj.ID, reason}
}

// natsStats is the answer of GET /v1/stats: stream --nats's summary and
// the namespace's live workers.
type natsStats struct {
	streamSummary
	Workers    int    `json:"workers"`
	Partitions int    `json:"partitions"`
	Server     string `json:"server"`
	// Shares is the number of samples the driver sent to each partition
	// (stream --nats with P > 1 only).
	Shares []int64 `json:"partition_samples,omitempty"`
}

func (ns *natsServer) stats() natsStats {
	ns.mu.Lock()
	last := ns.last
	ns.mu.Unlock()
	r := &natsRun{last: last}
	sum := r.summary(0)
	sum.Window, sum.Rank = ns.window, ns.rank
	return natsStats{streamSummary: sum, Workers: ns.watch.Live(), Partitions: ns.parts, Server: ns.on.server}
}

func (ns *natsServer) handleStats(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(ns.stats())
}

func (ns *natsServer) handleMetrics(w http.ResponseWriter, r *http.Request) {
	ns.mu.Lock()
	c, pending, forgotten, dups, preds := ns.last.Counters, ns.last.Pending, ns.forgotten, ns.dups, ns.preds
	ns.mu.Unlock()
	var b strings.Builder
	metric := func(name, typ, help string, v float64) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n%s %s\n", name, help, name, typ, name, promFloat(v))
	}
	metric("nmfstream_requests_total", "counter", "POST requests answered (records and labels) by this instance.", float64(ns.requests.Load()))
	metric("nmfstream_posts_in_flight", "gauge", "POST requests being read or waiting for their answer.", float64(ns.front.posting.Load()))
	metric("nmfstream_records_total", "counter", "Input records the owner consumed (samples, late labels, duplicates, rejects), over every instance.", float64(c.Records))
	metric("nmfstream_samples_total", "counter", "Samples the owner added, over every instance.", float64(c.Samples))
	metric("nmfstream_predictions_total", "counter", "Arrival predictions this instance answered with a class.", float64(preds))
	metric("nmfstream_rejected_total", "counter", "Records that could not be used.", float64(c.Rejected))
	metric("nmfstream_duplicates_total", "counter", "Samples of this instance skipped because their id was in the owner's window.", float64(dups))
	metric("nmfstream_late_labels_total", "counter", "Labels that arrived without features.", float64(c.LateLabels))
	metric("nmfstream_labeled_total", "counter", "Arrival predictions scored against a known label.", float64(c.Labeled))
	metric("nmfstream_early_total", "counter", "Labeled samples that arrived before any label was known: not scored.", float64(c.Early))
	metric("nmfstream_unlearned_labels_total", "counter", "Labels that came after their sample had left the window: scored, not learned (a longer --window learns them).", float64(c.Unlearned))
	metric("nmfstream_correct_total", "counter", "Scored predictions that were right.", float64(c.Correct))
	metric("nmfstream_accuracy", "gauge", "Prequential accuracy of the owner's predictions.", c.Accuracy())
	metric("nmfstream_pending_labels", "gauge", "Labels waiting for their record.", float64(pending))
	metric("nmfstream_forgotten_labels_total", "counter", "Labels that waited for their record and were forgotten, oldest first, to keep the pending labels within their bound, while the owner learned this instance's requests.", float64(forgotten))
	metric("nmfstream_workers", "gauge", "Live workers of the namespace (heartbeats within the pinned TTL).", float64(ns.watch.Live()))
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	io.WriteString(w, b.String())
}
