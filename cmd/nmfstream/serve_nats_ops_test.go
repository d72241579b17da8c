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

	"github.com/nmfstream/nmfstream/distributed"
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
		"nmfstream_pending_labels":    0, // no label waits for its record
		"nmfstream_workers":           2,
	}
	for name, v := range want {
		if got, ok := m[name]; !ok || got != v {
			t.Errorf("%s = %v (present %v), want %v", name, got, ok, v)
		}
	}
	if sum.Partitions != 2 || sum.Records != 7 {
		t.Errorf("/v1/stats: %d partitions, %d records; want 2 and 7", sum.Partitions, sum.Records)
	}
	stop()
}

// TestServeNATSDuplicates posts the same ids twice to one instance and
// again to a second instance of the namespace: each id is one sample of
// the owner's window (5 samples, not 14), the repeats are answered as
// duplicates without a prediction and counted in /metrics.
func TestServeNATSDuplicates(t *testing.T) {
	srv := testNATS(t)
	baseA, postA, _, stopA := serveNATSAt(t, srv.ClientURL())
	baseB, postB, statsB, stopB := serveNATSAt(t, srv.ClientURL(), "--workers", "0")
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
	if sum := statsB(); sum.Samples != 5 || sum.Duplicates != 9 || sum.Records != 14 {
		t.Errorf("the owner's counters: %d samples, %d duplicates, %d records; want 5, 9, 14", sum.Samples, sum.Duplicates, sum.Records)
	}
	// Each instance counts its own duplicates, and the owner's samples as
	// of its last answer.
	if m := natsMetrics(t, baseA); m["nmfstream_duplicates_total"] != 4 || m["nmfstream_samples_total"] != 4 || m["nmfstream_records_total"] != 8 {
		t.Errorf("first instance's metrics: %v", m)
	}
	if m := natsMetrics(t, baseB); m["nmfstream_duplicates_total"] != 5 || m["nmfstream_samples_total"] != 5 {
		t.Errorf("second instance's metrics: %v", m)
	}
	stopB()
	stopA()
}

// TestServeNATSLateLabelElsewhere posts a sample to one instance and its
// late label to another: the label reaches the sample's owner, so that a
// query next to the sample, posted to the first instance, takes that
// label from it (without the label the only class would be a1's, a).
func TestServeNATSLateLabelElsewhere(t *testing.T) {
	srv := testNATS(t)
	_, postA, _, stopA := serveNATSAt(t, srv.ClientURL())
	_, postB, _, stopB := serveNATSAt(t, srv.ClientURL(), "--workers", "0")
	var r1, r2 natsRecordsResponse
	postA("/v1/records", `{"id":"a1","x":[5,0,0,1],"label":"a"}
{"id":"q1","x":[0,0,5,1]}
`, &r1)
	var lab labelsResponse
	postB("/v1/labels", `{"id":"q1","label":"b"}
`, &lab)
	if lab.Applied != 1 {
		t.Errorf("q1's label posted to the other instance: %+v, want it applied", lab)
	}
	postA("/v1/records", `{"id":"z","x":[0,0,5,1.2]}
`, &r2)
	if len(r2.Predictions) != 1 || r2.Predictions[0].Pred == nil || *r2.Predictions[0].Pred != "b" {
		t.Fatalf("query next to q1 after q1's label b posted to the other instance: %+v, want b", r2.Predictions)
	}
	stopB()
	stopA()
}

// TestServeNATSOwnerReturns stops the namespace's only owner (a separate
// chain worker): a request then waits, /v1/stats is still answered, and a
// new owner, which replays the namespace's batches, answers the request
// with what the first learned.
func TestServeNATSOwnerReturns(t *testing.T) {
	srv := testNATS(t)
	startWorker := func() (stop func()) {
		nc, err := nats.Connect(srv.ClientURL())
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cfg := distributed.Config{Namespace: "nmf", Rank: 40, Partitions: 1, PinnedTTL: 500 * time.Millisecond}
		w, err := distributed.NewChainWorker(ctx, nc, cfg, learnerOf)
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
	stopW()
	waiting := make(chan natsRecordsResponse, 1)
	go func() {
		var r natsRecordsResponse
		post("/v1/records", `{"id":"q1","x":[5,1,0,0]}
`, &r) // waits for an owner
		waiting <- r
	}()
	time.Sleep(300 * time.Millisecond)
	if sum := stats(); sum.Records != 2 {
		t.Errorf("%d records counted while q1 waits, want the 2 learned", sum.Records)
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
			t.Errorf("q1 after a new owner came: %+v, want a", r.Predictions)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("q1 was not answered after a new owner came")
	}
	if sum := stats(); sum.Records != 3 || sum.Samples != 3 {
		t.Errorf("after the new owner: %d records, %d samples; want 3 and 3 (the replay counted once)", sum.Records, sum.Samples)
	}
	stop()
}
