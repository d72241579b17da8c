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

const serveNATSSynopsis = `serve --nats URL [--addr 127.0.0.1:8080] [--workers n] [--namespace ns] [--token T] [serve's learner flags]

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
                    {"applied": n, "pending": m} (m: labels the owner
                    holds for a record not seen yet)
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

Example:
  go run -tags nats ./cmd/nmfstream serve --nats --addr 127.0.0.1:8080`

// natsServer answers HTTP requests through the chain on the owners.
type natsServer struct {
	on      *owners
	parts   int // the namespace's partitions
	maxBody int64
	token   string
	batch   int
	window  int // the learner's --window and --rank, which /v1/stats reports
	rank    int
	watch   *distributed.WorkerWatch // the namespace's live workers

	reqs    chan *natsRequest // handlers → the chain; closed by serve under inMu
	inMu    sync.RWMutex      // senders hold it for reading, the closer for writing
	closed  bool              // reqs is closed; guarded by inMu
	stopped chan struct{}     // closed once the chain has stopped
	runErr  error             // why it stopped; read only after stopped is closed
	next    int64             // offset of the next record: the split stage's

	mu          sync.Mutex // guards the fields below, written by the collect stage
	last        distributed.ChainStep
	dups, preds int64 // samples skipped as duplicates, predictions with a class
	requests    atomic.Int64
}

// natsRequest is the work of one HTTP request: its handler sets batches
// and reads steps and pending once done is closed.
type natsRequest struct {
	batches []*record.Batch
	done    chan struct{}
	steps   []*stages.Step // one per batch, in order
	pending int            // growth of the owner's labels waiting for their record
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
	addr := fs.String("addr", "127.0.0.1:8080", "listen `address`")
	maxBody := fs.Int64("max-body", 64<<20, "largest request body in `bytes`")
	token := fs.String("token", "", "bearer `token` every request but /healthz must carry (Authorization: Bearer …); empty: none")
	predictor := fs.String("predictor", "graph", "classifier: graph, spread, nearest, walk or propagate (see stream -help)")
	metric := fs.String("metric", "euclidean", "code-space distance of the classifier: euclidean or cosine")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q (flags go before, as --flag value)", errUsage, fs.Arg(0))
	}
	if err := checkServeNATS(fs, &cfg, &nf, *predictor, *metric, *maxBody); err != nil {
		return err
	}
	settings, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	// The owners and the chain outlive ctx until the requests in flight
	// have been answered.
	on, rctx, err := nf.start(context.WithoutCancel(ctx), "serve", settings, stderr)
	if err != nil {
		return err
	}
	on.drv.TrimEvery = trimAnswersEvery // serve --nats does not resume a driver
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return errors.Join(err, on.close())
	}
	fmt.Fprintf(stderr, "nmfstream serve: listening on http://%s (the chain's owners on %s)\n", ln.Addr(), on.server)
	ns := &natsServer{on: on, parts: nf.cfg.Partitions, maxBody: *maxBody, token: *token, batch: cfg.Batch, window: cfg.Window, rank: cfg.Rank, reqs: make(chan *natsRequest), stopped: make(chan struct{})}
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

// checkServeNATS checks serve --nats's flags and completes cfg.
func checkServeNATS(fs *flag.FlagSet, cfg *onlineConfig, nf *chainNATS, predictor, metric string, maxBody int64) error {
	var err error
	if cfg.Predictor, err = parsePredictor(predictor); err != nil {
		return err
	}
	if cfg.Metric, err = parseMetric(metric); err != nil {
		return err
	}
	if maxBody < 1 {
		return fmt.Errorf("%w: --max-body must be positive", errUsage)
	}
	if err := errors.Join(checkCodeUse(*cfg), checkOnlineConfig(cfg)); err != nil {
		return err
	}
	return nf.check(&streamOptions{fs: fs, cfg: *cfg})
}

// serve answers HTTP on ln until ctx ends or the chain stops, then shuts
// the server down (letting the requests in flight finish), ends the chain
// and stops the owners.
func (ns *natsServer) serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: ns.handler(), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, IdleTimeout: 2 * time.Minute}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
	case <-ns.stopped:
		err = fmt.Errorf("the chain stopped: %w", ns.runErr)
	}
	sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
	serr := srv.Shutdown(sctx)
	scancel()
	if !errors.Is(err, http.ErrServerClosed) && err != nil {
		serr = errors.Join(err, serr)
	}
	ns.inMu.Lock()
	ns.closed = true
	close(ns.reqs)
	ns.inMu.Unlock()
	<-ns.stopped
	if ns.runErr != nil && !errors.Is(ns.runErr, context.Canceled) && err == nil {
		serr = errors.Join(serr, ns.runErr)
	}
	return errors.Join(serr, ns.on.close())
}

// pipeline is serve --nats's chain: split each request into its batches,
// numbering their records after those before, then the remote chain.
func (ns *natsServer) pipeline() *pipeline.Pipeline {
	split := func(_ context.Context, r *natsRequest) ([]*natsPart, error) {
		parts := make([]*natsPart, 0, max(1, len(r.batches)))
		for _, b := range r.batches {
			shiftOffsets(b, ns.next)
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
	p.req.pending += max(0, a.Pending-ns.last.Pending)
	ns.last = *a
	ns.dups += int64(len(a.Step.Duplicates))
	for _, pr := range a.Step.Predictions {
		if pr.Label != "" {
			ns.preds++
		}
	}
	return nil
}

// submit sends r into the chain and waits until it is answered or the
// chain stops. Once sent, r is learned even if the client goes away.
func (ns *natsServer) submit(ctx context.Context, r *natsRequest) error {
	r.done = make(chan struct{})
	ns.inMu.RLock()
	if ns.closed {
		ns.inMu.RUnlock()
		return errors.New("shutting down")
	}
	select {
	case ns.reqs <- r:
	case <-ns.stopped:
	case <-ctx.Done():
		ns.inMu.RUnlock()
		return ctx.Err()
	}
	ns.inMu.RUnlock()
	select {
	case <-r.done:
		return nil
	case <-ns.stopped:
		return fmt.Errorf("the chain stopped: %v", ns.runErr)
	}
}

func (ns *natsServer) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/records", ns.auth(ns.handleRecords))
	mux.HandleFunc("POST /v1/labels", ns.auth(ns.handleLabels))
	mux.HandleFunc("GET /v1/stats", ns.auth(ns.handleStats))
	mux.HandleFunc("GET /metrics", ns.auth(ns.handleMetrics))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	return mux
}

func (ns *natsServer) auth(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if ns.token != "" && r.Header.Get("Authorization") != "Bearer "+ns.token {
			writeError(w, http.StatusUnauthorized, "unauthorized", "missing or wrong bearer token")
			return
		}
		h(w, r)
	}
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
	batches, err := sources.ReadJSONLines(http.MaxBytesReader(w, r.Body, ns.maxBody), ns.batch, sources.JSONLimits{})
	if err != nil {
		writeBodyError(w, "cannot read records", err)
		return
	}
	req := &natsRequest{batches: batches}
	if err := ns.submit(r.Context(), req); err != nil {
		writeError(w, http.StatusServiceUnavailable, "unavailable", err.Error())
		return
	}
	resp := natsRecordsResponse{Predictions: []natsPredictionJSON{}, Rejected: []rejectJSON{}}
	for _, st := range req.steps {
		for _, p := range st.Predictions {
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

func (ns *natsServer) handleLabels(w http.ResponseWriter, r *http.Request) {
	labels, _, err := sources.ReadJSONLabels(http.MaxBytesReader(w, r.Body, ns.maxBody), sources.JSONLimits{})
	if err != nil {
		writeBodyError(w, "bad label record", err)
		return
	}
	b := &record.Batch{}
	for _, l := range labels {
		b.LateLabels = append(b.LateLabels, record.LateLabel{Offset: l.Offset, ID: l.ID, Label: l.Label})
	}
	req := &natsRequest{batches: []*record.Batch{b}}
	if err := ns.submit(r.Context(), req); err != nil {
		writeError(w, http.StatusServiceUnavailable, "unavailable", err.Error())
		return
	}
	pending := min(req.pending, len(labels))
	ns.requests.Add(1)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(labelsResponse{Applied: len(labels) - pending, Pending: pending, Rejected: []rejectJSON{}})
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
	c, pending, dups, preds := ns.last.Counters, ns.last.Pending, ns.dups, ns.preds
	ns.mu.Unlock()
	var b strings.Builder
	metric := func(name, typ, help string, v float64) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n%s %s\n", name, help, name, typ, name, promFloat(v))
	}
	metric("nmfstream_requests_total", "counter", "POST requests answered (records and labels) by this instance.", float64(ns.requests.Load()))
	metric("nmfstream_records_total", "counter", "Input records the owner consumed (samples, late labels, duplicates, rejects), over every instance.", float64(c.Records))
	metric("nmfstream_samples_total", "counter", "Samples the owner added, over every instance.", float64(c.Samples))
	metric("nmfstream_predictions_total", "counter", "Arrival predictions this instance answered with a class.", float64(preds))
	metric("nmfstream_rejected_total", "counter", "Records that could not be used.", float64(c.Rejected))
	metric("nmfstream_duplicates_total", "counter", "Samples of this instance skipped because their id was in the owner's window.", float64(dups))
	metric("nmfstream_late_labels_total", "counter", "Labels that arrived without features.", float64(c.LateLabels))
	metric("nmfstream_labeled_total", "counter", "Arrival predictions scored against a known label.", float64(c.Labeled))
	metric("nmfstream_early_total", "counter", "Labeled samples that arrived before any label was known: not scored.", float64(c.Early))
	metric("nmfstream_correct_total", "counter", "Scored predictions that were right.", float64(c.Correct))
	metric("nmfstream_accuracy", "gauge", "Prequential accuracy of the owner's predictions.", c.Accuracy())
	metric("nmfstream_pending_labels", "gauge", "Labels waiting for their record.", float64(pending))
	metric("nmfstream_workers", "gauge", "Live workers of the namespace (heartbeats within the pinned TTL).", float64(ns.watch.Live()))
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	io.WriteString(w, b.String())
}
