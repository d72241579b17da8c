//go:build nats

package main

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/nmfstream/nmfstream/distributed"
	"github.com/nmfstream/nmfstream/model"
)

// natsMetrics reads base's /metrics and returns each sample's value by
// metric name; it fails the test unless the answer is Prometheus text.
func natsMetrics(t *testing.T, base string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/plain; version=0.0.4; charset=utf-8" {
		t.Fatalf("GET /metrics: %s, %s: %s", resp.Status, resp.Header.Get("Content-Type"), raw)
	}
	m := map[string]float64{}
	sample := regexp.MustCompile(`(?m)^(nmfstream_\w+) (\S+)$`)
	for _, g := range sample.FindAllStringSubmatch(string(raw), -1) {
		v, err := strconv.ParseFloat(g[2], 64)
		if err != nil {
			t.Fatalf("metric %s: value %q", g[1], g[2])
		}
		m[g[1]] = v
	}
	return m
}

// TestServeNATSMetrics checks serve --nats's /metrics (serve's names and
// format: requests, records, predictions, rejects, pending labels, live
// workers) and that /v1/stats counts the live workers it hears: 2 in this
// process (--workers 2).
func TestServeNATSMetrics(t *testing.T) {
	srv := testNATS(t)
	base, post, stats, stop := serveNATSAt(t, srv.ClientURL(), "--workers", "2", "--partitions", "2")
	var r1, r2 natsRecordsResponse
	post("/v1/records", `{"id":"a1","x":[5,0,0,1],"label":"a"}
{"id":"a2","x":[6,1,0,0],"label":"a"}
{"id":"b1","x":[0,0,5,1],"label":"b"}
{"id":"b2","x":[1,0,6,0],"label":"b"}
`, &r1)
	post("/v1/records", `{"id":"q1","x":[5,1,0,0]}
{"id":"bad","x":[1,-1,0,0]}
{"id":"q2","x":[0,1,5,0]}
`, &r2)
	var preds int
	for _, p := range append(r1.Predictions, r2.Predictions...) {
		if p.Pred != nil {
			preds++
		}
	}
	// Two workers beat every pinned TTL / 4 (125 ms here).
	sum := stats()
	for deadline := time.Now().Add(10 * time.Second); sum.Workers < 2 && time.Now().Before(deadline); sum = stats() {
		time.Sleep(50 * time.Millisecond)
	}
	if sum.Workers != 2 {
		t.Errorf("/v1/stats: %d workers, want the 2 of this process", sum.Workers)
	}
	m := natsMetrics(t, base)
	want := map[string]float64{
		"nmfstream_requests_total":    2,
		"nmfstream_records_total":     7,
		"nmfstream_samples_total":     6,
		"nmfstream_predictions_total": float64(preds),
		"nmfstream_rejected_total":    1,
		"nmfstream_duplicates_total":  0,
		"nmfstream_pending_labels":    2, // q1 and q2 wait for their labels
		"nmfstream_workers":           2,
	}
	for name, v := range want {
		if got, ok := m[name]; !ok || got != v {
			t.Errorf("%s = %v (present %v), want %v", name, got, ok, v)
		}
	}
	// The first request is one step, predicted before any label: only q1
	// and q2 get a class.
	if preds != 2 {
		t.Errorf("%d predictions with a class, want q1's and q2's", preds)
	}
	stop()
}

// TestServeNATSDuplicates posts the same ids twice to one instance and
// again to a second instance of the namespace: each id is one sample (the
// owners apply 5, not 14), the repeats are answered as duplicates without
// a prediction and counted in /metrics, and the samples stream holds each
// with the Nats-Msg-Id namespace/id.
func TestServeNATSDuplicates(t *testing.T) {
	srv := testNATS(t)
	baseA, postA, statsA, stopA := serveNATSAt(t, srv.ClientURL())
	baseB, postB, _, stopB := serveNATSAt(t, srv.ClientURL(), "--workers", "0")
	const four = `{"id":"a1","x":[5,0,0,1],"label":"a"}
{"id":"a2","x":[6,1,0,0],"label":"a"}
{"id":"b1","x":[0,0,5,1],"label":"b"}
{"id":"b2","x":[1,0,6,0],"label":"b"}
`
	var r1, r2, r3, r4 natsRecordsResponse
	postA("/v1/records", four, &r1)
	postA("/v1/records", four, &r2)
	postB("/v1/records", four, &r3)
	postB("/v1/records", `{"id":"c1","x":[3,3,0,0]}
{"id":"a1","x":[5,0,0,1],"label":"a"}
`, &r4)
	for i, c := range []struct {
		r           natsRecordsResponse
		preds, dups int
	}{{r1, 4, 0}, {r2, 0, 4}, {r3, 0, 4}, {r4, 1, 1}} {
		if len(c.r.Predictions) != c.preds || c.r.Duplicates != c.dups {
			t.Errorf("request %d: %d predictions and %d duplicates, want %d and %d", i+1, len(c.r.Predictions), c.r.Duplicates, c.preds, c.dups)
		}
	}
	sum := statsA()
	for deadline := time.Now().Add(30 * time.Second); sum.Applied < 5 && time.Now().Before(deadline); sum = statsA() {
		time.Sleep(20 * time.Millisecond)
	}
	// Anything published is ingested in order: a repeat stored after c1
	// would show by now; wait one more beat for a straggler.
	time.Sleep(500 * time.Millisecond)
	if sum = statsA(); sum.Applied != 5 || sum.Samples != 4 {
		t.Errorf("owners applied %d samples (first instance: %d), want 5 (4)", sum.Applied, sum.Samples)
	}
	if m := natsMetrics(t, baseA); m["nmfstream_duplicates_total"] != 4 || m["nmfstream_samples_total"] != 4 || m["nmfstream_records_total"] != 8 {
		t.Errorf("first instance's metrics: %v", m)
	}
	if m := natsMetrics(t, baseB); m["nmfstream_duplicates_total"] != 5 || m["nmfstream_samples_total"] != 1 {
		t.Errorf("second instance's metrics: %v", m)
	}
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(context.Background(), "NMF_SAMPLES")
	if err != nil {
		t.Fatal(err)
	}
	msg, err := st.GetMsg(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := msg.Header.Get(jetstream.MsgIDHeader); got != "nmf/a1" {
		t.Errorf("the first sample's Nats-Msg-Id is %q, want nmf/a1", got)
	}
	stopB()
	stopA()
}

// TestServeNATSLateLabelElsewhere posts a sample to one instance and its
// late label to another: the label reaches the sample's owner, so that a
// query next to the sample, posted to the first instance, takes that
// label from it (--predictor nearest --vote 1: the one nearest labeled
// sample decides; without the label it would be a1, class a).
func TestServeNATSLateLabelElsewhere(t *testing.T) {
	srv := testNATS(t)
	flags := []string{"--predictor", "nearest", "--vote", "1"}
	_, postA, _, stopA := serveNATSAt(t, srv.ClientURL(), flags...)
	_, postB, _, stopB := serveNATSAt(t, srv.ClientURL(), append(flags, "--workers", "0")...)
	var r1, r2 natsRecordsResponse
	postA("/v1/records", `{"id":"a1","x":[5,0,0,1],"label":"a"}
{"id":"q1","x":[0,0,5,1]}
`, &r1)
	var lab struct{ Applied, Unknown int }
	postB("/v1/labels", `{"id":"q1","label":"b"}
`, &lab)
	// B's next step waits until the owners hold what B published before.
	postB("/v1/labels", `{"id":"nobody","label":"b"}
`, &lab)
	postA("/v1/records", `{"id":"z","x":[0,0,5,1.2]}
`, &r2)
	if len(r2.Predictions) != 1 || r2.Predictions[0].Pred == nil || *r2.Predictions[0].Pred != "b" {
		t.Fatalf("query next to q1 after q1's label b posted to the other instance: %+v, want b", r2.Predictions)
	}
	stopB()
	stopA()
}

// TestServeNATSConcurrent checks that a request waiting for the owners
// does not hold up the others: with the namespace's only worker stopped,
// a request that must wait for it (the owners answer its neighbours)
// stays unanswered while /v1/stats and a request of rejected records only
// are answered; a new worker then lets it finish.
func TestServeNATSConcurrent(t *testing.T) {
	srv := testNATS(t)
	startWorker := func() (stop func()) {
		nc, err := nats.Connect(srv.ClientURL())
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cfg := distributed.Config{Namespace: "nmf", Rank: 10, Partitions: 1, Alpha: model.DefaultGNMFAlpha, GraphK: 5,
			Window: 10000, Refresh: 100, Seed: 1, PinnedTTL: 500 * time.Millisecond, Idle: 5 * time.Millisecond}
		w, err := distributed.NewWorker(ctx, nc, cfg)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		return func() { cancel(); <-done; nc.Close() }
	}
	stopW := startWorker()
	_, post, stats, stop := serveNATSAt(t, srv.ClientURL(), "--workers", "0")
	var r natsRecordsResponse
	post("/v1/records", `{"id":"a1","x":[5,0,0,1],"label":"a"}
{"id":"b1","x":[0,0,5,1],"label":"b"}
`, &r)
	for deadline := time.Now().Add(30 * time.Second); stats().Applied < 2; {
		if time.Now().After(deadline) {
			t.Fatal("the worker did not take the first records within 30 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	stopW()
	waiting := make(chan natsRecordsResponse, 1)
	go func() {
		var r natsRecordsResponse
		post("/v1/records", `{"id":"q1","x":[5,1,0,0]}
`, &r) // waits for an owner to answer its neighbours
		waiting <- r
	}()
	time.Sleep(200 * time.Millisecond) // let it reach the wait
	answered := make(chan natsRecordsResponse, 1)
	go func() {
		var r natsRecordsResponse
		post("/v1/records", `{"id":"bad","x":[1,-1,0,0]}
`, &r)
		answered <- r
	}()
	select {
	case r := <-answered:
		if len(r.Rejected) != 1 {
			t.Errorf("the request of one bad record: %+v, want it rejected", r)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a request of a rejected record waited for another request")
	}
	if sum := stats(); sum.Records != 4 {
		t.Errorf("%d records counted while q1 waits, want 4", sum.Records)
	}
	select {
	case r := <-waiting:
		t.Fatalf("q1 was answered (%+v) with no owner", r)
	default:
	}
	stopW = startWorker()
	defer stopW()
	select {
	case r := <-waiting:
		if len(r.Predictions) != 1 || r.Predictions[0].Pred == nil || *r.Predictions[0].Pred != "a" {
			t.Errorf("q1 after a new worker came: %+v, want a", r.Predictions)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("q1 was not answered after a new worker came")
	}
	stop()
}
