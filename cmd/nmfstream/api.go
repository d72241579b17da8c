package main

import (
	"bufio"
	"crypto/subtle"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/nmfstream/nmfstream/stages"
)

// openAPI is the OpenAPI 3 document of serve's HTTP API, served at
// GET /openapi.json. TestOpenAPIRoutes keeps it and routes in step.
//
//go:embed openapi.json
var openAPI []byte

// route is one pattern of serve's mux (net/http's "METHOD /path" syntax).
type route struct {
	pattern string
	handler http.HandlerFunc
}

// routes are serve's HTTP API; every one is in openapi.json.
func (s *server) routes() []route {
	return []route{
		{"POST /v1/records", s.handleRecords},
		{"GET /v1/records/{id}", s.handleRecord},
		{"POST /v1/labels", s.handleLabels},
		{"GET /metrics", s.handleMetrics},
		{"GET /healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") }},
		{"GET /openapi.json", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write(openAPI)
		}},
	}
}

// handler returns the service's HTTP handler: the routes, and JSON error
// bodies for requests that match none (404, or 405 with an Allow header).
// With a token, every route but /healthz and /openapi.json wants the
// header "Authorization: Bearer <token>" (401 otherwise); with an in-flight
// cap, a request that finds that many in flight is answered 429 at once,
// which bounds the memory that bodies can take to cap × --max-body.
func (s *server) handler() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range s.routes() {
		mux.HandleFunc(rt.pattern, rt.handler)
	}
	var slots chan struct{}
	if s.maxInFlight > 0 {
		slots = make(chan struct{}, s.maxInFlight)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		open := r.URL.Path == "/healthz" || r.URL.Path == "/openapi.json"
		if s.token != "" && !open && !s.authorized(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="nmfstream"`)
			writeError(w, http.StatusUnauthorized, "unauthorized", "missing or wrong bearer token (Authorization: Bearer <token>, as serve --token says)")
			return
		}
		if r.Method == http.MethodPost && !open {
			release, ok := s.admitPost(w, r, slots)
			if !ok {
				return
			}
			defer release()
		}
		h, pattern := mux.Handler(r)
		if pattern != "" {
			mux.ServeHTTP(w, r) // which sets r's path values; h does not
			return
		}
		// The mux's own answer (404 or 405) gives the status and the
		// Allow header; the body is ours.
		var st statusWriter
		st.h = w.Header()
		h.ServeHTTP(&st, r)
		switch st.code {
		case http.StatusMethodNotAllowed:
			writeError(w, st.code, "method_not_allowed", r.Method+" is not allowed on "+r.URL.Path+" (allowed: "+w.Header().Get("Allow")+")")
		case http.StatusNotFound, 0:
			writeError(w, http.StatusNotFound, "not_found", "no route "+r.Method+" "+r.URL.Path+" (see GET /openapi.json)")
		default:
			writeError(w, st.code, "error", http.StatusText(st.code))
		}
	})
}

// admitPost applies serve's bounds to a POST before its route runs
// (serve's and serve --nats's): a body announced over --max-body is
// refused (413); with slots (the --max-inflight cap, nil for none) it
// waits for the body's first byte (408 past --body-grace, so that
// connections that send headers and no body cannot keep other clients
// out) and then takes a slot (429 when none is free). It reports whether
// the request goes on, and then release frees its slot and its count in
// posting once its handler is done.
func (s *server) admitPost(w http.ResponseWriter, r *http.Request, slots chan struct{}) (release func(), ok bool) {
	if r.ContentLength > s.maxBody {
		w.Header().Set("Connection", "close")
		writeError(w, http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("a body of %d bytes, over serve --max-body %d", r.ContentLength, s.maxBody))
		return nil, false
	}
	free := func() {}
	if slots != nil {
		if err := s.awaitBody(w, r); err != nil {
			writeBodyError(w, "waiting for the body", err)
			return nil, false
		}
		select {
		case slots <- struct{}{}:
			free = func() { <-slots }
		default:
			w.Header().Set("Retry-After", "1")
			writeError(w, http.StatusTooManyRequests, "too_many_requests", "too many requests in flight (serve --max-inflight); retry shortly")
			return nil, false
		}
	}
	s.posting.Add(1)
	return func() { s.posting.Add(-1); free() }, true
}

// authorized reports whether r carries the bearer token, compared in
// constant time.
func (s *server) authorized(r *http.Request) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(s.token)) == 1
}

// statusWriter records the status a handler writes and drops its body.
type statusWriter struct {
	h    http.Header
	code int
}

func (s *statusWriter) Header() http.Header         { return s.h }
func (s *statusWriter) Write(b []byte) (int, error) { return len(b), nil }
func (s *statusWriter) WriteHeader(code int)        { s.code = code }

// apiError is the body of every error response:
// {"error": {"code": "...", "message": "..."}}.
type apiError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// writeError writes an error response with a JSON body. code is a stable,
// machine-readable word (bad_request, too_large, not_found,
// method_not_allowed, unavailable, internal); message is for people.
func writeError(w http.ResponseWriter, status int, code, message string) {
	var e apiError
	e.Error.Code, e.Error.Message = code, message
	h := w.Header()
	h.Del("Content-Length")
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(e)
}

// writeBodyError answers a request body that could not be read: 413 when
// it is larger than --max-body, 408 when it arrived slower than
// --min-body-rate or not within --read-timeout, else 400.
func writeBodyError(w http.ResponseWriter, what string, err error) {
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		writeError(w, http.StatusRequestEntityTooLarge, "too_large", what+": "+err.Error()+" (serve --max-body)")
		return
	}
	if errors.Is(err, errSlowBody) {
		w.Header().Set("Connection", "close")
		writeError(w, http.StatusRequestTimeout, "timeout", what+": "+err.Error())
		return
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		w.Header().Set("Connection", "close")
		writeError(w, http.StatusRequestTimeout, "timeout", what+": the body did not arrive within serve --read-timeout")
		return
	}
	writeError(w, http.StatusBadRequest, "bad_request", what+": "+err.Error())
}

// recentRecords remembers the arrival-time code and prediction of the most
// recent records that had an id, at most max of them (oldest forgotten
// first), for GET /v1/records/{id}.
type recentRecords struct {
	byID  map[string]predictionJSON
	order []recentKey // arrival order; order[head:] are live or stale
	head  int
}

type recentKey struct {
	id     string
	offset int64
}

func (rr *recentRecords) add(max int, p stages.Prediction) {
	if max <= 0 || p.ID == "" {
		return
	}
	rr.addJSON(max, predictionOf(p))
}

func (rr *recentRecords) addJSON(max int, p predictionJSON) {
	if max <= 0 || p.ID == "" {
		return
	}
	if rr.byID == nil {
		rr.byID = map[string]predictionJSON{}
	}
	rr.byID[p.ID] = p
	rr.order = append(rr.order, recentKey{p.ID, p.Offset})
	for len(rr.byID) > max && rr.head < len(rr.order) {
		k := rr.order[rr.head]
		rr.head++
		// A later record with the same id replaced this entry: keep it.
		if e, ok := rr.byID[k.id]; ok && e.Offset == k.offset {
			delete(rr.byID, k.id)
		}
	}
	if rr.head > len(rr.order)/2 && rr.head > 1024 {
		rr.order = append(rr.order[:0], rr.order[rr.head:]...)
		rr.head = 0
	}
	if len(rr.order)-rr.head > 2*len(rr.byID)+1024 {
		// Ids that came back (after leaving the window) left stale keys
		// that the oldest-first removal above never reaches while the
		// store holds fewer than max ids: drop them, so that order stays
		// within 2·max + 1024 keys.
		live := rr.order[:0]
		for _, k := range rr.order[rr.head:] {
			if e, ok := rr.byID[k.id]; ok && e.Offset == k.offset {
				live = append(live, k)
			}
		}
		clear(rr.order[len(live):])
		rr.order, rr.head = live, 0
	}
}

// list returns the records remembered, oldest first.
func (rr *recentRecords) list() []predictionJSON {
	var out []predictionJSON
	for _, k := range rr.order[rr.head:] {
		if e, ok := rr.byID[k.id]; ok && e.Offset == k.offset {
			out = append(out, e)
		}
	}
	return out
}

func (rr *recentRecords) get(id string) (predictionJSON, bool) {
	p, ok := rr.byID[id]
	return p, ok
}

// predictionOf is p as the JSON responses carry it.
//
// A code with an entry that is not finite is left out (JSON has no NaN,
// and the encoder would fail the whole answer), as the stream writes a
// null code for one that is not a finite float32.
func predictionOf(p stages.Prediction) predictionJSON {
	pj := predictionJSON{ID: p.ID, Offset: p.Offset, Node: p.Node, Score: jsonFloat(p.Score), Code: p.Code}
	for _, v := range p.Code {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			pj.Code = nil
			break
		}
	}
	if p.Label != "" {
		lab := p.Label
		pj.Pred = &lab
	}
	return pj
}

// handleRecord answers GET /v1/records/{id}: the record's code and
// prediction as made on its arrival, while it is among the --recent most
// recent records with an id.
func (s *server) handleRecord(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s.mu.Lock()
	p, ok := s.recent.get(id)
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "not_found", "no recent record with id "+id+" (serve keeps the last --recent records)")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(p)
}

// awaitBody waits for the first byte of r's body, for at most --body-grace
// (with --min-body-rate; --read-timeout bounds it otherwise), and puts it
// back in front of r.Body. An empty body is not waited for. An error is a
// body that did not begin in time (errSlowBody) or could not be read.
func (s *server) awaitBody(w http.ResponseWriter, r *http.Request) error {
	if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	start := time.Now()
	rc := http.NewResponseController(w)
	timed := s.minBodyRate > 0 && s.bodyGrace > 0 && rc.SetReadDeadline(start.Add(s.bodyGrace)) == nil
	br := bufio.NewReaderSize(r.Body, 16)
	_, err := br.Peek(1)
	if timed {
		// Back to --read-timeout's deadline (the body's own reader moves
		// it with the bytes from here on, server.body).
		var end time.Time
		if s.readTimeout > 0 {
			end = start.Add(s.readTimeout)
		}
		rc.SetReadDeadline(end)
	}
	switch {
	case err == io.EOF:
		err = nil
	case timed && errors.Is(err, os.ErrDeadlineExceeded):
		err = fmt.Errorf("%w: no byte of the body in %s (serve --body-grace)", errSlowBody, s.bodyGrace)
	}
	r.Body = struct {
		io.Reader
		io.Closer
	}{br, r.Body}
	return err
}

// errSlowBody reports a body cut off by serve --min-body-rate.
var errSlowBody = errors.New("the body arrived slower than serve --min-body-rate")

// body returns r's body bounded by --max-body and, with --min-body-rate,
// by a read deadline that moves with the bytes received: bodyGrace plus
// one second per minBodyRate bytes from the handler's start (never past
// --read-timeout). A body that falls behind is cut off (errSlowBody),
// which ends the request and frees its --max-inflight slot, so that
// connections trickling bytes cannot keep other clients out.
func (s *server) body(w http.ResponseWriter, r *http.Request) io.Reader {
	b := http.MaxBytesReader(w, r.Body, s.maxBody)
	if s.minBodyRate <= 0 {
		return b
	}
	sb := &slowBody{r: b, rc: http.NewResponseController(w), start: time.Now(), grace: s.bodyGrace, rate: s.minBodyRate}
	if s.readTimeout > 0 {
		sb.end = sb.start.Add(s.readTimeout)
	}
	sb.extend()
	return sb
}

// slowBody is a request body read under a moving deadline (server.body).
type slowBody struct {
	r          io.Reader
	rc         *http.ResponseController
	start, end time.Time // end: --read-timeout's deadline, zero for none
	grace      time.Duration
	rate, n    int64 // bytes per second; bytes read
	failed     bool  // setting the deadline failed: no minimum rate
}

func (b *slowBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n += int64(n)
	if err != nil && !b.failed && errors.Is(err, os.ErrDeadlineExceeded) && (b.end.IsZero() || time.Now().Before(b.end)) {
		return n, fmt.Errorf("%w: %d bytes in %.1f s, want at least %d bytes per second after %s", errSlowBody, b.n, time.Since(b.start).Seconds(), b.rate, b.grace)
	}
	if n > 0 && err == nil {
		// Not at the end: there net/http clears the deadline for its
		// background read, which a deadline set again would cut off,
		// cancelling the request while it is learned.
		b.extend()
	}
	return n, err
}

// extend moves the read deadline to where the body, at the minimum rate,
// must have delivered its next byte.
func (b *slowBody) extend() {
	if b.failed {
		return
	}
	d := b.start.Add(b.grace + time.Duration(float64(b.n+1)/float64(b.rate)*float64(time.Second)))
	if !b.end.IsZero() && d.After(b.end) {
		d = b.end
	}
	if err := b.rc.SetReadDeadline(d); err != nil {
		b.failed = true
	}
}
