package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/nmfstream/nmfstream/internal/testenv"
	"github.com/nmfstream/nmfstream/sources"
)

// attackServer is a service at the default rank 40 that takes the README's
// 4-feature records, with small limits so that attacks reach them.
func attackServer() *server {
	cfg := onlineConfig{Rank: 40, Neighbors: 5, Window: 300, Batch: 10, Seed: 1}
	s := &server{learner: cfg.learner(), cfg: cfg, maxBody: 4 << 20, recentMax: 100, limits: sources.JSONLimits{MaxDim: 64}}
	s.limit(64, 1000, 1<<20)
	return s
}

// post sends body to path and returns the status and the decoded answer.
func post(t *testing.T, url, path, ctype string, body []byte) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(url+path, ctype, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	json.Unmarshal(b, &m)
	if strings.Contains(string(b), "main.") || strings.Contains(string(b), "Go value") {
		t.Errorf("%s answer names a Go type: %s", path, b)
	}
	return resp.StatusCode, m
}

// goodBody returns n README-shaped records (4 features, ids from next).
func goodBody(r *rand.Rand, next *int, n int) []byte {
	var b bytes.Buffer
	for range n {
		c := *next % 3
		x := []int{r.IntN(4), r.IntN(4), r.IntN(4), r.IntN(4)}
		x[c] += 12
		fmt.Fprintf(&b, "{\"id\":\"g%d\",\"x\":[%d,%d,%d,%d],\"label\":%d}\n", *next, x[0], x[1], x[2], x[3], c)
		*next++
	}
	return b.Bytes()
}

// attacks are requests a client may send to break the service.
var attacks = []func(r *rand.Rand) (path string, body []byte){
	func(r *rand.Rand) (string, []byte) { return "/v1/records", []byte(`{"id":"w","x":[1,2,3,4,5,6,7]}`) }, // another dimension
	func(r *rand.Rand) (string, []byte) { // over --max-dim
		return "/v1/records", []byte(`{"x":[` + strings.Repeat("1,", 99) + `1]}`)
	},
	func(r *rand.Rand) (string, []byte) { return "/v1/records", []byte(`{"x":[1,2]}`) }, // rank > D
	func(r *rand.Rand) (string, []byte) { // a huge id
		return "/v1/records", []byte(`{"id":"` + strings.Repeat("i", 1<<20) + `","x":[1,2,3,4]}`)
	},
	func(r *rand.Rand) (string, []byte) { return "/v1/records", []byte("not json") },
	func(r *rand.Rand) (string, []byte) { return "/v1/records", []byte(`[{"x":[1,2,3,4]}]`) },
	func(r *rand.Rand) (string, []byte) { return "/v1/records", []byte(`{"x":[1,-2,"NaN",4]}`) },
	func(r *rand.Rand) (string, []byte) {
		return "/v1/records", []byte(`{"text":"a document in a dense stream"}`)
	},
	func(r *rand.Rand) (string, []byte) { return "/v1/records", []byte(`{"x":[1e999,1,1,1]}`) },
	func(r *rand.Rand) (string, []byte) { return "/v1/records", []byte(`{"x":[1e200,1,1,1]}`) }, // above record.MaxValue
	func(r *rand.Rand) (string, []byte) { // accepted, but its code is far beyond float32
		return "/v1/records", []byte(`{"x":[1e59,1e59,1e59,1e59]}`)
	},
	func(r *rand.Rand) (string, []byte) { // an outlier: its statistics' remainder once it leaves
		return "/v1/records", []byte(`{"x":[1e4,1e4,1e4,1e4]}`)
	},
	func(r *rand.Rand) (string, []byte) { return "/v1/records", nil },
	func(r *rand.Rand) (string, []byte) { // labels for unknown ids, distinct labels
		return "/v1/labels", fmt.Appendf(nil, "{\"id\":\"u%d\",\"label\":\"c%d\"}\n", r.Int(), r.IntN(5))
	},
	func(r *rand.Rand) (string, []byte) { // a huge label
		return "/v1/labels", []byte(`{"id":"g1","label":"` + strings.Repeat("l", 1<<20) + `"}`)
	},
	func(r *rand.Rand) (string, []byte) {
		return "/v1/labels", []byte("{\"id\":\"g1\"}\n[1]\n{\"label\":3}")
	},
	func(r *rand.Rand) (string, []byte) { return "/v1/labels", []byte("not json") },
}

// TestServeNoRequestStops is a property test: after a first good request
// fixes the stream, random sequences of attacks (other dimensions, rank
// above the dimension, huge ids and labels, bad JSON, arrays, labels for
// unknown ids, …) never stop serve, and a good request after each attack
// is learned whole: 200, every record predicted, none rejected.
func TestServeNoRequestStops(t *testing.T) {
	for seed := range uint64(3) {
		r := rand.New(rand.NewPCG(seed, 7))
		s := attackServer()
		url, stop := startServer(t, s)
		next := 0
		for step := range 60 {
			if step > 0 {
				path, body := attacks[r.IntN(len(attacks))](r)
				if st, _ := post(t, url, path, mediaJSONL, body); st >= 500 {
					t.Fatalf("seed %d step %d: %s answered %d", seed, step, path, st)
				}
			}
			st, m := post(t, url, "/v1/records", mediaJSONL, goodBody(r, &next, 1+r.IntN(12)))
			preds, _ := m["predictions"].([]any)
			rej, _ := m["rejected"].([]any)
			if st != 200 || len(rej) != 0 || len(preds) == 0 {
				t.Fatalf("seed %d step %d: a good request after an attack: %d, %v", seed, step, st, m)
			}
		}
		if err := stop(); err != nil {
			t.Fatalf("seed %d: serve stopped with %v", seed, err)
		}
		if !s.learner.Model.Started() || s.learner.Model.Rank != 4 {
			t.Errorf("seed %d: model started %v at rank %d, want rank 4 (the records' dimension)", seed, s.learner.Model.Started(), s.learner.Model.Rank)
		}
	}
}

// TestServeLabelsPending checks that a label for an id not seen yet is
// answered pending, not applied, and one for a record in the window
// applied.
func TestServeLabelsPending(t *testing.T) {
	s := attackServer()
	url, stop := startServer(t, s)
	defer stop()
	next := 0
	r := rand.New(rand.NewPCG(1, 1))
	post(t, url, "/v1/records", mediaJSONL, goodBody(r, &next, 5))
	st, m := post(t, url, "/v1/labels", mediaJSONL, []byte("{\"id\":\"g1\",\"label\":1}\n{\"id\":\"nobody\",\"label\":1}\n"))
	if st != 200 || m["applied"] != 1.0 || m["pending"] != 1.0 {
		t.Errorf("labels for a known and an unknown id: %d, %v; want applied 1, pending 1", st, m)
	}
}

// TestServeWALDamage flips a byte of the last complete entry of serve's
// log: serve refuses to start, naming --wal-recover; with it, serve
// replays the entries before the damage and keeps the damaged bytes in
// <wal>.dropped-<offset>. A torn tail (a partial last write) is dropped
// with a warning naming its bytes, and kept aside too.
func TestServeWALDamage(t *testing.T) {
	dir := t.TempDir()
	ckpt := filepath.Join(dir, "s.ckpt")
	s := attackServer()
	s.ckpt = ckpt
	if _, err := s.openWAL(ckpt+".wal", false); err != nil {
		t.Fatal(err)
	}
	url, stop := startServer(t, s)
	r := rand.New(rand.NewPCG(3, 3))
	next := 0
	for range 3 {
		post(t, url, "/v1/records", mediaJSONL, goodBody(r, &next, 10))
	}
	// Stop without the final checkpoint: what a kill -9 leaves.
	s.ckpt = ""
	stop()
	log, _ := os.ReadFile(ckpt + ".wal")
	open := func(b []byte, recover bool) (*server, string, error) {
		os.WriteFile(ckpt+".wal", b, 0o644)
		s := attackServer()
		s.ckpt = ckpt
		cp, err := loadCheckpoint(ckpt)
		if err != nil {
			t.Fatal(err)
		}
		if s.learner, err = cp.restore(); err != nil {
			t.Fatal(err)
		}
		s.limit(64, 1000, 1<<20)
		s.resume(cp)
		var stderr strings.Builder
		s.stderr = &stderr
		_, err = s.openWAL(ckpt+".wal", recover)
		if s.log != nil {
			s.log.Close()
		}
		return s, stderr.String(), err
	}
	bad := bytes.Clone(log)
	bad[len(bad)-3] ^= 0x20
	if _, _, err := open(bad, false); err == nil || !strings.Contains(err.Error(), "--wal-recover") {
		t.Fatalf("a damaged last entry: %v, want a refusal naming --wal-recover", err)
	}
	s2, warn, err := open(bad, true)
	if err != nil || s2.learner.Counters().Samples != 20 || !strings.Contains(warn, "dropped a damaged part") {
		t.Fatalf("--wal-recover: %v, %d samples (want 20: two entries of three), warning %q", err, s2.learner.Counters().Samples, warn)
	}
	if m, _ := filepath.Glob(ckpt + ".wal.dropped-*"); len(m) != 1 {
		t.Fatalf("damaged bytes kept in %v, want one file", m)
	}
	// serve saved a checkpoint covering the replay; the log is empty now.
	// A torn tail on a new entry is dropped with a warning.
	os.Remove(ckpt)
	os.Remove(ckpt + ".wal")
	s3 := attackServer()
	s3.ckpt = ckpt
	if _, err := s3.openWAL(ckpt+".wal", false); err != nil {
		t.Fatal(err)
	}
	url, stop = startServer(t, s3)
	post(t, url, "/v1/records", mediaJSONL, goodBody(r, &next, 10))
	s3.ckpt = ""
	stop()
	log, _ = os.ReadFile(ckpt + ".wal")
	_, warn, err = open(log[:len(log)-5], false)
	if err != nil || !strings.Contains(warn, "torn tail") || !strings.Contains(warn, fmt.Sprintf("to %d", len(log)-5)) {
		t.Fatalf("torn tail: %v, warning %q", err, warn)
	}
}

// TestServeSlowloris opens 16 connections that trickle their bodies a
// byte at a time, holding every --max-inflight slot: with --min-body-rate
// they are cut off after --body-grace, and a normal client gets through
// within seconds instead of waiting out --read-timeout.
func TestServeSlowloris(t *testing.T) {
	s := attackServer()
	s.maxInFlight, s.readTimeout, s.writeTimeout = 16, time.Minute, time.Minute
	s.minBodyRate, s.bodyGrace = 1024, 300*time.Millisecond
	url, stop := startServer(t, s)
	defer stop()
	addr := strings.TrimPrefix(url, "http://")
	var wg sync.WaitGroup
	quit := make(chan struct{})
	defer func() { close(quit); wg.Wait() }()
	for range 16 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "POST /v1/records HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n")
		wg.Go(func() {
			defer c.Close()
			for {
				select {
				case <-quit:
					return
				case <-time.After(200 * time.Millisecond):
				}
				if _, err := c.Write([]byte(" ")); err != nil {
					return
				}
			}
		})
	}
	time.Sleep(100 * time.Millisecond) // the tricklers hold the slots
	r := rand.New(rand.NewPCG(1, 2))
	next := 0
	body := goodBody(r, &next, 5)
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := http.Post(url+"/v1/records", mediaJSONL, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 200 {
			break
		}
		if resp.StatusCode != 429 || time.Now().After(deadline) {
			t.Fatalf("a normal client among tricklers: %d", resp.StatusCode)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestServeTokenFileAndExposure reads the token from --token-file and
// warns for every address but loopback.
func TestServeTokenFileAndExposure(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	os.WriteFile(path, []byte("  s3cret\n"), 0o600)
	if tok, err := readToken("", path); err != nil || tok != "s3cret" {
		t.Errorf("--token-file: %q, %v", tok, err)
	}
	if _, err := readToken("a", path); err == nil {
		t.Error("--token and --token-file both accepted")
	}
	os.WriteFile(path, []byte("\n"), 0o600)
	if _, err := readToken("", path); err == nil {
		t.Error("an empty --token-file accepted")
	}
	for _, c := range []struct {
		ip    string
		token bool
		want  string
	}{
		{"127.0.0.1", false, ""},
		{"::1", false, ""},
		{"0.0.0.0", false, "WITHOUT authentication"},
		{"192.168.1.5", false, "reachable from other machines WITHOUT authentication"},
		{"10.0.0.1", true, "with a bearer token"},
	} {
		got := exposureWarning(&net.TCPAddr{IP: net.ParseIP(c.ip), Port: 8080}, c.token)
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("%s token %v: %q, want %q", c.ip, c.token, got, c.want)
		}
	}
}

// TestServeByteBounds posts what used to be kept without a bound in bytes
// and measures the live heap: labels with 30 MiB ids for unknown records
// (rejected by the id limit, not held as pending), and records until the
// write-ahead log passes --checkpoint-bytes (a checkpoint empties it, so
// the log stays under --checkpoint-bytes plus one request).
func TestServeByteBounds(t *testing.T) {
	ckpt := filepath.Join(t.TempDir(), "s.ckpt")
	s := attackServer()
	s.maxBody, s.ckpt, s.ckptBytes, s.every = 32<<20, ckpt, 64<<10, 0
	if _, err := s.openWAL(ckpt+".wal", false); err != nil {
		t.Fatal(err)
	}
	url, stop := startServer(t, s)
	defer stop()
	r := rand.New(rand.NewPCG(5, 5))
	next := 0
	post(t, url, "/v1/records", mediaJSONL, goodBody(r, &next, 20))
	base := liveHeap()
	id := strings.Repeat("i", 30<<20)
	for i := range 20 {
		st, m := post(t, url, "/v1/labels", mediaJSONL, fmt.Appendf(nil, "{\"id\":\"%s%d\",\"label\":1}\n", id, i))
		if st != 200 || m["pending"] != 0.0 {
			t.Fatalf("a label with a 30 MiB id: %d, %v; want it rejected", st, m)
		}
	}
	// One small request after them: the stage goroutines' locals then
	// hold it, not the last big one (what is in flight is not kept).
	post(t, url, "/v1/records", mediaJSONL, goodBody(r, &next, 1))
	if grew := liveHeap() - base; grew > 8<<20 {
		t.Errorf("20 labels with 30 MiB ids: the live heap grew by %d MiB, want < 8", grew>>20)
	}
	maxLog := int64(0)
	for range 100 {
		post(t, url, "/v1/records", mediaJSONL, goodBody(r, &next, 10))
		maxLog = max(maxLog, s.log.Size())
	}
	if maxLog > 64<<10+4<<10 {
		t.Errorf("the log reached %d bytes, want under --checkpoint-bytes 64 KiB plus a request", maxLog)
	}
	if fi, err := os.Stat(ckpt); err != nil || fi.Size() == 0 {
		t.Errorf("no checkpoint by size: %v", err)
	}
}

// TestStreamFourFeatures streams README-shaped records (4 features) at the
// default rank 40: stream lowers the rank to 4 before the first fit and
// runs to the end, where it exited 1 after 100 records ("rank 40 out of
// range [1, min(D=4, N=100)]").
func TestStreamFourFeatures(t *testing.T) {
	var b strings.Builder
	b.WriteString("id,f0,f1,f2,f3,label\n")
	r := rand.New(rand.NewPCG(4, 4))
	for i := range 400 {
		c := i % 2
		x := []int{r.IntN(4), r.IntN(4), r.IntN(4), r.IntN(4)}
		x[2*c] += 12
		fmt.Fprintf(&b, "r%d,%d,%d,%d,%d,%d\n", i, x[0], x[1], x[2], x[3], c)
	}
	path := filepath.Join(t.TempDir(), "four.csv")
	os.WriteFile(path, []byte(b.String()), 0o644)
	code, out, stderr := runCmd(t, "stream", "--in", path)
	if code != 0 {
		t.Fatalf("stream of 4-feature records: exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "records 400 (") || !strings.Contains(out, "samples 400, rejected 0") {
		t.Errorf("stream of 4-feature records: %s", out)
	}
}

// TestServePendingLabelsBound posts 120,000 labels with the largest id and
// label (256 bytes each) for records never seen: the learner keeps the
// newest 100,000 (its horizon at --window 300), and the live heap they take
// is measured against the README's bound for the defaults (70 MiB).
func TestServePendingLabelsBound(t *testing.T) {
	if testing.Short() {
		t.Skip("posts 65 MB of labels")
	}
	s := attackServer()
	s.maxBody = 8 << 20
	url, stop := startServer(t, s)
	defer stop()
	base := liveHeap()
	pad, lab := strings.Repeat("p", 256-8), strings.Repeat("l", 256)
	var body bytes.Buffer
	for q := range 12 {
		body.Reset()
		for i := range 10000 {
			fmt.Fprintf(&body, "{\"id\":\"%08d%s\",\"label\":\"%s\"}\n", q*10000+i, pad, lab)
		}
		// The eleventh and twelfth requests each make the oldest 10,000
		// waiting labels be forgotten, and say so.
		forgot := 0.0
		if q >= 10 {
			forgot = 10000
		}
		if st, m := post(t, url, "/v1/labels", mediaJSONL, body.Bytes()); st != 200 || m["pending"] != 10000.0 || m["applied"] != 0.0 || (m["forgotten"] != nil || forgot != 0) && m["forgotten"] != forgot {
			t.Fatalf("request %d: %d, applied %v, pending %v, forgotten %v (want %v)", q, st, m["applied"], m["pending"], m["forgotten"], forgot)
		}
	}
	body.Reset()
	grew := liveHeap() - base
	s.mu.Lock()
	pending := s.pending
	s.mu.Unlock()
	if pending != 100000 {
		t.Errorf("%d labels pending, want the horizon, 100,000", pending)
	}
	t.Logf("100,000 pending labels of 256+256 bytes: %.1f MiB live", float64(grew)/(1<<20))
	if grew > 70<<20 && !testenv.Race {
		t.Errorf("pending labels take %d MiB, over the documented 70 MiB", grew>>20)
	}
}

// TestServeWideRecordsBound replays the attack on serve's default
// limits: POSTs of 4 records of 3,000,000 features (over --max-dim, refused
// while the JSON is counted) and of 100,000 features (within --max-dim, but a
// window of 10,000 of them would take 8 GB, over --max-window-bytes). Every
// record is rejected, a good stream is learned after them, and the live
// heap grows by less than 64 MiB (it grew by 47 MB a record, 6.8 GB after 48).
func TestServeWideRecordsBound(t *testing.T) {
	if testing.Short() {
		t.Skip("posts 100 MB of features")
	}
	cfg := onlineConfig{Rank: 40, Neighbors: 5, Window: 10000, Batch: 10, Seed: 1}
	s := &server{learner: cfg.learner(), cfg: cfg, maxBody: 64 << 20, recentMax: 100, limits: sources.JSONLimits{MaxDim: sources.DefaultMaxDim}}
	s.limit(sources.DefaultMaxDim, 1000, 1<<30)
	url, stop := startServer(t, s)
	defer stop()
	base := liveHeap()
	for _, d := range []int{3000000, 100000} {
		row := "{\"x\":[" + strings.Repeat("1,", d-1) + "1]}\n"
		body := []byte(strings.Repeat(row, 4))
		for range 6 {
			st, m := post(t, url, "/v1/records", mediaJSONL, body)
			rej, _ := m["rejected"].([]any)
			if st != 200 || len(rej) != 4 {
				t.Fatalf("4 records of %d features: %d, %d rejected", d, st, len(rej))
			}
		}
	}
	grew := liveHeap() - base
	t.Logf("48 wide records rejected: the live heap grew by %.1f MiB", float64(grew)/(1<<20))
	if grew > 64<<20 {
		t.Errorf("48 wide records: the live heap grew by %d MiB, want < 64", grew>>20)
	}
	r := rand.New(rand.NewPCG(9, 9))
	next := 0
	if st, m := post(t, url, "/v1/records", mediaJSONL, goodBody(r, &next, 10)); st != 200 || len(m["rejected"].([]any)) != 0 {
		t.Errorf("good records after the wide ones: %d, %v", st, m)
	}
}

// TestServeBodyRateAfterBody checks that the moving read deadline of
// --min-body-rate ends with the body: a request whose learning takes longer
// than its deadline (10 ms here) is still answered, not cancelled by the
// server's background read timing out.
func TestServeBodyRateAfterBody(t *testing.T) {
	s := attackServer()
	s.minBodyRate, s.bodyGrace, s.readTimeout = 1<<30, 10*time.Millisecond, time.Minute
	url, stop := startServer(t, s)
	defer stop()
	r := rand.New(rand.NewPCG(6, 6))
	next := 0
	for range 3 {
		start := time.Now()
		st, m := post(t, url, "/v1/records", mediaJSONL, goodBody(r, &next, 150))
		if st != 200 || len(m["predictions"].([]any)) != 150 {
			t.Fatalf("150 records after %v: %d, %v", time.Since(start), st, m)
		}
	}
}

// readArrowAnswer reads and closes an Arrow answer of /v1/records and
// returns its rows, its null codes and the rejected records its schema's
// metadata lists.
func readArrowAnswer(t *testing.T, resp *http.Response) (rows, nullCodes int, rejected []rejectJSON) {
	t.Helper()
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	rdr, err := ipc.NewReader(resp.Body)
	if err != nil {
		t.Fatalf("arrow answer: %v", err)
	}
	defer rdr.Release()
	md := rdr.Schema().Metadata()
	if i := md.FindKey("rejected"); i < 0 || json.Unmarshal([]byte(md.Values()[i]), &rejected) != nil || md.FindKey("duplicates") < 0 {
		t.Fatalf("arrow answer: schema metadata %v, want the rejected records and the duplicates", md)
	}
	for rdr.Next() {
		rec := rdr.Record()
		rows += int(rec.NumRows())
		for i, f := range rec.Schema().Fields() {
			if f.Name == "code" {
				nullCodes += rec.Column(i).NullN()
			}
		}
	}
	return rows, nullCodes, rejected
}

// liveHeap returns the heap's live bytes after a collection: the least of
// three readings 50 ms apart, so what the service retains is measured and
// a transient allocation of another goroutine of the test process (a
// batch being learned, a connection being closed) is not.
func liveHeap() int64 {
	least := int64(-1)
	for i := range 3 {
		if i > 0 {
			time.Sleep(50 * time.Millisecond)
		}
		runtime.GC()
		live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(live)
		if v := int64(live[0].Value.Uint64()); least < 0 || v < least {
			least = v
		}
	}
	return least
}

// TestServeClassesBound posts labels of 3,000 distinct classes, on records
// and on known ids, to a service of --window 2000 and --max-classes 1000:
// those past the 1,000th class are rejected naming --max-classes, good
// records are still learned, and the live heap that 1,000 classes take
// (per-class scores of every window slot, 8·2000·1000 bytes and more) is
// measured.
func TestServeClassesBound(t *testing.T) {
	if testing.Short() {
		t.Skip("learns 3,000 records")
	}
	cfg := onlineConfig{Rank: 4, Neighbors: 5, Window: 2000, Batch: 50, Seed: 1}
	s := &server{learner: cfg.learner(), cfg: cfg, maxBody: 8 << 20, limits: sources.JSONLimits{MaxDim: 64}}
	s.limit(64, 1000, 1<<30)
	url, stop := startServer(t, s)
	defer stop()
	r := rand.New(rand.NewPCG(8, 8))
	next := 0
	post(t, url, "/v1/records", mediaJSONL, goodBody(r, &next, 200))
	base := liveHeap()
	rejected := 0
	for q := range 30 {
		var b bytes.Buffer
		for i := range 100 {
			c := q*100 + i
			fmt.Fprintf(&b, "{\"id\":\"k%d\",\"x\":[%d,1,2,3],\"label\":\"class%d\"}\n", c, c%7, c)
		}
		st, m := post(t, url, "/v1/records", mediaJSONL, b.Bytes())
		rej, _ := m["rejected"].([]any)
		if st != 200 {
			t.Fatalf("records of new classes: %d, %v", st, m)
		}
		rejected += len(rej)
	}
	st, m := post(t, url, "/v1/labels", mediaJSONL, []byte("{\"id\":\"g1\",\"label\":\"another\"}\n{\"id\":\"g2\",\"label\":\"class5\"}\n"))
	rej, _ := m["rejected"].([]any)
	if st != 200 || m["applied"] != 1.0 || len(rej) != 1 || !strings.Contains(fmt.Sprint(rej), "--max-classes") {
		t.Errorf("labels past the class limit: %d, %v", st, m)
	} else if r, _ := rej[0].(map[string]any); r["offset"] != 0.0 || r["id"] != "g1" || !strings.Contains(fmt.Sprint(r["reason"]), "record 0") {
		// Numbered as the body's line, in its reason too, as bad lines are.
		t.Errorf("the refused label %v: want offset 0, id g1, record 0 (its line in the body)", r)
	}
	grew := liveHeap() - base
	t.Logf("1,000 classes on a window of 2,000: the live heap grew by %.1f MiB", float64(grew)/(1<<20))
	if classes := len(s.learner.Classes()); rejected != 3000-(1000-3) || classes != 1000 {
		t.Errorf("%d records rejected, %d classes; want 2,003 and 1,000", rejected, classes)
	}
	if st, m := post(t, url, "/v1/records", mediaJSONL, goodBody(r, &next, 10)); st != 200 || len(m["rejected"].([]any)) != 0 {
		t.Errorf("good records after: %d, %v", st, m)
	}
}

// TestServeCappedRankResumes checkpoints a service whose rank was lowered to
// the records' 4 features, before and after the model's first fit, and
// resumes from each checkpoint at --rank 40: the state's rank is kept.
func TestServeCappedRankResumes(t *testing.T) {
	for _, n := range []int{50, 150} {
		ckpt := filepath.Join(t.TempDir(), "s.ckpt")
		s := attackServer()
		s.ckpt = ckpt
		url, stop := startServer(t, s)
		r := rand.New(rand.NewPCG(2, uint64(n)))
		next := 0
		post(t, url, "/v1/records", mediaJSONL, goodBody(r, &next, n))
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		cp, err := loadCheckpoint(ckpt)
		if err != nil {
			t.Fatal(err)
		}
		l, err := cp.restore()
		if err != nil {
			t.Fatalf("%d records: resuming at --rank %d: %v", n, cp.Config.Rank, err)
		}
		if l.Model.Rank != 4 || l.Counters().Samples != int64(n) {
			t.Errorf("%d records: resumed at rank %d with %d samples", n, l.Model.Rank, l.Counters().Samples)
		}
	}
}

// TestServeOutliers posts 300 requests of 10 records, one of them an
// outlier of 10⁴ (the others up to 15) in every ninth request, through a
// window of 300 records: each outlier's contribution to the model's
// statistics is added and later taken out again. Before
// model.Online.repairA what rounding left of them made the factorization
// diverge within 90 requests: NaN codes, and answers with an empty body.
// Every answer must carry a prediction and a finite code for each record,
// and the model's objective must stay finite.
func TestServeOutliers(t *testing.T) {
	s := attackServer()
	url, stop := startServer(t, s)
	r := rand.New(rand.NewPCG(1, 7))
	next := 0
	for req := range 300 {
		body := goodBody(r, &next, 10)
		if req%9 == 3 {
			body = append([]byte(`{"x":[1e4,1e4,1e4,1e4]}`+"\n"), body...)
		}
		st, m := post(t, url, "/v1/records", mediaJSONL, body)
		preds, _ := m["predictions"].([]any)
		if st != 200 || len(preds) < 10 {
			t.Fatalf("request %d: %d, %d predictions", req, st, len(preds))
		}
		if req < 20 {
			continue // the model's first fit comes after a few requests
		}
		for _, p := range preds {
			if c, _ := p.(map[string]any)["code"].([]any); len(c) != 4 {
				t.Fatalf("request %d: a prediction without its code (left out when not finite): %v", req, p)
			}
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if obj := s.learner.Model.Objective(); math.IsNaN(obj) || math.IsInf(obj, 0) {
		t.Errorf("objective %g after the outliers", obj)
	}
}

// TestServeArrowHugeCode posts, asking for Arrow, a request whose last
// record has values 10⁵⁰ (within record.MaxValue). At the defaults it is
// rejected (--max-norm-ratio) and the other five are answered with finite
// codes. With that bound off its code is beyond float32, the Arrow
// answer's code type, and its batch's other codes with it (the graph pulls
// them): the answer is 200 with every record's prediction and those codes
// null, not a 500 that loses the request's predictions.
func TestServeArrowHugeCode(t *testing.T) {
	for _, tc := range []struct {
		ratio             float64
		rows, nulls, rejs int
	}{{0, 5, 0, 1}, {-1, 6, 6, 0}} {
		rows, nulls, rejs := arrowHugeCode(t, tc.ratio)
		if rows != tc.rows || nulls != tc.nulls || rejs != tc.rejs {
			t.Errorf("--max-norm-ratio %g: arrow answer: %d rows, %d null codes, %d rejected; want %d, %d and %d",
				tc.ratio, rows, nulls, rejs, tc.rows, tc.nulls, tc.rejs)
		}
	}
}

// TestServeArrowNoCodeYet posts records to a fresh service, asking for
// Arrow: the records predicted before the model's first fit have no code,
// and their rows' codes are null, as the JSON answer leaves them out (they
// were written as zeros, which read as codes); after it every row has one.
func TestServeArrowNoCodeYet(t *testing.T) {
	s := attackServer()
	url, stop := startServer(t, s)
	r := rand.New(rand.NewPCG(3, 3))
	next := 0
	post := func(n int) (rows, nulls int) {
		t.Helper()
		req, _ := http.NewRequest("POST", url+"/v1/records", bytes.NewReader(goodBody(r, &next, n)))
		req.Header.Set("Content-Type", mediaJSONL)
		req.Header.Set("Accept", mediaArrow)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		rows, nulls, _ = readArrowAnswer(t, resp)
		return rows, nulls
	}
	// The first fit comes after 100 samples (model.Online.InitSize), in
	// the middle of this request: the rows before it have no code.
	if rows, nulls := post(250); rows != 250 || nulls < 90 || nulls > 110 {
		t.Errorf("a request across the first fit: %d rows, %d null codes; want 250, and 100 or so null", rows, nulls)
	}
	if rows, nulls := post(30); rows != 30 || nulls != 0 {
		t.Errorf("after the first fit: %d rows, %d null codes; want 30 and 0", rows, nulls)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// arrowHugeCode runs TestServeArrowHugeCode's requests on a service whose
// learner has MaxNormRatio ratio and returns the rows, the null codes and
// the rejected records of the Arrow answer.
func arrowHugeCode(t *testing.T, ratio float64) (rows, nullCodes, rejected int) {
	t.Helper()
	s := attackServer()
	s.learner.Featurize.MaxNormRatio = ratio
	url, stop := startServer(t, s)
	r := rand.New(rand.NewPCG(1, 7))
	next := 0
	for range 10 {
		if st, _ := post(t, url, "/v1/records", mediaJSONL, goodBody(r, &next, 10)); st != 200 {
			t.Fatal(st)
		}
	}
	body := append(goodBody(r, &next, 5), []byte(`{"id":"huge","x":[1e50,1e50,1e50,1e50]}`+"\n")...)
	req, _ := http.NewRequest("POST", url+"/v1/records", bytes.NewReader(body))
	req.Header.Set("Content-Type", mediaJSONL)
	req.Header.Set("Accept", mediaArrow)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	rows, nullCodes, rej := readArrowAnswer(t, resp)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	for _, r := range rej {
		if r.ID != "huge" || !strings.Contains(r.Reason, "--max-norm-ratio") {
			t.Errorf("rejected %+v, want the huge record, naming --max-norm-ratio", r)
		}
	}
	return rows, nullCodes, len(rej)
}

// TestServeCancelledSubmitWaits hands serve's pipeline a request of 5,000
// records and cancels its context at once, as a client that hangs up after
// its upload: submit returns only once the pipeline is done with the
// request, so the handler's --max-inflight slot bounds the bodies held.
// Before, submit returned at the cancel and freed the slot while the
// pipeline still queued the body: clients that hung up got 14 bodies of 4
// MiB queued under --max-inflight 2.
func TestServeCancelledSubmitWaits(t *testing.T) {
	s := attackServer()
	_, stop := startServer(t, s)
	r := rand.New(rand.NewPCG(5, 5))
	next := 0
	batches, err := sources.ReadJSONLines(bytes.NewReader(goodBody(r, &next, 5000)), s.cfg.Batch, s.limits)
	if err != nil {
		t.Fatal(err)
	}
	req := &request{batches: batches}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(5 * time.Millisecond); cancel() }()
	if err := s.submit(ctx, req); err == nil {
		t.Log("the request was learned before the cancel; nothing checked")
	}
	select {
	case <-req.done:
	default:
		t.Error("submit returned on the cancel while the pipeline still held the request")
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// TestServeDrainSlowClient stops serve (as SIGTERM does) while a client
// sends its body slowly, a chunk a second for 11 s, within every limit:
// the drain waits for it, answers it with every prediction, and serve
// returns no error. Before, the drain gave up after a fixed 10 s: the
// client's connection was closed unanswered and serve exited 1.
func TestServeDrainSlowClient(t *testing.T) {
	if testing.Short() {
		t.Skip("a body sent over 11 s")
	}
	s := attackServer()
	s.readTimeout, s.writeTimeout = time.Minute, time.Minute
	url, stop := startServer(t, s)
	r := rand.New(rand.NewPCG(7, 7))
	next := 0
	pr, pw := io.Pipe()
	go func() {
		for range 12 {
			pw.Write(goodBody(r, &next, 20))
			time.Sleep(time.Second)
		}
		pw.Close()
	}()
	type answer struct {
		status int
		m      map[string]any
		err    error
	}
	done := make(chan answer, 1)
	go func() {
		resp, err := http.Post(url+"/v1/records", mediaJSONL, pr)
		if err != nil {
			done <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		var m map[string]any
		err = json.NewDecoder(resp.Body).Decode(&m)
		done <- answer{resp.StatusCode, m, err}
	}()
	time.Sleep(2 * time.Second)
	if err := stop(); err != nil {
		t.Errorf("serve stopped during a slow upload: %v", err)
	}
	a := <-done
	if preds, _ := a.m["predictions"].([]any); a.err != nil || a.status != 200 || len(preds) != 240 {
		t.Errorf("the slow client's answer: %d, %d predictions, %v; want 200 and 240", a.status, len(preds), a.err)
	}
}

// TestServeLabelReplaced posts two labels for one id not seen yet in one
// request: one waits (pending 1, as the pending-labels gauge says), and the
// earlier one is listed as replaced, so that applied, pending and rejected
// add up to the lines posted. Before, the answer said pending 2 while one
// label waited.
func TestServeLabelReplaced(t *testing.T) {
	s := attackServer()
	url, stop := startServer(t, s)
	st, m := post(t, url, "/v1/labels", mediaJSONL, []byte("{\"id\":\"u1\",\"label\":\"a\"}\n{\"id\":\"u1\",\"label\":\"b\"}\n{\"id\":\"u2\",\"label\":\"a\"}\n"))
	rej, _ := m["rejected"].([]any)
	if st != 200 || m["pending"] != 2.0 || m["applied"] != 0.0 || len(rej) != 1 {
		t.Fatalf("answer %d %v, want pending 2 (u1, u2), applied 0, the first u1 label rejected", st, m)
	}
	if r, _ := rej[0].(map[string]any); r["offset"] != 0.0 || r["id"] != "u1" || !strings.Contains(fmt.Sprint(r["reason"]), "replaced") {
		t.Errorf("rejected %v, want u1's first label, replaced", r)
	}
	if g := metricValue(t, getMetrics(t, url), "nmfstream_pending_labels"); g != 2 {
		t.Errorf("pending labels gauge %v, want 2", g)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// TestServeHeadersOnlyHogs opens more connections than --max-inflight that
// send a POST's headers and no body, and holds them: a client posting
// records is still answered 200, and /metrics too. Before, each such
// connection took a slot for --body-grace and came back: every other
// request was answered 429.
func TestServeHeadersOnlyHogs(t *testing.T) {
	s := attackServer()
	s.maxInFlight, s.minBodyRate, s.bodyGrace, s.readTimeout = 2, 1024, 3*time.Second, time.Minute
	url, stop := startServer(t, s)
	addr := strings.TrimPrefix(url, "http://")
	var hogs []net.Conn
	for range 6 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "POST /v1/records HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nContent-Length: 1000\r\n\r\n", addr, mediaJSONL)
		hogs = append(hogs, c)
	}
	time.Sleep(300 * time.Millisecond) // the hogs' headers are read
	r := rand.New(rand.NewPCG(8, 8))
	next := 0
	if st, m := post(t, url, "/v1/records", mediaJSONL, goodBody(r, &next, 10)); st != 200 {
		t.Errorf("a client beside %d headers-only connections: %d %v, want 200", len(hogs), st, m)
	}
	resp, err := http.Get(url + "/metrics")
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("/metrics beside them: %v %v", resp.Status, err)
	}
	resp.Body.Close()
	// A hog is answered 408 once --body-grace has passed without a byte.
	hogs[0].SetReadDeadline(time.Now().Add(10 * time.Second))
	line, _ := bufio.NewReader(hogs[0]).ReadString('\n')
	if !strings.Contains(line, "408") {
		t.Errorf("a connection that sent no body: %q, want 408", line)
	}
	for _, c := range hogs {
		c.Close()
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// TestServeArrowImagesAfterBody posts an Arrow body of PNG images, eight
// of them 2000×2000, under a --read-timeout shorter than their decoding:
// the body arrives at once, so it is answered 200 with every record.
// Before, the images were decoded while the body was read, and the
// decoding's time counted against the client's read deadline: a client
// that sent at full speed was answered 408.
func TestServeArrowImagesAfterBody(t *testing.T) {
	s := attackServer()
	s.readTimeout, s.writeTimeout, s.minBodyRate = 150*time.Millisecond, time.Minute, 0
	s.limits.MaxDim = 1 << 20
	url, stop := startServer(t, s)
	encode := func(w, h int) []byte {
		var b bytes.Buffer
		if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "image", Type: arrow.BinaryTypes.Binary}}, nil)
	bld := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	defer bld.Release()
	ib := bld.Field(0).(*array.BinaryBuilder)
	ib.Append(encode(6, 6))
	big := encode(2000, 2000)
	for range 8 {
		ib.Append(big)
	}
	rec := bld.NewRecord()
	defer rec.Release()
	var body bytes.Buffer
	iw := ipc.NewWriter(&body, ipc.WithSchema(schema))
	if err := iw.Write(rec); err != nil {
		t.Fatal(err)
	}
	iw.Close()
	st, m := post(t, url, "/v1/records", mediaArrow, body.Bytes())
	if preds, _ := m["predictions"].([]any); st != 200 || len(preds) != 9 {
		t.Errorf("9 images in a body sent at once: %d, %v; want 200 and 9 predictions", st, m)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// TestServeRefusesStreamFlags checks that serve refuses the learner's flags
// out of range as stream does (checkOnlineConfig), before it listens:
// --vote -1 made the walk predictor panic on the first request.
func TestServeRefusesStreamFlags(t *testing.T) {
	for _, args := range [][]string{{"--vote", "-1"}, {"--forget", "2"}, {"--alpha", "NaN"}, {"--neighbors", "50", "--window", "40"}} {
		code, _, stderr := runCmd(t, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
		if code != 2 || !strings.Contains(stderr, args[0]) {
			t.Errorf("serve %v: exit %d, %q; want a usage error naming %s", args, code, stderr, args[0])
		}
	}
}

// TestServeGhostLabels posts, to a service of --max-classes 3, late labels
// of ten new classes for ids that never come: they wait without taking a
// class, so a record of a new class is still learned with it, where the
// labels used to take every class slot for good.
func TestServeGhostLabels(t *testing.T) {
	cfg := onlineConfig{Rank: 2, Neighbors: 3, Window: 100, Batch: 10, Seed: 1}
	s := &server{learner: cfg.learner(), cfg: cfg, maxBody: 1 << 20, limits: sources.JSONLimits{MaxDim: 8}}
	s.limit(8, 3, 1<<30)
	url, stop := startServer(t, s)
	defer stop()
	post(t, url, "/v1/records", mediaJSONL, []byte(`{"id":"c1","x":[1,2,3,4],"label":"cat"}`+"\n"))
	var b bytes.Buffer
	for i := range 10 {
		fmt.Fprintf(&b, "{\"id\":\"ghost%d\",\"label\":\"g%d\"}\n", i, i)
	}
	st, m := post(t, url, "/v1/labels", mediaJSONL, b.Bytes())
	if rej, _ := m["rejected"].([]any); st != 200 || m["pending"] != 10.0 || len(rej) != 0 {
		t.Fatalf("labels for ids not seen: %d, %v; want all 10 pending", st, m)
	}
	st, m = post(t, url, "/v1/records", mediaJSONL, []byte(`{"id":"d1","x":[4,3,2,1],"label":"dog"}`+"\n"))
	if rej, _ := m["rejected"].([]any); st != 200 || len(rej) != 0 {
		t.Errorf("a record of a new class after them: %d, %v; want it learned", st, m)
	}
	if got := s.learner.Classes(); len(got) != 2 {
		t.Errorf("classes %v, want cat and dog", got)
	}
}
