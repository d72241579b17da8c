package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nmfstream/nmfstream/distributed"
	"github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/sources"
)

const serveNATSSynopsis = `serve --nats URL [--addr 127.0.0.1:8080] [--workers n] [--partitions P] [--token T] [stream --nats's learner flags]

Serves the distributed learner (package distributed, NATS JetStream) over
HTTP, with the prequential contract of stream --nats: each record is
predicted on arrival, before anything learns from it, then published to
the samples stream. Routes:

  POST /v1/records  JSON lines {"id": …, "x": [features ≥ 0], "label": …}
                    or {"id": …, "text": "…", "label": …} (an id, a
                    label and no features is a late label);
                    answers {"predictions": [{"id", "offset", "pred",
                    "score"}], "rejected": [{"offset", "id", "reason"}],
                    "duplicates": n}; a record whose id was posted
                    before, to this or another instance of the namespace,
                    within the samples stream's duplicate window (two
                    minutes: JetStream's de-duplication, Nats-Msg-Id
                    namespace/id) is a duplicate: no sample, no prediction
  POST /v1/labels   JSON lines {"id": …, "label": …}; answers
                    {"applied": n, "unknown": m} (m: ids this instance has
                    not seen; their labels go to every partition's owner,
                    which sets it on a sample posted to another instance)
  GET  /v1/stats    the prequential counters, as stream --nats --json, and
                    the live workers of the namespace
  GET  /metrics     Prometheus text: serve's metric names where they apply
  GET  /healthz     ok

Requests are served concurrently; a request is answered once its
records and labels are stored in JetStream (the server acknowledged
each). The prediction of a record sees every record and label of the
requests answered before it arrived. Documents become hashed TF-IDF rows in this process, as in stream
--nats, with the document frequencies of the documents it has received,
or with --shared-df those of every instance that sets it on the
namespace. Several instances on one namespace share its class table (the
index of each label); a record posted to one is seen by another's
predictions once the owners hold it. --nats embedded (or a bare --nats) starts an embedded server in a
binary built with -tags nats. No checkpoint: the streams hold what the
learner learned, the counters start at zero.

Example:
  go run -tags nats ./cmd/nmfstream serve --nats --addr 127.0.0.1:8080 --workers 3 --partitions 3`

// natsServer answers HTTP requests with one natsStream.
type natsServer struct {
	mu          sync.Mutex // guards the driver's state; not held while a request waits for the server (step)
	s           *natsStream
	offset      int64 // records received so far: the next record's offset
	dups        int64 // samples skipped as duplicates
	predictions int64 // arrival predictions answered with a class
	maxBody     int64
	token       string
	batch       int
	nonce       string // names this instance in the message ids of records without an id
	requests    atomic.Int64
	watch       *distributed.WorkerWatch // the namespace's live workers
}

func runServeNATS(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", serveNATSSynopsis, stderr)
	var nf natsFlags
	nf.add(fs)
	addr := fs.String("addr", "127.0.0.1:8080", "listen `address`")
	maxBody := fs.Int64("max-body", 64<<20, "largest request body in `bytes`")
	token := fs.String("token", "", "bearer `token` every request but /healthz must carry (Authorization: Bearer …); empty: none")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q (flags go before, as --flag value)", errUsage, fs.Arg(0))
	}
	if err := nf.check(fs); err != nil {
		return err
	}
	if *maxBody < 1 {
		return fmt.Errorf("%w: --max-body must be positive", errUsage)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The instances outlive ctx until the handlers in flight have
	// answered; wait stops them.
	s, wait, err := nf.start(context.WithoutCancel(ctx), "serve", stderr)
	if err != nil {
		return err
	}
	defer s.close()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return errors.Join(err, wait())
	}
	fmt.Fprintf(stderr, "nmfstream serve: listening on http://%s (distributed learner on %s)\n", ln.Addr(), s.server)
	ns := &natsServer{s: s, maxBody: *maxBody, token: *token, batch: nf.batch, nonce: newNonce()}
	if ns.watch, err = distributed.WatchWorkers(s.nc, s.cfg); err != nil {
		return errors.Join(err, ln.Close(), wait())
	}
	defer ns.watch.Stop()
	srv := &http.Server{Handler: ns.handler(), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, IdleTimeout: 2 * time.Minute}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err = <-errc:
	case <-ctx.Done():
	case err = <-s.done:
		// A worker ended on its own: corrupt data in the namespace.
		if err == nil {
			err = errors.New("a worker stopped")
		}
		s.done <- nil
	}
	if err == nil {
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = srv.Shutdown(sctx)
		scancel()
		if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) {
			err = errors.Join(err, serr)
		}
	}
	return errors.Join(err, wait())
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
	Duplicates  int                  `json:"duplicates"` // samples whose id was stored before (any instance, within the duplicate window)
}

func (ns *natsServer) handleRecords(w http.ResponseWriter, r *http.Request) {
	batches, err := sources.ReadJSONLines(http.MaxBytesReader(w, r.Body, ns.maxBody), ns.batch, sources.JSONLimits{})
	if err != nil {
		writeBodyError(w, "cannot read records", err)
		return
	}
	resp := natsRecordsResponse{Predictions: []natsPredictionJSON{}, Rejected: []rejectJSON{}}
	// A client that goes away does not cut a step in half: the records
	// it sent are predicted and published, and shutdown waits for it.
	ctx := context.WithoutCancel(r.Context())
	ns.mu.Lock()
	base := ns.offset
	for _, b := range batches {
		shiftOffsets(b, base)
		_, last := b.Span()
		ns.offset = max(ns.offset, last+1)
	}
	ns.mu.Unlock()
	for _, b := range batches {
		st, err := ns.step(ctx, b)
		resp.Duplicates += st.dups
		if err != nil {
			writeError(w, http.StatusServiceUnavailable, "unavailable", err.Error())
			return
		}
		for j := range st.res.IDs {
			p := natsPredictionJSON{ID: st.res.IDs[j], Offset: st.offs[j], Score: jsonFloat(st.res.Scores[j])}
			if st.res.Preds[j] != "" {
				p.Pred = &st.res.Preds[j]
			}
			resp.Predictions = append(resp.Predictions, p)
		}
		for _, rj := range st.rejects {
			resp.Rejected = append(resp.Rejected, rejectJSON{rj.Offset, rj.ID, rj.Reason.Error()})
		}
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
	ns.mu.Lock()
	b := &record.Batch{}
	for _, l := range labels {
		b.LateLabels = append(b.LateLabels, record.LateLabel{Offset: ns.offset, ID: l.ID, Label: l.Label})
		ns.offset++
	}
	ns.mu.Unlock()
	st, err := ns.step(context.WithoutCancel(r.Context()), b)
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "unavailable", err.Error())
		return
	}
	unknown := st.unknown
	ns.requests.Add(1)
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, "{\"applied\":%d,\"unknown\":%d}\n", len(labels)-unknown, unknown)
}

func (ns *natsServer) handleStats(w http.ResponseWriter, r *http.Request) {
	ns.mu.Lock()
	sum := ns.s.summary()
	ns.mu.Unlock()
	sum.Partitions, sum.Server, sum.Workers = ns.s.cfg.Partitions, ns.s.server, ns.watch.Live()
	if st, err := distributed.ReadState(r.Context(), ns.s.nc, ns.s.cfg); err == nil {
		sum.Applied, sum.Left, sum.Version = st.Samples, st.Left, st.Version
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(sum)
}
