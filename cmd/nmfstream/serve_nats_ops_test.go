//go:build nats

package main

import (
	"io"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/nmfstream/nmfstream/distributed/natsembed"
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
	srv, err := natsembed.Start(t.TempDir(), "127.0.0.1", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Shutdown(); srv.WaitForShutdown() }()
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
