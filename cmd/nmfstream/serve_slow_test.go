package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nmfstream/nmfstream/datasets"
)

// slowPost sends a POST of /v1/records with a body of n bytes declared,
// trickling one byte every gap, and returns the status serve answers (0
// if it answered none and closed the connection).
func slowPost(t *testing.T, url string, n int, gap time.Duration, give time.Duration) int {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Error(err)
		return -1
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/records HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\nContent-Length: %d\r\n\r\n", n)
	status := make(chan int, 1)
	go func() {
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			status <- 0
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		status <- resp.StatusCode
	}()
	deadline := time.After(give)
	tick := time.NewTicker(gap)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case st := <-status:
			return st
		case <-deadline:
			t.Errorf("a slow body got no answer in %v", give)
			return -1
		case <-tick.C:
			if i < n {
				conn.Write([]byte{'{'})
			}
		}
	}
}

// TestServeSlowBody trickles a body into serve, which holds its only slot
// (--max-inflight 1): after --read-timeout it is answered 408, and the
// slot is free again for a normal request.
func TestServeSlowBody(t *testing.T) {
	cfg := onlineConfig{Rank: 2, Neighbors: 3, Window: 100, Batch: 10, Seed: 1}
	s := &server{learner: cfg.learner(), cfg: cfg, maxBody: 1 << 20, maxInFlight: 1,
		readTimeout: 300 * time.Millisecond, writeTimeout: 10 * time.Second}
	url, stop := startServer(t, s)
	defer stop()
	if got := slowPost(t, url, 100000, 20*time.Millisecond, 10*time.Second); got != http.StatusRequestTimeout {
		t.Errorf("a trickled body: status %d, want 408", got)
	}
	resp, err := http.Post(url+"/v1/records", mediaJSONL, strings.NewReader(`{"id":"a","x":[1,2,3]}`+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("after the slow body: %d, want 200 (its slot is free)", resp.StatusCode)
	}
}

// endless is a body of the same JSON line over and over, n bytes in all,
// made as it is read; it adds the bytes read to sent.
type endless struct {
	line []byte
	n    int64
	off  int
	sent *atomic.Int64
}

func (e *endless) Read(p []byte) (int, error) {
	if e.n <= 0 {
		return 0, io.EOF
	}
	k := 0
	for k < len(p) && e.n > 0 {
		c := copy(p[k:], e.line[e.off:])
		c = int(min(int64(c), e.n))
		k += c
		e.n -= int64(c)
		e.off = (e.off + c) % len(e.line)
	}
	e.sent.Add(int64(k))
	return k, nil
}

// TestServeMemoryBound runs 16 clients at once against serve with a
// write-ahead log, --max-inflight 4 and --max-body 256 KiB: oversized
// bodies (16 MiB, with and without Content-Length), trickled bodies and
// normal ones. serve answers 413, 408 and 429 instead of reading more,
// its heap stays under a bound set by those flags however many bytes the
// clients send, and its counters are exactly the normal requests it
// acknowledged.
func TestServeMemoryBound(t *testing.T) {
	const maxBody, inflight = 256 << 10, 4
	cfg := onlineConfig{Rank: 5, Neighbors: 5, Window: 1000, Batch: 10, Seed: 1}
	ckpt := filepath.Join(t.TempDir(), "s.ckpt")
	s := &server{learner: cfg.learner(), cfg: cfg, ckpt: ckpt, maxBody: maxBody, maxInFlight: inflight,
		readTimeout: 500 * time.Millisecond, writeTimeout: 10 * time.Second, recentMax: 100}
	if _, err := s.openWAL(ckpt+".wal", false); err != nil {
		t.Fatal(err)
	}
	url, stop := startServer(t, s)

	// The heap's live bytes as of the last collection: what serve holds,
	// whatever the collector's pace (HeapAlloc also counts the garbage not
	// yet collected, which grows when the collector is starved of CPU).
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	liveBytes := func() uint64 {
		metrics.Read(live)
		return live[0].Value.Uint64()
	}
	runtime.GC()
	base := liveBytes()
	var peak atomic.Uint64
	done := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Go(func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
			if b := liveBytes(); b > peak.Load() {
				peak.Store(b)
			}
		}
	})

	x, _ := datasets.Digits()
	line, _ := json.Marshal(map[string]any{"x": x.RawRowView(0)})
	line = append(line, '\n')
	var sent atomic.Int64 // bytes the oversized clients sent
	var statuses sync.Map // status → *atomic.Int64
	count := func(st int) {
		v, _ := statuses.LoadOrStore(st, new(atomic.Int64))
		v.(*atomic.Int64).Add(1)
	}
	var acked atomic.Int64 // records of normal requests answered 200
	stopAt := time.Now().Add(2 * time.Second)
	var wg sync.WaitGroup
	for c := range 16 {
		wg.Go(func() {
			client := &http.Client{Timeout: 20 * time.Second}
			for q := 0; time.Now().Before(stopAt); q++ {
				switch c % 3 {
				case 0: // oversized
					body := &endless{line: line, n: 16 << 20, sent: &sent}
					req, _ := http.NewRequest("POST", url+"/v1/records", body)
					if q%2 == 0 {
						req.ContentLength = 16 << 20
					}
					resp, err := client.Do(req)
					if err != nil {
						count(0) // serve closed the connection while the client wrote
						continue
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					count(resp.StatusCode)
				case 1: // trickled
					count(slowPost(t, url, 50000, 10*time.Millisecond, 10*time.Second))
				case 2: // normal, retried on 429
					var body bytes.Buffer
					for i := range 20 {
						json.NewEncoder(&body).Encode(map[string]any{"id": fmt.Sprint(c, "-", q, "-", i), "x": x.RawRowView((c*97 + q*20 + i) % 1797)})
					}
					for {
						resp, err := client.Post(url+"/v1/records", mediaJSONL, bytes.NewReader(body.Bytes()))
						if err != nil {
							t.Error(err)
							return
						}
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						count(resp.StatusCode)
						if resp.StatusCode == 200 {
							acked.Add(20)
							break
						}
						if resp.StatusCode != http.StatusTooManyRequests {
							t.Errorf("a normal request: %d", resp.StatusCode)
							break
						}
						time.Sleep(5 * time.Millisecond)
					}
				}
			}
		})
	}
	wg.Wait()
	close(done)
	sampler.Wait()

	got := map[int]int64{}
	statuses.Range(func(k, v any) bool { got[k.(int)] = v.(*atomic.Int64).Load(); return true })
	for _, st := range []int{200, 408, 413, 429} {
		if got[st] == 0 {
			t.Errorf("no answer %d among %v", st, got)
		}
	}
	for st := range got {
		if st != 0 && st != 200 && st != 408 && st != 413 && st != 429 {
			t.Errorf("%d answers %d", got[st], st)
		}
	}
	// Each request in flight holds at most its body, the body's parsed
	// rows and their copy in a batch (JSON text is shorter than float64s),
	// and the learner's window and workspaces take a few MiB.
	bound := base + 8*inflight*maxBody + 8<<20
	if p := peak.Load(); p > bound {
		t.Errorf("peak heap %d MiB over the bound %d MiB (base %d MiB); the oversized clients sent %d MiB",
			p>>20, bound>>20, base>>20, sent.Load()>>20)
	}
	if sent.Load() < int64(bound-base) {
		t.Errorf("the oversized clients sent only %d MiB: the bound is not tested", sent.Load()>>20)
	}
	text := getMetrics(t, url)
	if n := metricValue(t, text, "nmfstream_samples_total"); n != float64(acked.Load()) {
		t.Errorf("samples_total %v, want the %d records acknowledged", n, acked.Load())
	}
	if n := metricValue(t, text, "nmfstream_records_total"); n != float64(acked.Load()) {
		t.Errorf("records_total %v, want %d", n, acked.Load())
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	t.Logf("answers %v; peak heap %d MiB, base %d MiB, bound %d MiB; oversized clients sent %d MiB",
		got, peak.Load()>>20, base>>20, bound>>20, sent.Load()>>20)
}
