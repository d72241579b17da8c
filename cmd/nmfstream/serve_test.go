package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/ipc"

	"github.com/nmfstream/nmfstream/datasets"
)

// startServer runs a server for the test on 127.0.0.1 and returns its URL
// and a function that stops it and returns serve's error.
func startServer(t testing.TB, s *server) (string, func() error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.serve(ctx, ln) }()
	return "http://" + ln.Addr().String(), func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(20 * time.Second):
			t.Fatal("serve did not return after cancel")
			return nil
		}
	}
}

func metricValue(t *testing.T, text, name string) float64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + name + ` (\S+)$`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("metric %s missing from:\n%s", name, text)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestServeConcurrent posts digits from several clients at once, with late
// labels, and checks every response and the final metrics against what was
// sent; then shuts down and checks the checkpoint it leaves.
func TestServeConcurrent(t *testing.T) {
	cfg := onlineConfig{Rank: 10, Neighbors: 5, Window: 600, Batch: 10, Seed: 1}
	ckpt := filepath.Join(t.TempDir(), "serve.ckpt")
	s := &server{learner: cfg.learner(), cfg: cfg, ckpt: ckpt, every: 0, maxBody: 1 << 20}
	url, stop := startServer(t, s)

	x, y := datasets.Digits()
	const clients, requests, per = 6, 8, 20 // 960 samples
	client := &http.Client{Timeout: 30 * time.Second}
	var wg sync.WaitGroup
	errs := make(chan error, clients*requests*2)
	for c := range clients {
		wg.Go(func() {
			for q := range requests {
				var body bytes.Buffer
				var labels bytes.Buffer
				for i := range per {
					idx := (c*requests+q)*per + i
					row := x.RawRowView(idx)
					json.NewEncoder(&body).Encode(map[string]any{"id": idx, "x": row})
					if idx%5 == 0 {
						fmt.Fprintf(&labels, "{\"id\":%d,\"label\":%d}\n", idx, y[idx])
					}
				}
				if q%3 == 2 {
					body.WriteString("{\"id\":\"broken\",\"x\":[1,2]}\n") // wrong dimension
				}
				resp, err := client.Post(url+"/v1/records", "application/x-ndjson", &body)
				if err != nil {
					errs <- err
					return
				}
				var rr recordsResponse
				err = json.NewDecoder(resp.Body).Decode(&rr)
				resp.Body.Close()
				if err != nil || resp.StatusCode != 200 {
					errs <- fmt.Errorf("records: status %d, %v", resp.StatusCode, err)
					return
				}
				if len(rr.Predictions) != per {
					errs <- fmt.Errorf("records: %d predictions for %d samples", len(rr.Predictions), per)
				}
				for _, p := range rr.Predictions {
					for _, v := range p.Code {
						if v < 0 {
							errs <- fmt.Errorf("negative code entry for id %s", p.ID)
						}
					}
				}
				if want := map[bool]int{true: 1, false: 0}[q%3 == 2]; len(rr.Rejected) != want {
					errs <- fmt.Errorf("records: %d rejects, want %d", len(rr.Rejected), want)
				}
				resp, err = client.Post(url+"/v1/labels", "application/x-ndjson", &labels)
				if err != nil {
					errs <- err
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					errs <- fmt.Errorf("labels: status %d", resp.StatusCode)
				}
				if mr, err := client.Get(url + "/metrics"); err == nil {
					io.Copy(io.Discard, mr.Body)
					mr.Body.Close()
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	// Arrow out: the same endpoint answers in Arrow when asked.
	var body bytes.Buffer
	for i := 1000; i < 1010; i++ {
		json.NewEncoder(&body).Encode(map[string]any{"id": i, "x": x.RawRowView(i)})
	}
	req, _ := http.NewRequest("POST", url+"/v1/records", &body)
	req.Header.Set("Accept", mediaArrow)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	rdr, err := ipc.NewReader(resp.Body)
	if err != nil {
		t.Fatalf("arrow response: %v", err)
	}
	rows := 0
	for rdr.Next() {
		rows += int(rdr.Record().NumRows())
	}
	rdr.Release()
	resp.Body.Close()
	if rows != 10 {
		t.Errorf("arrow response has %d rows, want 10", rows)
	}

	resp, err = client.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	mb, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	text := string(mb)
	samples := clients*requests*per + 10
	bad := clients * (requests / 3) // q = 2, 5
	if got := metricValue(t, text, "nmfstream_samples_total"); got != float64(samples) {
		t.Errorf("samples_total %v, want %d", got, samples)
	}
	if got := metricValue(t, text, "nmfstream_rejected_total"); got != float64(bad) {
		t.Errorf("rejected_total %v, want %d", got, bad)
	}
	// The posted labels are records too, late labels (stages.Counters).
	posted := clients * requests * per / 5
	if got := metricValue(t, text, "nmfstream_records_total"); got != float64(samples+bad+posted) {
		t.Errorf("records_total %v, want %d", got, samples+bad+posted)
	}
	if got := metricValue(t, text, "nmfstream_late_labels_total"); got != float64(posted) {
		t.Errorf("late_labels_total %v, want %d", got, posted)
	}
	labeled := metricValue(t, text, "nmfstream_labeled_total") + metricValue(t, text, "nmfstream_early_total")
	if labeled != float64(clients*requests*per/5) {
		t.Errorf("labeled_total + early_total %v, want %d", labeled, clients*requests*per/5)
	}
	if got := metricValue(t, text, "nmfstream_unlearned_labels_total"); got != 0 {
		t.Errorf("unlearned_labels_total %v, want 0: every label found its sample in the window", got)
	}
	if acc := metricValue(t, text, "nmfstream_accuracy"); !(acc > 0.5) {
		t.Errorf("accuracy %v: the service does not learn", acc)
	}
	if !strings.Contains(text, `nmfstream_batch_seconds_bucket{le="+Inf"}`) {
		t.Error("no latency histogram")
	}
	if r, err := client.Get(url + "/healthz"); err != nil || r.StatusCode != 200 {
		t.Errorf("healthz: %v", err)
	} else {
		r.Body.Close()
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	cp, err := loadCheckpoint(ckpt)
	if err != nil {
		t.Fatal(err)
	}
	if cp.State.Counters.Samples != int64(samples) {
		t.Errorf("checkpoint has %d samples, want %d", cp.State.Counters.Samples, samples)
	}
}

// TestServeWarnsForm checks that a fresh service, whose samples' form its
// first records fix, says once on stderr which of its settings change
// nothing on them (here the documents' mixture on dense records), and
// says nothing when every setting acts.
func TestServeWarnsForm(t *testing.T) {
	x, _ := datasets.Digits()
	for _, prior := range []float64{0.3, 0} {
		cfg := onlineConfig{Rank: 5, Neighbors: 5, Window: 600, Batch: 10, Seed: 1, PriorPower: prior}
		var stderr bytes.Buffer
		s := &server{learner: cfg.learner(), cfg: cfg, maxBody: 1 << 20, stderr: &stderr}
		url, stop := startServer(t, s)
		for q := range 2 {
			var body bytes.Buffer
			for i := range 20 {
				json.NewEncoder(&body).Encode(map[string]any{"id": q*20 + i, "x": x.RawRowView(q*20 + i)})
			}
			resp, err := http.Post(url+"/v1/records", "application/x-ndjson", &body)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("records: status %d", resp.StatusCode)
			}
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		n := strings.Count(stderr.String(), "--prior-power scales the documents' mixture")
		if want := map[bool]int{true: 1, false: 0}[prior != 0]; n != want {
			t.Errorf("--prior-power %v: the warning told %d times, want %d; stderr %q", prior, n, want, stderr.String())
		}
	}
}
