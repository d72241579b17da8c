//go:build nats

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/nmfstream/nmfstream/sources"
)

// TestChainAgreeNATS is issue 27's check: a recorded digits stream with
// late labels and bad records (some rejected by the source, some of
// another scale by the learner) gives the same predictions through the one
// chain however it is driven. stream --nats (embedded server, one
// partition, the learner on the owner) must write an --out file
// byte-identical to stream's, and report the same counters; serve, posted
// the same batches in order, must answer every id with the same prediction
// and score, bit for bit.
func TestChainAgreeNATS(t *testing.T) {
	const batch = 20
	dir := t.TempDir()
	in := filepath.Join(dir, "digits.arrow")
	writeDigitsStreamHuge(t, in, 0.2, 30, 331)
	flags := []string{"-in", in, "-json", "-batch", fmt.Sprint(batch), "-window", "300", "-rank", "10", "-seed", "1"}

	outS := filepath.Join(dir, "stream.jsonl")
	code, stdout, stderr := runCmd(t, append([]string{"stream", "-out", outS}, flags...)...)
	if code != 0 {
		t.Fatalf("stream: exit %d: %s", code, stderr)
	}
	sumS := decodeSummary(t, []byte(stdout))

	outN := filepath.Join(dir, "nats.jsonl")
	code, stdout, stderr = runCmd(t, append([]string{"stream", "--nats", "-workers", "1", "-out", outN}, flags...)...)
	if code != 0 {
		t.Fatalf("stream --nats: exit %d: %s", code, stderr)
	}
	sumN := decodeSummary(t, []byte(stdout))
	a, b := readFile(t, outS), readFile(t, outN)
	if !bytes.Equal(a, b) {
		la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
		for i := range min(len(la), len(lb)) {
			if !bytes.Equal(la[i], lb[i]) {
				t.Fatalf("stream --nats's --out differs from stream's at line %d of %d/%d:\n%s\n%s", i+1, len(la), len(lb), lb[i], la[i])
			}
		}
		t.Fatalf("stream --nats's --out has %d lines, stream's %d", len(lb), len(la))
	}
	sumN.CodeNN1, sumN.CodeNMI, sumN.CodeN = sumS.CodeNN1, sumS.CodeNMI, sumS.CodeN // the owner's codes are not reported
	sumN.SearchDims = sumS.SearchDims                                               // nor its graph
	sameCounts(t, "stream --nats", sumN, sumS)
	if sumS.Samples < 1000 || sumS.LateLabels == 0 || sumS.Rejected == 0 || sumS.Labeled == 0 {
		t.Fatalf("the recorded stream does not exercise the chain: %+v", sumS)
	}

	got := serveOutcomes(t, in, batch, onlineFlagsConfig(t, flags[3:]...)) // stream's flags but -in and -json
	want := readPredictionsJSONL(t, outS)
	if len(got) != len(want) {
		t.Errorf("serve predicted %d samples, stream %d", len(got), len(want))
	}
	for id, w := range want {
		if g, ok := got[id]; !ok || !sameOutcome(g, w) {
			t.Fatalf("id %s: serve %+v (answered %v), stream %+v", id, g, ok, w)
		}
	}
	t.Logf("%d predictions, %d records (%d late labels, %d rejected), accuracy %.4f, through stream, stream --nats and serve",
		len(want), sumS.Records, sumS.LateLabels, sumS.Rejected, float64(sumS.Accuracy))
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// serveOutcomes posts the records of the stream in (batches of batch
// records, as stream reads them) to a serve of configuration cfg, one
// request per batch with its records in input order (late labels and the
// source's rejects inline), and returns its answers by id.
func serveOutcomes(t *testing.T, in string, batch int, cfg onlineConfig) map[string]outcome {
	t.Helper()
	s := &server{learner: cfg.learner(), cfg: cfg, maxBody: 1 << 24}
	url, stop := startServer(t, s)
	client := &http.Client{Timeout: 60 * time.Second}
	src, err := (&sources.Opener{BatchSize: batch}).Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	got := map[string]outcome{}
	for src.Next() {
		b := src.Batch()
		_, d := b.Dense.Dims()
		type line struct {
			off int64
			rec map[string]any
		}
		var lines []line
		for i, off := range b.Offsets {
			rec := map[string]any{"id": b.IDs[i], "x": b.Dense.RawRowView(i)}
			if b.Labeled[i] {
				rec["label"] = b.Labels[i]
			}
			lines = append(lines, line{off, rec})
		}
		for _, r := range b.Rejects {
			lines = append(lines, line{r.Offset, map[string]any{"id": r.ID, "x": slices.Repeat([]float64{-1}, d)}})
		}
		for _, ll := range b.LateLabels {
			lines = append(lines, line{ll.Offset, map[string]any{"id": ll.ID, "label": ll.Label}})
		}
		slices.SortFunc(lines, func(a, b line) int { return int(a.off - b.off) })
		var body bytes.Buffer
		enc := json.NewEncoder(&body)
		for _, l := range lines {
			enc.Encode(l.rec)
		}
		resp, err := client.Post(url+"/v1/records", mediaJSONL, &body)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("/v1/records: status %d, %v: %s", resp.StatusCode, err, raw)
		}
		var rr struct {
			Predictions []struct {
				ID    string   `json:"id"`
				Pred  *string  `json:"pred"`
				Score *float64 `json:"score"`
			} `json:"predictions"`
		}
		if err := json.Unmarshal(raw, &rr); err != nil {
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
	}
	if err := src.Err(); err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	return got
}
