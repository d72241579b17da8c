package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nmfstream/nmfstream/sources"
)

// outcome is one sample's arrival-time prediction, as stream --out writes
// it and serve answers it.
type outcome struct {
	pred  string  // "" for none
	score float64 // NaN for none
}

// onlineFlagsConfig returns the learner's configuration that the online
// flags args (those of addOnlineFlags) give on the command line, the others
// at the command line's defaults, which are not all onlineConfig's zero
// values (--revisit).
func onlineFlagsConfig(t *testing.T, args ...string) onlineConfig {
	t.Helper()
	var cfg onlineConfig
	fs := flag.NewFlagSet("online", flag.ContinueOnError)
	addOnlineFlags(fs, &cfg)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func sameOutcome(a, b outcome) bool {
	return a.pred == b.pred && (a.score == b.score || math.IsNaN(a.score) && math.IsNaN(b.score))
}

// TestServeStreamAgree replays a recorded stream (digits with late labels
// and bad records, some of them of another scale, which the learner
// rejects) twice: through `stream --out`, and by posting the same
// records in order to serve, each stream batch as one request, its late
// labels inline as label-only records for even batches and, for odd ones,
// through /v1/labels right after the records when they come after the
// batch's last sample (a label between two samples is learned before the
// later one is predicted, so it travels inline). Both drivers run the
// same stages, so every id must get the same prediction and score, bit
// for bit; the counters must agree too, the labels posted to /v1/labels
// counted as records, as stream counts its label-only records.
func TestServeStreamAgree(t *testing.T) {
	const batch = 20
	dir := t.TempDir()
	in := filepath.Join(dir, "digits.arrow")
	_, bad := writeDigitsStreamHuge(t, in, 0.2, 30, 331)
	out := filepath.Join(dir, "preds.jsonl")
	flags := []string{"-batch", fmt.Sprint(batch), "-window", "300", "-rank", "10", "-seed", "1"}
	code, stdout, stderr := runCmd(t, append([]string{"stream", "-in", in, "-out", out, "-json"}, flags...)...)
	if code != 0 {
		t.Fatalf("stream: exit %d: %s", code, stderr)
	}
	sum := decodeSummary(t, []byte(stdout))
	if sum.Rejected != int64(bad) {
		t.Fatalf("stream rejected %d records, want the %d bad ones", sum.Rejected, bad)
	}
	want := readPredictionsJSONL(t, out)

	// The same configuration as the flags above, the others at the
	// command line's defaults (which are not all onlineConfig's zero
	// values: --revisit).
	cfg := onlineFlagsConfig(t, flags...)
	s := &server{learner: cfg.learner(), cfg: cfg, maxBody: 1 << 24}
	url, stop := startServer(t, s)
	client := &http.Client{Timeout: 60 * time.Second}
	post := func(path string, body *bytes.Buffer) []byte {
		t.Helper()
		resp, err := client.Post(url+path, mediaJSONL, body)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d, %v: %s", path, resp.StatusCode, err, b)
		}
		return b
	}

	src, err := (&sources.Opener{BatchSize: batch}).Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	got := map[string]outcome{}
	var viaLabels int
	for n := 0; src.Next(); n++ {
		b := src.Batch()
		_, d := b.Dense.Dims()
		// The batch's records in input order, as JSON lines.
		type line struct {
			off int64
			rec map[string]any
		}
		var lines []line
		var labels bytes.Buffer
		for i, off := range b.Offsets {
			rec := map[string]any{"id": b.IDs[i], "x": b.Dense.RawRowView(i)}
			if b.Labeled[i] {
				rec["label"] = b.Labels[i]
			}
			lines = append(lines, line{off, rec})
		}
		for _, r := range b.Rejects {
			// The source's reject, sent as a record that serve rejects.
			lines = append(lines, line{r.Offset, map[string]any{"id": r.ID, "x": slices.Repeat([]float64{-1}, d)}})
		}
		lastSample := int64(-1)
		if len(b.Offsets) > 0 {
			lastSample = b.Offsets[len(b.Offsets)-1]
		}
		for _, ll := range b.LateLabels {
			// A label between two samples of the batch is learned before
			// the later one is predicted: it must travel with the records.
			if n%2 == 0 || ll.Offset < lastSample {
				lines = append(lines, line{ll.Offset, map[string]any{"id": ll.ID, "label": ll.Label}})
			} else {
				json.NewEncoder(&labels).Encode(map[string]any{"id": ll.ID, "label": ll.Label})
				viaLabels++
			}
		}
		slices.SortFunc(lines, func(a, b line) int { return int(a.off - b.off) })
		var body bytes.Buffer
		enc := json.NewEncoder(&body)
		for _, l := range lines {
			enc.Encode(l.rec)
		}
		var rr struct {
			Predictions []struct {
				ID    string   `json:"id"`
				Pred  *string  `json:"pred"`
				Score *float64 `json:"score"`
			} `json:"predictions"`
		}
		if err := json.Unmarshal(post("/v1/records", &body), &rr); err != nil {
			t.Fatal(err)
		}
		for _, p := range rr.Predictions {
			o := outcome{score: math.NaN()}
			if p.Pred != nil {
				o.pred = *p.Pred
			}
			if p.Score != nil {
				o.score = *p.Score
			}
			got[p.ID] = o
		}
		if labels.Len() > 0 {
			post("/v1/labels", &labels)
		}
	}
	if err := src.Err(); err != nil {
		t.Fatal(err)
	}
	// Read-your-writes: the metrics after the last 2xx count everything.
	resp, err := client.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	mb, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	checkNoPipeline(t)

	if len(got) != len(want) {
		t.Errorf("serve predicted %d samples, stream %d", len(got), len(want))
	}
	diff := 0
	for id, w := range want {
		g, ok := got[id]
		if !ok || !sameOutcome(g, w) {
			if diff++; diff <= 5 {
				t.Errorf("id %s: serve %+v (answered %v), stream %+v", id, g, ok, w)
			}
		}
	}
	if diff > 0 {
		t.Errorf("%d of %d predictions differ", diff, len(want))
	}
	text := string(mb)
	for _, m := range []struct {
		name string
		want int64
	}{
		{"nmfstream_records_total", sum.Records},
		{"nmfstream_samples_total", sum.Samples},
		{"nmfstream_rejected_total", sum.Rejected},
		{"nmfstream_late_labels_total", sum.LateLabels},
		{"nmfstream_labeled_total", sum.Labeled},
		{"nmfstream_correct_total", sum.Correct},
	} {
		if g := metricValue(t, text, m.name); g != float64(m.want) {
			t.Errorf("%s = %v, want %d (stream's)", m.name, g, m.want)
		}
	}
	t.Logf("%d predictions compared; %d records, %d late labels (%d through /v1/labels), %d rejected, accuracy %.4f",
		len(want), sum.Records, sum.LateLabels, viaLabels, sum.Rejected, float64(sum.Accuracy))
}

// readPredictionsJSONL reads stream --out's JSON lines by id.
func readPredictionsJSONL(t *testing.T, path string) map[string]outcome {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]outcome{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r struct {
			ID    string   `json:"id"`
			Pred  *string  `json:"pred"`
			Score *float64 `json:"score"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v", sc.Bytes(), err)
		}
		o := outcome{score: math.NaN()}
		if r.Pred != nil {
			o.pred = *r.Pred
		}
		if r.Score != nil {
			o.score = *r.Score
		}
		out[r.ID] = o
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// pipelineGoroutines returns the stacks of the live goroutines that run
// code of package pipeline, of go-streams or of the server's pipeline.
func pipelineGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n")[1:] {
		if strings.Contains(g, "nmfstream/pipeline.") || strings.Contains(g, "reugn/go-streams") || strings.Contains(g, "main.(*server)") {
			out = append(out, g)
		}
	}
	return out
}

// checkNoPipeline fails t if goroutines of a pipeline are still alive a
// while after everything stopped (they need a few scheduler ticks to go).
func checkNoPipeline(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second) // generous: -race on 2 shared cores
	for {
		left := pipelineGoroutines()
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%d goroutines left:\n%s", len(left), strings.Join(left, "\n\n"))
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestServeStageFails runs serve with a learner that cannot learn (rank 0:
// the model refuses its first batch) while several clients post records.
// The learn stage's error ends the pipeline: the requests it took get a 503
// naming the stage (the others may find the service gone: it stops), serve
// returns that error without writing a checkpoint, and no goroutine is
// left.
func TestServeStageFails(t *testing.T) {
	cfg := onlineConfig{Rank: 0, Neighbors: 5, Window: 100, Batch: 10, Seed: 1}
	ckpt := filepath.Join(t.TempDir(), "never.ckpt")
	s := &server{learner: cfg.learner(), cfg: cfg, ckpt: ckpt, every: 1, maxBody: 1 << 20}
	url, stop := startServer(t, s)
	client := &http.Client{Timeout: 30 * time.Second}
	const clients = 4
	type answer struct {
		status int
		body   string
		err    error
	}
	answers := make(chan answer, clients)
	for c := range clients {
		go func() {
			var body bytes.Buffer
			for i := range 25 {
				json.NewEncoder(&body).Encode(map[string]any{"id": c*100 + i, "x": []float64{1, float64(i), 2}})
			}
			resp, err := client.Post(url+"/v1/records", mediaJSONL, &body)
			if err != nil {
				answers <- answer{err: err}
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			answers <- answer{status: resp.StatusCode, body: string(b)}
		}()
	}
	failed := 0
	for range clients {
		a := <-answers
		switch {
		case a.err != nil:
			t.Logf("a client found the service gone: %v", a.err)
		case a.status != http.StatusServiceUnavailable:
			t.Errorf("status %d, want 503: %s", a.status, a.body)
		case !strings.Contains(errorMessage(a.body), `stage "learn"`):
			t.Errorf("503 without the failing stage: %s", a.body)
		default:
			failed++
		}
	}
	if failed == 0 {
		t.Error("no request was answered with the learn stage's error")
	}
	err := stop()
	if err == nil || !strings.Contains(err.Error(), `pipeline: stage "learn": stages: learner: model: online: rank 0`) {
		t.Errorf("serve returned %v, want the learn stage's error", err)
	}
	if _, err := os.Stat(ckpt); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed service wrote a checkpoint: %v", err)
	}
	checkNoPipeline(t)
}

// TestServeOffsets posts two requests of 25 records each to a server that
// learns in batches of 10, so that each request is three batches: every
// record's offset must be its position in the whole stream of records
// (the second batch of a request used to be shifted twice).
func TestServeOffsets(t *testing.T) {
	cfg := onlineConfig{Rank: 3, Neighbors: 3, Window: 200, Batch: 10, Seed: 1}
	s := &server{learner: cfg.learner(), cfg: cfg, maxBody: 1 << 20}
	url, stop := startServer(t, s)
	defer func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	}()
	var offsets []int64
	for q := range 2 {
		var body bytes.Buffer
		for i := range 25 {
			id := q*25 + i
			switch i {
			case 7: // a late label for the first sample of the request
				fmt.Fprintf(&body, "{\"id\":%d,\"label\":\"a\"}\n", q*25)
			case 13: // a bad record
				fmt.Fprintf(&body, "{\"id\":%d,\"x\":[1,-1,1,1]}\n", id)
			default:
				fmt.Fprintf(&body, "{\"id\":%d,\"x\":[%d,1,2,%d]}\n", id, i%5+1, i%3)
			}
		}
		resp, err := http.Post(url+"/v1/records", mediaJSONL, &body)
		if err != nil {
			t.Fatal(err)
		}
		var rr recordsResponse
		err = json.NewDecoder(resp.Body).Decode(&rr)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range rr.Predictions {
			if p.ID != fmt.Sprint(p.Offset) {
				t.Errorf("id %s has offset %d", p.ID, p.Offset)
			}
			offsets = append(offsets, p.Offset)
		}
		for _, r := range rr.Rejected {
			if r.ID != fmt.Sprint(r.Offset) || !strings.Contains(r.Reason, fmt.Sprintf("record %d ", r.Offset)) {
				t.Errorf("reject %s at offset %d: %s", r.ID, r.Offset, r.Reason)
			}
			offsets = append(offsets, r.Offset)
		}
	}
	slices.Sort(offsets)
	for i, want := 0, int64(0); i < len(offsets); i, want = i+1, want+1 {
		if want%25 == 7 {
			want++ // the late label's offset
		}
		if offsets[i] != want {
			t.Fatalf("offsets %v: want every record's position but the late labels'", offsets)
		}
	}
	if len(offsets) != 48 {
		t.Errorf("%d samples and rejects, want 48", len(offsets))
	}
}
