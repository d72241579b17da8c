package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/nmfstream/nmfstream/datasets"
)

// buildServe builds the nmfstream binary into dir.
func buildServe(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "nmfstream")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startServe starts the binary with args and returns the process, its URL
// and its stderr so far (the rest is discarded).
func startServe(t *testing.T, bin string, args ...string) (*exec.Cmd, string, string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(stderr)
	var log strings.Builder
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
		if u, ok := strings.CutPrefix(sc.Text(), "nmfstream serve: listening on "); ok {
			go io.Copy(io.Discard, stderr)
			return cmd, u, log.String()
		}
	}
	t.Fatalf("serve printed no address:\n%s", log.String())
	return nil, "", ""
}

func getMetrics(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestServeKillReplay posts records and labels to serve from several
// clients, waits for every 2xx, kills serve with SIGKILL between two
// checkpoints, restarts it, and finds every acknowledged record and label
// counted exactly once and every record's prediction: the write-ahead log
// holds what the last checkpoint lacks. Records posted again after the
// restart (a client retrying) are duplicates, not learned twice. Every
// --fsync policy keeps what it acknowledged through the death of the
// process.
func TestServeKillReplay(t *testing.T) {
	bin := buildServe(t, t.TempDir())
	for _, policy := range []string{"always", "interval", "never"} {
		t.Run(policy, func(t *testing.T) { killReplay(t, bin, policy) })
	}
}

func killReplay(t *testing.T, bin, policy string) {
	dir := t.TempDir()
	ckpt := filepath.Join(dir, "serve.ckpt")
	args := []string{"--checkpoint", ckpt, "--checkpoint-every", "350", "--rank", "5", "--window", "2000", "--batch", "10", "--fsync", policy}
	cmd, url, _ := startServe(t, bin, args...)

	x, y := datasets.Digits()
	const clients, requests, per = 4, 10, 15 // 600 records, 200 labels
	bodies := make([][]byte, clients*requests)
	var mu sync.Mutex
	answered := map[string]int64{} // id → the offset the POST answered
	var wg sync.WaitGroup
	errs := make(chan error, clients*requests*2)
	for c := range clients {
		wg.Go(func() {
			for q := range requests {
				var body, labels bytes.Buffer
				for i := range per {
					idx := (c*requests+q)*per + i
					json.NewEncoder(&body).Encode(map[string]any{"id": fmt.Sprint("r", idx), "x": x.RawRowView(idx)})
					if idx%3 == 0 {
						fmt.Fprintf(&labels, "{\"id\":\"r%d\",\"label\":%d}\n", idx, y[idx])
					}
				}
				bodies[c*requests+q] = bytes.Clone(body.Bytes())
				for _, post := range []struct {
					path string
					body *bytes.Buffer
				}{{"/v1/records", &body}, {"/v1/labels", &labels}} {
					resp, err := http.Post(url+post.path, mediaJSONL, post.body)
					if err != nil {
						errs <- err
						return
					}
					var ans recordsResponse
					json.NewDecoder(resp.Body).Decode(&ans)
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						errs <- fmt.Errorf("%s: status %d", post.path, resp.StatusCode)
					}
					mu.Lock()
					for _, p := range ans.Predictions {
						answered[p.ID] = p.Offset
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	const records, labels = clients * requests * per, clients * requests * per / 3
	text := getMetrics(t, url)
	if n := metricValue(t, text, "nmfstream_wal_fsyncs_total"); policy == "always" && (n < 1 || n > 2*clients*requests) {
		t.Errorf("wal_fsyncs_total %v for %d acknowledged requests", n, 2*clients*requests)
	}
	t.Logf("--fsync %s: %v fsyncs for %d acknowledged requests", policy, metricValue(t, text, "nmfstream_wal_fsyncs_total"), 2*clients*requests)
	if metricValue(t, text, "nmfstream_wal_bytes") <= 16 {
		t.Error("the write-ahead log is empty with requests after the last checkpoint")
	}

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	cp, err := loadCheckpoint(ckpt)
	if err != nil {
		t.Fatal(err)
	}
	if cp.State.Counters.Samples >= records {
		t.Fatalf("the last checkpoint has all %d samples: the log is not tested", cp.State.Counters.Samples)
	}

	_, url, log := startServe(t, bin, args...)
	if !strings.Contains(log, "replayed") {
		t.Errorf("serve did not say it replayed the log:\n%s", log)
	}
	text = getMetrics(t, url)
	for _, m := range []struct {
		name string
		want float64
	}{
		{"nmfstream_samples_total", records},
		{"nmfstream_records_total", records + labels},
		{"nmfstream_late_labels_total", labels},
		{"nmfstream_duplicates_total", 0},
	} {
		if got := metricValue(t, text, m.name); got != m.want {
			t.Errorf("after kill -9 and restart: %s %v, want %v (checkpoint had %d samples)", m.name, got, m.want, cp.State.Counters.Samples)
		}
	}
	if got := metricValue(t, text, "nmfstream_labeled_total") + metricValue(t, text, "nmfstream_early_total"); got != labels {
		t.Errorf("labeled + early %v, want %d", got, labels)
	}
	// Every record's arrival code and prediction, codes from the first
	// fit on (after max(2·rank, 100) = 100 samples, model.Online.InitSize:
	// node 100 in a window that drops none).
	for idx := range records {
		resp, err := http.Get(fmt.Sprintf("%s/v1/records/r%d", url, idx))
		if err != nil {
			t.Fatal(err)
		}
		var p predictionJSON
		err = json.NewDecoder(resp.Body).Decode(&p)
		resp.Body.Close()
		if resp.StatusCode != 200 || err != nil || p.ID != fmt.Sprint("r", idx) || (len(p.Code) != 5 && p.Node >= 100) {
			t.Errorf("GET /v1/records/r%d: status %d, %+v, %v", idx, resp.StatusCode, p, err)
		}
		if want, ok := answered[p.ID]; !ok || p.Offset != want {
			t.Errorf("GET /v1/records/r%d after the replay: offset %d, the POST answered %d (%v)", idx, p.Offset, want, ok)
		}
	}

	// A client that never saw its answer posts again: duplicates.
	resp, err := http.Post(url+"/v1/records", mediaJSONL, bytes.NewReader(bodies[len(bodies)-1]))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	text = getMetrics(t, url)
	if got := metricValue(t, text, "nmfstream_samples_total"); got != records {
		t.Errorf("after a repost: samples_total %v, want %d", got, records)
	}
	if got := metricValue(t, text, "nmfstream_duplicates_total"); got != per {
		t.Errorf("after a repost: duplicates_total %v, want %d", got, per)
	}
}

// TestServeWALFlags checks the write-ahead log's flags: --wal needs
// --checkpoint, --fsync takes always, interval or never, and a log whose
// checkpoint is gone is refused with advice instead of being replayed
// onto nothing.
func TestServeWALFlags(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := runCmd(t, "serve", "--wal", filepath.Join(dir, "log")); code == 0 || !strings.Contains(stderr, "--checkpoint") {
		t.Errorf("--wal without --checkpoint: exit %d, %q", code, stderr)
	}
	if code, _, stderr := runCmd(t, "serve", "--checkpoint", filepath.Join(dir, "c"), "--fsync", "sometimes"); code == 0 || !strings.Contains(stderr, "fsync") {
		t.Errorf("--fsync sometimes: exit %d, %q", code, stderr)
	}
	// A log with an entry, and no checkpoint.
	cfg := onlineConfig{Rank: 2, Neighbors: 3, Window: 100, Batch: 10, Seed: 1}
	ckpt := filepath.Join(dir, "s.ckpt")
	s := &server{learner: cfg.learner(), cfg: cfg, ckpt: ckpt, maxBody: 1 << 20}
	if _, err := s.openWAL(ckpt+".wal", false); err != nil {
		t.Fatal(err)
	}
	url, stop := startServer(t, s)
	resp, err := http.Post(url+"/v1/records", mediaJSONL, strings.NewReader(`{"id":"a","x":[1,2,3]}`+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("post: %d", resp.StatusCode)
	}
	// The log as a crash leaves it, without its checkpoint.
	log, err := os.ReadFile(ckpt + ".wal")
	if err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ckpt+".wal", log, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(ckpt); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCmd(t, "serve", "--checkpoint", ckpt, "--addr", "127.0.0.1:0")
	if code == 0 || !strings.Contains(stderr, "remove the log") {
		t.Errorf("a log without its checkpoint: exit %d, %q; want a refusal with advice", code, stderr)
	}
}
